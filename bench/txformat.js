#!/usr/bin/env node
'use strict';

/**
 * What serving a whole transaction costs, beside baselines run in the same process:
 *
 *  1. formatting, per transaction of real and generated blocks: Esplora's and insight's JSON
 *     (parse in detail mode, asm, types, addresses, fee; then JSON.stringify), against
 *     bitcore-lib decoding the same bytes and naming the same things (new Transaction(bytes),
 *     then toASM and toAddress per script);
 *  2. reading a block again: BlockReader cold (cache cleared: positioned read, header hash,
 *     parse, merkle check) and warm (an LRU hit), against a bare fs read of the same bytes and
 *     against parseBlock of bytes already in memory; and one transaction read alone from its
 *     place (readTx: the header and the transaction's bytes, both hashed);
 *  3. the memory a parsed block keeps alive, measured with the GC forced, against the
 *     reader's estimate (estimateCost), which bounds its cache.
 *
 *   node --expose-gc bench/txformat.js [--seed N] [--quick] [--json FILE]
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseArgs } = require('node:util');
const Benchmark = require('benchmark');
const bitcore = require('bitcore-lib');
const { parseBlock } = require('../lib/chain/block');
const { esploraTx } = require('../lib/api/esplora-format');
const { insightTx } = require('../lib/api/insight-format');
const { BlockReader, estimateCost } = require('../lib/sources/blockreader');
const { NETWORKS } = require('../lib/chain/networks');
const { generateSegwitBlock } = require('./lib/blocks');
const { printTable } = require('./lib/table');

const { values: args } = parseArgs({
  options: {
    seed: { type: 'string', default: '1' },
    quick: { type: 'boolean', default: false },
    json: { type: 'string', default: path.join(__dirname, 'results', 'txformat.json') },
  },
});

const FIXTURES = path.join(__dirname, '..', 'test', 'fixtures');
const opts = args.quick ? { maxTime: 1, minSamples: 5 } : { maxTime: 3, minSamples: 15 };

/**
 * Prevouts for every input, taken round-robin from the block's own outputs so their script
 * types and values are the block's mix (the index will supply the real ones).
 */
function standInPrevouts(block) {
  const pool = [];
  for (const tx of block.txs) for (const o of tx.outputs) pool.push({ value: o.value, script: o.script });
  let k = 0;
  return block.txs.map((tx) => (tx.coinbase ? [null] : tx.inputs.map(() => {
    const p = pool[k++ % pool.length];
    return { value: p.value + 1e8, script: p.script };
  })));
}

function runFormat(name, raw, network) {
  const block = parseBlock(raw);
  const prevouts = standInPrevouts(block);
  const info = { height: 500000, hash: block.hash, time: block.time };
  const txRaws = block.txs.map((t) => Buffer.from(t.raw));
  const T = block.txs.length;
  const net = network === 'main' ? bitcore.Networks.livenet : bitcore.Networks.testnet;
  const rows = [];
  const suite = new Benchmark.Suite(name);
  suite
    .add('bitcore-lib: decode + toASM + toAddress per script', () => {
      let n = 0;
      for (const buf of txRaws) {
        const tx = new bitcore.Transaction(buf);
        for (const i of tx.inputs) {
          const script = i.script; // null for a coinbase, which bitcore-lib does not read as a script
          if (script) n += script.toASM().length;
        }
        for (const o of tx.outputs) {
          n += o.script.toASM().length;
          if (o.script.toAddress(net)) n++;
        }
      }
      return n;
    }, opts)
    .add('addrindex: Esplora tx objects', () => {
      for (let i = 0; i < T; i++) esploraTx(block.txs[i], { prevouts: prevouts[i], block: info, network });
    }, opts)
    .add('addrindex: Esplora tx JSON (objects + stringify)', () => {
      let n = 0;
      for (let i = 0; i < T; i++) n += JSON.stringify(esploraTx(block.txs[i], { prevouts: prevouts[i], block: info, network })).length;
      return n;
    }, opts)
    .add('addrindex: insight tx JSON (objects + stringify)', () => {
      let n = 0;
      for (let i = 0; i < T; i++) {
        n += JSON.stringify(insightTx(block.txs[i], { prevouts: prevouts[i], block: info, tipHeight: 500010, network })).length;
      }
      return n;
    }, opts)
    .on('cycle', (e) => {
      const b = e.target;
      if (b.error) throw b.error;
      rows.push({ name: b.name, usPerTx: 1e6 / (b.hz * T), txPerSec: b.hz * T, rme: b.stats.rme });
      process.stderr.write(`  ${name}: ${String(b)}\n`);
    })
    .run();
  const by = (prefix) => rows.find((r) => r.name.startsWith(prefix));
  return {
    block: name, bytes: raw.length, txs: T,
    ios: block.txs.reduce((s, t) => s + t.inputs.length + t.outputs.length, 0), rows,
    esploraVsBitcore: by('bitcore').usPerTx / by('addrindex: Esplora tx JSON').usPerTx,
  };
}

/** A blk file holding the three real mainnet blocks, as Core frames them; their locators. */
function writeBlkFile(dir, raws) {
  const parts = [];
  const locators = [];
  let pos = 0;
  for (const raw of raws) {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(NETWORKS.main.magic, 0);
    head.writeUInt32LE(raw.length, 4);
    parts.push(head, raw);
    locators.push({ file: 0, offset: pos + 8, length: raw.length });
    pos += 8 + raw.length;
  }
  fs.writeFileSync(path.join(dir, 'blk00000.dat'), Buffer.concat(parts));
  return locators;
}

/** Mean microseconds per call of an async function, median of `rounds` timed batches. */
async function timeAsync(fn, n, rounds) {
  const per = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await fn(i);
    per.push(Number(process.hrtime.bigint() - t0) / 1e3 / n);
  }
  per.sort((a, b) => a - b);
  return per[per.length >> 1];
}

async function runReader(raws) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'addrindex-bench-reader-'));
  try {
    const locators = writeBlkFile(dir, raws);
    const hashes = raws.map((r) => parseBlock(r).hash);
    const reader = new BlockReader({ dir, network: 'main', maxBytes: 256 << 20 });
    const fh = await fs.promises.open(path.join(dir, 'blk00000.dat'), 'r');
    const rounds = args.quick ? 3 : 7;
    const n = args.quick ? 10 : 30;
    const rows = [];
    try {
      for (let b = 0; b < raws.length; b++) {
        const loc = locators[b];
        const label = `${(raws[b].length / 1e3).toFixed(0)} KB, ${parseBlock(raws[b]).txs.length} txs`;
        await reader.read(hashes[b], loc); // warm the page cache and the JIT
        const bare = await timeAsync(async () => {
          const buf = Buffer.allocUnsafe(loc.length);
          await fh.read(buf, 0, loc.length, loc.offset);
        }, n, rounds);
        const parse = await timeAsync(async () => parseBlock(raws[b]), n, rounds);
        const cold = await timeAsync(async () => {
          reader.clear();
          await reader.read(hashes[b], loc);
        }, n, rounds);
        const warm = await timeAsync(() => reader.read(hashes[b], loc), n * 100, rounds);
        // one transaction alone from its place (what a per-transaction offset table allows)
        const txs = parseBlock(raws[b]).txs;
        reader.clear();
        const oneTx = await timeAsync(async (i) => {
          const t = txs[(i * 7919) % txs.length];
          const got = await reader.readTx(t.hash, hashes[b], loc, { offset: t.offset, length: t.size });
          if (got.from !== 'tx') throw new Error('readTx fell back to the block');
        }, n * 10, rounds);
        rows.push({ block: label, bareReadUs: bare, parseUs: parse, coldUs: cold, warmUs: warm, txAloneUs: oneTx });
      }
    } finally {
      await fh.close();
      await reader.close();
    }
    return rows;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Heap + external bytes a parsed block keeps alive, per block, with copies held at once. */
function measureRetained(raw, copies) {
  if (typeof global.gc !== 'function') return null;
  const used = () => {
    global.gc();
    global.gc();
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  const before = used();
  const keep = [];
  for (let i = 0; i < copies; i++) keep.push(parseBlock(Buffer.from(raw)));
  const after = used();
  const measured = (after - before) / copies;
  return { measured, estimated: estimateCost(keep[0]), ratio: estimateCost(keep[0]) / measured };
}

async function main() {
  const seed = Number(args.seed);
  const read = (rel) => fs.readFileSync(path.join(FIXTURES, rel));
  const mainnet = ['mainnet/block300025.raw', 'mainnet/block426884.raw', 'mainnet/block482683.raw'].map(read);
  const testnet = read('testnet/block928816.raw');
  const synthetic = generateSegwitBlock({ seed, minBytes: 1.2e6 });
  console.log(`machine: ${os.cpus().length} cores, node ${process.version}, load ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}; generated block seed ${seed}`);

  const format = [
    runFormat('mainnet 426884 (2016)', mainnet[1], 'main'),
    runFormat('testnet 928816 (segwit, 2016)', testnet, 'testnet'),
    runFormat(`generated segwit-heavy (${(synthetic.length / 1e6).toFixed(2)} MB)`, synthetic, 'testnet'),
  ];
  for (const r of format) {
    console.log(`\nformatting, ${r.block}: ${r.txs} txs, ${r.ios} inputs + outputs`);
    printTable(r.rows.map((x) => ({ what: x.name, 'µs/tx': x.usPerTx.toFixed(1), 'tx/s': Math.round(x.txPerSec).toLocaleString('en-US'), '±%': x.rme.toFixed(1) })));
    console.log(`Esplora JSON vs bitcore-lib's decoding alone: ${r.esploraVsBitcore.toFixed(1)}x faster`);
  }

  const reader = await runReader(mainnet);
  console.log('\nblock reader (µs per block; the file sits in the page cache: disk latency is not measured):');
  printTable(reader.map((r) => ({
    block: r.block, 'bare fs read': r.bareReadUs.toFixed(0), 'parseBlock only': r.parseUs.toFixed(0),
    'reader cold': r.coldUs.toFixed(0), 'reader warm': r.warmUs.toFixed(2), 'cold/(read+parse)': (r.coldUs / (r.bareReadUs + r.parseUs)).toFixed(2),
    'one tx alone (readTx)': r.txAloneUs.toFixed(0),
  })));

  const memory = [];
  for (const [label, raw] of [['mainnet 426884', mainnet[1]], ['mainnet 300025', mainnet[0]], ['testnet 928816', testnet], ['generated segwit-heavy', synthetic]]) {
    const m = measureRetained(raw, args.quick ? 5 : 20);
    if (m) memory.push({ block: label, ...m });
  }
  if (memory.length) {
    console.log('\nmemory a parsed block keeps alive (the cache\'s unit):');
    printTable(memory.map((m) => ({
      block: m.block, 'measured KB': (m.measured / 1e3).toFixed(0), 'estimateCost KB': (m.estimated / 1e3).toFixed(0), 'estimate/measured': m.ratio.toFixed(2),
    })));
  } else {
    console.log('\n(run with node --expose-gc for the memory a parsed block keeps alive)');
  }

  fs.mkdirSync(path.dirname(args.json), { recursive: true });
  fs.writeFileSync(args.json, JSON.stringify({
    date: new Date().toISOString(), node: process.version, cores: os.cpus().length, load: os.loadavg(), seed, format, reader, memory,
  }, null, 2));
  console.log(`\nresults written to ${path.relative(process.cwd(), args.json)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
