'use strict';

const { getNetwork } = require('../chain/networks');
const { parseBlock } = require('../chain/block');
const { describeOutput } = require('../chain/describe');
const { toDisplayHex } = require('../chain/hash');
const { openFile } = require('../sources/rawfile');
const { UsageError, ParseError } = require('../errors');

const usage = `usage: addrindex parse FILE [--network main|testnet|signet|regtest] [--json]

Parses a raw block (80-byte header first) or a blocks file (blkNNNNN.dat framing) and prints
one JSON array with one object per block, in file order:
  {hash, prev, time, txs: [{txid, coinbase, inputs: [{txid, vout}],
                            outputs: [{vout, value, type, address, scripthash}]}]}
"address" is null for outputs with no address; "scripthash" is the Electrum script hash the
index files the output under (null for OP_RETURN, which is not indexed).
`;

const options = {
  network: { type: 'string', short: 'n', default: 'main' },
  json: { type: 'boolean', default: true },
};

/**
 * The JSON shape of one parsed block (stable: users script against it).
 * @param {import('../chain/block').Block} block
 * @param {import('../chain/networks').Network} network
 */
function blockToJSON(block, network) {
  return {
    hash: block.hash,
    prev: block.prev,
    time: block.time,
    txs: block.txs.map((tx) => ({
      txid: tx.hash,
      coinbase: tx.coinbase,
      inputs: tx.inputs.map((inp) => ({ txid: toDisplayHex(inp.txid), vout: inp.vout })),
      outputs: tx.outputs.map((out, vout) => ({ vout, value: out.value, ...describeOutput(out.script, network) })),
    })),
  };
}

async function run(positionals, values, io) {
  if (positionals.length !== 1) throw new UsageError('ERR_USAGE', `parse takes exactly one FILE\n${usage}`);
  const network = getNetwork(values.network);
  const out = io.stdout;
  // A reader that goes away (`addrindex parse blk00000.dat | head`) ends the output quietly.
  let gone = false;
  const onError = (err) => {
    if (err.code !== 'EPIPE') throw err;
    gone = true;
  };
  out.on('error', onError);
  const write = (s) => {
    if (gone || out.write(s)) return null;
    return new Promise((resolve) => {
      const done = () => {
        out.off('drain', done);
        out.off('error', done);
        resolve();
      };
      out.once('drain', done);
      out.once('error', done);
    });
  };
  try {
    return await print(positionals[0], network, write, () => gone);
  } finally {
    out.off('error', onError);
  }
}

async function print(file, network, write, gone) {
  const records = openFile(file, { network })[Symbol.asyncIterator]();
  try {
    // The first record is read (and the file checked) before anything is printed, so a
    // missing or foreign file gives only an error line, never a dangling "[".
    let rec = await records.next();
    const first = rec.done ? null : JSON.stringify(blockToJSON(parseAt(file, rec.value), network));
    await write('[');
    if (first !== null) {
      await write('\n' + first);
      // Streamed block by block: a 128 MiB blk file never sits in memory as one JSON tree.
      while (!gone() && !(rec = await records.next()).done) {
        await write(',\n' + JSON.stringify(blockToJSON(parseAt(file, rec.value), network)));
      }
    }
    if (!gone()) await write(first === null ? ']\n' : '\n]\n');
    return 0;
  } finally {
    await records.return(); // closes the file when parsing stopped early
  }
}

/** Parses one record; a bad block's error names the file and where the block starts. */
function parseAt(file, { raw, offset }) {
  try {
    return parseBlock(raw);
  } catch (err) {
    if (err instanceof ParseError) err.message = `${file}: block at offset ${offset}: ${err.message}`;
    throw err;
  }
}

module.exports = { usage, options, run, blockToJSON };
