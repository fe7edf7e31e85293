'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { SourceError, UsageError } = require('../errors');
const { getNetwork } = require('../chain/networks');
const { parseBlock } = require('../chain/block');
const { describeOutput } = require('../chain/describe');
const { toDisplayHex } = require('../chain/hash');
const { BlocksDirSource } = require('../sources/blocksdir');

const DATA = path.join(__dirname, '..', '..', 'test', 'fixtures', 'mainnet', 'blk-first-439.dat');
// Height 170: Satoshi pays Hal Finney 10 BTC, the first payment from one person to another.
const FIRST_PAYMENT = { height: 170, txid: 'f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16' };

const usage = `usage: addrindex demo

Reads the bundled first 439 mainnet blocks through the blocks-dir reader (the data is put in
a temporary blocks directory as blk00000.dat, exactly as Bitcoin Core stores it), parses
every block with its merkle root checked, and prints what it found.
`;

const options = {};

/** @param {number} sats @returns {string} */
function btc(sats) {
  return `${Math.floor(sats / 1e8)}.${String(sats % 1e8).padStart(8, '0')}`;
}

async function run(positionals, values, io) {
  if (positionals.length) throw new UsageError('ERR_USAGE', `demo takes no arguments\n${usage}`);
  if (!fs.existsSync(DATA)) {
    throw new SourceError('ERR_NO_DEMO_DATA',
      `the demo blocks (${DATA}) are missing: they ship with the git checkout, not the npm package`);
  }
  const network = getNetwork('main');
  const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'addrindex-demo-'));
  const source = new BlocksDirSource({ dir, network });
  try {
    await fs.promises.copyFile(DATA, path.join(dir, 'blk00000.dat'));
    const started = process.hrtime.bigint();
    await source.scan();
    let blocks = 0;
    let txs = 0;
    let outputs = 0;
    let payment = null;
    for await (const { height, raw } of source.blocks()) {
      const block = parseBlock(raw, { verifyMerkle: true });
      blocks++;
      txs += block.txs.length;
      for (const tx of block.txs) {
        outputs += tx.outputs.length;
        if (height === FIRST_PAYMENT.height && tx.hash === FIRST_PAYMENT.txid) payment = tx;
      }
    }
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const tip = source.tip();
    if (!payment) throw new SourceError('ERR_DEMO_DATA', `tx ${FIRST_PAYMENT.txid} is not at height ${FIRST_PAYMENT.height} in ${DATA}`);
    const lines = [
      'addrindex demo: the first 439 mainnet blocks, read from a Bitcoin Core-style blocks directory',
      '',
      `  blocks        ${blocks} (heights 0–${tip.height}), every merkle root checked`,
      `  transactions  ${txs} (${outputs} outputs)`,
      `  tip           ${tip.height} ${tip.hash}`,
      `  time          ${ms.toFixed(0)} ms`,
      '',
      `  height ${FIRST_PAYMENT.height}: the first payment from one person to another`,
      `  tx ${payment.hash}`,
      ...payment.inputs.map((inp) => `    spends  ${toDisplayHex(inp.txid)}:${inp.vout}`),
      ...payment.outputs.map((out) => {
        const d = describeOutput(out.script, network);
        return `    ${btc(out.value).padStart(12)} BTC → ${d.address} (${d.type})`;
      }),
      '',
      'Try: addrindex parse test/fixtures/mainnet/block482683.raw',
      '',
    ];
    io.stdout.write(lines.join('\n'));
    return 0;
  } finally {
    await source.close();
    await fs.promises.rm(dir, { recursive: true, force: true });
  }
}

module.exports = { usage, options, run };
