'use strict';

const crypto = require('node:crypto');
const { MongoClient, MongoBulkWriteError } = require('mongodb');
const { AbstractStore } = require('./abstract');
const { StoreError, UsageError } = require('../errors');
const D = require('./mongo/documents');
const P = require('./mongo/plan');
const { withRetry, redactUrl } = require('./mongo/retry');
// the key-value stores' query options and cursors: one format of both for every backend
const { parseQuery, parseLimit, decodeCursor, historyCursor, utxoCursor, CURSOR_UTXO } = require('./query');
const { verifyIndex } = require('./mongo/verify');
const { HistoryWalk, mergeWalks } = require('./mongo/history');

const C = D.COLLECTIONS;

/** Documents per insert command (the driver would split larger ones anyway; smaller retries are cheaper). */
const INSERT_CHUNK = 5000;
/** _ids per `$in` (reads and deletes). */
const IN_CHUNK = 5000;
/** On FerretDB, `_id` lookups under way at once (each an index lookup, see tools/ferretdb/idindex.go). */
const FERRET_READERS = 8;
/** A reader whose tip is older than both versions of an account re-reads the tip, this many times. */
const READ_ATTEMPTS = 20;
/** Decoded accounts kept for reads at an unchanged tip (a balance, then the same address's history). */
const ACCOUNT_CACHE = 20000;
/** Account documents a writer that created its database keeps (past it, it reads them back). */
const WRITER_DOCS = 200000;
/** UTXO sets up to this size are read whole once per tip for paging; larger ones page by query. */
const ROWS_CACHED = 10000;
/** Blocks (by height) and txs (by TxNum) kept per tip, each. */
const NUMBERED_CACHED = 10000;
/** On FerretDB, a read by height or TxNum also reads this many on either side (one scan either way). */
const NUMBERED_NEAR = 500;
/** How long a verify's lease on the writer lasts without renewal. */
const LEASE_MS = 15000;

/**
 * The MongoDB store: native documents (lib/stores/mongo/documents.js), unordered bulk writes,
 * and crash safety without transactions (docs/MONGO.md, "Crash safety"):
 *
 *   apply:   undo → marker 'data' → new blocks, txs, pages, outputs → staged accounts →
 *            marker 'swap' → spent outputs deleted, accounts swapped → tip → cleanup
 *   revert:  marker 'stage' → staged accounts → marker 'swap' → spent outputs restored,
 *            accounts swapped → tip → cleanup (pages, outputs, txs, blocks, undo removed)
 *   open:    before 'swap' a crashed apply is rolled back (nothing it wrote is visible yet) and
 *            a crashed revert dropped; from 'swap' on, both are rolled forward from the staged
 *            accounts and the undo documents. Either way the index ends at a block boundary.
 *
 * Every write is idempotent (same _ids, same values), so a command cut off by a lost
 * connection is sent again (lib/stores/mongo/retry.js).
 *
 * Readers see only committed blocks: documents above the tip are filtered out, and each
 * account carries the version before the one being written, tagged with commit numbers.
 * One writer per database; readers may run in any number of other processes.
 */
class MongoStore extends AbstractStore {
  /**
   * @param {object} opts
   * @param {string} opts.url                   MongoDB connection string (`mongodbUrl` is taken too, as openStore passes it)
   * @param {string} [opts.dbName]              database (default: the URL's, else 'addrindex')
   * @param {string} opts.network
   * @param {number} [opts.undoDepth=100]
   * @param {boolean} [opts.readOnly=false]
   * @param {number} [opts.maxUpdatesPerCommand] update statements per command: 99 on FerretDB
   *   (a command whose updates match 100+ existing documents hangs FerretDB v1), 1000 on MongoDB
   * @param {number} [opts.retryTimeoutMs=30000] how long a lost server is waited for before ERR_DB_UNAVAILABLE
   * @param {number} [opts.repairSettleMs=1000] pause before repairing after a crashed writer, so a
   *   command the dead writer left running on the server has finished
   * @param {(step: string) => (void|Promise<void>)} [opts.onStep] called between the write steps
   *   ('undo', 'data', 'stage', 'swap', 'tip', 'done'): for crash tests
   */
  constructor(opts) {
    // an option given as undefined (openStore passes every option it knows) keeps its default
    const given = Object.fromEntries(Object.entries(opts || {}).filter(([, v]) => v !== undefined));
    super({ readOnly: false, retryTimeoutMs: 30000, repairSettleMs: 1000, ...given, url: given.url || given.mongodbUrl });
    if (!this.opts.url) throw new UsageError('ERR_USAGE', 'the MongoDB store needs a connection string (--mongodb-url)');
    if (!opts.network) throw new UsageError('ERR_USAGE', 'the MongoDB store needs a network name');
    const net = typeof opts.network === 'object' ? opts.network.name : opts.network;
    this.opts.network = net;
    this.network = net;
    this.url = this.opts.url;
    this.client = null;
    this.db = null;
    this.ferret = false;
    this.serverVersion = null;
    this.maxUpdates = 0;
    /** committed tip ({height, hash, nextTxNum, seq}), kept by the writer; readers read it from the database */
    this._tip = null;
    /** the writer's current phase, for readers in this process ('swap' while accounts are swapped) */
    this._phase = null;
    /** a write failed or a crash was found: repair before the next write */
    this._dirty = true;
    /** decoded account versions by script hash, each with the commit it was read at */
    this._cache = new Map();
    /** the writer's committed account documents, complete when _allDocs (see _committedAccounts) */
    this._docs = new Map();
    this._allDocs = false;
    /** blocks and txs documents read at one commit, by collection (see _numbered) */
    this._byNumber = new Map();
    /** unspent outputs of accounts past INLINE_UTXOS, by script hash, each with its commit */
    this._rowsCache = new Map();
    /** when this writer started waiting for a verify's lease (0: not waiting) */
    this._waitingSince = 0;
    /** serializes apply/revert/repair of this process */
    this._writing = Promise.resolve();
  }

  /**
   * Opens a store (for openStore and tests).
   * @param {ConstructorParameters<typeof MongoStore>[0]} opts
   * @returns {Promise<MongoStore>}
   */
  static async open(opts) {
    const store = new MongoStore(opts);
    await store.open();
    return store;
  }

  describe() {
    return `MongoDB database ${this.db ? this.db.databaseName : this.opts.dbName || dbNameOf(this.url)} at ${redactUrl(this.url)}`;
  }

  async open() {
    const timeoutMs = this.opts.retryTimeoutMs;
    this.client = new MongoClient(this.url, {
      // the store retries whole idempotent steps itself; a standalone server has no retryable writes
      retryWrites: false,
      serverSelectionTimeoutMS: Math.max(250, Math.min(5000, Math.floor(timeoutMs / 4))),
      connectTimeoutMS: Math.max(250, Math.min(10000, timeoutMs)),
      maxPoolSize: 16,
    });
    try {
      await this._retry('connect', () => this.client.connect());
      this.db = this.client.db(this.opts.dbName || dbNameOf(this.url));
      const info = await this._retry('buildInfo', () => this.db.admin().command({ buildInfo: 1 }));
      this.ferret = info.ferretdbVersion !== undefined;
      this.serverVersion = this.ferret ? `FerretDB ${info.ferretdbVersion} (MongoDB ${info.version} wire)` : `MongoDB ${info.version}`;
      this.maxUpdates = this.opts.maxUpdatesPerCommand || (this.ferret ? 99 : 1000);
      await this._openMeta();
      if (!this.opts.readOnly) {
        await this._ensureIndexes();
        await this._serial(() => this._repair());
        this._allDocs = !(await this._read('open', () => this._coll(C.accounts).findOne({})));
      }
    } catch (err) {
      await this.client.close().catch(() => {});
      this.client = null;
      this.db = null;
      throw err;
    }
  }

  async close() {
    if (!this.client) return;
    await this._writing.catch(() => {});
    const c = this.client;
    this.client = null;
    this.db = null;
    await c.close();
  }

  // ---- reads ---------------------------------------------------------------------------

  async getTip() {
    const t = await this._committedTip();
    return t && { height: t.height, hash: t.hash, nextTxNum: t.nextTxNum };
  }

  async getBlockHash(height) {
    const b = await this.getBlock(height);
    return b ? b.hash : null;
  }

  async getBlock(height) {
    const tip = await this._committedTip();
    if (!tip || !Number.isInteger(height) || height < 0 || height > tip.height) return null;
    const d = await this._blockAt(height, tip);
    return d ? D.fromBlockDoc(d) : null;
  }

  async getPrevouts(outpoints) {
    if (!Buffer.isBuffer(outpoints) || outpoints.length % 36 !== 0) {
      throw new UsageError('ERR_BAD_OUTPOINTS', 'outpoints must be a Buffer of 36-byte records');
    }
    const n = outpoints.length / 36;
    const ids = new Array(n);
    for (let i = 0; i < n; i++) {
      ids[i] = D.outpointId(D.hashHex(outpoints.subarray(36 * i, 36 * i + 32)), outpoints.readUInt32LE(36 * i + 32));
    }
    const found = await this._findByIds(C.utxos, ids);
    return ids.map((id) => {
      const d = found.get(id);
      if (!d) return null;
      const o = D.fromUtxoDoc(d);
      return { value: o.value, scripthash: D.hashFromHex(o.sh), height: o.height, txNum: o.txNum };
    });
  }

  async getSummary(scripthash) {
    const [s] = await this.getSummaries([scripthash]);
    return s;
  }

  async getSummaries(scripthashes) {
    const ids = scripthashes.map(checkScripthash);
    const { accounts } = await this._accountsAt([...new Set(ids)]);
    return ids.map((id) => {
      const a = accounts.get(id);
      return a ? D.summaryOf(a) : null;
    });
  }

  async getHistory(scripthash, opts = {}) {
    const { entries, next } = await this.getHistories([scripthash], opts);
    return { entries: entries.map(({ scripthashes, ...e }) => e), next };
  }

  async getHistories(scripthashes, opts = {}) {
    const q = parseQuery(opts);
    const uniq = [...new Set(scripthashes.map(checkScripthash))];
    const { tip, accounts } = await this._accountsAt(uniq);
    if (!tip) return { entries: [], next: null };
    // the TxNum range [lo, hi): committed blocks, the height bounds, the cursor
    let lo = q.fromHeight === null ? 0 : await this._firstTxNumAt(q.fromHeight, tip);
    let hi = q.toHeight === null ? tip.nextTxNum : await this._firstTxNumAt(q.toHeight + 1, tip);
    if (q.after !== null) {
      if (q.desc) hi = Math.min(hi, q.after);
      else lo = Math.max(lo, q.after + 1);
    }
    if (lo >= hi) return { entries: [], next: null };
    const walks = [];
    uniq.forEach((sh, i) => {
      const a = accounts.get(sh);
      if (a && a.txCount > 0) walks.push(new HistoryWalk(this, sh, i, a, lo, hi, q.desc));
    });
    const { entries, more } = await mergeWalks(walks, q.limit, q.desc);
    const out = entries.map((e) => ({
      txNum: e.txNum, txid: D.hashFromHex(e.txid), height: e.height, funded: e.funded, spent: e.spent,
      scripthashes: e.order.sort((x, y) => x - y).map((i) => D.hashFromHex(uniq[i])),
    }));
    return { entries: out, next: more ? historyCursor(out[out.length - 1].txNum) : null };
  }

  async getUtxos(scripthash, opts = {}) {
    const sh = checkScripthash(scripthash);
    const limit = parseLimit(opts.limit);
    const at = opts.cursor === undefined || opts.cursor === null ? null : decodeCursor(opts.cursor, CURSOR_UTXO);
    const after = at && [at.txNum, at.vout];
    const { tip, accounts } = await this._accountsAt([sh]);
    const a = accounts.get(sh);
    if (!tip || !a) return { utxos: [], next: null };
    let list;
    if (a.utxos !== null || a.fundedCount - a.spentCount <= ROWS_CACHED) {
      // inline in the account, or all rows read once per tip (_rowsAt)
      const all = a.utxos !== null ? a.utxos : await this._rowsAt(sh, tip);
      list = (after ? all.filter((o) => o.txNum > after[0] || (o.txNum === after[0] && o.vout > after[1])) : all).slice(0, limit + 1);
    } else {
      const filter = { sh, txNum: { $lt: D.long(tip.nextTxNum) } };
      if (after) filter.$or = [{ txNum: { $gt: D.long(after[0]) } }, { txNum: D.long(after[0]), vout: { $gt: after[1] } }];
      const docs = await this._read('getUtxos', () => this._coll(C.utxos).find(filter).sort({ txNum: 1, vout: 1 }).limit(limit + 1).toArray());
      list = docs.map(D.fromUtxoDoc);
    }
    const utxos = list.slice(0, limit).map((o) => ({ txid: D.hashFromHex(o.txid), vout: o.vout, value: o.value, height: o.height, txNum: o.txNum }));
    const last = utxos[utxos.length - 1];
    return { utxos, next: list.length > limit ? utxoCursor(last.txNum, last.vout) : null };
  }

  async getTx(txid) {
    if (!Buffer.isBuffer(txid) || txid.length !== 32) throw new UsageError('ERR_BAD_TXID', 'a txid is 32 bytes');
    const tip = await this._committedTip();
    if (!tip) return null;
    const found = await this._read('getTx', () => this._coll(C.txs).findOne({ _id: D.hashHex(txid) }));
    const d = found && D.txAt(found, tip.nextTxNum);
    if (!d) return null;
    const b = await this._blockAt(d.height, tip);
    if (!b) throw corrupt(`tx ${d._id} is in block ${d.height}, which the index does not hold`);
    return { txNum: D.num(d.txNum), txid: Buffer.from(txid), height: d.height, blockHash: b.hash, position: d.pos };
  }

  async getTxid(txNum) {
    const tip = await this._committedTip();
    if (!tip || !Number.isInteger(txNum) || txNum < 0 || txNum >= tip.nextTxNum) return null;
    const d = await this._numbered(C.txs, 'txNum', txNum, tip.nextTxNum - 1, tip);
    return d ? D.hashFromHex(D.txidOf(d)) : null;
  }

  async stats() {
    const tables = {};
    for (const name of Object.values(C)) {
      const [s] = await this._read('stats', () => this._coll(name).aggregate([{ $collStats: { storageStats: {} } }]).toArray()
        .catch((err) => {
          // a collection nothing was written to yet does not exist (NamespaceNotFound)
          if (err.code === 26) return [];
          throw err;
        }));
      const st = (s && s.storageStats) || {};
      tables[name] = { rows: st.count || 0, bytes: st.size || 0, storageBytes: st.storageSize || 0, indexBytes: st.totalIndexSize || 0 };
    }
    const sum = (k) => Object.values(tables).reduce((n, t) => n + t[k], 0);
    return {
      store: 'mongo', server: this.serverVersion, database: this.db.databaseName, tip: await this.getTip(), tables,
      bytes: sum('bytes'), diskBytes: sum('storageBytes') + sum('indexBytes'),
    };
  }

  /**
   * Walks the whole index. Without snapshot reads a walk beside a moving writer cannot be
   * consistent, so verify holds a lease in `meta` that the writer waits for before its next
   * batch (an expiring one: a verifier that dies stops holding the writer after LEASE_MS).
   */
  async verify(opts = {}) {
    const meta = this._coll(C.meta);
    // a writer waiting for an earlier verify goes first, so verifies in a loop cannot starve it
    while (await this._leaseHeld('writerwait')) await sleep(25);
    const id = `readlock:${process.pid}:${crypto.randomBytes(6).toString('hex')}`;
    const renew = () => this._retry('verify lease', () => meta.replaceOne({ _id: id }, { _id: id, until: new Date(Date.now() + LEASE_MS) }, { upsert: true }));
    await renew();
    const timer = setInterval(() => renew().catch(() => {}), LEASE_MS / 3);
    try {
      // a batch that started before the lease was seen may still be under way: wait for it,
      // and walk again if one committed during the walk (the lease holds off the next)
      let result;
      for (let attempt = 0; attempt < 5; attempt++) {
        while (await this._read('verify', () => meta.findOne({ _id: 'pending' }))) await sleep(25);
        const before = await this._readTip();
        result = await verifyIndex(this, { maxProblems: opts.maxProblems || 100 });
        const after = await this._readTip();
        const pending = await this._read('verify', () => meta.findOne({ _id: 'pending' }));
        if (!pending && (before ? before.seq : 0) === (after ? after.seq : 0)) break;
      }
      return result;
    } finally {
      clearInterval(timer);
      await this._retry('verify lease', () => meta.deleteOne({ _id: id })).catch(() => {});
    }
  }

  async digest() {
    const h = crypto.createHash('sha256');
    const tip = await this._read('digest', () => this._coll(C.meta).findOne({ _id: 'tip' }));
    h.update(JSON.stringify(['meta', this.opts.network, D.SCHEMA_VERSION]) + '\n');
    if (tip) h.update(JSON.stringify(['meta', ...D.logicalRecord('meta', tip)]) + '\n');
    // undo is left out: which blocks still have undo depends on the reverts a store has seen,
    // not on the chain it indexes
    for (const name of [C.blocks, C.txs, C.accounts, C.history, C.utxos]) {
      await this._read('digest', async () => {
        const part = crypto.createHash('sha256');
        for await (const d of this._coll(name).find({}).sort({ _id: 1 })) {
          if (name === C.accounts && d.gone) continue;
          part.update(JSON.stringify(D.logicalRecord(name, d)) + '\n');
        }
        h.update(`${name} ${part.digest('hex')}\n`);
      });
    }
    return h.digest('hex');
  }

  // ---- writes: apply and revert, twins -------------------------------------------------

  async apply(blocks) {
    this._writable();
    if (!Array.isArray(blocks)) throw new UsageError('ERR_BAD_BLOCKS', 'apply takes an array of block deltas');
    if (blocks.length === 0) return;
    await this._serial(async () => {
      await this._cleanIfDirty();
      await this._waitForVerifiers();
      const tip = this._tip;
      checkExtends(tip, blocks, this);
      const reused = await this._reusedTxids(P.coinbaseTxids(blocks));
      const shs = new Set(P.touchedScripthashes(blocks));
      for (const r of reused.values()) for (const o of r.outs) shs.add(o.sh);
      const preDocs = await this._committedAccounts([...shs]);
      const pre = new Map();
      for (const [sh, d] of preDocs) if (!d.gone) pre.set(sh, D.fromAccountFields(d, sh));
      const plan = P.planApply(blocks, pre, reused);
      P.finishAccounts(plan, await this._rowsOf(plan.needRows), pre);
      const seq = (tip ? tip.seq : 0) + 1;
      const staged = [...plan.accounts].map(([sh, a]) => D.accountDoc(sh, a, seq, D.asPrev(preDocs.get(sh))));
      const newTip = { ...plan.tip, seq };
      const marker = {
        op: 'apply', fromHeight: blocks[0].height, toHeight: newTip.height, prevTip: tip, newTip, utxoReplaces: plan.utxoReplaces,
      };
      await this._writeGuarded(async () => {
        await this._step('undo');
        await this._insert(C.undo, plan.undo);
        await this._setPending({ ...marker, phase: 'data' });
        await this._step('data');
        // documents above the tip: no reader looks at them until the tip moves
        await this._insert(C.blocks, plan.blocks);
        await this._insert(C.txs, plan.txs);
        // a replaced txid first, so that the TxNum its displaced document takes is free
        await this._replace(C.txs, plan.txReplaces);
        await this._insert(C.txs, plan.txDisplaced);
        await this._insert(C.history, plan.pages);
        await this._insert(C.utxos, plan.utxoInserts);
        await this._step('stage');
        await this._insert(C.staging, staged);
        await this._enterSwap(marker);
        await this._deleteIds(C.utxos, plan.utxoDeletes);
        await this._insert(C.utxos, plan.utxoReplaces);
        await this._commitAccounts(staged, newTip);
        await this._clearStaging();
        await this._pruneUndo(newTip.height);
        await this._clearPending();
        await this._step('done');
      });
    });
  }

  async revert(height) {
    this._writable();
    if (!Number.isInteger(height)) throw new UsageError('ERR_BAD_HEIGHT', `revert takes a height, got ${height}`);
    await this._serial(async () => {
      await this._cleanIfDirty();
      await this._waitForVerifiers();
      const tip = this._tip;
      if (!tip || height >= tip.height) return;
      const target = Math.max(-1, height);
      const undo = await this._undoAbove(target, tip.height);
      const missing = P.firstMissingUndo(undo, target, tip.height);
      if (missing !== null) throw this._undoMissing(target, missing, tip.height);
      const scope = P.revertScope(undo);
      const writes = P.revertWrites(scope);
      const curDocs = await this._committedAccounts([...scope.shs.keys()]);
      const current = new Map();
      for (const [sh, d] of curDocs) if (!d.gone) current.set(sh, D.fromAccountFields(d, sh));
      const pageDocs = await this._findByIds(C.history, scope.pages);
      const pages = new Map([...pageDocs].map(([id, d]) => [id, D.fromPageDoc(d, d.sh, d.page)]));
      const needRows = [...scope.shs].filter(([sh, s]) => s.prev
        && D.num(s.prev.fundedCount) - D.num(s.prev.spentCount) <= D.INLINE_UTXOS && current.get(sh).utxos === null).map(([sh]) => sh);
      const accounts = P.revertAccounts(scope, current, pages, await this._rowsOf(needRows));
      const seq = tip.seq + 1;
      const staged = [...accounts].map(([sh, a]) => D.accountDoc(sh, a, seq, D.asPrev(curDocs.get(sh))));
      let newTip = null;
      if (target >= 0) {
        const b = await this._read('revert', () => this._coll(C.blocks).findOne({ _id: target }));
        if (!b) throw corrupt(`no block document for height ${target} below the tip ${tip.height}`);
        newTip = { height: target, hash: b.hash, nextTxNum: scope.firstTxNum, seq };
      }
      const marker = { op: 'revert', fromHeight: target + 1, toHeight: tip.height, prevTip: tip, newTip };
      await this._writeGuarded(async () => {
        await this._setPending({ ...marker, phase: 'stage' });
        await this._step('stage');
        await this._insert(C.staging, staged);
        await this._enterSwap(marker);
        await this._restoreUtxos(writes);
        await this._commitAccounts(staged, newTip);
        await this._revertCleanup(writes, target, staged);
        await this._clearPending();
        await this._step('done');
      });
    });
  }

  /** From here on a crash is rolled forward: the staged accounts are complete. */
  async _enterSwap(marker) {
    await this._setPending({ ...marker, phase: 'swap' });
    this._phase = 'swap';
    await this._step('swap');
  }

  /** The commit point of apply and revert: the staged accounts put in place, then the tip that shows them. */
  async _commitAccounts(staged, newTip) {
    await this._swapAccounts(staged);
    await this._step('tip');
    await this._setTip(newTip);
    this._tip = newTip;
    this._phase = null;
    this._keepDocs(staged);
  }

  /**
   * What a revert removes once its tip is written (readers of the old tip may still be
   * reading these until then): pages, outputs, txs and blocks of the reverted heights, the
   * accounts that no longer exist, the staged versions and the undo.
   */
  async _revertCleanup(writes, target, staged) {
    await this._removeAbove(writes, target);
    await this._deleteIds(C.accounts, staged.filter((d) => d.gone).map((d) => d._id));
    await this._clearStaging();
    await this._deleteUndoAbove(target);
  }

  /**
   * Removes what blocks above `target` added but the accounts and the spent outputs: their
   * pages, outputs, txs (a txid they had taken goes back to its earlier transaction) and blocks.
   * @param {ReturnType<typeof P.revertWrites>} w
   */
  async _removeAbove(w, target) {
    await this._deleteIds(C.history, w.pageDeletes);
    await this._deleteIds(C.utxos, w.utxoDeletes);
    await this._deleteIds(C.txs, w.txUndisplace);
    await this._replace(C.txs, w.txRestores);
    await this._deleteIds(C.txs, w.txDeletes);
    await this._retry('revert blocks', () => this._coll(C.blocks).deleteMany({ _id: { $gt: target } }));
  }

  /** Puts back the outputs a revert restores; an outpoint a reverted output had taken (BIP30) is freed first. */
  async _restoreUtxos(w) {
    await this._deleteIds(C.utxos, w.utxoShared);
    await this._insert(C.utxos, w.utxoRestores);
  }

  /**
   * Brings the database to a block boundary after a crashed or failed write (docs/MONGO.md,
   * "Repair"). Before its 'swap' marker an apply has written only documents above the tip and
   * staged accounts: they are deleted (the undo documents, complete before the marker, name
   * them). From 'swap' on, apply and revert are finished from the staged accounts and the undo.
   */
  async _repair() {
    const pending = await this._read('repair', () => this._coll(C.meta).findOne({ _id: 'pending' }));
    let tip = await this._readTip();
    if (pending) {
      // a writer that died mid-command may have left that command running on the server
      if (this.opts.repairSettleMs > 0) await sleep(this.opts.repairSettleMs);
      const newTip = pending.newTip ? D.fromTipDoc(pending.newTip) : null;
      const prevTip = pending.prevTip ? D.fromTipDoc(pending.prevTip) : null;
      const moved = sameTip(tip, newTip);
      const target = pending.op === 'apply' ? (prevTip ? prevTip.height : -1) : (newTip ? newTip.height : -1);
      const undo = await this._undoAbove(target, pending.toHeight);
      const missing = P.firstMissingUndo(undo, target, pending.toHeight);
      const scope = () => {
        if (missing !== null) throw corrupt(`an interrupted ${pending.op} of blocks ${pending.fromHeight}-${pending.toHeight} lacks the undo of block ${missing}`);
        return P.revertScope(undo);
      };
      if (!moved && pending.phase !== 'swap') {
        // nothing visible was written: take back what was (an interrupted revert wrote only staged accounts)
        if (pending.op === 'apply') {
          if (!sameTip(tip, prevTip)) throw corrupt(`an interrupted apply left the tip at ${tipText(tip)}, expected ${tipText(prevTip)}`);
          await this._removeAbove(P.revertWrites(scope()), target);
        }
      } else if (!moved) {
        // the swap had begun: finish the operation from the staged accounts and the undo
        const staged = await this._read('repair', () => this._coll(C.staging).find({}).toArray());
        const w = P.revertWrites(scope());
        if (pending.op === 'apply') {
          await this._deleteIds(C.utxos, w.spentIds);
          await this._insert(C.utxos, pending.utxoReplaces || []);
        } else await this._restoreUtxos(w);
        await this._swapAccounts(staged);
        await this._setTip(newTip);
        tip = newTip;
        if (pending.op === 'revert') await this._revertCleanup(w, target, staged);
      } else if (pending.op === 'revert' && missing === null && undo.length > 0) {
        // the tip had moved: only the cleanup was left (undo goes last, so if it is gone, all else is)
        const staged = await this._read('repair', () => this._coll(C.staging).find({}).toArray());
        await this._revertCleanup(P.revertWrites(scope()), target, staged);
      }
      await this._clearStaging();
      if (tip && pending.op === 'apply') await this._pruneUndo(tip.height);
      await this._clearPending();
    }
    await this._deleteUndoAbove(tip ? tip.height : -1);
    this._tip = tip;
    this._phase = null;
    this._dirty = false;
  }

  // ---- write helpers -------------------------------------------------------------------

  /**
   * Inserts documents in unordered chunks. A duplicate _id means the same document is already
   * there (every write is deterministic: an earlier attempt, cut off, had written it).
   */
  async _insert(name, docs) {
    for (let i = 0; i < docs.length; i += INSERT_CHUNK) {
      const chunk = docs.slice(i, i + INSERT_CHUNK);
      await this._retry(`insert into ${name}`, async () => {
        try {
          await this._coll(name).insertMany(chunk, { ordered: false });
        } catch (err) {
          if (!(err instanceof MongoBulkWriteError) || !onlyDuplicates(err)) throw err;
        }
      });
    }
  }

  /**
   * Deletes by _id: MongoDB one `$in` per chunk; FerretDB, which pushes down only an `_id`
   * equality, one bulk of deleteOne statements per chunk (each an index lookup there).
   */
  async _deleteIds(name, ids) {
    for (let i = 0; i < ids.length; i += IN_CHUNK) {
      const chunk = ids.slice(i, i + IN_CHUNK);
      await this._retry(`delete from ${name}`, () => (this.ferret
        ? this._coll(name).bulkWrite(chunk.map((id) => ({ deleteOne: { filter: { _id: id } } })), { ordered: false })
        : this._coll(name).deleteMany({ _id: { $in: chunk } })));
    }
  }

  /** Replaces (or inserts) whole documents by _id, at most maxUpdatesPerCommand per command. */
  async _replace(name, docs) {
    for (let i = 0; i < docs.length; i += this.maxUpdates) {
      const ops = docs.slice(i, i + this.maxUpdates).map((d) => ({ replaceOne: { filter: { _id: d._id }, replacement: d, upsert: true } }));
      await this._retry(`replace in ${name}`, () => this._coll(name).bulkWrite(ops, { ordered: false }));
    }
  }

  /**
   * Puts the staged versions of accounts in place. MongoDB: replaceOne each, at most
   * maxUpdatesPerCommand per command, so every account changes atomically. FerretDB, where an
   * update costs a table scan per statement: delete and insert per chunk; a reader that finds
   * an account missing meanwhile reads its staged version (see _accountsAt).
   */
  async _swapAccounts(docs) {
    if (this.ferret) {
      for (let i = 0; i < docs.length; i += IN_CHUNK) {
        const chunk = docs.slice(i, i + IN_CHUNK);
        await this._deleteIds(C.accounts, chunk.map((d) => d._id));
        await this._insert(C.accounts, chunk);
      }
      return;
    }
    await this._replace(C.accounts, docs);
  }

  /**
   * Empties `staging`, which only ever holds the accounts of the one write under way. FerretDB
   * reads every document a deleteMany matches, even with no filter; dropping the collection
   * is one statement there.
   */
  async _clearStaging() {
    await this._retry('clear staging', () => (this.ferret ? this._coll(C.staging).drop() : this._coll(C.staging).deleteMany({})));
  }

  async _setTip(tip) {
    if (tip) await this._retry('write tip', () => this._coll(C.meta).replaceOne({ _id: 'tip' }, D.tipDoc(tip), { upsert: true }));
    else await this._retry('write tip', () => this._coll(C.meta).deleteOne({ _id: 'tip' }));
  }

  async _setPending(p) {
    const doc = {
      _id: 'pending', op: p.op, phase: p.phase, fromHeight: p.fromHeight, toHeight: p.toHeight,
      prevTip: p.prevTip ? D.tipDoc(p.prevTip) : null, newTip: p.newTip ? D.tipDoc(p.newTip) : null, utxoReplaces: p.utxoReplaces || [],
    };
    await this._retry('write pending marker', () => this._coll(C.meta).replaceOne({ _id: 'pending' }, doc, { upsert: true }));
    if (this._waitingSince) {
      this._waitingSince = 0;
      await this._retry('writer wait', () => this._coll(C.meta).deleteOne({ _id: 'writerwait' }));
    }
  }

  async _clearPending() {
    await this._retry('clear pending marker', () => this._coll(C.meta).deleteOne({ _id: 'pending' }));
  }

  /** Keeps undo for the last undoDepth blocks up to `tipHeight`. */
  async _pruneUndo(tipHeight) {
    const keepFrom = tipHeight - this.undoDepth + 1;
    if (keepFrom <= 0) return;
    await this._retry('prune undo', () => this._coll(C.undo).deleteMany({ _id: { $lt: D.undoId(keepFrom, 0) } }));
  }

  async _deleteUndoAbove(height) {
    await this._retry('drop undo', () => this._coll(C.undo).deleteMany({ _id: { $gte: D.undoId(height + 1, 0) } }));
  }

  /** Undo documents of the heights (target, maxHeight]. */
  async _undoAbove(target, maxHeight) {
    if (maxHeight <= target) return [];
    return this._read('read undo', () => this._coll(C.undo)
      .find({ _id: { $gte: D.undoId(target + 1, 0), $lt: D.undoId(maxHeight + 1, 0) } }).toArray());
  }

  /**
   * Waits while a verify holds its lease (see verify), saying so with a `writerwait` document
   * that keeps new verifies from starting meanwhile; it is removed once this write's marker
   * is set (_setPending).
   */
  async _waitForVerifiers() {
    const meta = this._coll(C.meta);
    for (;;) {
      if (!(await this._leaseHeld('readlock:'))) return;
      const now = Date.now();
      if (!this._waitingSince || now - this._waitingSince > LEASE_MS / 3) {
        this._waitingSince = now;
        await this._retry('writer wait', () => meta.replaceOne({ _id: 'writerwait' }, { _id: 'writerwait', until: new Date(now + LEASE_MS) }, { upsert: true }));
      }
      await sleep(25);
    }
  }

  /** Whether a `meta` lease whose _id starts with `prefix` has not expired. */
  async _leaseHeld(prefix) {
    const leases = await this._read('read leases', () => this._coll(C.meta).find({ _id: { $regex: `^${prefix}` } }).toArray());
    const now = Date.now();
    return leases.some((l) => l.until instanceof Date && l.until.getTime() > now);
  }

  async _writeGuarded(fn) {
    try {
      await fn();
    } catch (err) {
      this._dirty = true;
      this._phase = null;
      this._forgetDocs();
      throw err;
    }
  }

  /**
   * The committed account documents of script hashes. A writer that created the database
   * has written every account there is (one writer per database), so while it holds them all
   * in memory it need not read them back — on FerretDB that read is a scan of `accounts`.
   */
  async _committedAccounts(shs) {
    if (!this._allDocs) return this._findByIds(C.accounts, shs);
    const out = new Map();
    for (const sh of shs) {
      const d = this._docs.get(sh);
      if (d) out.set(sh, d);
    }
    return out;
  }

  _keepDocs(staged) {
    if (!this._allDocs) return;
    for (const d of staged) {
      if (d.gone) this._docs.delete(d._id);
      else this._docs.set(d._id, d);
    }
    if (this._docs.size > WRITER_DOCS) this._forgetDocs();
  }

  _forgetDocs() {
    this._allDocs = false;
    this._docs.clear();
  }

  async _cleanIfDirty() {
    if (this._dirty) await this._repair();
  }

  async _step(name) {
    if (this.opts.onStep) await this.opts.onStep(name);
  }

  /** Runs write operations of this process one at a time. */
  _serial(fn) {
    const run = this._writing.then(fn, fn);
    this._writing = run.catch(() => {});
    return run;
  }

  _writable() {
    if (!this.db) throw new StoreError('ERR_CLOSED', 'the MongoDB store is not open');
    if (this.opts.readOnly) throw new StoreError('ERR_READ_ONLY', `${this.describe()} was opened read-only`);
  }

  _undoMissing(height, missing, top) {
    return new StoreError('ERR_UNDO_MISSING', `cannot revert ${this.describe()} to height ${height}: undo data for ` +
      `block ${missing} is no longer kept (undo is kept for the last ${this.undoDepth} blocks below the tip, ${top}). ` +
      'Re-sync into a new database, or sync with a larger --undo-depth to follow reorgs this deep',
    { height, missing, tip: top, undoDepth: this.undoDepth });
  }

  // ---- open helpers --------------------------------------------------------------------

  async _openMeta() {
    const meta = this._coll(C.meta);
    let m = await this._read('open', () => meta.findOne({ _id: 'meta' }));
    if (!m) {
      if (this.opts.readOnly) throw new StoreError('ERR_NO_INDEX', `${this.describe()} holds no index yet: run "addrindex sync" first`);
      await this._insert(C.meta, [{ _id: 'meta', schema: D.SCHEMA_NAME, version: D.SCHEMA_VERSION, network: this.opts.network }]);
      m = await this._read('open', () => meta.findOne({ _id: 'meta' }));
    }
    if (m.schema !== D.SCHEMA_NAME || m.version !== D.SCHEMA_VERSION) {
      throw new StoreError('ERR_SCHEMA_VERSION',
        `${this.describe()} holds ${m.schema || 'another schema'} version ${m.version}; this addrindex reads version ${D.SCHEMA_VERSION}`,
        { found: m.version, expected: D.SCHEMA_VERSION });
    }
    if (m.network !== this.opts.network) {
      throw new StoreError('ERR_WRONG_NETWORK', `${this.describe()} holds a ${m.network} index; this run asked for ${this.opts.network}`,
        { found: m.network, expected: this.opts.network });
    }
    this._tip = await this._readTip();
  }

  async _ensureIndexes() {
    for (const [name, specs] of Object.entries(D.INDEXES)) {
      await this._retry(`create indexes on ${name}`, () => this._coll(name).createIndexes(specs));
    }
  }

  // ---- read helpers --------------------------------------------------------------------

  async _committedTip() {
    if (!this.db) throw new StoreError('ERR_CLOSED', 'the MongoDB store is not open');
    return this.opts.readOnly ? this._readTip() : this._tip;
  }

  async _readTip() {
    const d = await this._read('read tip', () => this._coll(C.meta).findOne({ _id: 'tip' }));
    return d ? D.fromTipDoc(d) : null;
  }

  /**
   * The accounts of script hashes as of one committed tip: each document's own version or the
   * one before it, by commit number. A reader whose tip is older than both re-reads the tip.
   * @param {string[]} shs
   * @returns {Promise<{tip: object|null, accounts: Map<string, D.Account|null>}>}
   */
  async _accountsAt(shs) {
    for (let attempt = 1; attempt <= READ_ATTEMPTS; attempt++) {
      const tip = await this._committedTip();
      const accounts = new Map();
      if (!tip || shs.length === 0) return { tip, accounts };
      // a version read at commit `seq` never changes while that commit is the tip
      const need = [];
      for (const sh of shs) {
        const c = this._cache.get(sh);
        if (c && c.seq === tip.seq) accounts.set(sh, c.account);
        else need.push(sh);
      }
      if (need.length === 0) return { tip, accounts };
      const docs = await this._findByIds(C.accounts, need);
      const missing = need.filter((sh) => !docs.has(sh));
      if (missing.length && (await this._swapping())) {
        for (const [sh, d] of await this._findByIds(C.staging, missing)) docs.set(sh, d);
      }
      let stale = false;
      for (const sh of need) {
        const d = docs.get(sh);
        const v = d ? D.versionAt(d, tip.seq) : null;
        if (v === undefined) stale = true;
        else accounts.set(sh, v ? D.fromAccountFields(v, sh) : null);
      }
      if (!stale) {
        for (const sh of need) this._remember(sh, tip.seq, accounts.get(sh));
        return { tip, accounts };
      }
      await sleep(5 * attempt);
    }
    throw new StoreError('ERR_INDEX_MOVING', `${this.describe()}: new blocks were committed during each of ${READ_ATTEMPTS} reads; retry`);
  }

  /**
   * All unspent outputs of an account that keeps them in rows, as of the tip, kept for the
   * next page while the tip stands (one query per tip, not one per page: on FerretDB each
   * is a scan). Not kept when read during a swap, which may already miss the outputs the
   * committing batch spends.
   */
  async _rowsAt(sh, tip) {
    const c = this._rowsCache.get(sh);
    if (c && c.seq === tip.seq) return c.list;
    const quiet = !(await this._swapping());
    const docs = await this._read('getUtxos', () => this._coll(C.utxos).find({ sh, txNum: { $lt: D.long(tip.nextTxNum) } })
      .sort({ txNum: 1, vout: 1 }).toArray());
    const list = docs.map(D.fromUtxoDoc);
    if (quiet && !(await this._swapping())) {
      this._rowsCache.delete(sh);
      this._rowsCache.set(sh, { seq: tip.seq, list });
      if (this._rowsCache.size > 64) this._rowsCache.delete(this._rowsCache.keys().next().value);
    }
    return list;
  }

  /** The block document at a height at or below the tip (see _numbered). */
  _blockAt(height, tip) {
    return this._numbered(C.blocks, '_id', height, tip.height, tip);
  }

  /**
   * The document of `coll` whose numeric `field` is `n` (at most `max`: within the tip), kept
   * while the tip stands (a revert and re-apply may change it, nothing else does). On FerretDB
   * a lookup by a number scans the collection anyway, so a miss reads the documents around it
   * in that one scan.
   */
  async _numbered(coll, field, n, max, tip) {
    let cache = this._byNumber.get(coll);
    if (!cache || cache.seq !== tip.seq) this._byNumber.set(coll, (cache = { seq: tip.seq, docs: new Map() }));
    const { docs } = cache;
    if (docs.has(n)) return docs.get(n);
    if (docs.size >= NUMBERED_CACHED) docs.clear();
    const value = field === '_id' ? (x) => x : D.long;
    const filter = this.ferret
      ? { [field]: { $gte: value(Math.max(0, n - NUMBERED_NEAR)), $lte: value(Math.min(max, n + NUMBERED_NEAR)) } }
      : { [field]: value(n) };
    for (const d of await this._read(`read ${coll}`, () => this._coll(coll).find(filter).toArray())) docs.set(D.num(d[field]), d);
    return docs.get(n) || null;
  }

  /** Keeps a decoded account version for reads at the same commit (least recently read out first). */
  _remember(sh, seq, account) {
    this._cache.delete(sh);
    this._cache.set(sh, { seq, account });
    if (this._cache.size > ACCOUNT_CACHE) this._cache.delete(this._cache.keys().next().value);
  }

  async _swapping() {
    if (!this.opts.readOnly) return this._phase === 'swap';
    const p = await this._read('read pending marker', () => this._coll(C.meta).findOne({ _id: 'pending' }));
    return Boolean(p && p.phase === 'swap');
  }

  /**
   * The committed txs documents of coinbase txids the index already holds (BIP30), each with
   * the unspent outputs of that transaction.
   * @param {string[]} txids
   * @returns {Promise<Map<string, {doc: object, outs: D.Out[]}>>}
   */
  async _reusedTxids(txids) {
    const out = new Map();
    for (const [txid, doc] of await this._findByIds(C.txs, txids)) {
      const docs = await this._read('read utxos', () => this._coll(C.utxos).find({ _id: { $regex: `^${txid}:` } }).toArray());
      out.set(txid, { doc, outs: docs.map(D.fromUtxoDoc).sort((a, b) => a.vout - b.vout) });
    }
    return out;
  }

  /** Unspent outputs (committed, from `utxos`) of accounts, by script hash. */
  async _rowsOf(shs) {
    const out = new Map();
    if (shs.length === 0) return out;
    const docs = await this._read('read utxos', () => this._coll(C.utxos).find({ sh: { $in: shs } }).toArray());
    for (const d of docs) {
      const o = D.fromUtxoDoc(d);
      if (!out.has(o.sh)) out.set(o.sh, []);
      out.get(o.sh).push(o);
    }
    return out;
  }

  /** TxNum of the first tx at or above `height` (nextTxNum past the tip). */
  async _firstTxNumAt(height, tip) {
    if (height <= 0) return 0;
    if (height > tip.height) return tip.nextTxNum;
    const b = await this._blockAt(height, tip);
    if (!b) throw corrupt(`no block document for height ${height} below the tip ${tip.height}`);
    return D.num(b.firstTxNum);
  }

  /**
   * Documents by _id, as a Map. MongoDB: `$in` chunks on the _id index. FerretDB: point
   * lookups (pushed down), FERRET_READERS at a time.
   * @returns {Promise<Map<string, object>>}
   */
  async _findByIds(name, ids) {
    const out = new Map();
    if (ids.length === 0) return out;
    const coll = this._coll(name);
    if (this.ferret) {
      // one lookup each, a few at a time: a `$in` is a scan of the collection there
      let next = 0;
      const worker = async () => {
        while (next < ids.length) {
          const id = ids[next++];
          const d = await this._read(`read ${name}`, () => coll.findOne({ _id: id }));
          if (d) out.set(d._id, d);
        }
      };
      await Promise.all(Array.from({ length: Math.min(FERRET_READERS, ids.length) }, worker));
      return out;
    }
    for (let i = 0; i < ids.length; i += IN_CHUNK) {
      const chunk = ids.slice(i, i + IN_CHUNK);
      const docs = await this._read(`read ${name}`, () => coll.find({ _id: { $in: chunk } }).toArray());
      for (const d of docs) out.set(d._id, d);
    }
    return out;
  }

  _coll(name) {
    if (!this.db) throw new StoreError('ERR_CLOSED', 'the MongoDB store is not open');
    return this.db.collection(name);
  }

  _read(what, fn) {
    return this._retry(what, fn);
  }

  _retry(what, fn) {
    return withRetry(fn, { timeoutMs: this.opts.retryTimeoutMs, url: this.url, what });
  }
}

/** @param {MongoBulkWriteError} err */
function onlyDuplicates(err) {
  const errs = [].concat(err.writeErrors || []);
  return errs.length > 0 && errs.every((w) => w.code === 11000) && !err.writeConcernError;
}

function dbNameOf(url) {
  const m = /^mongodb(?:\+srv)?:\/\/[^/]*\/([^?]+)/i.exec(url);
  return m && m[1] ? decodeURIComponent(m[1]) : 'addrindex';
}

function checkExtends(tip, blocks, store) {
  let height = tip ? tip.height : -1;
  let hash = tip ? tip.hash : null;
  let next = tip ? tip.nextTxNum : 0;
  for (const b of blocks) {
    const why = b.height !== height + 1 ? `height ${b.height}, expected ${height + 1}`
      : hash !== null && b.cols.prev !== hash ? `prev ${b.cols.prev}, expected ${hash}`
        : b.firstTxNum !== next ? `firstTxNum ${b.firstTxNum}, expected ${next}` : null;
    if (why) {
      throw new StoreError('ERR_NOT_EXTENDING', `block ${b.cols.hash} does not extend ${store.describe()} at ${tipText(tip)}: ${why}`,
        { height: b.height, hash: b.cols.hash });
    }
    height = b.height;
    hash = b.cols.hash;
    next = b.firstTxNum + b.cols.txCount;
  }
}

/** @returns {string} the script hash as the documents key it */
function checkScripthash(sh) {
  if (!Buffer.isBuffer(sh) || sh.length !== 32) throw new UsageError('ERR_BAD_SCRIPTHASH', 'a script hash is 32 bytes');
  return D.hashHex(sh);
}

function sameTip(a, b) {
  if (!a || !b) return a === b;
  return a.height === b.height && a.hash === b.hash;
}

function tipText(tip) {
  return tip ? `height ${tip.height} (${tip.hash})` : 'an empty index';
}

function corrupt(what) {
  return new StoreError('ERR_CORRUPT', `${what}: the MongoDB index is damaged; run "addrindex verify"`);
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

module.exports = { MongoStore };
