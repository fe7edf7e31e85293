'use strict';

const layout = require('./layout');
const { StoreError } = require('../errors');
const { decodeChange, stubChange, encodeWhole, encodeMempoolHead, decodeMempoolHead, nextHead, decodeMempoolRaw, CHANGE_VERSION } = require('../codec/mempool');

/**
 * The mempool snapshot in a key-value store (LMDB, LevelDB): `M 00` the head, `M 04 place` a
 * transaction's part, `M 06 place` its bytes, `M 03 seq` the change that made snapshot `seq`
 * (docs/FORMAT.md, `M` rows, format 6). A poll's change is written in one batch guarded by the
 * tip row, so the head, the rows and the change are always of one snapshot, resolved against
 * the tip the head names. KvStore's putMempool, getMempool, getMempoolRaw, getMempoolChanges
 * and getMempoolHead are these.
 *
 * A transaction's bytes outlive its part by the changes kept: the row of one that left is
 * deleted when the change that removed it is pruned, so a reader whose view is as old as the
 * oldest change kept still finds the bytes of every transaction its view holds.
 *
 * Rows are keyed by place, not txid: places are given in arrival order, so a poll's arrivals
 * append to the table's last pages and a block's departures, mostly the younger transactions
 * of higher fee rate, cluster; by txid each row of either lands on a page of its own, and on
 * LMDB each such page is copied and written again by the commit.
 */

/** Changes kept: a reader that fell further behind reads the whole (64 polls: two minutes at 2 s). */
const KEEP_CHANGES = 64;
/**
 * A change larger than this is kept as a stub: a reader catching up across it reads the whole
 * (a first load, a reorg's; a block's change, a few MB at mainnet size, is kept).
 */
const KEEP_CHANGE_BYTES = 32 * 1024 * 1024;

/** Rows of formats 3 and 4, keyed by txid: deleted by the first change of format 5. */
const LEGACY_TX_PREFIX = Buffer.from([layout.P.mempool, 2]);
const CHANGE_PREFIX = Buffer.from([layout.P.mempool, 3]);
const ROW_PREFIX = Buffer.from([layout.P.mempool, 4]);
const RAW_PREFIX = Buffer.from([layout.P.mempool, 6]);
const END = Buffer.from([layout.P.mempool, 7]);

/** @param {number} rank a place (u48): the key of its part's row */
const rowKey = (rank) => placeKey(ROW_PREFIX, rank);
/** @param {number} rank a place (u48): the key of its bytes' row */
const rawKey = (rank) => placeKey(RAW_PREFIX, rank);

function placeKey(prefix, rank) {
  const k = Buffer.allocUnsafe(8);
  prefix.copy(k, 0);
  k.writeUIntBE(rank, 2, 6);
  return k;
}

/** @param {number} seq */
function changeKey(seq) {
  const k = Buffer.alloc(10);
  CHANGE_PREFIX.copy(k, 0);
  k.writeUIntBE(Math.max(0, seq), 4, 6);
  return k;
}

/**
 * @param {{get(key: Buffer): Promise<Uint8Array|undefined|null>}} snap
 * @returns {Promise<import('../codec/mempool').MempoolHead|null>}
 */
async function readHead(snap) {
  const raw = await snap.get(layout.MEMPOOL_HEAD_KEY);
  return raw ? decodeMempoolHead(raw) : null;
}

/**
 * The rows a change writes, added to `batch` (each key once: a store may order a batch by key).
 * @param {object} snap the store's snapshot at the tip the change names (get, range)
 * @param {{put(key: Buffer, value: Buffer): void, del(key: Buffer): void}} batch
 * @param {Buffer} change an encoded change (lib/codec/mempool.js encodeChange)
 * @throws {StoreError} ERR_MEMPOOL_SEQ: the change does not apply to the stored snapshot
 */
async function stageChange(snap, batch, change) {
  const c = decodeChange(change);
  const old = await readHead(snap);
  const have = old ? old.seq : 0;
  if (c.seq <= have || (!c.reset && (!old || old.legacy ? 0 : have) !== c.prev)) {
    throw new StoreError('ERR_MEMPOOL_SEQ', `mempool change ${c.seq} applies to snapshot ${c.prev}${c.reset ? ' (reset)' : ''}; the store holds ${have}`);
  }
  if (c.version !== CHANGE_VERSION) throw new StoreError('ERR_MEMPOOL_SEQ', `mempool change ${c.seq} is of version ${c.version}, whose parts hold the transactions' bytes: this store keeps format 6`);
  /** @type {Map<string, {key: Buffer, value: Buffer|null}>} */
  const rows = new Map();
  const set = (key, value) => rows.set(key.latin1Slice(0, key.length), { key, value });
  const reset = c.reset || !old || old.legacy;
  if (reset) {
    set(layout.MEMPOOL_BODY_KEY, null);
    for await (const e of snap.range({ gte: LEGACY_TX_PREFIX, lt: END })) set(Buffer.from(e.key), null);
  } else if (c.removed.length) {
    // a place that holds another transaction is a change of another snapshot: refused, not applied
    const keys = c.removedRanks.map(rowKey);
    const held = await snap.getMany(keys);
    for (let k = 0; k < keys.length; k++) {
      const row = held[k];
      if (!row || row.length < 32 || !Buffer.from(row.subarray(0, 32)).equals(c.removed[k])) {
        throw new StoreError('ERR_MEMPOOL_SEQ', `mempool change ${c.seq} removes a transaction from place ${c.removedRanks[k]}, which holds ${row ? 'another' : 'none'}`);
      }
      set(keys[k], null);
    }
  }
  const stub = change.length > KEEP_CHANGE_BYTES;
  // the bytes of what left go with the change that says so: now, when it is kept as a stub
  // (no reader catches up across it), else when it is pruned (a reset deletes them all). Before
  // the puts below, which win where a place is given again (after a reset)
  if (stub && !reset) await staleRaws(snap, c, set, true);
  for await (const e of snap.range({ gte: CHANGE_PREFIX, lt: changeKey(c.seq - KEEP_CHANGES + 1) })) {
    set(Buffer.from(e.key), null);
    const pruned = decodeChange(e.value);
    if (!pruned.stub && !reset) await staleRaws(snap, pruned, set);
  }
  // the rows are the part and the bytes as the change holds them: no copy (150,000
  // transactions are 100 MB)
  for (const u of c.upserts) {
    set(rowKey(u.rank), u.part);
    set(rawKey(u.rank), u.rawRow);
  }
  set(changeKey(c.seq), stub ? stubChange(change) : Buffer.from(change));
  set(layout.MEMPOOL_HEAD_KEY, encodeMempoolHead(nextHead(old, c, stub, KEEP_CHANGES)));
  for (const { key, value } of rows.values()) {
    if (value === null) batch.del(key);
    else batch.put(key, value);
  }
}

/**
 * Deletes the bytes rows of the transactions a change removed, where the place still holds
 * their bytes and not their part: a follower started again gives places after the highest it
 * finds in the snapshot, so a place whose transaction left may be given again, even to the
 * same transaction.
 * @param {object} snap
 * @param {import('../codec/mempool').MempoolChange} c decoded with its lists
 * @param {(key: Buffer, value: Buffer|null) => void} set
 * @param {boolean} [now] `c` is the change being staged (its removals are not applied in `snap`)
 */
async function staleRaws(snap, c, set, now = false) {
  if (!c.removed.length) return;
  const keys = c.removedRanks.map(rawKey);
  const raws = await snap.getMany(keys);
  const parts = now ? [] : await snap.getMany(c.removedRanks.map(rowKey));
  for (let k = 0; k < keys.length; k++) {
    const txid = c.removed[k];
    const live = Boolean(parts[k]) && Buffer.from(parts[k].buffer, parts[k].byteOffset, 32).equals(txid);
    if (raws[k] && !live && decodeMempoolRaw(raws[k]).txid.equals(txid)) set(keys[k], null);
  }
}

/**
 * The changes after `after` up to the head, in order, or null when a reader at `after` must
 * read the whole (the changes are not kept, or one is a stub).
 * @param {object} snap
 * @param {number} after
 * @returns {Promise<Buffer[]|null>}
 */
async function readChanges(snap, after) {
  const head = await readHead(snap);
  if (!head || head.legacy || after < head.from || after > head.seq) return null;
  const out = [];
  for await (const e of snap.range({ gte: changeKey(after + 1), lt: changeKey(head.seq + 1) })) out.push(Buffer.from(e.value));
  if (out.length !== head.seq - after) return null;
  for (const c of out) if (decodeChange(c, false).stub) return null;
  return out;
}

/**
 * The whole snapshot (lib/codec/mempool.js encodeWhole) from the rows of one store snapshot, or
 * null when there is none.
 * @param {object} snap
 * @param {boolean} [raws] with the transactions' bytes
 * @returns {Promise<Buffer|null>}
 */
async function readWhole(snap, raws = false) {
  const head = await readHead(snap);
  if (!head || head.legacy) return null;
  const rows = [];
  for await (const e of snap.range({ gte: ROW_PREFIX, lt: RAW_PREFIX })) rows.push({ rank: e.key.readUIntBE(2, 6), part: e.value, raw: null });
  if (raws) {
    // both in place order; the bytes rows hold those of transactions that left lately too
    let k = 0;
    for await (const e of snap.range({ gte: RAW_PREFIX, lt: END })) {
      const rank = e.key.readUIntBE(2, 6);
      if (k < rows.length && rows[k].rank < rank) missingRaw(rows[k]);
      if (k < rows.length && rows[k].rank === rank) {
        rows[k].raw = rawOf(e.value, rows[k]);
        k++;
      }
    }
    if (k < rows.length) missingRaw(rows[k]);
  }
  return encodeWhole(head, rows, raws);
}

/** The bytes of a row's transaction from its bytes row, which must be that transaction's. */
function rawOf(value, row) {
  const { txid, raw } = decodeMempoolRaw(value);
  if (!txid.equals(Buffer.from(row.part.buffer, row.part.byteOffset, 32))) {
    throw new StoreError('ERR_CORRUPT', `the mempool's bytes row at place ${row.rank} holds another transaction than its part`);
  }
  return raw;
}

function missingRaw(row) {
  throw new StoreError('ERR_CORRUPT', `the mempool's transaction at place ${row.rank} has no bytes row`);
}

/**
 * The bytes of the transaction `txid` as its place keeps them, or null when the place holds
 * them no more (the transaction left longer ago than the changes kept, or never was there).
 * @param {object} snap
 * @param {number} rank
 * @param {Buffer} txid internal order
 * @returns {Promise<Buffer|null>}
 */
async function readRaw(snap, rank, txid) {
  const value = await snap.get(rawKey(rank));
  if (!value) return null;
  const row = decodeMempoolRaw(value);
  // the value is the read's own copy: its bytes are handed out as they are
  return row.txid.equals(txid) ? row.raw : null;
}

/**
 * The head as the store contract answers it (`legacy`: a head of format 2's whole snapshot,
 * which no reader reads any more: its seq is what a follower goes on from).
 * @param {import('../codec/mempool').MempoolHead} h
 */
function headInfo(h, toHex) {
  const out = { seq: h.seq, tip: toHex(h.tip), count: h.count, vsize: h.vsize, fee: h.fee, evicted: h.evicted, from: h.from };
  if (h.legacy) out.legacy = true;
  return out;
}

module.exports = { stageChange, readChanges, readWhole, readRaw, readHead, headInfo, KEEP_CHANGES, KEEP_CHANGE_BYTES };
