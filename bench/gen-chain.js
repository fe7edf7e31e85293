#!/usr/bin/env node
'use strict';

/**
 * Writes a synthetic mainnet-shaped chain into a blocks dir and prints how fast it went and
 * what the chain looks like (the statistics the generator's parameters aim at).
 *
 *   node bench/gen-chain.js --dir D (--txs N | --blocks N) [--seed S] [--txs-per-block N]
 *        [--max-file-size BYTES] [--xor HEX16] [--force] [--json FILE]
 *
 * --force removes the blk*.dat and xor.dat files already in D (nothing else).
 */

const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { writeChain } = require('../tools/generator');
const { listBlkFiles, blkName } = require('../tools/generator/blkwriter');
const { printTable } = require('./lib/table');

const { values: args } = parseArgs({
  options: {
    dir: { type: 'string' },
    txs: { type: 'string' },
    blocks: { type: 'string' },
    seed: { type: 'string', default: '1' },
    'txs-per-block': { type: 'string' },
    'max-file-size': { type: 'string' },
    xor: { type: 'string' },
    force: { type: 'boolean', default: false },
    json: { type: 'string' },
  },
});

function usage(msg) {
  console.error(`${msg}\nusage: node bench/gen-chain.js --dir D (--txs N | --blocks N) [--seed S] [--txs-per-block N] ` +
    '[--max-file-size BYTES] [--xor HEX16] [--force] [--json FILE]');
  process.exit(2);
}

function int(name) {
  const v = args[name];
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) usage(`--${name} must be a non-negative integer`);
  return n;
}

async function main() {
  if (!args.dir) usage('--dir is required');
  if ((args.txs === undefined) === (args.blocks === undefined)) usage('give exactly one of --txs and --blocks');
  if (args.xor !== undefined && !/^[0-9a-f]{16}$/i.test(args.xor)) usage('--xor takes 16 hex digits');
  if (args.force && fs.existsSync(args.dir)) {
    for (const n of listBlkFiles(args.dir)) fs.rmSync(path.join(args.dir, blkName(n)));
    fs.rmSync(path.join(args.dir, 'xor.dat'), { force: true });
  }
  const opts = {
    dir: args.dir,
    seed: args.seed,
    txs: int('txs'),
    blocks: int('blocks'),
    xorKey: args.xor ? Buffer.from(args.xor, 'hex') : null,
  };
  if (args['txs-per-block'] !== undefined) opts.txsPerBlock = int('txs-per-block');
  if (args['max-file-size'] !== undefined) opts.maxFileSize = int('max-file-size');

  const t0 = process.hrtime.bigint();
  let lastReport = t0;
  opts.onBlock = (b, gen) => {
    const now = process.hrtime.bigint();
    if (now - lastReport < 5000000000n) return;
    lastReport = now;
    const s = Number(now - t0) / 1e9;
    process.stderr.write(`  height ${b.height}, ${gen.txNum.toLocaleString('en-US')} txs, ` +
      `${(gen.counts.bytes / 1e6).toFixed(0)} MB, ${Math.round(gen.txNum / s).toLocaleString('en-US')} tx/s\n`);
  };
  const summary = await writeChain(opts);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const st = summary.stats;
  const peakRssMb = process.resourceUsage().maxRSS / 1024;

  console.log(`generated ${summary.txs.toLocaleString('en-US')} txs in ${summary.blocks} blocks (seed ${args.seed}) into ${args.dir}`);
  printTable([{
    seconds: seconds.toFixed(1),
    'tx/s': Math.round(summary.txs / seconds).toLocaleString('en-US'),
    'MB/s': (summary.bytes / 1e6 / seconds).toFixed(1),
    MB: (summary.bytes / 1e6).toFixed(1),
    files: summary.files,
    'peak RSS MB': peakRssMb.toFixed(0),
  }]);
  console.log(`\ntip ${summary.tip.height} ${summary.tip.hash}`);
  console.log(`inputs/tx ${st.inputsPerTx.toFixed(3)}   outputs/tx ${st.outputsPerTx.toFixed(3)}   ` +
    `segwit txs ${(100 * st.segwitTxShare).toFixed(1)} %   new-script outputs ${(100 * st.newScriptShare).toFixed(1)} %   ` +
    `same-block spends ${(100 * st.sameBlockSpendShare).toFixed(1)} %`);
  console.log('output script mix: ' + Object.entries(st.mix).map(([k, v]) => `${k} ${(100 * v).toFixed(1)} %`).join(', '));
  console.log(`scripts ${st.scripts.toLocaleString('en-US')}, median history entries ${st.medianEntries}, ` +
    `scripts with 100k+ entries ${st.scriptsOver100k}; pool ${st.pool.live.toLocaleString('en-US')} live, ` +
    `${st.pool.dropped.toLocaleString('en-US')} dropped`);
  console.log('top scripts by history entries (txs funding or spending them):');
  printTable(st.topScripts.map((s) => ({ type: s.type, entries: s.entries.toLocaleString('en-US'), script: s.script })));
  if (args.json) {
    fs.mkdirSync(path.dirname(path.resolve(args.json)), { recursive: true });
    const { hashes, ...rest } = summary;
    fs.writeFileSync(args.json, JSON.stringify({
      node: process.version, seed: args.seed, seconds, txPerSec: summary.txs / seconds,
      mbPerSec: summary.bytes / 1e6 / seconds, peakRssMb, ...rest,
    }, null, 2));
  }
}

main().catch((err) => {
  console.error(err.code ? `${err.code}: ${err.message}` : err);
  process.exit(1);
});
