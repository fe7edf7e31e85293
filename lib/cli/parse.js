'use strict';

const { getNetwork } = require('../chain/networks');
const { parseBlock } = require('../chain/block');
const { describeOutput } = require('../chain/describe');
const { toDisplayHex } = require('../chain/hash');
const { openFile } = require('../sources/rawfile');

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
  const { UsageError } = require('../errors');
  if (positionals.length !== 1) throw new UsageError('ERR_USAGE', `parse takes exactly one FILE\n${usage}`);
  const network = getNetwork(values.network);
  const out = io.stdout;
  let first = true;
  const write = (s) => (out.write(s) ? null : new Promise((resolve) => out.once('drain', resolve)));
  await write('[');
  // Streamed block by block: a 128 MiB blk file never sits in memory as one JSON tree.
  for await (const rec of openFile(positionals[0], { network })) {
    const block = parseBlock(rec.raw);
    await write((first ? '\n' : ',\n') + JSON.stringify(blockToJSON(block, network)));
    first = false;
  }
  await write(first ? ']\n' : '\n]\n');
  return 0;
}

module.exports = { usage, options, run, blockToJSON };
