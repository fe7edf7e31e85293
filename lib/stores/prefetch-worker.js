'use strict';

/**
 * The LMDB prefetcher's thread (prefetcher.js): brings into the page cache, many reads at a
 * time, every page the writer will read or write for a batch, before the writer gets there.
 * It only reads, from its own read transactions, and keeps nothing: what it brings is pages,
 * so a stale answer (a row the writer changes meanwhile) costs nothing but a wasted read.
 *
 * Three rounds, each waiting on the one before: the tx rows of the batch's txids and the
 * accounts it pays; then the outputs rows those tx rows name; then the accounts the spent
 * outputs paid. Each round's keys are sorted and split into `lanes` native prefetches
 * (lmdb-js, on libuv's thread pool), so the disk sees up to `lanes` reads at once instead of
 * the writer's one page fault after another.
 */

const { parentPort, workerData } = require('node:worker_threads');
const { open } = require('lmdb');
const layout = require('./layout');
const { decodeTxNums, decodeOutputs } = require('../codec/records');
const { INPUT_BYTES } = require('./prefetch-plan');

const { TX_PREFIX_LEN, HASHX_LEN } = layout;

const db = open({
  path: workerData.datadir,
  readOnly: true,
  encoding: 'binary',
  keyEncoding: 'binary',
  mapSize: 2 ** 40,
  noReadAhead: true,
});

/** Brings the pages of `keys` (present or not) into the page cache, `lanes` at a time. */
async function touch(keys) {
  if (keys.length === 0) return;
  keys.sort(Buffer.compare);
  const lanes = Math.min(workerData.lanes, keys.length);
  const per = Math.ceil(keys.length / lanes);
  const parts = [];
  for (let i = 0; i < keys.length; i += per) parts.push(db.prefetch(keys.slice(i, i + per)));
  await Promise.all(parts);
}

/** A tx row's key from the first bytes of a txid. */
function txKeyAt(buf, at) {
  return layout.txKey(buf, at);
}

/** An account's key from the first bytes of a script hash. */
function accountKeyAt(buf, at) {
  const k = Buffer.allocUnsafe(1 + HASHX_LEN);
  k[0] = layout.P.account;
  buf.copy(k, 1, at, at + HASHX_LEN);
  return k;
}

async function prefetch({ inputs, txids, accounts }) {
  inputs = Buffer.from(inputs);
  txids = Buffer.from(txids);
  accounts = Buffer.from(accounts);
  const nIn = inputs.length / INPUT_BYTES;
  // round 1: tx rows (spent and added txids) and the accounts the outputs pay
  const round1 = [];
  const seen = new Set();
  const add = (list, key) => {
    const name = key.latin1Slice(0, key.length);
    if (seen.has(name)) return;
    seen.add(name);
    list.push(key);
  };
  for (let i = 0; i < nIn; i++) add(round1, txKeyAt(inputs, INPUT_BYTES * i));
  for (let t = 0; t < txids.length; t += TX_PREFIX_LEN) add(round1, txKeyAt(txids, t));
  for (let a = 0; a < accounts.length; a += HASHX_LEN) add(round1, accountKeyAt(accounts, a));
  await touch(round1);
  // round 2: the outputs rows of the transactions spent from
  const round2 = [];
  const wanted = new Map(); // TxNum -> vouts spent from it
  for (let i = 0; i < nIn; i++) {
    const row = db.getBinary(txKeyAt(inputs, INPUT_BYTES * i));
    if (!row) continue;
    const vout = inputs.readUInt32LE(INPUT_BYTES * i + TX_PREFIX_LEN);
    for (const txNum of decodeTxNums(row)) {
      let v = wanted.get(txNum);
      if (!v) {
        wanted.set(txNum, (v = []));
        round2.push(layout.outputsKey(txNum));
      }
      v.push(vout);
    }
  }
  await touch(round2);
  // round 3: the accounts those outputs paid
  const round3 = [];
  for (const [txNum, vouts] of wanted) {
    const row = db.getBinary(layout.outputsKey(txNum));
    if (!row) continue;
    const rec = decodeOutputs(row, txNum);
    for (const vout of vouts) {
      const k = rec.vouts.indexOf(vout);
      if (k < 0) continue;
      add(round3, accountKeyAt(rec.scripthashes, 32 * k));
      const own = rec.p2pk && rec.p2pk.get(k);
      if (own) add(round3, accountKeyAt(own, 0));
    }
  }
  await touch(round3);
  return { keys: round1.length + round2.length + round3.length };
}

parentPort.on('message', async ({ id, plan }) => {
  try {
    const t0 = Date.now();
    const r = await prefetch(plan);
    parentPort.postMessage({ id, keys: r.keys, ms: Date.now() - t0 });
  } catch (err) {
    parentPort.postMessage({ id, error: err.message });
  }
});
