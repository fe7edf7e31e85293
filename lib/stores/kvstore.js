'use strict';

const { AbstractStore } = require('./abstract');
const { StoreError, UsageError } = require('../errors');
const { getNetwork } = require('../chain/networks');
const { toDisplayHex, fromDisplayHex } = require('../chain/hash');
const layout = require('./layout');
const records = require('../codec/records');
const { Writer } = require('../codec/io');
const { FUNDED, SPENT } = require('../codec/postings');
const { Changes } = require('./changes');
const { HeightIndex } = require('./heights');
const { updateAccounts, decodeRow } = require('./accounts');
const walk = require('./walk');

const {
  Account, PAGE_ENTRIES, TXIDS_PER_ROW, MAX_TXNUM,
  encodeMeta, decodeMeta, encodeTip, decodeTip, encodeBlock, decodeBlock, encodeTxids, txidsCount,
  encodeTxNum, decodeTxNum, writeOutputsHead, writeOutput, decodeOutputs, decodeAccount, accountSummary, decodePage,
  decodeUtxo, encodeUndo, decodeUndo,
} = records;
const { P, META_KEY, TIP_KEY } = layout;

/** Version of the whole key-value schema (layout.js + lib/codec); stored in the meta row. */
const SCHEMA_VERSION = 1;

/**
 * The schema of docs/FORMAT.md over any ordered key-value engine. A backend (lmdb.js,
 * level.js) only supplies `openKv()` returning an object with this shape; everything else —
 * apply and revert, reads, verify, digest, stats — is here, once:
 *
 *   get(key) -> Buffer|undefined                   latest committed value
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
    this.network = getNetwork(opts.network).name;
    this.undoDepth = opts.undoDepth === undefined ? 100 : opts.undoDepth;
    if (!Number.isInteger(this.undoDepth) || this.undoDepth < 0) {
      throw new UsageError('ERR_BAD_UNDO_DEPTH', `undo depth must be a whole number of blocks, got ${opts.undoDepth}`);
    }
    this.readOnly = Boolean(opts.readOnly);
    this.kv = null;
    this.heights = new HeightIndex();
    this.epoch = 0; // commits made through this object: invalidates the prevout cache
    this.prevoutCache = null;
  }

  /**
   * Opens the engine; implemented by each backend.
   * @abstract
   * @returns {Promise<object>} the key-value object described above
   */
  async openKv() {
    throw new Error('Abstract method.');
  }

  /** Where the index lives, for messages. */
  describe() {
    return 'the index';
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
      if (meta.schemaVersion !== SCHEMA_VERSION) {
        throw new StoreError('ERR_SCHEMA_VERSION', `${this.describe()} holds an index in schema version ` +
          `${meta.schemaVersion}; this addrindex reads version ${SCHEMA_VERSION}: sync into a new --datadir ` +
          '(or use the addrindex release that wrote it)', { found: meta.schemaVersion, expected: SCHEMA_VERSION });
      }
      if (meta.network !== this.network) {
        throw new StoreError('ERR_WRONG_NETWORK', `${this.describe()} holds a ${meta.network} index; ` +
          `this run asked for ${this.network}`, { found: meta.network, expected: this.network });
      }
      return;
    }
    for await (const entry of kv.range({ limit: 1 })) {
      throw new StoreError('ERR_NOT_AN_INDEX', `${this.describe()} holds data that is not an addrindex index ` +
        `(first key ${entry.key.toString('hex')})`);
    }
    if (this.readOnly || !mayCreate) {
      throw new StoreError('ERR_NO_INDEX', `${this.describe()} holds no index yet: run "addrindex sync" first`);
    }
    const batch = new WriteBatch();
    batch.put(META_KEY, encodeMeta(new Writer(256), { schemaVersion: SCHEMA_VERSION, network: this.network }));
    if (!(await kv.write(batch, { key: META_KEY, value: undefined }))) await this.checkMeta(kv, false);
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
    if (!this.kv) throw new StoreError('ERR_CLOSED', 'the store is not open');
  }

  /** @private */
  assertWritable() {
    this.assertOpen();
    if (this.readOnly) {
      throw new StoreError('ERR_READ_ONLY', `${this.describe()} was opened read-only; only the sync process writes`);
    }
  }

  /**
   * A snapshot, the tip as it stores it and the height index following that tip.
   * @private
   */
  async view() {
    this.assertOpen();
    const snap = await this.kv.snapshot();
    try {
      const tipRaw = await snap.get(TIP_KEY);
      const tip = tipRaw ? decodeRow(decodeTip, tipRaw, TIP_KEY) : null;
      const heights = await this.heights.follow(snap, tip);
      this.heights = heights;
      return { snap, tip, tipRaw, heights };
    } catch (err) {
      snap.release();
      throw err;
    }
  }

  /** @private */
  async commit(batch, tipRaw) {
    const ok = await this.kv.write(batch, { key: TIP_KEY, value: tipRaw || undefined });
    this.epoch++;
    this.prevoutCache = null;
    if (!ok) {
      throw new StoreError('ERR_CONCURRENT_WRITE', `another process moved the tip of ${this.describe()} while this ` +
        'one was writing; nothing was written: run one addrindex sync per datadir');
    }
  }

  // -------------------------------------------------------------------------------------
  // tip, blocks, prevouts

  async getTip() {
    this.assertOpen();
    const raw = await this.kv.get(TIP_KEY);
    if (!raw) return null;
    const t = decodeRow(decodeTip, raw, TIP_KEY);
    return { height: t.height, hash: toDisplayHex(t.hash), nextTxNum: t.nextTxNum };
  }

  async getBlockHash(height) {
    this.assertOpen();
    if (!Number.isInteger(height) || height < 0 || height > 0xffffffff) return null;
    const key = layout.blockKey(height);
    const raw = await this.kv.get(key);
    return raw ? toDisplayHex(decodeRow(decodeBlock, raw, key).hash) : null;
  }

  async getBlock(height) {
    this.assertOpen();
    if (!Number.isInteger(height) || height < 0 || height > 0xffffffff) return null;
    const key = layout.blockKey(height);
    const raw = await this.kv.get(key);
    if (!raw) return null;
    const b = decodeRow(decodeBlock, raw, key);
    return { height, hash: toDisplayHex(b.hash), time: b.time, firstTxNum: b.firstTxNum, txCount: b.txCount };
  }

  async getPrevouts(outpoints) {
    if (!Buffer.isBuffer(outpoints) || outpoints.length % 36 !== 0) {
      throw new UsageError('ERR_BAD_OUTPOINTS', 'outpoints must be a Buffer of 36-byte txid+vout records');
    }
    const v = await this.view();
    try {
      const n = outpoints.length / 36;
      const cache = this.prevoutRecords(v.tipRaw);
      // txid -> TxNum
      const keys = [];
      const names = [];
      for (let i = 0; i < n; i++) {
        const name = outpoints.latin1Slice(36 * i, 36 * i + 32);
        if (cache.txNums.has(name)) continue;
        cache.txNums.set(name, null);
        names.push(name);
        keys.push(layout.txKey(outpoints, 36 * i));
      }
      const rows = await v.snap.getMany(keys);
      const wanted = [];
      for (let k = 0; k < keys.length; k++) {
        if (!rows[k]) continue;
        const txNum = decodeRow(decodeTxNum, rows[k], keys[k]);
        cache.txNums.set(names[k], txNum);
        if (!cache.outputs.has(txNum)) {
          cache.outputs.set(txNum, null);
          wanted.push(txNum);
        }
      }
      // TxNum -> unspent outputs
      await readOutputs(v.snap, wanted, cache.outputs);
      const out = new Array(n);
      for (let i = 0; i < n; i++) {
        const txNum = cache.txNums.get(outpoints.latin1Slice(36 * i, 36 * i + 32));
        const rec = txNum === null ? null : cache.outputs.get(txNum);
        const at = rec ? findVout(rec, outpoints.readUInt32LE(36 * i + 32)) : -1;
        out[i] = at < 0 ? null : {
          value: rec.values[at],
          scripthash: rec.scripthashes.subarray(32 * at, 32 * at + 32),
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
    if (c && c.epoch === this.epoch && sameBytes(c.tipRaw, tipRaw) && c.outputs.size < 4_000_000) return c;
    this.prevoutCache = { epoch: this.epoch, tipRaw, txNums: new Map(), outputs: new Map() };
    return this.prevoutCache;
  }

  // -------------------------------------------------------------------------------------
  // apply and revert: twins. Each gathers its whole effect per script hash (Changes), reads
  // the account rows once, hands them to updateAccounts, and writes one batch with the tip.

  async apply(blocks) {
    this.assertWritable();
    if (!Array.isArray(blocks)) throw new UsageError('ERR_BAD_BLOCKS', 'apply takes an array of block deltas');
    if (blocks.length === 0) return;
    const v = await this.view();
    try {
      checkExtends(v.tip, blocks, this.describe());
      const batch = new WriteBatch();
      await this.applyBlocks(v, blocks, batch, new Writer());
      await this.commit(batch, v.tipRaw);
    } finally {
      v.snap.release();
      this.prevoutCache = null;
    }
  }

  async revert(height) {
    this.assertWritable();
    if (!Number.isInteger(height) || height < -1) {
      throw new UsageError('ERR_BAD_HEIGHT', `revert takes a height >= -1, got ${height}`);
    }
    const v = await this.view();
    try {
      if (!v.tip || height >= v.tip.height) return;
      const batch = new WriteBatch();
      await this.revertBlocks(v, height, batch, new Writer());
      await this.commit(batch, v.tipRaw);
    } finally {
      v.snap.release();
      this.prevoutCache = null;
    }
  }

  /** @private */
  async applyBlocks(v, blocks, batch, w) {
    const { snap } = v;
    const first = blocks[0].firstTxNum;
    let T = 0;
    let O = 0;
    for (const b of blocks) {
      T += b.cols.txCount;
      O += b.cols.outStart[b.cols.txCount];
    }
    const end = first + T;
    if (end - 1 > MAX_TXNUM) throw new StoreError('ERR_TXNUM_RANGE', `TxNum ${end - 1} does not fit the 40-bit keys`);
    const topHeight = blocks[blocks.length - 1].height;

    // the outputs rows the batch spends from, and the TxNum of any txid a coinbase reuses (BIP30)
    const { sources, reused } = await this.readSources(v, blocks, first);

    // gather, per script hash
    const ch = new Changes(Math.max(1024, O >> 1));
    const outBase = new Uint32Array(T + 1); // batch tx -> index of its first output in the batch
    const txBlock = new Uint32Array(T);
    const addAt = new Int32Array(O).fill(-1); // batch output -> its UTXO add, to cancel it
    const gone = new Uint8Array(O); // batch outputs spent (or replaced) within the batch
    const replaced = new Uint8Array(T); // batch txs whose txid a later coinbase of the batch reused
    const coinbases = new Map(); // latin1 txid -> batch tx, for BIP30 within the batch
    const undoExtra = new Array(blocks.length).fill(null);
    let tx = 0;
    let out = 0;
    for (let b = 0; b < blocks.length; b++) {
      const { height, cols, spent, firstTxNum } = blocks[b];
      const { inStart, outStart, idType, values, prevouts } = cols;
      for (let t = 0; t < cols.txCount; t++, tx++) {
        const txNum = firstTxNum + t;
        outBase[tx] = out + outStart[t];
        txBlock[tx] = b;
        if (t === 0 && height !== 0) {
          const extra = this.reuseTxid(blocks, b, tx, ch, sources, reused, coinbases, { outBase, txBlock, addAt, gone, replaced });
          if (extra) undoExtra[b] = extra;
        }
        for (let i = inStart[t]; i < inStart[t + 1]; i++) {
          const prev = spent.txNums[i];
          const vout = prevouts.readUInt32LE(36 * i + 32);
          const j = ch.touch(spent.scripthashes, 32 * i, height);
          ch.sent[j] += spent.values[i];
          ch.spent[j]++;
          ch.entry(j, txNum, SPENT);
          if (prev >= first) {
            const o = outBase[prev - first] + vout;
            gone[o] = 1;
            if (addAt[o] >= 0) ch.cancelUtxo(addAt[o]);
          } else {
            ch.delUtxo(j, prev, vout);
            sources.get(prev).spent.push(vout);
          }
        }
        if (height === 0) continue; // the genesis outputs are not spendable: filed nowhere
        for (let o = outStart[t]; o < outStart[t + 1]; o++) {
          if (idType[o] === 0) continue;
          const j = ch.touch(cols.scripthashes, 32 * o, height);
          ch.received[j] += values[o];
          ch.funded[j]++;
          ch.entry(j, txNum, FUNDED);
          addAt[out + o] = ch.addUtxo(j, txNum, o - outStart[t], values[o]);
        }
      }
      out += outStart[cols.txCount];
    }
    outBase[T] = out;

    // tx rows: txid -> TxNum and the surviving outputs of each new tx; the rows spent from
    tx = 0;
    for (let b = 0; b < blocks.length; b++) {
      const { height, cols, firstTxNum } = blocks[b];
      const { outStart, idType, values } = cols;
      for (let t = 0; t < cols.txCount; t++, tx++) {
        if (replaced[tx]) continue;
        batch.put(layout.txKey(cols.txids, 32 * t), encodeTxNum(w, firstTxNum + t));
        if (height === 0) continue;
        const base = outBase[tx] - outStart[t];
        let left = 0;
        for (let o = outStart[t]; o < outStart[t + 1]; o++) if (idType[o] !== 0 && !gone[base + o]) left++;
        if (left === 0) continue;
        writeOutputsHead(w, left);
        let prev = -1;
        for (let o = outStart[t]; o < outStart[t + 1]; o++) {
          if (idType[o] === 0 || gone[base + o]) continue;
          writeOutput(w, prev, o - outStart[t], values[o], cols.scripthashes, 32 * o);
          prev = o - outStart[t];
        }
        batch.put(layout.outputsKey(firstTxNum + t), w.end());
      }
    }
    for (const [txNum, src] of sources) {
      if (src.spent.length === 0 && (!src.replaced || !src.rec)) continue;
      if (!src.rec) throw new StoreError('ERR_CORRUPT', `a block spends from TxNum ${txNum}, which has no unspent outputs`);
      const row = writeOutputsWithout(w, src.rec, src.spent, src.replaced);
      if (row) batch.put(layout.outputsKey(txNum), row);
      else batch.del(layout.outputsKey(txNum));
    }

    // txids rows
    const firstRowStart = first - (first % TXIDS_PER_ROW);
    let prior = null;
    if (first % TXIDS_PER_ROW !== 0) {
      const key = layout.txidsKey(firstRowStart);
      prior = await snap.get(key);
      if (!prior || decodeRow(txidsCount, prior, key) !== first % TXIDS_PER_ROW) {
        throw new StoreError('ERR_CORRUPT', `the txids row of TxNum ${firstRowStart} does not end at the tip`);
      }
    }
    const txids = Buffer.allocUnsafe(32 * T);
    let pos = 0;
    for (const b of blocks) pos += b.cols.txids.copy(txids, pos, 0, 32 * b.cols.txCount);
    for (let row = firstRowStart; row < end; row += TXIDS_PER_ROW) {
      const from = Math.max(row, first);
      const to = Math.min(row + TXIDS_PER_ROW, end);
      batch.put(layout.txidsKey(row), encodeTxids(w, row === firstRowStart ? prior : null, txids, 32 * (from - first), to - from));
    }

    // blocks, undo (kept for the last undoDepth blocks: heights > tip - undoDepth), tip
    const oldTop = v.tip ? v.tip.height : -1;
    for (let b = 0; b < blocks.length; b++) {
      const { height, cols, firstTxNum, spent } = blocks[b];
      batch.put(layout.blockKey(height), encodeBlock(w, fromDisplayHex(cols.hash), firstTxNum, cols.txCount, cols.time));
      if (height > topHeight - this.undoDepth) batch.put(layout.undoKey(height), encodeBlockUndo(w, cols, spent, undoExtra[b]));
    }
    for (let h = Math.max(0, oldTop - this.undoDepth + 1); h <= Math.min(oldTop, topHeight - this.undoDepth); h++) {
      batch.del(layout.undoKey(h));
    }
    const last = blocks[blocks.length - 1];
    batch.put(TIP_KEY, encodeTip(w, { height: last.height, hash: fromDisplayHex(last.cols.hash), nextTxNum: end }));

    // accounts
    const keys = accountKeys(ch);
    const rows = await snap.getMany(keys);
    await updateAccounts({ reader: snap, writer: w, batch, heights: v.heights }, ch, rows, keys);
  }

  /** @private */
  async revertBlocks(v, height, batch, w) {
    const { snap, tip, heights } = v;
    const top = tip.height;

    // undo rows of every block to revert: all must still be kept
    const undoKeys = [];
    for (let h = height + 1; h <= top; h++) undoKeys.push(layout.undoKey(h));
    const undoRows = await snap.getMany(undoKeys);
    const undos = undoRows.map((row, k) => {
      if (!row) throw undoMissing(this, height, height + 1 + k, top);
      return decodeRow(decodeUndo, row, undoKeys[k]);
    });
    const cutoff = heights.firstTxNum(height + 1);
    const end = tip.nextTxNum;

    // txids of the reverted transactions: their tx rows go
    const txids = await this.readTxids(snap, cutoff, end);

    // txids a reverted coinbase had reused map to their earlier TxNum again (BIP30)
    const reborn = new Map(); // latin1 txid -> old TxNum
    for (let k = 0; k < undos.length; k++) {
      for (const d of undos[k].dups) {
        const at = 32 * (heights.firstTxNum(height + 1 + k) + d.position - cutoff);
        if (d.oldTxNum < cutoff) reborn.set(txids.latin1Slice(at, at + 32), d.oldTxNum);
      }
    }
    for (let t = 0; t < end - cutoff; t++) {
      const name = txids.latin1Slice(32 * t, 32 * t + 32);
      const key = layout.txKey(txids, 32 * t);
      if (reborn.has(name)) batch.put(key, encodeTxNum(w, reborn.get(name)));
      else batch.del(key);
    }

    // gather, per script hash: outputs the reverted txs created (still unspent, or spent
    // within the reverted blocks), and outputs they spent
    const ch = new Changes();
    for await (const { key, value } of snap.range({ gte: layout.outputsKey(cutoff), lt: layout.outputsKey(end) })) {
      const t = layout.readU40(key, 1);
      const rec = decodeRow(decodeOutputs, value, key, t);
      const h = heights.heightOf(t);
      for (let o = 0; o < rec.count; o++) {
        const j = ch.touch(rec.scripthashes, 32 * o, h);
        ch.received[j] -= rec.values[o];
        ch.funded[j]--;
        ch.delUtxo(j, t, rec.vouts[o]);
      }
      batch.del(key);
    }
    const restore = new Map(); // TxNum below cutoff -> outputs its row gets back
    for (let k = 0; k < undos.length; k++) {
      const u = undos[k];
      for (let i = 0; i < u.spentCount; i++) {
        const prev = u.txNums[i];
        const j = ch.touch(u.scripthashes, 32 * i, height + 1 + k);
        ch.sent[j] -= u.values[i];
        ch.spent[j]--;
        if (prev >= cutoff) {
          ch.received[j] -= u.values[i]; // created and spent within the reverted blocks
          ch.funded[j]--;
        } else {
          ch.addUtxo(j, prev, u.vouts[i], u.values[i]);
          let list = restore.get(prev);
          if (!list) restore.set(prev, (list = []));
          list.push({ vout: u.vouts[i], value: u.values[i], shs: u.scripthashes, at: 32 * i });
        }
      }
    }
    await this.restoreOutputs(snap, restore, batch, w);

    // txids rows
    const firstRowStart = cutoff - (cutoff % TXIDS_PER_ROW);
    for (let row = firstRowStart; row < end; row += TXIDS_PER_ROW) {
      if (row === firstRowStart && cutoff % TXIDS_PER_ROW !== 0) {
        batch.put(layout.txidsKey(row), encodeTxids(w, null, txids.priorRow, 1, cutoff % TXIDS_PER_ROW));
      } else {
        batch.del(layout.txidsKey(row));
      }
    }

    // blocks, undo, tip
    for (let h = height + 1; h <= top; h++) {
      batch.del(layout.blockKey(h));
      batch.del(layout.undoKey(h));
    }
    if (height >= 0) {
      const key = layout.blockKey(height);
      const row = await snap.get(key);
      if (!row) throw new StoreError('ERR_CORRUPT', `the index has no block row for height ${height}`);
      batch.put(TIP_KEY, encodeTip(w, { height, hash: decodeRow(decodeBlock, row, key).hash, nextTxNum: cutoff }));
    } else {
      batch.del(TIP_KEY);
    }

    // accounts
    const aKeys = accountKeys(ch);
    const aRows = await snap.getMany(aKeys);
    await updateAccounts({ reader: snap, writer: w, batch, heights }, ch, aRows, aKeys, cutoff);
  }

  /**
   * For apply: the outputs rows of every tx the batch spends from outside the batch, and the
   * TxNum of every coinbase txid the index already has (BIP30) with its outputs row.
   * @private
   */
  async readSources(v, blocks, first) {
    const cache = this.prevoutRecords(v.tipRaw);
    const sources = new Map(); // TxNum -> {rec, spent: vouts, replaced}
    const want = [];
    const add = (txNum) => {
      if (sources.has(txNum)) return;
      const rec = cache.outputs.get(txNum);
      sources.set(txNum, { rec: rec || null, spent: [], replaced: false });
      if (rec === undefined) want.push(txNum);
    };
    const cbKeys = blocks.map((b) => layout.txKey(b.cols.txids, 0));
    const cbRows = await v.snap.getMany(cbKeys);
    const reused = new Map(); // latin1 coinbase txid -> TxNum it already has
    for (let b = 0; b < blocks.length; b++) {
      if (!cbRows[b]) continue;
      const txNum = decodeRow(decodeTxNum, cbRows[b], cbKeys[b]);
      reused.set(blocks[b].cols.txids.latin1Slice(0, 32), txNum);
      add(txNum);
    }
    for (const { cols, spent } of blocks) {
      const I = cols.inStart[cols.txCount];
      for (let i = 0; i < I; i++) if (spent.txNums[i] < first) add(spent.txNums[i]);
    }
    const got = new Map();
    await readOutputs(v.snap, want, got);
    for (const txNum of want) sources.get(txNum).rec = got.get(txNum);
    return { sources, reused };
  }

  /**
   * BIP30: a coinbase whose txid an earlier transaction already has (mainnet 91842 and
   * 91880). As in Bitcoin Core, the new tx takes the txid and the earlier outputs still
   * unspent leave the UTXO set: here they count as spent by the new coinbase, and the txid
   * maps to the new TxNum. Undo records the earlier TxNum and the outputs, so revert restores both.
   * @private
   * @returns {{spent: object[], dups: object[]}|null} extra undo for the block
   */
  reuseTxid(blocks, b, tx, ch, sources, reused, coinbases, arrays) {
    const { height, cols, firstTxNum } = blocks[b];
    const name = cols.txids.latin1Slice(0, 32);
    const earlier = coinbases.get(name);
    coinbases.set(name, tx);
    const extra = { spent: [], dups: [] };
    if (earlier !== undefined) {
      const e = blocks[arrays.txBlock[earlier]];
      const ec = e.cols;
      for (let o = ec.outStart[0]; o < ec.outStart[1]; o++) {
        const g = arrays.outBase[earlier] + o;
        if (ec.idType[o] === 0 || arrays.gone[g] || e.height === 0) continue;
        arrays.gone[g] = 1;
        ch.cancelUtxo(arrays.addAt[g]);
        const j = ch.touch(ec.scripthashes, 32 * o, height);
        ch.sent[j] += ec.values[o];
        ch.spent[j]++;
        ch.entry(j, firstTxNum, SPENT);
        extra.spent.push({ txNum: e.firstTxNum, vout: o, value: ec.values[o], shs: ec.scripthashes, at: 32 * o });
      }
      arrays.replaced[earlier] = 1;
      extra.dups.push({ position: 0, oldTxNum: e.firstTxNum });
      return extra;
    }
    const oldTxNum = reused.get(name);
    if (oldTxNum === undefined) return null;
    const src = sources.get(oldTxNum);
    const rec = src.rec;
    for (let k = 0; rec && k < rec.count; k++) {
      if (src.spent.includes(rec.vouts[k])) continue;
      const j = ch.touch(rec.scripthashes, 32 * k, height);
      ch.sent[j] += rec.values[k];
      ch.spent[j]++;
      ch.entry(j, firstTxNum, SPENT);
      ch.delUtxo(j, oldTxNum, rec.vouts[k]);
      extra.spent.push({ txNum: oldTxNum, vout: rec.vouts[k], value: rec.values[k], shs: rec.scripthashes, at: 32 * k });
    }
    src.replaced = true;
    extra.dups.push({ position: 0, oldTxNum });
    return extra;
  }

  /**
   * Puts outputs back into the outputs rows of transactions below the revert point.
   * @private
   */
  async restoreOutputs(snap, restore, batch, w) {
    const txNums = [...restore.keys()];
    const current = new Map();
    await readOutputs(snap, txNums, current);
    for (const txNum of txNums) {
      const rec = current.get(txNum);
      const outs = [];
      for (let k = 0; rec && k < rec.count; k++) outs.push({ vout: rec.vouts[k], value: rec.values[k], shs: rec.scripthashes, at: 32 * k });
      for (const o of restore.get(txNum)) outs.push(o);
      outs.sort((a, b) => a.vout - b.vout);
      writeOutputsHead(w, outs.length);
      for (let k = 0; k < outs.length; k++) {
        if (k > 0 && outs[k].vout === outs[k - 1].vout) {
          throw new StoreError('ERR_CORRUPT', `undo puts back output ${txNum}:${outs[k].vout}, which is unspent`);
        }
        writeOutput(w, k === 0 ? -1 : outs[k - 1].vout, outs[k].vout, outs[k].value, outs[k].shs, outs[k].at);
      }
      batch.put(layout.outputsKey(txNum), w.end());
    }
  }

  // -------------------------------------------------------------------------------------
  // txids

  /**
   * The txids of TxNums [from, to), one Buffer; `priorRow` is the stored row holding `from`.
   * @private
   */
  async readTxids(snap, from, to) {
    const out = Buffer.allocUnsafe(32 * (to - from));
    const startRow = from - (from % TXIDS_PER_ROW);
    let expect = startRow;
    let priorRow = null;
    for await (const { key, value } of snap.range({ gte: layout.txidsKey(startRow), lt: layout.txidsKey(to - 1 - ((to - 1) % TXIDS_PER_ROW) + TXIDS_PER_ROW) })) {
      const row = layout.readU40(key, 1);
      const n = decodeRow(txidsCount, value, key);
      if (row !== expect) throw new StoreError('ERR_CORRUPT', `the index has no txids row for TxNum ${expect}`);
      if (row === startRow) priorRow = value;
      const a = Math.max(row, from);
      const b = Math.min(row + n, to);
      value.copy(out, 32 * (a - from), 1 + 32 * (a - row), 1 + 32 * (b - row));
      expect = row + TXIDS_PER_ROW;
    }
    if (expect < to) throw new StoreError('ERR_CORRUPT', `the index has no txids row for TxNum ${expect}`);
    out.priorRow = priorRow;
    return out;
  }

  /**
   * The txids of any TxNums, one Buffer (32 bytes each, in the order given).
   * @private
   * @param {{get: Function, getMany: Function}} snap
   * @param {ArrayLike<number>} txNums
   * @param {number} [n=txNums.length]
   */
  async readTxidsOf(snap, txNums, n = txNums.length) {
    const out = Buffer.allocUnsafe(32 * n);
    const rowOf = new Map();
    const keys = [];
    for (let i = 0; i < n; i++) {
      const row = txNums[i] - (txNums[i] % TXIDS_PER_ROW);
      if (!rowOf.has(row)) {
        rowOf.set(row, keys.length);
        keys.push(layout.txidsKey(row));
      }
    }
    const rows = await snap.getMany(keys);
    for (let i = 0; i < n; i++) {
      const row = txNums[i] - (txNums[i] % TXIDS_PER_ROW);
      const k = rowOf.get(row);
      const value = rows[k];
      const at = txNums[i] - row;
      if (!value || decodeRow(txidsCount, value, keys[k]) <= at) {
        throw new StoreError('ERR_CORRUPT', `the index has no txid for TxNum ${txNums[i]}`);
      }
      value.copy(out, 32 * i, 1 + 32 * at, 33 + 32 * at);
    }
    return out;
  }

  async getTxid(txNum) {
    this.assertOpen();
    if (!Number.isInteger(txNum) || txNum < 0 || txNum > MAX_TXNUM) return null;
    const row = txNum - (txNum % TXIDS_PER_ROW);
    const key = layout.txidsKey(row);
    const value = await this.kv.get(key);
    if (!value || decodeRow(txidsCount, value, key) <= txNum - row) return null;
    return Buffer.from(value.subarray(1 + 32 * (txNum - row), 33 + 32 * (txNum - row)));
  }

  async getTx(txid) {
    checkHash(txid, 'txid');
    const v = await this.view();
    try {
      const key = layout.txKey(txid, 0);
      const row = await v.snap.get(key);
      if (!row) return null;
      const txNum = decodeRow(decodeTxNum, row, key);
      const height = v.heights.heightOf(txNum);
      if (height < 0) throw new StoreError('ERR_CORRUPT', `the tx row of ${toDisplayHex(txid)} holds an unknown TxNum ${txNum}`);
      const bkey = layout.blockKey(height);
      const brow = await v.snap.get(bkey);
      if (!brow) throw new StoreError('ERR_CORRUPT', `the index has no block row for height ${height}`);
      return {
        txNum,
        txid: Buffer.from(txid),
        height,
        blockHash: toDisplayHex(decodeRow(decodeBlock, brow, bkey).hash),
        position: txNum - v.heights.firstTxNum(height),
      };
    } finally {
      v.snap.release();
    }
  }

  // -------------------------------------------------------------------------------------
  // summaries, history, UTXOs

  async getSummary(scripthash) {
    return (await this.getSummaries([scripthash]))[0];
  }

  async getSummaries(scripthashes) {
    this.assertOpen();
    const keys = scripthashes.map((sh) => layout.accountKey(checkHash(sh, 'script hash'), 0));
    const rows = await this.kv.getMany(keys);
    const acc = new Account();
    return rows.map((row, i) => (row ? accountSummary(decodeRow(decodeAccount, row, keys[i], acc)) : null));
  }

  async getHistory(scripthash, opts) {
    checkHash(scripthash, 'script hash');
    const q = parseQuery(opts);
    const v = await this.view();
    try {
      const key = layout.accountKey(scripthash, 0);
      const row = await v.snap.get(key);
      if (!row) return { entries: [], next: null };
      const acc = decodeRow(decodeAccount, row, key, new Account());
      const { lo, hi } = bounds(q, v.heights);
      const got = new PostingList();
      await collect(v.snap, scripthash, acc, lo, hi, q.desc, q.limit + 1, got, 0);
      const n = Math.min(got.n, q.limit);
      const txNums = new Float64Array(n);
      for (let i = 0; i < n; i++) txNums[i] = Math.floor(got.p[i] / 4);
      const txids = await this.readTxidsOf(v.snap, txNums);
      const entries = new Array(n);
      for (let i = 0; i < n; i++) {
        const f = got.p[i] % 4;
        entries[i] = {
          txNum: txNums[i],
          txid: txids.subarray(32 * i, 32 * i + 32),
          height: v.heights.heightOf(txNums[i]),
          funded: (f & FUNDED) !== 0,
          spent: (f & SPENT) !== 0,
        };
      }
      return { entries, next: got.n > q.limit ? historyCursor(txNums[n - 1]) : null };
    } finally {
      v.snap.release();
    }
  }

  async getHistories(scripthashes, opts) {
    if (!Array.isArray(scripthashes)) throw new UsageError('ERR_BAD_SCRIPTHASH', 'getHistories takes an array of script hashes');
    const q = parseQuery(opts);
    // the same script hash twice would list its transactions twice
    const seen = new Set();
    const shs = [];
    for (const sh of scripthashes) {
      const name = checkHash(sh, 'script hash').latin1Slice(0, 32);
      if (!seen.has(name)) {
        seen.add(name);
        shs.push(sh);
      }
    }
    const v = await this.view();
    try {
      const keys = shs.map((sh) => layout.accountKey(sh, 0));
      const rows = await v.snap.getMany(keys);
      const { lo, hi } = bounds(q, v.heights);
      const got = new PostingList();
      const acc = new Account();
      for (let s = 0; s < shs.length; s++) {
        if (!rows[s]) continue;
        decodeRow(decodeAccount, rows[s], keys[s], acc);
        await collect(v.snap, shs[s], acc, lo, hi, q.desc, q.limit + 1, got, s);
      }
      // one entry per distinct tx, with every script hash it touches, in the order asked
      const all = got.sorted(shs.length);
      const txNums = new Float64Array(Math.min(got.n, q.limit + 1));
      const groups = [];
      let u = 0;
      for (let k = 0; k < got.n && u <= q.limit; u++) {
        // the group of sorted positions [a, b) holding one TxNum
        let a = k;
        let b = k;
        if (q.desc) {
          const e = got.n - 1 - k;
          a = e;
          while (a > 0 && all.tx[a - 1] === all.tx[e]) a--;
          b = e + 1;
        } else {
          while (b < got.n && all.tx[b] === all.tx[a]) b++;
        }
        let flags = 0;
        const which = new Array(b - a);
        for (let i = a; i < b; i++) {
          flags |= all.f[i];
          which[i - a] = shs[all.s[i]];
        }
        txNums[u] = all.tx[a];
        groups.push({ flags, which });
        k += b - a;
      }
      const n = Math.min(u, q.limit);
      const txids = await this.readTxidsOf(v.snap, txNums, n);
      const entries = new Array(n);
      for (let i = 0; i < n; i++) {
        const g = groups[i];
        entries[i] = {
          txNum: txNums[i],
          txid: txids.subarray(32 * i, 32 * i + 32),
          height: v.heights.heightOf(txNums[i]),
          funded: (g.flags & FUNDED) !== 0,
          spent: (g.flags & SPENT) !== 0,
          scripthashes: g.which,
        };
      }
      return { entries, next: u > q.limit ? historyCursor(txNums[n - 1]) : null };
    } finally {
      v.snap.release();
    }
  }

  async getUtxos(scripthash, opts = {}) {
    checkHash(scripthash, 'script hash');
    const limit = parseLimit(opts.limit);
    const after = opts.cursor === undefined || opts.cursor === null ? null : decodeCursor(opts.cursor, CURSOR_UTXO);
    const v = await this.view();
    try {
      const key = layout.accountKey(scripthash, 0);
      const row = await v.snap.get(key);
      if (!row) return { utxos: [], next: null };
      const acc = decodeRow(decodeAccount, row, key, new Account());
      const tx = [];
      const vout = [];
      const value = [];
      if (records.utxosInline(acc.utxoCount)) {
        for (let i = 0; i < acc.utxoLen && tx.length <= limit; i++) {
          if (after && (acc.utxoTx[i] < after.txNum || (acc.utxoTx[i] === after.txNum && acc.utxoVout[i] <= after.vout))) continue;
          tx.push(acc.utxoTx[i]);
          vout.push(acc.utxoVout[i]);
          value.push(acc.utxoValue[i]);
        }
      } else {
        const all = layout.scan(P.utxo, scripthash, 0);
        const gte = after ? Buffer.concat([layout.utxoKey(scripthash, 0, after.txNum, after.vout), Buffer.from([0])]) : all.gte;
        for await (const { key: k, value: val } of v.snap.range({ gte, lt: all.lt, limit: limit + 1 })) {
          const id = layout.parseUtxoKey(k);
          if (!id) throw new StoreError('ERR_CORRUPT', `malformed utxo key ${k.toString('hex')}`);
          tx.push(id.txNum);
          vout.push(id.vout);
          value.push(decodeRow(decodeUtxo, val, k));
        }
      }
      const n = Math.min(tx.length, limit);
      const txids = await this.readTxidsOf(v.snap, tx, n);
      const utxos = new Array(n);
      for (let i = 0; i < n; i++) {
        utxos[i] = {
          txid: txids.subarray(32 * i, 32 * i + 32),
          vout: vout[i],
          value: value[i],
          height: v.heights.heightOf(tx[i]),
          txNum: tx[i],
        };
      }
      return { utxos, next: tx.length > limit ? utxoCursor(tx[n - 1], vout[n - 1]) : null };
    } finally {
      v.snap.release();
    }
  }

  // -------------------------------------------------------------------------------------
  // whole-index walks

  async stats() {
    this.assertOpen();
    return walk.stats(this.kv);
  }

  async verify(opts = {}) {
    const v = await this.view();
    try {
      return await walk.verify(v, { maxProblems: opts.maxProblems || 20, undoDepth: this.undoDepth, network: this.network });
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

function checkExtends(tip, blocks, where) {
  let height = tip ? tip.height + 1 : 0;
  let prev = tip ? toDisplayHex(tip.hash) : null;
  let txNum = tip ? tip.nextTxNum : 0;
  for (const b of blocks) {
    const why = b.height !== height ? `its height is ${b.height}, the next is ${height}`
      : prev !== null && b.cols.prev !== prev ? `its parent is ${b.cols.prev}, the tip is ${prev}`
        : b.firstTxNum !== txNum ? `its first TxNum is ${b.firstTxNum}, the next is ${txNum}` : null;
    if (why) {
      throw new StoreError('ERR_NOT_EXTENDING', `block ${b.cols.hash} does not extend ${where}: ${why}; nothing was written`,
        { height: b.height, hash: b.cols.hash });
    }
    height++;
    prev = b.cols.hash;
    txNum += b.cols.txCount;
  }
}

function undoMissing(store, height, missing, top) {
  return new StoreError('ERR_UNDO_MISSING', `cannot revert ${store.describe()} to height ${height}: undo data for ` +
    `block ${missing} is no longer kept (undo is kept for the last ${store.undoDepth} blocks below the tip, ${top}). ` +
    'Re-sync into a new --datadir, or sync with a larger --undo-depth to follow reorgs this deep',
  { height, missing, tip: top, undoDepth: store.undoDepth });
}

function accountKeys(ch) {
  const keys = new Array(ch.n);
  for (let j = 0; j < ch.n; j++) keys[j] = layout.accountKey(ch.shs, 32 * j);
  return keys;
}

/**
 * An outputs row without the spent vouts (each must be present), or null when none is left.
 * `replaced`: the txid was reused (BIP30) and every output left goes too.
 */
function writeOutputsWithout(w, rec, spent, replaced) {
  const drop = new Set(spent);
  let dropped = 0;
  for (let k = 0; k < rec.count; k++) if (drop.has(rec.vouts[k])) dropped++;
  if (dropped !== drop.size || drop.size !== spent.length) {
    throw new StoreError('ERR_CORRUPT', `a block spends an output of TxNum ${rec.txNum} that the index does not hold unspent`);
  }
  const left = replaced ? 0 : rec.count - dropped;
  if (left === 0) return null;
  writeOutputsHead(w, left);
  let prev = -1;
  for (let k = 0; k < rec.count; k++) {
    if (drop.has(rec.vouts[k])) continue;
    writeOutput(w, prev, rec.vouts[k], rec.values[k], rec.scripthashes, 32 * k);
    prev = rec.vouts[k];
  }
  return w.end();
}

/**
 * Reads and decodes outputs rows into `into` (TxNum -> Outputs, null when absent).
 * @param {object} snap
 * @param {number[]} txNums
 * @param {Map<number, object|null>} into
 */
async function readOutputs(snap, txNums, into) {
  const keys = txNums.map((t) => layout.outputsKey(t));
  const rows = await snap.getMany(keys);
  for (let k = 0; k < keys.length; k++) {
    into.set(txNums[k], rows[k] ? decodeRow(decodeOutputs, rows[k], keys[k], txNums[k]) : null);
  }
}

function encodeBlockUndo(w, cols, spent, extra) {
  const I = cols.inStart[cols.txCount];
  const x = extra ? extra.spent.length : 0;
  const n = x + I;
  const txNums = new Float64Array(n);
  const vouts = new Float64Array(n);
  const values = new Float64Array(n);
  const shs = Buffer.allocUnsafe(32 * n);
  for (let k = 0; k < x; k++) {
    const e = extra.spent[k];
    txNums[k] = e.txNum;
    vouts[k] = e.vout;
    values[k] = e.value;
    e.shs.copy(shs, 32 * k, e.at, e.at + 32);
  }
  for (let i = 0; i < I; i++) {
    txNums[x + i] = spent.txNums[i];
    vouts[x + i] = cols.prevouts.readUInt32LE(36 * i + 32);
    values[x + i] = spent.values[i];
  }
  spent.scripthashes.copy(shs, 32 * x, 0, 32 * I);
  return encodeUndo(w, n, txNums, vouts, values, shs, 0, extra ? extra.dups : []);
}

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

function checkHash(h, what) {
  if (!Buffer.isBuffer(h) || h.length !== 32) {
    throw new UsageError(what === 'txid' ? 'ERR_BAD_TXID' : 'ERR_BAD_SCRIPTHASH', `a ${what} is a 32-byte Buffer`);
  }
  return h;
}

// cursors: base64url of a kind byte and a position; opaque to callers

const CURSOR_HISTORY = 0x01;
const CURSOR_UTXO = 0x02;

function historyCursor(txNum) {
  const b = Buffer.allocUnsafe(6);
  b[0] = CURSOR_HISTORY;
  layout.writeU40(b, 1, txNum);
  return b.toString('base64url');
}

function utxoCursor(txNum, vout) {
  const b = Buffer.allocUnsafe(10);
  b[0] = CURSOR_UTXO;
  layout.writeU40(b, 1, txNum);
  b.writeUInt32BE(vout, 6);
  return b.toString('base64url');
}

function decodeCursor(str, kind) {
  const b = typeof str === 'string' && /^[A-Za-z0-9_-]+$/.test(str) ? Buffer.from(str, 'base64url') : null;
  if (!b || b[0] !== kind || b.length !== (kind === CURSOR_HISTORY ? 6 : 10) || b.toString('base64url') !== str) {
    throw new UsageError('ERR_BAD_CURSOR', `not a ${kind === CURSOR_HISTORY ? 'history' : 'UTXO'} cursor of this index: ${String(str).slice(0, 40)}`);
  }
  const txNum = layout.readU40(b, 1);
  return kind === CURSOR_HISTORY ? { txNum } : { txNum, vout: b.readUInt32BE(6) };
}

function parseLimit(limit) {
  if (limit === undefined || limit === null) return 50;
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError('ERR_BAD_LIMIT', `limit must be a positive integer, got ${limit}`);
  return limit;
}

function parseHeight(h, what) {
  if (h === undefined || h === null) return null;
  if (!Number.isInteger(h) || h < 0) throw new UsageError('ERR_BAD_HEIGHT', `${what} must be a height >= 0, got ${h}`);
  return h;
}

function parseQuery(opts = {}) {
  const order = opts.order === undefined ? 'asc' : opts.order;
  if (order !== 'asc' && order !== 'desc') throw new UsageError('ERR_BAD_ORDER', `order is "asc" or "desc", got ${order}`);
  return {
    limit: parseLimit(opts.limit),
    desc: order === 'desc',
    after: opts.cursor === undefined || opts.cursor === null ? null : decodeCursor(opts.cursor, CURSOR_HISTORY).txNum,
    fromHeight: parseHeight(opts.fromHeight, 'fromHeight'),
    toHeight: parseHeight(opts.toHeight, 'toHeight'),
  };
}

/** TxNum range [lo, hi) of a query: heights and the cursor. */
function bounds(q, heights) {
  let lo = q.fromHeight === null ? 0 : heights.firstTxNum(q.fromHeight);
  let hi = q.toHeight === null ? Infinity : heights.firstTxNum(q.toHeight + 1);
  if (q.after !== null) {
    if (q.desc) hi = Math.min(hi, q.after);
    else lo = Math.max(lo, q.after + 1);
  }
  return { lo, hi };
}

/** Postings with the index of the script hash each came from. */
class PostingList {
  constructor() {
    this.p = new Float64Array(256);
    this.s = new Uint32Array(256);
    this.n = 0;
  }

  push(p, s) {
    if (this.n === this.p.length) {
      const p2 = new Float64Array(2 * this.n);
      p2.set(this.p);
      const s2 = new Uint32Array(2 * this.n);
      s2.set(this.s);
      this.p = p2;
      this.s = s2;
    }
    this.p[this.n] = p;
    this.s[this.n] = s;
    this.n++;
  }

  /**
   * The postings sorted by (TxNum, script hash), as parallel arrays.
   * @param {number} S number of script hashes
   * @returns {{tx: Float64Array, s: Uint32Array, f: Uint8Array}}
   */
  sorted(S) {
    const n = this.n;
    const tx = new Float64Array(n);
    const s = new Uint32Array(n);
    const f = new Uint8Array(n);
    let maxTx = 0;
    for (let i = 0; i < n; i++) if (this.p[i] > maxTx) maxTx = this.p[i];
    if ((maxTx / 4 + 1) * S * 4 < Number.MAX_SAFE_INTEGER) {
      // (TxNum, script hash, flags) packed into one exact double: the typed-array sort does the rest
      const keys = new Float64Array(n);
      for (let i = 0; i < n; i++) keys[i] = (Math.floor(this.p[i] / 4) * S + this.s[i]) * 4 + (this.p[i] % 4);
      keys.sort();
      for (let i = 0; i < n; i++) {
        const k = keys[i];
        f[i] = k % 4;
        const ts = (k - f[i]) / 4;
        s[i] = ts % S;
        tx[i] = (ts - s[i]) / S;
      }
    } else {
      const idx = new Uint32Array(n);
      for (let i = 0; i < n; i++) idx[i] = i;
      const t = (i) => Math.floor(this.p[i] / 4);
      idx.sort((a, b) => t(a) - t(b) || this.s[a] - this.s[b]);
      for (let i = 0; i < n; i++) {
        tx[i] = t(idx[i]);
        s[i] = this.s[idx[i]];
        f[i] = this.p[idx[i]] % 4;
      }
    }
    return { tx, s, f };
  }
}

/**
 * Pushes up to `want` postings of one account with TxNum in [lo, hi), in chain order (or
 * newest first), reading sealed pages only when the range reaches below the row's tail.
 */
async function collect(snap, sh, acc, lo, hi, desc, want, sink, s) {
  if (lo >= hi) return;
  const tail = acc.tail;
  const sealed = acc.txCount - acc.tailLen;
  let got = 0;
  if (!desc) {
    if (sealed > 0 && lo < Math.floor(tail[0] / 4)) {
      const pages = layout.scan(P.history, sh, 0);
      const buf = new Float64Array(PAGE_ENTRIES);
      let gte = pages.gte;
      if (lo > 0) {
        for await (const { key } of snap.range({ gte: pages.gte, lt: layout.pageKey(sh, 0, lo + 1), reverse: true, limit: 1 })) gte = key;
      }
      for await (const { key, value } of snap.range({ gte, lt: pages.lt })) {
        decodeRow(decodePage, value, key, layout.pageKeyTxNum(key), buf, 0);
        for (let i = 0; i < PAGE_ENTRIES; i++) {
          const t = Math.floor(buf[i] / 4);
          if (t < lo) continue;
          if (t >= hi) return;
          sink.push(buf[i], s);
          if (++got >= want) return;
        }
      }
    }
    for (let i = 0; i < acc.tailLen; i++) {
      const t = Math.floor(tail[i] / 4);
      if (t < lo) continue;
      if (t >= hi) return;
      sink.push(tail[i], s);
      if (++got >= want) return;
    }
    return;
  }
  for (let i = acc.tailLen - 1; i >= 0; i--) {
    const t = Math.floor(tail[i] / 4);
    if (t >= hi) continue;
    if (t < lo) return;
    sink.push(tail[i], s);
    if (++got >= want) return;
  }
  if (sealed === 0) return;
  const pages = layout.scan(P.history, sh, 0);
  const buf = new Float64Array(PAGE_ENTRIES);
  const lt = hi <= MAX_TXNUM ? layout.pageKey(sh, 0, hi) : pages.lt;
  for await (const { key, value } of snap.range({ gte: pages.gte, lt, reverse: true })) {
    decodeRow(decodePage, value, key, layout.pageKeyTxNum(key), buf, 0);
    for (let i = PAGE_ENTRIES - 1; i >= 0; i--) {
      const t = Math.floor(buf[i] / 4);
      if (t >= hi) continue;
      if (t < lo) return;
      sink.push(buf[i], s);
      if (++got >= want) return;
    }
  }
}

module.exports = { KvStore, WriteBatch, SCHEMA_VERSION };
