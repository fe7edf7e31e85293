#!/usr/bin/env node
'use strict';

/**
 * The seed's storage experiments, side by side, on one data set:
 *
 *  1. write 100,000 addresses × 2 txids;
 *  2. the merged history of 10,000 and of 100,000 of those addresses, sorted by height;
 *  3. sync of a generated chain: tx/s and size on disk.
 *
 * Rows: addrindex's LMDB, LevelDB and MongoDB stores (MongoDB measured on FerretDB unless
 * MONGODB_URL names a real server), the seed's own schemas as baselines (LevelDB with one
 * concatenated value per address, LevelDB with a row per address and txid hex, MongoDB with a
 * document per address and tx), and node-lmdb as an extra LMDB row.
 *
 *   node bench/stores.js [--addresses 100000] [--seed 1] [--sync-txs 100000]
 *                        [--baseline-sync-txs 20000] [--mongo-addresses 10000] [--mongo-sync-txs 5000]
 *                        [--no-mongo]
 *                        [--json bench/results/stores.json]
 *
 * Data: every address is a P2PKH key hash; its two txs are random among 2N txs spread over
 * 200-tx blocks, so the merged history interleaves the addresses. Every read is checked
 * against the data set before its time counts, and runs in a fresh process that opens the
 * database written by the main one (as a server worker would), best of 8 (10k) and 3 (100k)
 * runs after a warm-up; wall and CPU time are both reported (the machine may be shared).
 *
 * "write (apply)" is the whole index through store.apply() in 100-block batches (txid map,
 * outputs, account rows, txids, blocks, undo); "write (rows, 1 commit)" is only the rows a
 * history read needs (account rows from the codec, txids rows, block rows, tip) in one
 * commit: the seed's write in addrindex's schema, checked equal to what apply() wrote.
 *
 * The MongoDB rows run on a smaller data set (--mongo-addresses, same generator): FerretDB's
 * SQLite backend filters nothing but _id in SQL, so every other query is a scan of the whole
 * collection, and 100,000 addresses would take most of an hour there.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync, spawn } = require('node:child_process');
const { parseArgs } = require('node:util');
const { printTable } = require('./lib/table');
const { heightHolding, boundedSource } = require('./lib/prefix');
const { Rng } = require('../tools/generator/rng');
const { outputScripthash, ADDR_TYPE_CODE } = require('../lib/chain/script');
const { encodeAddress } = require('../lib/chain/address');
const { toDisplayHex } = require('../lib/chain/hash');
const { Writer } = require('../lib/codec/io');
const records = require('../lib/codec/records');
const { posting, FUNDED } = require('../lib/codec/postings');
const layout = require('../lib/stores/layout');
const { WriteBatch } = require('../lib/stores/kvstore');

const { values: args } = parseArgs({
  options: {
    addresses: { type: 'string', default: '100000' },
    seed: { type: 'string', default: '1' },
    'sync-txs': { type: 'string', default: '100000' },
    'baseline-sync-txs': { type: 'string', default: '20000' },
    'mongo-sync-txs': { type: 'string', default: '5000' },
    'mongo-addresses': { type: 'string', default: '10000' },
    'no-mongo': { type: 'boolean', default: false },
    json: { type: 'string', default: path.join(__dirname, 'results', 'stores.json') },
    // internal: the read phase, run in a process of its own
    phase: { type: 'string' },
    spec: { type: 'string' },
  },
});

const N = Number(args.addresses);
const PER_BLOCK = 200;
const APPLY_BLOCKS = 100; // blocks per apply(): 20,000 txs, a sync-sized batch
const NETWORK = 'regtest';
const SEED_FIGURES = { write: 1784, hist10k: 157, hist100k: 1784, mongo10k: 255, mongo100k: 2399 };

// ---------------------------------------------------------------------------------------
// the data set

/**
 * N addresses with two txs each: tx k (k < 2N) sits at height 1 + floor(k / 200), TxNum k + 1
 * (height 0 holds one unindexed tx, as a genesis block does).
 */
function makeData(seed, n) {
  const rng = Rng.from(`bench/stores ${seed}`);
  const T = 2 * n;
  const keyHashes = Buffer.alloc(20 * n);
  rng.fill(keyHashes, 0, keyHashes.length);
  const shs = Buffer.alloc(32 * n);
  const addresses = new Array(n);
  for (let a = 0; a < n; a++) {
    const script = Buffer.concat([Buffer.from([0x76, 0xa9, 0x14]), keyHashes.subarray(20 * a, 20 * a + 20), Buffer.from([0x88, 0xac])]);
    outputScripthash(script).copy(shs, 32 * a);
    addresses[a] = encodeAddress(script, NETWORK);
  }
  const txids = Buffer.alloc(32 * T);
  rng.fill(txids, 0, txids.length);
  // owner[k]: the address tx k pays; each address twice, in random order
  const owner = new Uint32Array(T);
  for (let k = 0; k < T; k++) owner[k] = k >>> 1;
  for (let k = T - 1; k > 0; k--) {
    const j = rng.below(k + 1);
    const t = owner[k];
    owner[k] = owner[j];
    owner[j] = t;
  }
  const values = new Float64Array(T);
  for (let k = 0; k < T; k++) values[k] = 546 + rng.below(1e8);
  const txsOf = new Uint32Array(T); // address a's txs at [2a, 2a + 2), ascending
  const seen = new Uint8Array(n);
  for (let k = 0; k < T; k++) txsOf[2 * owner[k] + seen[owner[k]]++] = k;
  const blocks = Math.ceil(T / PER_BLOCK);
  const hashes = Buffer.alloc(32 * (blocks + 1));
  rng.fill(hashes, 0, hashes.length);
  return { n, T, keyHashes, shs, addresses, txids, owner, values, txsOf, blocks, hashes };
}

const heightOfTx = (k) => 1 + Math.floor(k / PER_BLOCK);

/** The block deltas of the data set, as the sync hands them to apply(). */
function makeDeltas(d) {
  const noSpends = { values: new Float64Array(0), scripthashes: Buffer.alloc(0), heights: new Uint32Array(0), txNums: new Float64Array(0) };
  const hashHex = (h) => toDisplayHex(d.hashes.subarray(32 * h, 32 * h + 32));
  const column = (height, count, fill) => {
    const idHash = Buffer.alloc(32 * count);
    const scripthashes = Buffer.alloc(32 * count);
    const values = new Float64Array(count);
    const txids = Buffer.alloc(32 * count);
    const outStart = new Uint32Array(count + 1);
    for (let i = 0; i <= count; i++) outStart[i] = i;
    const idType = new Uint8Array(count);
    const idLen = new Uint8Array(count);
    fill({ idHash, scripthashes, values, txids, idType, idLen });
    return {
      hash: hashHex(height), prev: height ? hashHex(height - 1) : '00'.repeat(32), time: 1700000000 + 600 * height,
      size: 250 * count, txCount: count, txids, inStart: new Uint32Array(count + 1), outStart,
      prevouts: Buffer.alloc(0), values, idType, idLen, idHash, scripthashes,
    };
  };
  const out = [{ height: 0, firstTxNum: 0, spent: noSpends, cols: column(0, 1, (c) => c.txids.fill(0xee)) }];
  for (let h = 1; h <= d.blocks; h++) {
    const from = (h - 1) * PER_BLOCK;
    const count = Math.min(PER_BLOCK, d.T - from);
    out.push({
      height: h, firstTxNum: from + 1, spent: noSpends,
      cols: column(h, count, (c) => {
        d.txids.copy(c.txids, 0, 32 * from, 32 * (from + count));
        for (let i = 0; i < count; i++) {
          const a = d.owner[from + i];
          c.values[i] = d.values[from + i];
          c.idType[i] = ADDR_TYPE_CODE.p2pkh;
          c.idLen[i] = 20;
          d.keyHashes.copy(c.idHash, 32 * i, 20 * a, 20 * a + 20);
          d.shs.copy(c.scripthashes, 32 * i, 32 * a, 32 * a + 32);
        }
      }),
    });
  }
  return out;
}

/** The expected merged history of addresses [0, m): TxNums in order (each tx pays one address). */
function expectedMerged(d, m) {
  const txs = new Float64Array(2 * m);
  for (let a = 0; a < m; a++) {
    txs[2 * a] = d.txsOf[2 * a];
    txs[2 * a + 1] = d.txsOf[2 * a + 1];
  }
  return txs.sort();
}

/**
 * Throws unless `got` is the merged history of addresses [0, m): every height in order and the
 * same txids (the seed's answers order equal heights freely; ours must be in TxNum order).
 */
function checkMerged(d, m, got, what, exact = false) {
  const want = expectedMerged(d, m);
  if (got.length !== want.length) throw new Error(`${what}: ${got.length} entries, expected ${want.length}`);
  const a = new Array(want.length);
  const b = new Array(want.length);
  for (let i = 0; i < want.length; i++) {
    const k = want[i];
    const e = got[i];
    if (e.height !== heightOfTx(k)) throw new Error(`${what}: entry ${i} at height ${e.height}, expected ${heightOfTx(k)}`);
    if (exact && (e.txNum !== k + 1 || !d.txids.subarray(32 * k, 32 * k + 32).equals(e.txid))) throw new Error(`${what}: entry ${i} is not tx ${k}`);
    a[i] = d.txids.latin1Slice(32 * k, 32 * k + 32);
    b[i] = Buffer.from(e.txid).latin1Slice(0, 32);
  }
  a.sort();
  b.sort();
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) throw new Error(`${what}: the txids differ`);
}

// ---------------------------------------------------------------------------------------
// timing

function now() {
  return process.hrtime.bigint();
}

function msSince(t0) {
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

/** Wall and process CPU milliseconds of fn. */
async function timed(fn) {
  // (no forced GC before a run: it shrinks the young generation and the run pays for it)
  const c0 = process.cpuUsage();
  const t0 = now();
  const value = await fn();
  const ms = msSince(t0);
  const c = process.cpuUsage(c0);
  return { ms, cpuMs: (c.user + c.system) / 1000, value };
}

/** The best of `runs` (after a warm-up run), with the check on the first answer. */
async function bestOf(runs, fn, check) {
  check(await fn());
  let best = null;
  for (let r = 0; r < runs; r++) {
    const t = await timed(fn);
    if (!best || t.ms < best.ms) best = t;
  }
  return { ms: best.ms, cpuMs: best.cpuMs };
}

function du(dir) {
  try {
    return Number(execFileSync('du', ['-sb', dir]).toString().split('\t')[0]);
  } catch {
    return null;
  }
}

function tmp(prefix) {
  return fs.mkdtempSync(path.join(os.tmpdir(), `addrindex-bench-stores-${prefix}-`));
}

// ---------------------------------------------------------------------------------------
// addrindex's stores

async function oursApply(open, deltas) {
  const store = await open();
  const t = await timed(async () => {
    for (let b = 0; b < deltas.length; b += APPLY_BLOCKS) await store.apply(deltas.slice(b, b + APPLY_BLOCKS));
  });
  return { store, ms: t.ms, cpuMs: t.cpuMs };
}

/**
 * The rows a history read needs — account rows, txids rows, block rows, tip — encoded by the
 * codec and written in one commit: the seed's write (address -> txids) in addrindex's schema.
 */
async function oursAccountRows(open, d, deltas) {
  const store = await open();
  const t = await timed(async () => {
    const w = new Writer();
    const batch = new WriteBatch();
    const acc = new records.Account();
    for (const b of deltas) {
      batch.put(layout.blockKey(b.height), records.encodeBlock(w, d.hashes.subarray(32 * b.height, 32 * b.height + 32), b.firstTxNum, b.cols.txCount, b.cols.time));
    }
    const all = Buffer.concat([Buffer.alloc(32, 0xee), d.txids]);
    const end = d.T + 1;
    for (let row = 0; row < end; row += records.TXIDS_PER_ROW) {
      batch.put(layout.txidsKey(row), records.encodeTxids(w, null, all, 32 * row, Math.min(records.TXIDS_PER_ROW, end - row)));
    }
    for (let a = 0; a < d.n; a++) {
      const k1 = d.txsOf[2 * a];
      const k2 = d.txsOf[2 * a + 1];
      acc.clear();
      acc.received = d.values[k1] + d.values[k2];
      acc.txCount = 2;
      acc.fundedCount = 2;
      acc.firstHeight = heightOfTx(k1);
      acc.lastHeight = heightOfTx(k2);
      acc.tail[0] = posting(k1 + 1, FUNDED);
      acc.tail[1] = posting(k2 + 1, FUNDED);
      acc.tailLen = 2;
      acc.utxoTx[0] = k1 + 1;
      acc.utxoTx[1] = k2 + 1;
      acc.utxoVout[0] = 0;
      acc.utxoVout[1] = 0;
      acc.utxoValue[0] = d.values[k1];
      acc.utxoValue[1] = d.values[k2];
      acc.utxoLen = 2;
      batch.put(layout.accountKey(d.shs, 32 * a), records.encodeAccount(w, acc));
    }
    batch.put(layout.TIP_KEY, records.encodeTip(w, { height: d.blocks, hash: d.hashes.subarray(32 * d.blocks, 32 * d.blocks + 32), nextTxNum: end }));
    if (!(await store.kv.write(batch, { key: layout.TIP_KEY, value: undefined }))) throw new Error('the tip moved');
  });
  return { store, ms: t.ms, cpuMs: t.cpuMs };
}

/** Account rows must be the bytes apply() wrote: the write rows measure the same rows. */
async function sameAccountRows(a, b, d) {
  const keys = [];
  for (let i = 0; i < d.n; i += 997) keys.push(layout.accountKey(d.shs, 32 * i));
  const [x, y] = await Promise.all([a.kv.getMany(keys), b.kv.getMany(keys)]);
  for (let i = 0; i < keys.length; i++) {
    if (!x[i] || !y[i] || !Buffer.from(x[i]).equals(Buffer.from(y[i]))) throw new Error(`account row ${i} differs between apply() and the direct write`);
  }
}

function oursHistories(store, d, m) {
  const shs = new Array(m);
  for (let a = 0; a < m; a++) shs[a] = d.shs.subarray(32 * a, 32 * a + 32);
  return async () => (await store.getHistories(shs, { limit: 2 * m + 1 })).entries;
}

// ---------------------------------------------------------------------------------------
// the seed's schemas

/** The seed's value for address a: its (txid, height u32) records, one after another. */
function concatValue(d, a) {
  const v = Buffer.allocUnsafe(72);
  for (let i = 0; i < 2; i++) {
    const k = d.txsOf[2 * a + i];
    d.txids.copy(v, 36 * i, 32 * k, 32 * k + 32);
    v.writeUInt32LE(heightOfTx(k), 36 * i + 32);
  }
  return v;
}

/** LevelDB, key = address, value = its (txid, height) records concatenated. */
const seedConcat = {
  name: 'seed schema: LevelDB, one concatenated value per address',
  async write(db, d) {
    const ops = new Array(d.n);
    for (let a = 0; a < d.n; a++) ops[a] = { type: 'put', key: d.addresses[a], value: concatValue(d, a) };
    await db.batch(ops);
  },
  async read(db, d, m) {
    const vals = await db.getMany(d.addresses.slice(0, m));
    const out = [];
    for (const v of vals) for (let i = 0; i < v.length; i += 36) out.push({ txid: v.subarray(i, i + 32), height: v.readUInt32LE(i + 32) });
    return out.sort((x, y) => x.height - y.height);
  },
};

/** LevelDB, key = `${address}-${txid hex}`, value = height; a history is a prefix scan. */
const seedTxidKeys = {
  name: 'seed schema: LevelDB, a row per address-txidhex',
  async write(db, d) {
    const ops = new Array(d.T);
    for (let k = 0; k < d.T; k++) {
      const v = Buffer.allocUnsafe(4);
      v.writeUInt32LE(heightOfTx(k), 0);
      ops[k] = { type: 'put', key: `${d.addresses[d.owner[k]]}-${d.txids.toString('hex', 32 * k, 32 * k + 32)}`, value: v };
    }
    await db.batch(ops);
  },
  async read(db, d, m) {
    const out = [];
    const one = async (a) => {
      const prefix = d.addresses[a];
      for (const [key, value] of await db.iterator({ gt: `${prefix}-`, lt: `${prefix}.` }).all()) {
        out.push({ txid: Buffer.from(key.slice(prefix.length + 1), 'hex'), height: value.readUInt32LE(0) });
      }
    };
    // the seed ran its scans concurrently; a thousand in flight at a time
    for (let a = 0; a < m; a += 1000) {
      const batch = [];
      for (let b = a; b < Math.min(m, a + 1000); b++) batch.push(one(b));
      await Promise.all(batch);
    }
    return out.sort((x, y) => x.height - y.height);
  },
};

const SEED_SCHEMAS = { concat: seedConcat, txidKeys: seedTxidKeys };

async function seedLevel(id, d) {
  const { ClassicLevel } = require('classic-level');
  const dir = tmp('seed-level');
  try {
    const db = new ClassicLevel(dir, { keyEncoding: 'utf8', valueEncoding: 'buffer' });
    await db.open();
    const w = await timed(() => SEED_SCHEMAS[id].write(db, d));
    await db.close();
    const reads = await readPhase('seedLevel', { schema: id, dir }, d.n);
    return { write: w, ...reads, diskBytes: du(dir) };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The seed's MongoDB read: one $in per thousand addresses (a 100,000-element $in is a full
 * scan per document on FerretDB), four queries in flight, merged and sorted by height here.
 */
async function seedMongoRead(coll, d, m) {
  const out = [];
  const q = async (from) => {
    const docs = await coll.find({ address: { $in: d.addresses.slice(from, Math.min(m, from + 1000)) } }, { projection: { _id: 0, txid: 1, height: 1 } }).toArray();
    for (const doc of docs) out.push({ txid: Buffer.from(doc.txid, 'hex'), height: doc.height });
  };
  for (let a = 0; a < m; a += 4000) {
    const inflight = [];
    for (let b = a; b < Math.min(m, a + 4000); b += 1000) inflight.push(q(b));
    await Promise.all(inflight);
  }
  return out.sort((x, y) => x.height - y.height);
}

/** The seed's MongoDB documents: {address, txid (hex), height}, an index on address. */
async function seedMongo(url, d) {
  const { MongoClient } = require('mongodb');
  const client = new MongoClient(url);
  await client.connect();
  const db = client.db(`bench_seed_${process.pid}`);
  try {
    const coll = db.collection('history');
    await coll.createIndex({ address: 1 });
    const w = await timed(async () => {
      const CHUNK = 10000;
      for (let k = 0; k < d.T; k += CHUNK) {
        const docs = [];
        for (let j = k; j < Math.min(d.T, k + CHUNK); j++) {
          docs.push({ address: d.addresses[d.owner[j]], txid: d.txids.toString('hex', 32 * j, 32 * j + 32), height: heightOfTx(j) });
        }
        await coll.insertMany(docs, { ordered: false });
      }
    });
    const reads = await readPhase('seedMongo', { url, dbName: db.databaseName }, d.n);
    return { addresses: d.n, write: w, ...reads };
  } finally {
    await db.dropDatabase().catch(() => {});
    await client.close();
  }
}

// ---------------------------------------------------------------------------------------
// node-lmdb (the other LMDB binding), seed's concatenated schema

function loadNodeLmdb() {
  const dir = path.join(__dirname, '..', '.cache', 'node-lmdb');
  try {
    return { lib: require(require.resolve('node-lmdb', { paths: [dir] })) };
  } catch (first) {
    try {
      fs.mkdirSync(dir, { recursive: true });
      execFileSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', dir, 'node-lmdb'], { stdio: 'pipe', timeout: 300000 });
      return { lib: require(require.resolve('node-lmdb', { paths: [dir] })) };
    } catch (err) {
      const text = `${err.stderr ? err.stderr.toString() : ''}${err.message}`;
      const line = text.split('\n').find((l) => /error/i.test(l) && !/^npm (error|ERR!) (code|path|command|cwd|A complete)/.test(l)) || text.split('\n')[0];
      return { error: line.trim().slice(0, 200) };
    }
  }
}

async function nodeLmdb(d) {
  const { lib, error } = loadNodeLmdb();
  if (!lib) return { error };
  const dir = tmp('node-lmdb');
  const env = new lib.Env();
  env.open({ path: dir, mapSize: 2 * 1024 ** 3, maxDbs: 1 });
  const dbi = env.openDbi({ name: 'a', create: true });
  const w = await timed(() => {
    const txn = env.beginTxn();
    for (let a = 0; a < d.n; a++) txn.putBinary(dbi, d.addresses[a], concatValue(d, a));
    txn.commit();
  });
  dbi.close();
  env.close();
  const reads = await readPhase('nodeLmdb', { dir }, d.n);
  const disk = du(dir);
  fs.rmSync(dir, { recursive: true, force: true });
  return { write: w, ...reads, diskBytes: disk };
}

function nodeLmdbRead(env, dbi, d, m) {
  const txn = env.beginTxn({ readOnly: true });
  const out = [];
  for (let a = 0; a < m; a++) {
    const v = txn.getBinaryUnsafe(dbi, d.addresses[a]);
    for (let i = 0; i < v.length; i += 36) out.push({ txid: Buffer.from(v.subarray(i, i + 32)), height: v.readUInt32LE(i + 32) });
  }
  txn.abort();
  return out.sort((x, y) => x.height - y.height);
}

// ---------------------------------------------------------------------------------------
// the read phase: each store read from a process of its own, as a server worker reads it
// (the writer's heap and caches would otherwise weigh on the GC of the reads)

/** Opens one row's database for reading: {read(m) -> entries, exact, close()}. */
const READERS = {
  async ours({ kind, dir, url, dbName }) {
    const store = kind === 'mongo'
      ? await require('../lib/stores/mongo').MongoStore.open({ url, dbName, network: NETWORK, readOnly: true })
      : await require('../lib/stores').openStore({ store: kind, datadir: dir, network: NETWORK, readOnly: true });
    // the script hashes are made once per size, outside the timed reads, as the seed's
    // readers take their address strings ready-made
    const reads = new Map();
    const read = (m, d) => {
      if (!reads.has(m)) reads.set(m, oursHistories(store, d, m));
      return reads.get(m)();
    };
    return { exact: true, read, close: () => store.close() };
  },
  async seedLevel({ schema, dir }) {
    const { ClassicLevel } = require('classic-level');
    const db = new ClassicLevel(dir, { keyEncoding: 'utf8', valueEncoding: 'buffer', createIfMissing: false });
    await db.open();
    return { read: (m, d) => SEED_SCHEMAS[schema].read(db, d, m), close: () => db.close() };
  },
  async seedMongo({ url, dbName }) {
    const { MongoClient } = require('mongodb');
    const client = new MongoClient(url);
    await client.connect();
    const coll = client.db(dbName).collection('history');
    return { read: (m, d) => seedMongoRead(coll, d, m), close: () => client.close() };
  },
  async nodeLmdb({ dir }) {
    const env = new (loadNodeLmdb().lib.Env)();
    env.open({ path: dir, mapSize: 2 * 1024 ** 3, maxDbs: 1 });
    const dbi = env.openDbi({ name: 'a' });
    return {
      read: async (m, d) => nodeLmdbRead(env, dbi, d, m),
      close: () => {
        dbi.close();
        env.close();
      },
    };
  },
};

/** In the child: the data set again (same seed), then the timed reads. */
async function phaseRead(spec) {
  const d = makeData(spec.seed, spec.n);
  const r = await READERS[spec.reader](spec.where);
  try {
    const m = Math.min(10000, d.n);
    const hist10k = await bestOf(spec.runs[0], () => r.read(m, d), (got) => checkMerged(d, m, got, spec.reader, r.exact));
    const hist100k = d.n > 10000 ? await bestOf(spec.runs[1], () => r.read(d.n, d), (got) => checkMerged(d, d.n, got, spec.reader, r.exact)) : null;
    return { hist10k, hist100k };
  } finally {
    await r.close();
  }
}

/** Runs the read phase of one row in a new process; resolves with its {hist10k, hist100k}. */
function readPhase(reader, where, n, runs = [8, 3]) {
  const spec = JSON.stringify({ reader, where, n, seed: args.seed, runs });
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [__filename, '--phase', 'read', '--spec', spec], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c) => { out += c; });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`the read phase of ${reader} exited ${code}`))));
  });
}

// ---------------------------------------------------------------------------------------
// sync of a generated chain

async function syncChain(blocksDir, open, maxTxs) {
  const { BlocksDirSource } = require('../lib/sources/blocksdir');
  const { SyncService } = require('../lib/sync/service');
  const source = new BlocksDirSource({ dir: blocksDir, network: NETWORK });
  await source.scan();
  const to = await heightHolding(source, maxTxs);
  const bounded = boundedSource(source, to);
  const store = await open();
  try {
    const t = await timed(() => new SyncService({ source: bounded, store, network: NETWORK }).run());
    const stats = await store.stats();
    return { txs: t.value.txs, ms: t.ms, cpuMs: t.cpuMs, txPerSec: t.value.txs / (t.ms / 1000), diskBytes: stats.diskBytes, logicalBytes: stats.bytes };
  } finally {
    await store.close();
    await source.close();
  }
}

async function syncSeedBaseline(blocksDir, maxTxs) {
  const { BlocksDirSource } = require('../lib/sources/blocksdir');
  const { SeedBaseline } = require('./lib/seed-baseline');
  const source = new BlocksDirSource({ dir: blocksDir, network: NETWORK });
  await source.scan();
  const to = await heightHolding(source, maxTxs);
  const dir = tmp('seed-sync');
  const base = new SeedBaseline({ dir, network: NETWORK });
  const t = await timed(async () => {
    for await (const b of source.blocks(0, to)) await base.applyBlock(b.raw, b.height);
  });
  await base.close();
  await source.close();
  const disk = du(dir);
  fs.rmSync(dir, { recursive: true, force: true });
  return { txs: base.txs, ms: t.ms, cpuMs: t.cpuMs, txPerSec: base.txs / (t.ms / 1000), diskBytes: disk };
}

// ---------------------------------------------------------------------------------------

async function mongoServer() {
  if (args['no-mongo']) return { skip: '--no-mongo' };
  try {
    const { startMongo } = require('../test/helpers/mongo-server');
    const m = await startMongo();
    return { url: m.url, label: m.external ? 'MongoDB at MONGODB_URL' : 'measured on FerretDB v1.24 (SQLite)', stop: m.stop };
  } catch (err) {
    return { skip: `no MongoDB-wire server: ${err.message}` };
  }
}

async function main() {
  const { openStore } = require('../lib/stores');
  const { MongoStore } = require('../lib/stores/mongo');
  const started = new Date();
  console.log(`bench/stores: ${N.toLocaleString('en-US')} addresses × 2 txids, seed ${args.seed}; ` +
    `${os.cpus().length} cores, node ${process.version}, load average ${os.loadavg()[0].toFixed(2)}`);
  const d = makeData(args.seed, N);
  const deltas = makeDeltas(d);
  const mongo = await mongoServer();
  const rows = [];
  const dirs = [];
  const kvOpen = (store) => () => {
    const dir = tmp(store);
    dirs.push(dir);
    return openStore({ store, datadir: dir, network: NETWORK, undoDepth: 100 });
  };
  let mongoDb = 0;
  const mongoOpen = () => MongoStore.open({ url: mongo.url, dbName: `bench_${process.pid}_${mongoDb++}`, network: NETWORK, undoDepth: 100 });

  try {
    const small = mongo.url ? makeData(args.seed, Math.min(N, Number(args['mongo-addresses']))) : null;
    for (const [kind, label, open, data] of [
      ['lmdb', 'addrindex LMDB (lmdb-js)', kvOpen('lmdb'), d],
      ['level', 'addrindex LevelDB (classic-level)', kvOpen('level'), d],
      ['mongo', `addrindex MongoDB, ${mongo.label || 'skipped'}`, mongo.url ? mongoOpen : null, small],
    ]) {
      if (!open) {
        rows.push({ row: label, error: mongo.skip });
        continue;
      }
      console.log(`  ${label}: apply ...`);
      const applied = await oursApply(open, data === d ? deltas : makeDeltas(data));
      const store = applied.store;
      let direct = null;
      if (kind !== 'mongo') {
        const a = await oursAccountRows(open, data, deltas);
        await sameAccountRows(store, a.store, data);
        await a.store.close();
        direct = { ms: a.ms, cpuMs: a.cpuMs };
      }
      console.log(`  ${label}: histories ...`);
      const stats = await store.stats();
      const where = kind === 'mongo' ? { kind, url: mongo.url, dbName: store.db.databaseName } : { kind, dir: store.datadir };
      await store.close();
      const reads = await readPhase('ours', where, data.n, kind === 'mongo' ? [1, 1] : [8, 3]);
      rows.push({
        row: label, kind, addresses: data.n, write: { ms: applied.ms, cpuMs: applied.cpuMs }, writeAccountRows: direct, ...reads, diskBytes: stats.diskBytes,
      });
    }
    for (const [id, schema] of Object.entries(SEED_SCHEMAS)) {
      console.log(`  ${schema.name} ...`);
      rows.push({ row: schema.name, ...(await seedLevel(id, d)) });
    }
    if (mongo.url) {
      console.log('  seed schema: MongoDB ...');
      rows.push({ row: `seed schema: MongoDB docs per address-tx, ${mongo.label}`, ...(await seedMongo(mongo.url, small)) });
    } else {
      rows.push({ row: 'seed schema: MongoDB docs per address-tx', error: mongo.skip });
    }
    console.log('  node-lmdb ...');
    rows.push({ row: 'node-lmdb, seed\'s concatenated schema', ...(await nodeLmdb(d)) });

    // sync of a generated chain
    const { writeChain } = require('../tools/generator');
    const chainDir = tmp('chain');
    dirs.push(chainDir);
    const syncTxs = Number(args['sync-txs']);
    console.log(`  generating a ${syncTxs.toLocaleString('en-US')}-tx chain (seed ${args.seed}) ...`);
    const chain = await writeChain({ dir: chainDir, seed: args.seed, txs: syncTxs, network: NETWORK });
    const sync = [];
    for (const [label, open, max] of [
      ['addrindex LMDB', kvOpen('lmdb'), syncTxs],
      ['addrindex LevelDB', kvOpen('level'), syncTxs],
      [`addrindex MongoDB, ${mongo.label || 'skipped'}`, mongo.url ? mongoOpen : null, Number(args['mongo-sync-txs'])],
    ]) {
      if (!open) {
        sync.push({ row: label, error: mongo.skip });
        continue;
      }
      console.log(`  sync: ${label} ...`);
      sync.push({ row: label, ...(await syncChain(chainDir, open, max)) });
    }
    console.log('  sync: the seed\'s schema (bitcore-lib parsing, LMDB, bench/lib/seed-baseline.js) ...');
    sync.push({ row: 'seed schema (bitcore-lib, per-address concatenated value, LMDB)', ...(await syncSeedBaseline(chainDir, Number(args['baseline-sync-txs']))) });

    report({ started, d, rows, sync, chain, mongo });
  } finally {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
    if (mongo.stop) await mongo.stop();
  }
}

function report({ started, d, rows, sync, chain, mongo }) {
  const f = (x) => (x ? `${x.ms.toFixed(x.ms < 100 ? 1 : 0)}` : '');
  const cpu = (x) => (x ? `${x.cpuMs.toFixed(x.cpuMs < 100 ? 1 : 0)}` : '');
  const mb = (b) => (b ? (b / 1e6).toFixed(1) : '');
  const lmdb = rows.find((r) => r.kind === 'lmdb');
  console.log(`\nwrite ${d.n.toLocaleString('en-US')} addresses × 2 txids; merged histories sorted by height (ms, best of runs; seed: ` +
    `write ${SEED_FIGURES.write}, 10k ${SEED_FIGURES.hist10k}, 100k ${SEED_FIGURES.hist100k} LevelDB; Mongo 10k ${SEED_FIGURES.mongo10k}, 100k ${SEED_FIGURES.mongo100k})\n`);
  printTable(rows.map((r) => ({
    store: r.row,
    'write (apply)': r.error ? '' : f(r.write),
    'write (rows, 1 commit)': r.writeAccountRows ? f(r.writeAccountRows) : '',
    'history 10k': r.error ? '' : f(r.hist10k),
    '(cpu)': r.error ? '' : cpu(r.hist10k),
    'history 100k': r.error ? '' : f(r.hist100k),
    '(cpu) ': r.error ? '' : cpu(r.hist100k),
    'disk MB': mb(r.diskBytes),
    note: r.error || (r.addresses && r.addresses !== d.n ? `${r.addresses.toLocaleString('en-US')} addresses × 2 (write of ${(2 * r.addresses).toLocaleString('en-US')} entries)` : ''),
  })));
  if (lmdb && lmdb.hist100k) {
    const best = (k) => (lmdb.writeAccountRows && k === 'write' ? lmdb.writeAccountRows.ms : lmdb[k].ms);
    console.log(`\nLMDB vs the seed's best: write ${(SEED_FIGURES.write / best('write')).toFixed(1)}× (rows, one commit), ` +
      `${(SEED_FIGURES.write / lmdb.write.ms).toFixed(1)}× (apply); history 10k ${(SEED_FIGURES.hist10k / lmdb.hist10k.ms).toFixed(1)}×, ` +
      `100k ${(SEED_FIGURES.hist100k / lmdb.hist100k.ms).toFixed(1)}× (target: 10×)`);
  }
  console.log(`\nsync of a generated chain (${chain.txs.toLocaleString('en-US')} txs, ${chain.blocks} blocks, seed ${args.seed})\n`);
  printTable(sync.map((r) => ({
    store: r.row,
    txs: r.txs ? r.txs.toLocaleString('en-US') : '',
    'tx/s': r.txPerSec ? Math.round(r.txPerSec).toLocaleString('en-US') : '',
    's': r.ms ? (r.ms / 1000).toFixed(1) : '',
    'cpu s': r.cpuMs ? (r.cpuMs / 1000).toFixed(1) : '',
    'disk MB': mb(r.diskBytes),
    note: r.error || '',
  })));
  const out = {
    date: started.toISOString(), node: process.version, cores: os.cpus().length, loadAvgAtEnd: os.loadavg(),
    command: `node bench/stores.js ${process.argv.slice(2).join(' ')}`.trim(),
    seed: args.seed, addresses: d.n, txs: d.T, mongo: mongo.label || mongo.skip, seedFigures: SEED_FIGURES,
    notes: {
      write: 'write (apply): the whole index through store.apply() in 100-block batches (txid map, outputs, account rows, txids, blocks, undo); ' +
        'write (rows, 1 commit): the rows a history read needs (account rows via the codec, txids rows, block rows, tip) in one commit — the seed\'s write in addrindex\'s schema',
      histories: 'getHistories of the first 10,000 / all addresses with one page holding every entry; the seed schemas: read, merge, sort by height in JS',
    },
    rows, sync, chain: { txs: chain.txs, blocks: chain.blocks, bytes: chain.bytes },
  };
  fs.mkdirSync(path.dirname(args.json), { recursive: true });
  fs.writeFileSync(args.json, `${JSON.stringify(out, null, 2)}\n`);
  console.log(`\nwrote ${args.json}`);
}

if (require.main === module && args.phase === 'read') {
  phaseRead(JSON.parse(args.spec)).then((r) => process.stdout.write(JSON.stringify(r)), (err) => {
    console.error(err.stack);
    process.exit(1);
  });
} else if (require.main === module) {
  main().catch((err) => {
    console.error(err.stack);
    process.exit(1);
  });
}

module.exports = { makeData, makeDeltas, checkMerged, oursHistories, oursAccountRows };
