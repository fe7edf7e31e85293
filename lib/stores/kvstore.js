'use strict';

const { AbstractStore } = require('./abstract');
const { toDisplayHex } = require('../chain/hash');
const layout = require('./layout');
const {
  Account, encodeMeta, decodeMeta, encodeSource, decodeSource, decodeTip, decodeBlock, decodeBlockHeight, decodeLocator, decodeOutputs, decodeTouched, decodeBody,
  decodeAccount, accountSummary,
} = require('../codec/records');
const { Writer } = require('../codec/io');
const { decodeChange } = require('../codec/mempool');
const mempoolRows = require('./mempool-rows');
const C = require('../core/checks');
const { HeightIndex } = require('./heights');
const { decodeRow } = require('./accounts');
const { applyBlocks, revertBlocks, readOutputs, findTxNums } = require('./update');
const query = require('./query');
const walk = require('./walk');
const wallets = require('./wallets');

const { META_KEY, TIP_KEY } = layout;

/** Version of the whole key-value schema (layout.js + lib/codec); stored in the meta row. */
const SCHEMA_VERSION = 5;

/**
 * The schema of docs/FORMAT.md over any ordered key-value engine. A backend (lmdb.js,
 * level.js) only supplies `openKv()` returning an object with this shape; everything else —
 * apply and revert (update.js), reads (query.js), verify, digest, stats (walk.js) — is
 * written once, over:
 *
 *   get(key), getMany(keys)                        latest committed values
 *   snapshot() -> Reader                           a consistent view until release()
 *     Reader: get(key), getMany(keys) -> Array<Buffer|undefined>,
 *             range({gte, lt, reverse, limit}) -> iterable or async iterable of {key, value},
 *             release()
 *   range(opts)                                    like Reader.range, latest state
 *   write(batch, guard) -> boolean                 one atomic commit of batch.keys/values
 *                                                  (value null = delete), done only if the
 *                                                  value at guard.key still equals guard.value
 *                                                  (undefined = absent); false otherwise
 *   close(), sizeOnDisk() -> bytes, engineStats() -> object
 *
 * Each of these may return a value or a promise; returned Buffers belong to the caller.
 *
 * Writing: apply and revert gather a batch's whole effect in memory first (per script hash:
 * counters, new history entries, UTXOs in and out), read what they need in a few getMany
 * calls, and write everything, tip included, in one write(): after a crash the index is at
 * the old tip or the new one. The guard on the tip row makes a second writer on the same
 * datadir fail instead of interleaving.
 */
class KvStore extends AbstractStore {
  /**
   * @param {object} opts
   * @param {string|object} opts.network
   * @param {number} [opts.undoDepth=100]
   * @param {boolean} [opts.readOnly=false]
   */
  constructor(opts) {
    super(opts);
    this.kv = null;
    this.heights = new HeightIndex();
    this.prevoutCache = null;
    /** @type {Promise<void>|null} while a `whole` bulk group is open: resolved when it ends (untilGroupEnds) */
    this.groupEnded = null;
    /** @type {(() => void)|null} */
    this.endGroup = null;
  }

  /**
   * Opens the engine; implemented by each backend.
   * @abstract
   * @returns {Promise<object>} the key-value object described above
   */
  async openKv() {
    throw new Error('Abstract method.');
  }

  /**
   * The backend's name in Stats.
   * @abstract
   * @returns {'lmdb'|'level'}
   */
  get kind() {
    throw new Error('Abstract method.');
  }

  async open() {
    if (this.kv) return;
    const kv = await this.openKv();
    try {
      await this.checkMeta(kv, true);
    } catch (err) {
      await kv.close();
      throw err;
    }
    this.kv = kv;
  }

  /** @private */
  async checkMeta(kv, mayCreate) {
    const buf = await kv.get(META_KEY);
    if (buf) {
      const meta = decodeRow(decodeMeta, buf, META_KEY);
      C.checkMeta(meta, { schemaVersion: SCHEMA_VERSION, network: this.network, txstore: this.txstoreAsked }, this.describe());
      this.keepsTransactions = meta.txstore;
      return;
    }
    for await (const entry of kv.range({ limit: 1 })) {
      throw C.notAnIndex(this.describe(), `data that is not addrindex's (first key ${entry.key.toString('hex')})`);
    }
    if (this.readOnly || !mayCreate) throw C.noIndex(this.describe());
    const batch = new WriteBatch();
    batch.put(META_KEY, encodeMeta(new Writer(256), { schemaVersion: SCHEMA_VERSION, network: this.network, txstore: Boolean(this.txstoreAsked) }));
    if (await kv.write(batch, { key: META_KEY, value: undefined })) this.keepsTransactions = Boolean(this.txstoreAsked);
    else await this.checkMeta(kv, false);
  }

  async close() {
    if (!this.kv) return;
    const kv = this.kv;
    this.kv = null;
    this.prevoutCache = null;
    await kv.close();
  }

  /** @private */
  assertOpen() {
    if (!this.kv) throw C.closed();
  }

  /** @private */
  assertWritable() {
    this.assertOpen();
    if (this.readOnly) throw C.readOnly(this.describe());
  }

  /**
   * A snapshot, the tip as it stores it and the height index following that tip.
   * @private
   */
  async view() {
    this.assertOpen();
    const snap = await this.kv.snapshot();
    try {
      return await this.viewOf(snap);
    } catch (err) {
      snap.release();
      throw err;
    }
  }

  /**
   * view() over a snapshot already open (the caller releases it).
   * @private
   */
  async viewOf(snap) {
    const tipRaw = await snap.get(TIP_KEY);
    const tip = tipRaw ? decodeRow(decodeTip, tipRaw, TIP_KEY) : null;
    const heights = await this.heights.follow(snap, tip);
    this.heights = heights;
    return { snap, tip, tipRaw, heights };
  }

  /** @private */
  async commit(batch, tipRaw) {
    const ok = await this.kv.write(batch, { key: TIP_KEY, value: tipRaw || undefined });
    this.prevoutCache = null;
    if (!ok) throw C.concurrentWrite(this.describe());
  }

  // -------------------------------------------------------------------------------------
  // tip, blocks, prevouts

  async getTip() {
    this.assertOpen();
    const raw = await this.kv.get(TIP_KEY);
    if (!raw) return null;
    // the API reads the tip twice per request and it rarely moves: decode it once per value
    const c = this.tipCache;
    if (c && c.raw.equals(raw)) return { ...c.tip };
    const t = decodeRow(decodeTip, raw, TIP_KEY);
    const tip = { height: t.height, hash: toDisplayHex(t.hash), nextTxNum: t.nextTxNum };
    this.tipCache = { raw: Buffer.from(raw), tip };
    return { ...tip };
  }

  async getBlockHash(height) {
    this.assertOpen();
    if (!C.isHeight(height)) return null;
    const key = layout.blockKey(height);
    const raw = await this.kv.get(key);
    return raw ? toDisplayHex(decodeRow(decodeBlock, raw, key).hash) : null;
  }

  async getBlock(height) {
    this.assertOpen();
    if (!C.isHeight(height)) return null;
    const v = await this.view();
    try {
      return await readBlock(v.snap, height);
    } finally {
      v.snap.release();
    }
  }

  async getBlockByHash(hash) {
    this.assertOpen();
    const h = C.checkBlockHash(hash);
    const v = await this.view();
    try {
      const key = layout.blockHashKey(h);
      const raw = await v.snap.get(key);
      if (!raw) return null;
      const height = decodeRow(decodeBlockHeight, raw, key);
      const b = await readBlock(v.snap, height);
      if (!b || b.hash !== toDisplayHex(h)) throw C.corrupt(`block ${hash} is said to be at height ${height}, which holds another`);
      return b;
    } finally {
      v.snap.release();
    }
  }

  async getHeaders(fromHeight, count) {
    this.assertOpen();
    const { from, n } = C.checkRange(fromHeight, count, 'height');
    const out = [];
    for await (const { key, value } of this.kv.range({ gte: layout.blockKey(from), lt: layout.blockKey(Math.min(from + n, 0xffffffff)) })) {
      const b = decodeRow(decodeBlock, value, key);
      if (key.readUInt32BE(1) !== from + out.length) throw C.corrupt(`the index has no block row for height ${from + out.length}`);
      out.push(b.header);
    }
    return Buffer.concat(out);
  }

  async getTxids(fromTxNum, count) {
    this.assertOpen();
    const { from, n } = C.checkRange(fromTxNum, count, 'TxNum');
    const v = await this.view();
    try {
      const to = Math.min(from + n, v.tip ? v.tip.nextTxNum : 0);
      if (to <= from) return Buffer.alloc(0);
      return Buffer.from(await query.readTxids(v.snap, from, to));
    } finally {
      v.snap.release();
    }
  }

  async getPrevouts(outpoints, { indexed = false } = {}) {
    C.checkOutpoints(outpoints);
    const v = await this.view();
    try {
      const n = outpoints.length / 36;
      // a sync's lookups (indexed) are kept for the apply that follows; any other caller's (a
      // mempool follower asks poll after poll at one tip) only for this call
      const cache = indexed ? this.prevoutRecords(v.tipRaw) : { txNums: new Map(), outputs: new Map() };
      // txid -> TxNum
      const names = new Array(n); // each outpoint's txid as a latin1 string, the cache key
      const ats = [];
      const fresh = [];
      for (let i = 0; i < n; i++) {
        const name = outpoints.latin1Slice(36 * i, 36 * i + 32);
        names[i] = name;
        if (cache.txNums.has(name)) continue;
        cache.txNums.set(name, null);
        fresh.push(name);
        ats.push(36 * i);
      }
      const found = await findTxNums(v.snap, outpoints, ats, { indexed });
      const wanted = [];
      for (let k = 0; k < ats.length; k++) {
        if (found[k] === null) continue;
        const txNum = found[k];
        cache.txNums.set(fresh[k], txNum);
        if (!cache.outputs.has(txNum)) {
          cache.outputs.set(txNum, null);
          wanted.push(txNum);
        }
      }
      // TxNum -> unspent outputs
      await readOutputs(v.snap, wanted, cache.outputs);
      const out = new Array(n);
      for (let i = 0; i < n; i++) {
        const txNum = cache.txNums.get(names[i]);
        const rec = txNum === null ? null : cache.outputs.get(txNum);
        const at = rec ? findVout(rec, outpoints.readUInt32LE(36 * i + 32)) : -1;
        out[i] = at < 0 ? null : {
          value: rec.values[at],
          scripthash: rec.scripthashes.subarray(32 * at, 32 * at + 32),
          p2pk: (rec.p2pk && rec.p2pk.get(at)) || null,
          height: v.heights.heightOf(txNum),
          txNum,
        };
      }
      return out;
    } finally {
      v.snap.release();
    }
  }

  /**
   * Rows read by getPrevouts, kept for the apply that follows (it rewrites the same outputs
   * rows); valid while neither this object nor another process has moved the tip.
   * @private
   * @returns {{txNums: Map<string, number|null>, outputs: Map<number, import('../codec/records').Outputs|null>}}
   */
  prevoutRecords(tipRaw) {
    const c = this.prevoutCache;
    if (c && sameBytes(c.tipRaw, tipRaw) && c.outputs.size < 4_000_000) return c;
    this.prevoutCache = { tipRaw, txNums: new Map(), outputs: new Map() };
    return this.prevoutCache;
  }

  // -------------------------------------------------------------------------------------
  // apply and revert: twins. Each gathers its whole effect per script hash (Changes), reads
  // the account rows once, hands them to updateAccounts, and writes one batch with the tip.

  async apply(blocks, opts = {}) {
    this.assertWritable();
    if (C.checkBlocks(blocks).length === 0) return;
    const v = await this.view();
    try {
      const tip = v.tip && { height: v.tip.height, hash: toDisplayHex(v.tip.hash), nextTxNum: v.tip.nextTxNum };
      C.checkExtends(tip, blocks, this.describe());
      const batch = new WriteBatch();
      await applyBlocks(this, v, blocks, batch, new Writer(), opts.chainHeight);
      await this.commit(batch, v.tipRaw);
    } finally {
      v.snap.release();
      this.prevoutCache = null;
    }
  }

  async beginBulk({ whole = false } = {}) {
    this.assertWritable();
    if (this.kv.beginBulk) this.kv.beginBulk();
    if (whole && !this.groupEnded) this.groupEnded = new Promise((resolve) => { this.endGroup = resolve; });
  }

  async endBulk({ commit = true } = {}) {
    try {
      // nothing cached outlives a discarded group: the prevout cache is dropped after every
      // apply, and the tip cache is checked against the tip row's bytes on every read
      if (this.kv && this.kv.endBulk) await this.kv.endBulk(commit);
    } finally {
      const end = this.endGroup;
      this.groupEnded = null;
      this.endGroup = null;
      if (end) end();
    }
  }

  untilGroupEnds() {
    return this.groupEnded || Promise.resolve();
  }

  async revert(height) {
    this.assertWritable();
    C.checkRevertHeight(height);
    const v = await this.view();
    try {
      if (!v.tip || height >= v.tip.height) return;
      const batch = new WriteBatch();
      await revertBlocks(this, v, height, batch, new Writer());
      await this.commit(batch, v.tipRaw);
    } finally {
      v.snap.release();
      this.prevoutCache = null;
    }
  }

  // -------------------------------------------------------------------------------------
  // txids

  async getTxid(txNum) {
    this.assertOpen();
    if (!C.isTxNum(txNum)) return null;
    const txid = await query.txidAt(this.kv, txNum);
    return txid && Buffer.from(txid);
  }

  async getTx(txid) {
    C.checkHash(txid, 'txid');
    const v = await this.view();
    try {
      const [txNum] = await findTxNums(v.snap, txid, [0]);
      if (txNum === null) return null;
      const height = v.heights.heightOf(txNum);
      if (height < 0) throw C.corrupt(`the tx row of ${toDisplayHex(txid)} holds an unknown TxNum ${txNum}`);
      const bkey = layout.blockKey(height);
      const brow = await v.snap.get(bkey);
      if (!brow) throw C.corrupt(`the index has no block row for height ${height}`);
      const block = decodeRow(decodeBlock, brow, bkey);
      const position = txNum - block.firstTxNum;
      const { offset, next } = await query.txPlace(v.snap, txNum, position + 1 < block.txCount);
      return {
        txNum,
        txid: Buffer.from(txid),
        height,
        blockHash: toDisplayHex(block.hash),
        position,
        offset,
        length: (next === null ? block.size : next) - offset,
      };
    } finally {
      v.snap.release();
    }
  }

  async getBlockBytes(height) {
    this.assertOpen();
    if (!C.isHeight(height) || !this.keepsTransactions) return null;
    const v = await this.view();
    try {
      const [row, body] = await v.snap.getMany([layout.blockKey(height), layout.bodyKey(height)]);
      if (!row || !body) return null;
      const b = decodeRow(decodeBlock, row, layout.blockKey(height));
      const raw = decodeRow(decodeBody, body, layout.bodyKey(height), b.header);
      if (raw.length !== b.size) throw C.corrupt(`the kept bytes of block ${height} are ${raw.length}, its row says ${b.size}`);
      return raw;
    } finally {
      v.snap.release();
    }
  }

  async getTouched(height, opts) {
    this.assertOpen();
    const view = C.parseView(opts);
    if (!C.isHeight(height)) return null;
    const key = layout.touchedKey(height);
    const raw = await this.kv.get(key);
    if (!raw) return null;
    const t = decodeRow(decodeTouched, raw, key);
    return view === 'script' ? t.both : Buffer.concat([t.both, t.addressOnly]);
  }

  async getSpenders(txid) {
    C.checkHash(txid, 'txid');
    const v = await this.view();
    try {
      const [txNum] = await findTxNums(v.snap, txid, [0]);
      if (txNum === null) return null;
      const key = layout.outputsKey(txNum);
      const row = await v.snap.get(key);
      if (!row) return [];
      const { spent } = decodeRow(decodeOutputs, row, key, txNum);
      const txids = await query.readTxidsOf(v.snap, spent.txNums);
      return spent.vouts.map((vout, i) => ({
        vout,
        txNum: spent.txNums[i],
        txid: Buffer.from(txids.subarray(32 * i, 32 * i + 32)),
        vin: spent.vins[i] < 0 ? null : spent.vins[i],
        height: v.heights.heightOf(spent.txNums[i]),
      }));
    } finally {
      v.snap.release();
    }
  }

  // -------------------------------------------------------------------------------------
  // summaries, history, UTXOs

  async getSummary(scripthash, opts) {
    return (await this.getSummaries([scripthash], opts))[0];
  }

  async getSummaries(scripthashes, opts) {
    this.assertOpen();
    const keys = C.checkHashes(scripthashes, 'getSummaries').map((sh) => layout.accountKey(sh, 0));
    const script = C.parseView(opts) === 'script';
    const out = new Array(keys.length).fill(null);
    // one scratch Account per store: each row is decoded and copied out in one synchronous step
    const acc = this.scratchAccount || (this.scratchAccount = new Account());
    const mixed = []; // script view: accounts with P2PK parts (their own copies), derived from the same snapshot after the pass
    const snap = await this.kv.snapshot();
    try {
      await query.eachValue(snap, keys, (i, row) => {
        if (!row) return;
        decodeRow(decodeAccount, row, keys[i], acc);
        if (script && acc.parts) mixed.push({ i, acc: decodeRow(decodeAccount, row, keys[i], new Account()) });
        else out[i] = accountSummary(acc);
      });
      if (mixed.length) {
        const v = await this.viewOf(snap);
        for (const m of mixed) out[m.i] = await query.accountScriptSummary(v, scripthashes[m.i], m.acc);
      }
    } finally {
      snap.release();
    }
    return out;
  }

  async getHistory(scripthash, opts) {
    C.checkHash(scripthash, 'script hash');
    const q = C.parseQuery(opts);
    const v = await this.view();
    try {
      return await query.history(v, scripthash, q);
    } finally {
      v.snap.release();
    }
  }

  async getHistories(scripthashes, opts) {
    C.checkHashes(scripthashes, 'getHistories');
    const q = C.parseQuery(opts);
    const v = await this.view();
    try {
      // repeats count once (query.histories drops them)
      return await query.histories(v, scripthashes, q);
    } finally {
      v.snap.release();
    }
  }

  async getUtxos(scripthash, opts) {
    C.checkHash(scripthash, 'script hash');
    const { limit, after, view } = C.parseUtxoQuery(opts);
    const v = await this.view();
    try {
      return await query.utxos(v, scripthash, limit, after, view);
    } finally {
      v.snap.release();
    }
  }

  // -------------------------------------------------------------------------------------
  // the mempool snapshot: its rows beside the chain's, a poll's change at a time (mempool-rows.js)

  async putMempool(change) {
    this.assertWritable();
    C.checkChange(change);
    const v = await this.view();
    try {
      if (!v.tip || !decodeChange(change, false).tip.equals(v.tip.hash)) return false;
      const batch = new WriteBatch();
      await mempoolRows.stageChange(v.snap, batch, change);
      // guarded by the tip row, like a block commit: a block committed meanwhile refuses it
      return await this.kv.write(batch, { key: TIP_KEY, value: v.tipRaw });
    } finally {
      v.snap.release();
    }
  }

  async putSourceInfo(info) {
    this.assertWritable();
    const batch = new WriteBatch();
    batch.put(layout.SOURCE_KEY, encodeSource(new Writer(4096), info));
    const tipRaw = await this.kv.get(TIP_KEY);
    if (!(await this.kv.write(batch, { key: TIP_KEY, value: tipRaw || undefined }))) throw C.concurrentWrite(this.describe());
  }

  async getSourceInfo() {
    this.assertOpen();
    const raw = await this.kv.get(layout.SOURCE_KEY);
    return raw ? decodeRow(decodeSource, raw, layout.SOURCE_KEY) : null;
  }

  async getMempoolHead() {
    this.assertOpen();
    const h = await mempoolRows.readHead(this.kv);
    return h ? mempoolRows.headInfo(h, toDisplayHex) : null;
  }

  async getMempool({ raws = false } = {}) {
    return this.withSnapshot((snap) => mempoolRows.readWhole(snap, raws));
  }

  async getMempoolRaw(place, txid) {
    C.checkPlace(place);
    C.checkHash(txid, 'txid');
    return this.withSnapshot((snap) => mempoolRows.readRaw(snap, place, txid));
  }

  async getMempoolChanges(after) {
    C.checkSeq(after);
    return this.withSnapshot((snap) => mempoolRows.readChanges(snap, after));
  }

  /** fn(snapshot) on one snapshot of the store, released after. @private */
  async withSnapshot(fn) {
    this.assertOpen();
    const snap = await this.kv.snapshot();
    try {
      return await fn(snap);
    } finally {
      snap.release();
    }
  }

  // -------------------------------------------------------------------------------------
  // whole-index walks

  async engineStats() {
    this.assertOpen();
    const e = this.kv.engineStats();
    const out = { store: this.kind, ...e };
    // LMDB: how much of its map the index takes
    if (Number.isFinite(e.mapSize)) {
      out.mapBytes = e.mapSize;
      out.usedBytes = (e.lastPage + 1) * e.pageSize;
    }
    return out;
  }

  async stats() {
    const v = await this.view();
    try {
      const tip = v.tip && { height: v.tip.height, hash: toDisplayHex(v.tip.hash), nextTxNum: v.tip.nextTxNum };
      return {
        store: this.kind, tip, ...(await walk.stats(v.snap)), diskBytes: await this.kv.sizeOnDisk(), engine: await this.kv.engineStats(),
      };
    } finally {
      v.snap.release();
    }
  }

  async verify(opts = {}) {
    const v = await this.view();
    try {
      return await walk.verify(v, { maxProblems: opts.maxProblems });
    } finally {
      v.snap.release();
    }
  }

  /**
   * @param {{undo?: boolean}} [opts] undo: false leaves undo rows out — they are the one thing
   *   that depends on the path: a revert cannot recreate undo pruned before it
   */
  async digest(opts = {}) {
    this.assertOpen();
    const snap = await this.kv.snapshot();
    try {
      return await walk.digest(snap, { undo: opts.undo !== false });
    } finally {
      snap.release();
    }
  }

  // -------------------------------------------------------------------------------------
  // bitcore v8 wallets (wallets.js): rows beside the chain's, never in digest or verify

  async createWallet(fields) {
    this.assertWritable();
    return wallets.createWallet(this.kv, fields);
  }

  async addWalletAddresses(pubKey, entries) {
    this.assertWritable();
    return wallets.addAddresses(this.kv, pubKey, entries);
  }

  async getWallet(pubKey) {
    this.assertOpen();
    return wallets.readWallet(this.kv, pubKey);
  }

  async getWalletAddresses(walletId, opts) {
    this.assertOpen();
    return wallets.listAddresses(this.kv, walletId, opts);
  }

  async getWalletsOf(scripthashes) {
    this.assertOpen();
    C.checkHashes(scripthashes, 'getWalletsOf');
    return wallets.walletsOf(this.kv, scripthashes);
  }
}

/**
 * What getBlock answers: the block row and, when the sync read it from a blocks dir, its locator.
 * @returns {Promise<import('./abstract').Block|null>}
 */
async function readBlock(snap, height) {
  const key = layout.blockKey(height);
  const [raw, loc] = await snap.getMany([key, layout.locatorKey(height)]);
  if (!raw) return null;
  const b = decodeRow(decodeBlock, raw, key);
  const l = loc ? decodeRow(decodeLocator, loc, layout.locatorKey(height)) : null;
  return {
    height, hash: toDisplayHex(b.hash), time: b.time, firstTxNum: b.firstTxNum, txCount: b.txCount,
    header: Buffer.from(b.header), size: b.size, weight: b.weight, locator: l && { file: l.file, offset: l.offset, length: b.size },
  };
}

/** Puts and deletes of one commit, in order. */
class WriteBatch {
  constructor() {
    this.keys = [];
    this.values = [];
  }

  /**
   * @param {Buffer} key
   * @param {Buffer} value
   */
  put(key, value) {
    this.keys.push(key);
    this.values.push(value);
  }

  /** @param {Buffer} key */
  del(key) {
    this.keys.push(key);
    this.values.push(null);
  }

  get length() {
    return this.keys.length;
  }
}

// ---------------------------------------------------------------------------------------
// helpers

function findVout(rec, vout) {
  const vouts = rec.vouts;
  let lo = 0;
  let hi = rec.count - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (vouts[mid] === vout) return mid;
    if (vouts[mid] < vout) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

function sameBytes(a, b) {
  if (!a || !b) return !a && !b;
  return a.equals(b);
}

module.exports = { KvStore, WriteBatch, SCHEMA_VERSION };
