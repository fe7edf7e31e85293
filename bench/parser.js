#!/usr/bin/env node
'use strict';

/**
 * Parser benchmark: what the sync needs from a block (parse, txids, the address identity of
 * every output) against two references measured in the same run on the same bytes:
 *   - bitcore-lib: Block.fromBuffer, tx.hash, script.toAddress per output;
 *   - the hash-only bound: double SHA-256 over every transaction's bytes, nothing else.
 * Then the same work through a worker-thread pool, for the gain on this machine's cores.
 *
 *   node bench/parser.js [--seed N] [--quick] [--json FILE]
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const { parseArgs } = require('node:util');
const Benchmark = require('benchmark');
const bitcore = require('bitcore-lib');
const { parseBlock } = require('../lib/chain/block');
const { classify } = require('../lib/chain/script');
const { ParsePool } = require('../lib/chain/parse-pool');
const { generateSegwitBlock } = require('./lib/blocks');
const { printTable } = require('./lib/table');

const { values: args } = parseArgs({
  options: {
    seed: { type: 'string', default: '1' },
    quick: { type: 'boolean', default: false },
    json: { type: 'string', default: path.join(__dirname, 'results', 'parser.json') },
  },
});

const sha256 = (b) => crypto.hash('sha256', b, 'buffer');

/** The work the sync needs: parse + txids + the identity (type, hash) of every output. */
function addrindexParse(raw, verifyMerkle) {
  const block = parseBlock(raw, { verifyMerkle });
  let n = 0;
  for (const tx of block.txs) {
    for (const out of tx.outputs) if (classify(out.script).addrType !== null) n++;
  }
  return n;
}

function bitcoreParse(raw, network) {
  const block = bitcore.Block.fromBuffer(raw);
  let n = 0;
  for (const tx of block.transactions) {
    if (tx.hash.length !== 64) throw new Error('bad txid');
    for (const out of tx.outputs) if (out.script.toAddress(network)) n++;
  }
  return n;
}

function hashOnly(raw, spans) {
  for (let i = 0; i < spans.length; i += 2) sha256(sha256(raw.subarray(spans[i], spans[i + 1])));
}

function runSuite(name, raw, network) {
  const block = parseBlock(raw);
  const spans = [];
  for (const tx of block.txs) spans.push(tx.offset, tx.offset + tx.size);
  const txs = block.txs.length;
  const mb = raw.length / 1e6;
  const rows = [];
  const opts = args.quick ? { maxTime: 1, minSamples: 5 } : { maxTime: 4, minSamples: 20 };
  const suite = new Benchmark.Suite(name);
  suite
    .add('hash-only bound (sha256d per tx)', () => hashOnly(raw, spans), opts)
    .add('addrindex: parse + txids + identities', () => addrindexParse(raw, false), opts)
    .add('addrindex: … + merkle root check', () => addrindexParse(raw, true), opts)
    .add('bitcore-lib: fromBuffer + hash + toAddress', () => bitcoreParse(raw, network), opts)
    .on('cycle', (e) => {
      const b = e.target;
      rows.push({ name: b.name, blocksPerSec: b.hz, txPerSec: b.hz * txs, mbPerSec: b.hz * mb, rme: b.stats.rme });
      process.stderr.write(`  ${name}: ${String(e.target)}\n`);
    })
    .run();
  const by = (prefix) => rows.find((r) => r.name.startsWith(prefix)).blocksPerSec;
  const ours = by('addrindex: parse');
  return {
    block: name, bytes: raw.length, txs, rows,
    ratios: {
      vsBitcore: ours / by('bitcore-lib'),
      vsHashOnly: ours / by('hash-only'),
      withMerkleVsHashOnly: by('addrindex: …') / by('hash-only'),
    },
  };
}

/** Blocks per second through the pool: `copies` blocks in flight, the caller awaiting in order. */
async function poolThroughput(raw, threads, copies) {
  const pool = new ParsePool({ threads, verifyMerkle: true });
  try {
    const once = async () => {
      const t0 = process.hrtime.bigint();
      const inFlight = [];
      for (let i = 0; i < copies; i++) inFlight.push(pool.parse(raw));
      await Promise.all(inFlight);
      return copies / (Number(process.hrtime.bigint() - t0) / 1e9);
    };
    await once(); // warm-up: workers start and JIT
    const runs = [];
    for (let i = 0; i < (args.quick ? 3 : 7); i++) runs.push(await once());
    runs.sort((a, b) => a - b);
    return runs[runs.length >> 1];
  } finally {
    await pool.close();
  }
}

async function main() {
  const seed = Number(args.seed);
  const real = fs.readFileSync(path.join(__dirname, '..', 'test', 'fixtures', 'mainnet', 'block426884.raw'));
  const synthetic = generateSegwitBlock({ seed, minBytes: 1.5e6 });
  console.log(`machine: ${os.cpus().length} cores, node ${process.version}; generated block seed ${seed}`);
  const results = [
    runSuite('mainnet 426884 (996 KB, 2016)', real, bitcore.Networks.livenet),
    runSuite(`generated segwit-heavy (${(synthetic.length / 1e6).toFixed(2)} MB)`, synthetic, bitcore.Networks.testnet),
  ];
  for (const r of results) {
    console.log(`\n${r.block}: ${r.txs} txs`);
    printTable(r.rows.map((x) => ({
      what: x.name,
      'blocks/s': x.blocksPerSec.toFixed(1),
      'tx/s': Math.round(x.txPerSec).toLocaleString('en-US'),
      'MB/s': x.mbPerSec.toFixed(1),
      '±%': x.rme.toFixed(1),
    })));
    console.log(`addrindex vs bitcore-lib: ${r.ratios.vsBitcore.toFixed(1)}x   ` +
      `vs hash-only bound: ${(100 * r.ratios.vsHashOnly).toFixed(0)} % ` +
      `(with merkle check: ${(100 * r.ratios.withMerkleVsHashOnly).toFixed(0)} %)`);
  }
  const copies = args.quick ? 16 : 64;
  const pool = [];
  for (const [label, raw] of [['mainnet 426884', real], ['generated segwit-heavy', synthetic]]) {
    const inline = await poolThroughput(raw, 0, copies);
    const row = { block: label, inline };
    for (let t = 1; t <= Math.max(2, os.availableParallelism()); t++) row[`threads${t}`] = await poolThroughput(raw, t, copies);
    pool.push(row);
  }
  console.log('\nworker pool (parse + txids + identities + merkle, to columns), blocks/s:');
  printTable(pool.map((r) => {
    const out = { block: r.block, inline: r.inline.toFixed(1) };
    for (const k of Object.keys(r)) {
      if (k.startsWith('threads')) out[`${k.slice(7)} worker(s)`] = `${r[k].toFixed(1)} (${(r[k] / r.inline).toFixed(2)}x)`;
    }
    return out;
  }));
  fs.mkdirSync(path.dirname(args.json), { recursive: true });
  fs.writeFileSync(args.json, JSON.stringify({ date: new Date().toISOString(), node: process.version, cores: os.cpus().length, seed, results, pool }, null, 2));
  console.log(`\nresults written to ${path.relative(process.cwd(), args.json)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
