#!/usr/bin/env node
'use strict';

/**
 * Codec benchmark (benchmark.js): the values of a real index of a generated mainnet-like chain,
 * sized and timed per value kind, beside other encodings; the page-size and LZ4-threshold
 * sweeps; compact address ids measured; and an end-to-end sync with LZ4 on and off.
 *
 *   node bench/codec.js [--txs 200000] [--seed 1] [--dir DIR] [--max-time 0.5] [--no-e2e]
 *                       [--rounds 1] [--json bench/results/codec.json]
 *
 * The chain is generated into DIR (reused when it is already there: a DIR/blocks holding
 * blk*.dat and a DIR/chain.json {txs, blocks, bytes}), synced by bench/sync.js's sync phase in
 * child processes with ADDRINDEX_LZ4=1 and =0 (--rounds times each, alternating; the
 * main-thread CPU time is reported beside the wall time), and the rows of the LZ4-on index are
 * the values measured here.
 *
 * Side by side per kind: "fixed" a fixed-width encoding (the way 5–6-byte TxNum indexers and
 * the seed's 36-byte entries store them: TxNum 5 bytes + flags 1 per history entry, u64
 * amounts, u32 counts and vouts, 32-byte hashes), "codec" ours (schema 2, what is stored with
 * LZ4 off), "codec+lz4" every value's body LZ4-compressed when smaller, "zlib-1" and
 * "brotli-1" the codec's bytes compressed per value by node:zlib.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const zlib = require('node:zlib');
const { spawn } = require('node:child_process');
const { parseArgs } = require('node:util');
const Benchmark = require('benchmark');
const lz4 = require('lz4-napi');
const { open } = require('lmdb');
const { printTable } = require('./lib/table');
const layout = require('../lib/stores/layout');
const rec = require('../lib/codec/records');
const { Writer } = require('../lib/codec/io');
const { writePostings, readPostings } = require('../lib/codec/postings');
const { Reader } = require('../lib/codec/io');
const { varintLength } = require('../lib/codec/varint');

const { values: args } = parseArgs({
  options: {
    txs: { type: 'string', default: '200000' },
    seed: { type: 'string', default: '1' },
    dir: { type: 'string' },
    'max-time': { type: 'string', default: '0.5' },
    'no-e2e': { type: 'boolean', default: false },
    rounds: { type: 'string', default: '1' },
    json: { type: 'string', default: path.join(__dirname, 'results', 'codec.json') },
  },
});

const MB = 1e6;
const { P } = layout;

// --- data: a generated chain, synced ------------------------------------------------------

function run(script, argv, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...argv], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.on('error', reject);
    child.on('close', (c) => (c === 0 ? resolve(out) : reject(new Error(`${script} exited ${c}`))));
  });
}

async function chain(work) {
  const blocks = path.join(work, 'blocks');
  if (!fs.existsSync(path.join(blocks, 'blk00000.dat'))) {
    const { writeChain } = require('../tools/generator');
    const s = await writeChain({ dir: blocks, seed: args.seed, txs: Number(args.txs), network: 'regtest' });
    fs.writeFileSync(path.join(work, 'chain.json'), JSON.stringify({ txs: s.txs, blocks: s.blocks, bytes: s.bytes }));
  }
  const info = JSON.parse(fs.readFileSync(path.join(work, 'chain.json'), 'utf8'));
  return { dir: blocks, txs: info.txs, blockCount: info.blocks, bytes: info.bytes };
}

/** One sync of the chain into a fresh datadir, in its own process (bench/sync.js's phase). */
async function sync(blocks, datadir, lz4on) {
  fs.rmSync(datadir, { recursive: true, force: true });
  const out = await run(path.join(__dirname, 'sync.js'), ['--phase', 'sync', '--blocks', blocks, '--datadir', datadir], { ADDRINDEX_LZ4: lz4on ? '1' : '0' });
  const r = JSON.parse(out);
  return { ms: r.ms, mainCpuMs: r.mainCpuMs, cpuMs: r.cpuMs, txs: r.txs, bytes: r.stats.bytes, diskBytes: r.diskBytes };
}

/** Every row of an index, by table. */
function readRows(datadir) {
  const db = open({ path: datadir, encoding: 'binary', keyEncoding: 'binary', readOnly: true });
  const rows = {};
  for (const name of Object.keys(P)) rows[name] = [];
  for (const { key, value } of db.getRange({})) rows[layout.TABLE_OF.get(key[0])].push({ key: Buffer.from(key), value: Buffer.from(value) });
  db.close();
  return rows;
}

// --- sizes -----------------------------------------------------------------------------------

function tableSizes(rows, rawBytes) {
  const out = [];
  let total = 0;
  for (const [name, list] of Object.entries(rows)) {
    let k = 0;
    let v = 0;
    for (const r of list) {
      k += r.key.length;
      v += r.value.length;
    }
    total += k + v;
    out.push({ table: name, rows: list.length, keyBytes: k, valueBytes: v, share: (k + v) / rawBytes });
  }
  return { tables: out, total, share: total / rawBytes };
}

/** Full history per account (pages in key order, then the tail), and the posting bytes of tails. */
function histories(rows) {
  const acc = new rec.Account();
  const pagesOf = new Map();
  for (const { key, value } of rows.history) {
    const id = key.subarray(1, 1 + layout.HASHX_LEN).toString('latin1');
    const out = new Float64Array(rec.PAGE_ENTRIES);
    rec.decodePage(value, layout.pageKeyTxNum(key), out, 0);
    if (!pagesOf.has(id)) pagesOf.set(id, []);
    pagesOf.get(id).push(out);
  }
  const all = [];
  let tailBytes = 0;
  let inlineUtxoBytes = 0;
  let inlineUtxos = 0;
  for (const { key, value } of rows.account) {
    rec.decodeAccount(value, acc);
    const pages = pagesOf.get(key.subarray(1).toString('latin1')) || [];
    const h = new Float64Array(acc.txCount);
    let n = 0;
    for (const p of pages) {
      h.set(p, n);
      n += p.length;
    }
    h.set(acc.tail.subarray(0, acc.tailLen), n);
    all.push(h);
    tailBytes += postingBytes(acc.tail, 0, acc.tailLen, 0);
    let prev = 0;
    for (let i = 0; i < acc.utxoLen; i++) {
      inlineUtxoBytes += varintLength(acc.utxoTx[i] - prev) + varintLength(acc.utxoVout[i]) + varintLength(acc.utxoValue[i]);
      prev = acc.utxoTx[i];
    }
    inlineUtxos += acc.utxoLen;
  }
  return { all, tailBytes, inlineUtxoBytes, inlineUtxos };
}

function postingBytes(p, from, to, base) {
  let prev = base;
  let n = 0;
  for (let i = from; i < to; i++) {
    const t = Math.floor(p[i] / 4);
    n += varintLength((t - prev) * 4 + (p[i] % 4));
    prev = t;
  }
  return n;
}

// --- the encodings side by side ---------------------------------------------------------------

/** Fixed-width size of one value of each kind (see the header). */
const fixed = {
  history: () => 6 * rec.PAGE_ENTRIES,
  account: (v) => {
    const a = rec.decodeAccount(v, new rec.Account());
    return 8 * 3 + 4 * 4 + 6 * a.tailLen + a.utxoLen * (5 + 4 + 8);
  },
  outputs: (v, key) => 4 + rec.decodeOutputs(v, layout.readU40(key, 1)).count * (4 + 8 + 32),
  undo: (v) => {
    const u = rec.decodeUndo(v);
    return 8 + u.spentCount * (5 + 4 + 8 + 32) + u.dups.length * 9;
  },
  txids: (v) => v.length - 1,
  tx: () => 5,
};

/** The codec's own uncompressed bytes of a stored value (decompressing it when it is LZ4). */
function plain(v) {
  if (!(v[0] & 0x80)) return v;
  return Buffer.concat([Buffer.from([v[0] & 0x7f]), lz4.uncompressSync(v.subarray(1))]);
}

const ALTS = {
  'codec+lz4': (v) => Math.min(v.length, 1 + lz4.compressSync(v.subarray(1)).length),
  'zlib-1': (v) => 1 + zlib.deflateRawSync(v.subarray(1), { level: 1 }).length,
  'brotli-1': (v) => 1 + zlib.brotliCompressSync(v.subarray(1), { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } }).length,
};

function sideBySide(rows, kinds) {
  const out = [];
  for (const kind of kinds) {
    const list = rows[kind].map((r) => ({ key: r.key, value: plain(r.value) }));
    if (!list.length) continue;
    const row = { kind, values: list.length, fixed: 0, codec: 0 };
    for (const { key, value } of list) {
      row.fixed += fixed[kind](value, key);
      row.codec += value.length;
    }
    for (const [name, f] of Object.entries(ALTS)) {
      let n = 0;
      for (const { value } of list) n += f(value);
      row[name] = n;
    }
    out.push(row);
  }
  return out;
}

// --- throughput (benchmark.js) ------------------------------------------------------------------

function bench(name, fn, unitsPerOp, bytesPerOp) {
  return new Promise((resolve) => {
    const b = new Benchmark(name, fn, { maxTime: Number(args['max-time']), minSamples: 5 });
    b.on('complete', () => resolve({ name, opsPerSec: b.hz, rme: b.stats.rme, unitsPerSec: b.hz * unitsPerOp, mbPerSec: (b.hz * bytesPerOp) / MB }));
    b.run();
  });
}

/** A sample of up to n values of one kind, spread over the table. */
function sample(list, n) {
  const step = Math.max(1, Math.floor(list.length / n));
  const out = [];
  for (let i = 0; i < list.length && out.length < n; i += step) out.push(list[i]);
  return out;
}

async function throughput(rows) {
  const w = new Writer();
  const results = [];
  const sum = (list, f) => list.reduce((s, x) => s + f(x), 0);

  // history: decode and encode whole pages
  const pages = sample(rows.history, 2000);
  const pageBytes = sum(pages, (r) => r.value.length);
  const entries = pages.length * rec.PAGE_ENTRIES;
  const out = new Float64Array(rec.PAGE_ENTRIES);
  const firsts = pages.map((r) => layout.pageKeyTxNum(r.key));
  const decoded = pages.map((r, i) => {
    const o = new Float64Array(rec.PAGE_ENTRIES);
    rec.decodePage(r.value, firsts[i], o, 0);
    return o;
  });
  results.push(['history', 'decode', await bench('history decode', () => {
    for (let i = 0; i < pages.length; i++) rec.decodePage(pages[i].value, firsts[i], out, 0);
  }, entries, pageBytes)]);
  results.push(['history', 'encode', await bench('history encode', () => {
    for (let i = 0; i < decoded.length; i++) rec.encodePage(w, decoded[i], 0);
  }, entries, pageBytes)]);

  // accounts (summary, tail, inline UTXOs)
  const accounts = sample(rows.account, 20000);
  const accBytes = sum(accounts, (r) => r.value.length);
  const acc = new rec.Account();
  const accObjs = accounts.map((r) => {
    const a = new rec.Account();
    rec.decodeAccount(r.value, a);
    return a;
  });
  const accEntries = sum(accObjs, (a) => a.tailLen);
  results.push(['account', 'decode', await bench('account decode', () => {
    for (const r of accounts) rec.decodeAccount(r.value, acc);
  }, accEntries, accBytes)]);
  results.push(['account', 'encode', await bench('account encode', () => {
    for (const a of accObjs) rec.encodeAccount(w, a);
  }, accEntries, accBytes)]);

  // outputs rows (UTXOs by outpoint)
  const outs = sample(rows.outputs, 20000);
  const outBytes = sum(outs, (r) => r.value.length);
  const outObjs = outs.map((r) => rec.decodeOutputs(r.value, layout.readU40(r.key, 1)));
  const outCount = sum(outObjs, (o) => o.count);
  results.push(['outputs', 'decode', await bench('outputs decode', () => {
    for (const r of outs) rec.decodeOutputs(r.value, 0);
  }, outCount, outBytes)]);
  results.push(['outputs', 'encode', await bench('outputs encode', () => {
    for (const o of outObjs) {
      rec.writeOutputsHead(w, o.count);
      for (let k = 0; k < o.count; k++) rec.writeOutput(w, k ? o.vouts[k - 1] : -1, o.vouts[k], o.values[k], o.scripthashes, 32 * k);
      rec.endOutputs(w);
    }
  }, outCount, outBytes)]);

  // undo (LZ4 where stored so) and the same bodies through LZ4 / zlib / brotli
  const undos = rows.undo;
  const undoPlain = undos.map((r) => plain(r.value));
  const undoBytes = sum(undoPlain, (v) => v.length);
  const undoObjs = undos.map((r) => rec.decodeUndo(r.value));
  const spends = sum(undoObjs, (u) => u.spentCount);
  results.push(['undo', 'decode (as stored)', await bench('undo decode', () => {
    for (const r of undos) rec.decodeUndo(r.value);
  }, spends, undoBytes)]);
  results.push(['undo', 'encode (as stored)', await bench('undo encode', () => {
    for (const u of undoObjs) rec.encodeUndo(w, u.spentCount, u.txNums, u.vouts, u.values, u.scripthashes, 0, u.dups);
  }, spends, undoBytes)]);

  // the general-purpose compressors on the same bytes (all kinds' codec bytes concatenated per value)
  const mixed = [...pages.map((r) => r.value), ...accounts.map((r) => r.value), ...undoPlain];
  const mixedBytes = sum(mixed, (v) => v.length);
  const packed = {
    lz4: mixed.map((v) => lz4.compressSync(v)),
    zlib: mixed.map((v) => zlib.deflateRawSync(v, { level: 1 })),
    brotli: mixed.map((v) => zlib.brotliCompressSync(v, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } })),
  };
  results.push(['mixed', 'lz4 compress', await bench('lz4 compress', () => { for (const v of mixed) lz4.compressSync(v); }, mixed.length, mixedBytes)]);
  results.push(['mixed', 'lz4 decompress', await bench('lz4 decompress', () => { for (const v of packed.lz4) lz4.uncompressSync(v); }, mixed.length, mixedBytes)]);
  results.push(['mixed', 'zlib-1 compress', await bench('zlib compress', () => { for (const v of mixed) zlib.deflateRawSync(v, { level: 1 }); }, mixed.length, mixedBytes)]);
  results.push(['mixed', 'zlib-1 decompress', await bench('zlib decompress', () => { for (const v of packed.zlib) zlib.inflateRawSync(v); }, mixed.length, mixedBytes)]);
  results.push(['mixed', 'brotli-1 compress', await bench('brotli compress', () => {
    for (const v of mixed) zlib.brotliCompressSync(v, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } });
  }, mixed.length, mixedBytes)]);
  results.push(['mixed', 'brotli-1 decompress', await bench('brotli decompress', () => { for (const v of packed.brotli) zlib.brotliDecompressSync(v); }, mixed.length, mixedBytes)]);
  return { results };
}

// --- sweeps ------------------------------------------------------------------------------------

/**
 * Page size: for each size, the bytes every history would take (pages: key + format byte +
 * postings; the account's tail: its postings), the bytes an append rewrites on average (the
 * tail, which grows to a page before it is sealed), LZ4 on whole pages, and decode speed.
 */
async function pageSweep(hist) {
  const keyLen = layout.PAGE_KEY_LEN;
  const out = [];
  const w = new Writer();
  for (const size of [16, 32, 64, 128, 256, 512]) {
    let pages = 0;
    let pageBytes = 0;
    let lz4Bytes = 0;
    let tailBytes = 0;
    let entries = 0;
    let rewrite = 0;
    let appends = 0;
    const pageValues = [];
    for (const h of hist.all) {
      const n = h.length;
      entries += n;
      const sealed = n === 0 ? 0 : Math.floor((n - 1) / size) * size;
      for (let s = 0; s < sealed; s += size) {
        w.begin();
        w.u8(1);
        writePostings(w, h, s, s + size, Math.floor(h[s] / 4));
        const v = w.end();
        pages++;
        pageBytes += keyLen + v.length;
        lz4Bytes += keyLen + Math.min(v.length, 1 + lz4.compressSync(v.subarray(1)).length);
        if (pageValues.length < 2000) pageValues.push({ v: Buffer.from(v), first: Math.floor(h[s] / 4) });
      }
      tailBytes += postingBytes(h, sealed, n, 0);
      // an append at entry i rewrites the tail as it is after it: (i mod size) + 1 entries
      for (let i = 0; i < n; i++) rewrite += (i % size) + 1;
      appends += n;
    }
    const buf = new Float64Array(size);
    const decode = pageValues.length ? await bench(`page ${size} decode`, () => {
      for (const p of pageValues) {
        const r = new Reader(p.v, 'page', 1);
        readPostings(r, size, p.first, true, buf, 0);
      }
    }, pageValues.length * size, pageValues.reduce((s, p) => s + p.v.length, 0)) : null;
    out.push({
      size, pages, bytesPerEntry: (pageBytes + tailBytes) / entries, withLz4PerEntry: (lz4Bytes + tailBytes) / entries,
      tailEntriesRewrittenPerAppend: rewrite / appends, decodeEntriesPerSec: decode ? decode.unitsPerSec : null,
    });
  }
  return out;
}

/** LZ4 threshold per kind: bytes stored and the time to store and to read them all. */
function thresholdSweep(rows, kinds) {
  const out = [];
  for (const kind of kinds) {
    const values = rows[kind].map((r) => plain(r.value));
    const rawBytes = values.reduce((s, v) => s + v.length, 0);
    for (const t of [0, 64, 128, 256, 512, 1024, 4096, Infinity]) {
      let bytes = 0;
      let compressed = 0;
      let stored = [];
      // the best of 3 passes: one pass is a few ms, and the machine is shared
      let encMs = Infinity;
      let decMs = Infinity;
      for (let pass = 0; pass < 3; pass++) {
        bytes = 0;
        compressed = 0;
        stored = [];
        const t0 = process.hrtime.bigint();
        for (const v of values) {
          let s = v;
          if (v.length >= t) {
            const c = lz4.compressSync(v.subarray(1));
            if (c.length + 1 < v.length) {
              s = Buffer.concat([Buffer.from([v[0] | 0x80]), c]);
              compressed++;
            }
          }
          bytes += s.length;
          stored.push(s);
        }
        encMs = Math.min(encMs, Number(process.hrtime.bigint() - t0) / 1e6);
        const t1 = process.hrtime.bigint();
        for (const s of stored) if (s[0] & 0x80) lz4.uncompressSync(s.subarray(1));
        decMs = Math.min(decMs, Number(process.hrtime.bigint() - t1) / 1e6);
      }
      out.push({ kind, threshold: t === Infinity ? 'never' : t, values: values.length, compressed, bytes, saved: 1 - bytes / rawBytes, encodeMs: encMs, decodeMs: decMs });
    }
  }
  return out;
}

/**
 * Compact address ids: the outputs rows with a 4-byte account id in place of the 32-byte
 * script hash, plus the id -> script hash rows getPrevouts would then need (one per account:
 * key 1 + 4, value 1 + 32), against what the rows take now.
 */
function compactIds(rows) {
  let outputs = 0;
  for (const { value, key } of rows.outputs) outputs += rec.decodeOutputs(value, layout.readU40(key, 1)).count;
  const accounts = rows.account.length;
  const saved = outputs * (32 - 4);
  const cost = accounts * (1 + 4 + 1 + 32) + accounts * 4; // the map, and the id in each account row
  return { outputs, accounts, bytesSavedInOutputs: saved, bytesAddedForIds: cost, net: saved - cost };
}

// --- main ----------------------------------------------------------------------------------------

async function main() {
  const work = args.dir || fs.mkdtempSync(path.join(os.tmpdir(), 'addrindex-bench-codec-'));
  const t0 = Date.now();
  console.log(`bench/codec: --txs ${Number(args.txs).toLocaleString('en-US')} --seed ${args.seed} (when it generates); node ${process.version}, ` +
    `${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(2)}; work dir ${work}`);
  try {
    const c = await chain(work);
    console.log(`chain: ${c.blockCount} blocks, ${c.txs.toLocaleString('en-US')} txs, ${(c.bytes / MB).toFixed(1)} MB of raw blocks`);
    const e2e = [];
    if (!args['no-e2e']) {
      // rounds alternate on and off, so drifting load hits both alike; the fastest of each counts
      const runs = [];
      for (let k = 0; k < Number(args.rounds); k++) {
        runs.push({ lz4: true, ...(await sync(c.dir, path.join(work, 'index'), true)) });
        runs.push({ lz4: false, ...(await sync(c.dir, path.join(work, 'index-nolz4'), false)) });
      }
      for (const on of [true, false]) e2e.push(runs.filter((r) => r.lz4 === on).reduce((a, b) => (b.ms < a.ms ? b : a)));
      console.log(`\nend to end: sync of the whole chain into LMDB, LZ4 on and off (own process each; fastest of ${args.rounds})`);
      printTable(e2e.map((r) => ({
        lz4: r.lz4 ? 'on' : 'off', 's': (r.ms / 1000).toFixed(1), 'tx/s': Math.round(r.txs / (r.ms / 1000)).toLocaleString('en-US'),
        'main-thread CPU s': (r.mainCpuMs / 1000).toFixed(1), 'index MB': (r.bytes / MB).toFixed(2), 'disk MB': (r.diskBytes / MB).toFixed(1),
      })));
      const [on, off] = e2e;
      console.log(`LZ4 on / off: wall ${(on.ms / off.ms).toFixed(3)}, main-thread CPU ${(on.mainCpuMs / off.mainCpuMs).toFixed(3)}, ` +
        `index bytes ${(on.bytes / off.bytes).toFixed(3)}`);
    } else if (!fs.existsSync(path.join(work, 'index', 'data.mdb'))) {
      await sync(c.dir, path.join(work, 'index'), true);
    }

    const rows = readRows(path.join(work, 'index'));
    const sizes = tableSizes(rows, c.bytes);
    const hist = histories(rows);
    const entries = hist.all.reduce((s, h) => s + h.length, 0);
    const pageBytes = rows.history.reduce((s, r) => s + r.key.length + r.value.length, 0);
    let utxoRowBytes = 0;
    for (const r of rows.utxo) utxoRowBytes += r.key.length + r.value.length;
    let outputsBytes = 0;
    let outputsCount = 0;
    for (const r of rows.outputs) {
      outputsBytes += r.key.length + r.value.length;
      outputsCount += rec.decodeOutputs(r.value, layout.readU40(r.key, 1)).count;
    }
    const perEntry = (pageBytes + hist.tailBytes) / entries;
    const perUtxo = (outputsBytes + utxoRowBytes + hist.inlineUtxoBytes) / outputsCount;
    console.log(`\nindex rows (LZ4 on): ${(sizes.total / MB).toFixed(2)} MB = ${(100 * sizes.share).toFixed(1)} % of the raw blocks`);
    printTable(sizes.tables.map((t) => ({
      table: t.table, rows: t.rows.toLocaleString('en-US'), 'key MB': (t.keyBytes / MB).toFixed(2), 'value MB': (t.valueBytes / MB).toFixed(2),
      '% of raw': (100 * t.share).toFixed(2),
    })));
    console.log(`history: ${entries.toLocaleString('en-US')} entries, ${perEntry.toFixed(2)} B per entry (pages with their keys + the accounts' tail postings); ` +
      `UTXOs: ${outputsCount.toLocaleString('en-US')}, ${perUtxo.toFixed(1)} B per UTXO (outputs rows + utxo rows + inline entries)`);

    const kinds = ['history', 'account', 'outputs', 'undo', 'txids', 'tx'];
    const side = sideBySide(rows, kinds);
    console.log('\nbytes per kind, side by side (values only)');
    printTable(side.map((r) => ({
      kind: r.kind, values: r.values.toLocaleString('en-US'), 'fixed MB': (r.fixed / MB).toFixed(2), 'codec MB': (r.codec / MB).toFixed(2),
      'codec+lz4 MB': (r['codec+lz4'] / MB).toFixed(2), 'zlib-1 MB': (r['zlib-1'] / MB).toFixed(2), 'brotli-1 MB': (r['brotli-1'] / MB).toFixed(2),
    })));

    const tp = await throughput(rows);
    console.log('\nthroughput (benchmark.js; units: history entries, account tail entries, outputs, undo spends, values)');
    printTable(tp.results.map(([kind, op, r]) => ({
      kind, op, 'units/s': Math.round(r.unitsPerSec).toLocaleString('en-US'), 'MB/s': r.mbPerSec.toFixed(1), '±%': r.rme.toFixed(1),
    })));

    const pages = await pageSweep(hist);
    console.log('\npage-size sweep (history entries per sealed page)');
    printTable(pages.map((p) => ({
      size: p.size, pages: p.pages.toLocaleString('en-US'), 'B/entry': p.bytesPerEntry.toFixed(3), 'B/entry lz4': p.withLz4PerEntry.toFixed(3),
      'tail entries rewritten/append': p.tailEntriesRewrittenPerAppend.toFixed(1),
      'decode entries/s': p.decodeEntriesPerSec ? Math.round(p.decodeEntriesPerSec).toLocaleString('en-US') : '',
    })));

    const thresholds = thresholdSweep(rows, ['undo', 'outputs', 'account', 'history']);
    console.log('\nLZ4 threshold sweep (compress a value when at least this many bytes and smaller)');
    printTable(thresholds.map((t) => ({
      kind: t.kind, threshold: String(t.threshold), compressed: t.compressed.toLocaleString('en-US'), MB: (t.bytes / MB).toFixed(3),
      saved: `${(100 * t.saved).toFixed(1)} %`, 'encode ms': t.encodeMs.toFixed(0), 'decode ms': t.decodeMs.toFixed(0),
    })));

    const ids = compactIds(rows);
    console.log(`\ncompact address ids in outputs rows: ${(ids.bytesSavedInOutputs / MB).toFixed(2)} MB saved, ` +
      `${(ids.bytesAddedForIds / MB).toFixed(2)} MB added for the id map: net ${(ids.net / MB).toFixed(2)} MB`);

    const hd = tp.results.find(([k, op]) => k === 'history' && op === 'decode')[2].unitsPerSec;
    const he = tp.results.find(([k, op]) => k === 'history' && op === 'encode')[2].unitsPerSec;
    const e2eRatio = e2e.length ? e2e[0].ms / e2e[1].ms : null;
    const targets = [
      { target: 'history <= 3 B per entry', measured: `${perEntry.toFixed(2)} B`, met: perEntry <= 3 ? 'yes' : 'no' },
      { target: 'index <= 15 % of raw blocks', measured: `${(100 * sizes.share).toFixed(1)} %`, met: sizes.share <= 0.15 ? 'yes' : 'no' },
      { target: 'history decode >= 30M entries/s', measured: `${(hd / 1e6).toFixed(1)}M`, met: hd >= 30e6 ? 'yes' : 'no' },
      { target: 'history encode >= 10M entries/s', measured: `${(he / 1e6).toFixed(1)}M`, met: he >= 10e6 ? 'yes' : 'no' },
      { target: 'sync with LZ4 within 10 % of without', measured: e2eRatio ? `${e2eRatio.toFixed(3)}x wall` : 'not run', met: e2eRatio ? (e2eRatio <= 1.1 ? 'yes' : 'no') : '' },
    ];
    console.log('\ntargets:');
    printTable(targets);
    const result = {
      date: new Date().toISOString(), node: process.version, cores: os.cpus().length, loadAvg: os.loadavg(), options: args,
      chain: { txs: c.txs, bytes: c.bytes }, e2e, sizes, historyEntries: entries, bytesPerHistoryEntry: perEntry,
      utxos: outputsCount, bytesPerUtxo: perUtxo, sideBySide: side,
      throughput: tp.results.map(([kind, op, r]) => ({ kind, op, ...r })), pageSweep: pages, thresholdSweep: thresholds,
      compactIds: ids, targets, seconds: (Date.now() - t0) / 1000,
    };
    fs.mkdirSync(path.dirname(args.json), { recursive: true });
    fs.writeFileSync(args.json, JSON.stringify(result, null, 2));
    console.log(`\nresults written to ${path.relative(process.cwd(), args.json)} (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  } finally {
    if (!args.dir) fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
