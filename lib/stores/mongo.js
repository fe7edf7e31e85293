'use strict';

const crypto = require('node:crypto');
const { MongoClient } = require('mongodb');
const { AbstractStore } = require('./abstract');
const { UsageError } = require('../errors');
const C = require('../core/checks');
const D = require('./mongo/documents');
const { Database } = require('./mongo/bulk');
const { Reads } = require('./mongo/reads');
const { Writer, LEASE_MS } = require('./mongo/writer');
const { verifyIndex } = require('./mongo/verify');
const { HistoryWalk, ListWalk, mergeWalks } = require('./mongo/history');
const { scriptEntries, scriptUtxos, scriptSummary } = require('../core/script-view');
const { redactUrl, withRetry } = require('./mongo/retry');
const { decodeChange } = require('../codec/mempool');
const mempoolDocs = require('./mongo/mempool');
const { MongoWallets } = require('./mongo/wallets');

const COLL = D.COLLECTIONS;

/**
 * The MongoDB store: native documents (mongo/documents.js), one writer (mongo/writer.js:
 * apply, revert and crash repair without transactions), readers in any number of processes
 * (mongo/reads.js), verify (mongo/verify.js). docs/MONGO.md explains the design. The index's
 * rules come from lib/core like every store's; this file only wires the contract to them.
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
    super({ retryTimeoutMs: 30000, repairSettleMs: 1000, ...given, url: given.url || given.mongodbUrl });
    if (!this.opts.url) throw new UsageError('ERR_USAGE', 'the MongoDB store needs a connection string (--mongodb-url)');
    this.url = this.opts.url;
    this.client = null;
    /** @type {Database|null} */
    this.database = null;
    this.serverVersion = null;
    /** @type {Reads|null} */
    this.reads = null;
    /** @type {Writer|null} the writer (null when read-only) */
    this.writer = null;
    /** while a `whole` group is open: the timer renewing its lease (beginBulk) */
    this.groupTimer = null;
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
    return `MongoDB database ${this.database ? this.database.db.databaseName : this.opts.dbName || dbNameOf(this.url)} at ${redactUrl(this.url)}`;
  }

  async open() {
    if (this.client) return;
    const timeoutMs = this.opts.retryTimeoutMs;
    const client = new MongoClient(this.url, {
      // the store retries whole idempotent steps itself; a standalone server has no retryable writes
      retryWrites: false,
      serverSelectionTimeoutMS: Math.max(250, Math.min(5000, Math.floor(timeoutMs / 4))),
      connectTimeoutMS: Math.max(250, Math.min(10000, timeoutMs)),
      maxPoolSize: 16,
    });
    try {
      const retry = (what, fn) => withRetry(fn, { timeoutMs, url: this.url, what });
      await retry('connect', () => client.connect());
      const db = client.db(this.opts.dbName || dbNameOf(this.url));
      const info = await retry('buildInfo', () => db.admin().command({ buildInfo: 1 }));
      const ferret = info.ferretdbVersion !== undefined;
      this.serverVersion = ferret ? `FerretDB ${info.ferretdbVersion} (MongoDB ${info.version} wire)` : `MongoDB ${info.version}`;
      this.database = new Database(db, {
        url: this.url, retryTimeoutMs: timeoutMs, ferret, maxUpdates: this.opts.maxUpdatesPerCommand || (ferret ? 99 : 1000),
      });
      this.client = client;
      this.reads = new Reads(this);
      await this.openMeta();
      if (!this.readOnly) {
        this.writer = new Writer(this);
        await this.writer.open();
      }
    } catch (err) {
      this.client = null;
      this.database = null;
      this.writer = null;
      await client.close().catch(() => {});
      throw err;
    }
  }

  async close() {
    if (!this.client) return;
    // a group left open: its lease expires by itself, and the next writer's open clears it
    if (this.groupTimer) clearInterval(this.groupTimer);
    this.groupTimer = null;
    if (this.writer) await this.writer.idle();
    const c = this.client;
    this.client = null;
    this.database = null;
    this.writer = null;
    await c.close();
  }

  /** Checks (or, writable and empty, writes) the meta document. */
  async openMeta() {
    const meta = this.database.coll(COLL.meta);
    const read = () => this.database.retry('open', () => meta.findOne({ _id: 'meta' }));
    let m = await read();
    if (!m) {
      if (this.readOnly) throw C.noIndex(this.describe());
      await this.database.insert(COLL.meta, [{
        _id: 'meta', schema: D.SCHEMA_NAME, version: D.SCHEMA_VERSION, network: this.network, txstore: Boolean(this.txstoreAsked),
      }]);
      m = await read();
    }
    if (m.schema !== D.SCHEMA_NAME) throw C.notAnIndex(this.describe(), `a meta document of schema ${m.schema}`);
    C.checkMeta({ schemaVersion: m.version, network: m.network, txstore: Boolean(m.txstore) },
      { schemaVersion: D.SCHEMA_VERSION, network: this.network, txstore: this.txstoreAsked }, this.describe());
    this.keepsTransactions = Boolean(m.txstore);
  }

  // ---- reads ---------------------------------------------------------------------------

  /** @private */
  assertOpen() {
    if (!this.client) throw C.closed();
  }

  async getTip() {
    this.assertOpen();
    const t = await this.reads.committedTip();
    return t && { height: t.height, hash: t.hash, nextTxNum: t.nextTxNum };
  }

  async getBlockHash(height) {
    const b = await this.getBlock(height);
    return b ? b.hash : null;
  }

  async getBlock(height) {
    this.assertOpen();
    const tip = await this.reads.committedTip();
    if (!tip || !C.isHeight(height) || height > tip.height) return null;
    const d = await this.reads.blockAt(height, tip);
    return d ? D.fromBlockDoc(d) : null;
  }

  async getBlockByHash(hash) {
    C.checkBlockHash(hash);
    this.assertOpen();
    const tip = await this.reads.committedTip();
    if (!tip) return null;
    const d = await this.database.retry('getBlockByHash', () => this.database.coll(COLL.blocks).findOne({ hash: hash.toLowerCase() }));
    return d && d._id <= tip.height ? D.fromBlockDoc(d) : null;
  }

  async getHeaders(fromHeight, count) {
    const { from, n } = C.checkRange(fromHeight, count, 'height');
    this.assertOpen();
    const tip = await this.reads.committedTip();
    const to = Math.min(from + n, tip ? tip.height + 1 : 0);
    if (to <= from) return Buffer.alloc(0);
    const docs = await this.database.retry('getHeaders', () => this.database.coll(COLL.blocks)
      .find({ _id: { $gte: from, $lt: to } }).sort({ _id: 1 }).toArray());
    if (docs.length !== to - from) throw C.corrupt(`${docs.length} block documents for heights ${from}-${to - 1}`);
    return Buffer.concat(docs.map((d) => D.fromBlockDoc(d).header));
  }

  async getTxids(fromTxNum, count) {
    const { from, n } = C.checkRange(fromTxNum, count, 'TxNum');
    this.assertOpen();
    const tip = await this.reads.committedTip();
    const to = Math.min(from + n, tip ? tip.nextTxNum : 0);
    if (to <= from) return Buffer.alloc(0);
    const docs = await this.database.retry('getTxids', () => this.database.coll(COLL.txs)
      .find({ txNum: { $gte: D.long(from), $lt: D.long(to) } }).sort({ txNum: 1 }).toArray());
    if (docs.length !== to - from) throw C.corrupt(`${docs.length} txs documents for TxNums ${from}-${to - 1}`);
    return Buffer.concat(docs.map((d) => D.hashFromHex(D.txidOf(d))));
  }

  async getSpenders(txid) {
    C.checkHash(txid, 'txid');
    this.assertOpen();
    const tip = await this.reads.committedTip();
    if (!tip) return null;
    const found = await this.database.retry('getSpenders', () => this.database.coll(COLL.txs).findOne({ _id: D.hashHex(txid) }));
    const t = found && D.txAt(found, tip.nextTxNum);
    if (!t) return null;
    const prefix = D.spendId(D.num(t.txNum), '');
    const docs = await this.database.retry('getSpenders', () => this.database.coll(COLL.spends).find({ _id: { $regex: `^${prefix}` } }).toArray());
    return docs.filter((d) => D.num(d.txNum) < tip.nextTxNum)
      .map((d) => ({ vout: Number(d._id.slice(prefix.length)), txNum: D.num(d.txNum), txid: D.hashFromHex(d.by), vin: d.vin < 0 ? null : d.vin, height: d.height }))
      .sort((a, b) => a.vout - b.vout);
  }

  async getBlockBytes(height) {
    this.assertOpen();
    const tip = await this.reads.committedTip();
    if (!this.keepsTransactions || !tip || !C.isHeight(height) || height > tip.height) return null;
    const [b, body] = await Promise.all([
      this.reads.blockAt(height, tip),
      this.database.retry('getBlockBytes', () => this.database.coll(COLL.bodies).findOne({ _id: height })),
    ]);
    if (!b || !body) return null;
    const raw = D.fromBodyDoc(body, D.fromBlockDoc(b).header);
    if (raw.length !== b.size) throw C.corrupt(`the kept bytes of block ${height} are ${raw.length}, its document says ${b.size}`);
    return raw;
  }

  async engineStats() {
    this.assertOpen();
    return { store: 'mongo', server: this.serverVersion, database: this.database.db.databaseName };
  }

  async getTouched(height, opts) {
    this.assertOpen();
    const view = C.parseView(opts);
    const tip = await this.reads.committedTip();
    if (!tip || !C.isHeight(height) || height > tip.height) return null;
    const docs = await this.database.retry('getTouched', () => this.database.coll(COLL.undo)
      .find({ _id: { $gte: D.undoId(height, 0), $lt: D.undoId(height + 1, 0) } }).toArray());
    if (docs.length === 0 || docs.length !== docs[0].parts) return null;
    docs.sort((a, b) => a.part - b.part);
    const both = docs.flatMap((d) => d.touched.map(D.hashFromHex));
    return Buffer.concat(view === 'script' ? both : [...both, ...docs.flatMap((d) => d.touchedAddress.map(D.hashFromHex))]);
  }

  async getPrevouts(outpoints) {
    C.checkOutpoints(outpoints);
    this.assertOpen();
    const n = outpoints.length / 36;
    const ids = new Array(n);
    for (let i = 0; i < n; i++) {
      ids[i] = D.outpointId(D.hashHex(outpoints.subarray(36 * i, 36 * i + 32)), outpoints.readUInt32LE(36 * i + 32));
    }
    const found = await this.database.findByIds(COLL.utxos, ids);
    return ids.map((id) => {
      const d = found.get(id);
      if (!d) return null;
      const o = D.fromUtxoDoc(d);
      return { value: o.value, scripthash: D.hashFromHex(o.sh), p2pk: o.p2pk ? D.hashFromHex(o.p2pk) : null, height: o.height, txNum: o.txNum };
    });
  }

  async getSummary(scripthash, opts) {
    const [s] = await this.getSummaries([scripthash], opts);
    return s;
  }

  async getSummaries(scripthashes, opts) {
    const ids = C.checkHashes(scripthashes, 'getSummaries').map(D.hashHex);
    const script = C.parseView(opts) === 'script';
    this.assertOpen();
    const { tip, accounts } = await this.reads.accountsAt([...new Set(ids)], { parts: script });
    const out = [];
    for (const id of ids) {
      const a = accounts.get(id);
      if (a && script && a.parts) {
        const { account, parts } = this.scriptReaders(id, a, tip, accounts);
        out.push(await scriptSummary(account, parts, a.parts.both, id));
      } else {
        out.push(a ? D.summaryOf(a) : null);
      }
    }
    return out;
  }

  /**
   * AccountReaders (lib/core/script-view.js) of an address account with P2PK parts and of its
   * parts' accounts, as of `tip`: `accounts` holds the parts' accounts read at that same tip
   * (Reads.accountsAt with `parts`).
   * @private
   */
  scriptReaders(sh, a, tip, accounts) {
    const shs = [...new Set(a.parts.p2pk.map((p) => D.hashHex(p.sh)))];
    const reader = (id, acc) => ({
      summary: D.summaryOf(acc),
      entries: async (lo, hi, desc, want) => {
        const walk = new HistoryWalk(this.reads, id, 0, acc, lo, Math.min(hi, tip.nextTxNum), desc);
        await walk.start();
        const list = [];
        while (walk.head && list.length < want) {
          list.push({ ...walk.head, flags: (walk.head.funded ? 1 : 0) + (walk.head.spent ? 2 : 0) });
          await walk.advance();
        }
        return list;
      },
      utxos: (after, want) => this.reads.utxos(id, acc, tip, after && [after.txNum, after.vout], want),
    });
    return {
      account: reader(sh, a),
      parts: shs.map((id) => {
        const p = accounts.get(id);
        if (!p) throw C.corrupt(`script hash ${sh} counts the P2PK script ${id}, which has no account`);
        return reader(id, p);
      }),
    };
  }

  async getHistory(scripthash, opts) {
    C.checkHash(scripthash, 'script hash');
    const { entries, next } = await this.getHistories([scripthash], opts);
    return { entries: entries.map(({ scripthashes, ...e }) => e), next };
  }

  async getHistories(scripthashes, opts) {
    const uniq = [...new Set(C.checkHashes(scripthashes, 'getHistories').map(D.hashHex))];
    const q = C.parseQuery(opts);
    this.assertOpen();
    const { tip, accounts } = await this.reads.accountsAt(uniq, { parts: q.view === 'script' });
    if (!tip) return { entries: [], next: null };
    // the TxNum range [lo, hi): the height bounds (block documents read first), the cursor,
    // committed blocks only
    const firstTxNums = new Map();
    for (const h of [q.fromHeight, q.toHeight === null ? null : q.toHeight + 1]) {
      if (h !== null) firstTxNums.set(h, await this.reads.firstTxNumAt(h, tip));
    }
    const bounds = C.txNumBounds(q, (h) => firstTxNums.get(h));
    const lo = bounds.lo;
    const hi = Math.min(bounds.hi, tip.nextTxNum);
    if (lo >= hi) return { entries: [], next: null };
    const walks = [];
    for (const [i, sh] of uniq.entries()) {
      const a = accounts.get(sh);
      if (!a || a.txCount === 0) continue;
      if (q.view === 'script' && a.parts) {
        // the P2PKH script alone: its entries worked out first (at most limit + 1 are needed)
        const { account, parts } = this.scriptReaders(sh, a, tip, accounts);
        const list = await scriptEntries(account, parts, a.parts.both, lo, hi, q.desc, q.limit + 1);
        walks.push(new ListWalk(i, list.map((e) => ({ ...e, funded: (e.flags & 1) !== 0, spent: (e.flags & 2) !== 0 }))));
      } else {
        walks.push(new HistoryWalk(this.reads, sh, i, a, lo, hi, q.desc));
      }
    }
    const { entries, more } = await mergeWalks(walks, q.limit, q.desc);
    const out = entries.map((e) => ({
      txNum: e.txNum, txid: D.hashFromHex(e.txid), height: e.height, funded: e.funded, spent: e.spent,
      scripthashes: e.order.sort((x, y) => x - y).map((i) => D.hashFromHex(uniq[i])),
    }));
    return { entries: out, next: more ? C.historyCursor(out[out.length - 1].txNum) : null };
  }

  async getUtxos(scripthash, opts) {
    const sh = D.hashHex(C.checkHash(scripthash, 'script hash'));
    const { limit, after, view } = C.parseUtxoQuery(opts);
    this.assertOpen();
    const { tip, accounts } = await this.reads.accountsAt([sh], { parts: view === 'script' });
    const a = accounts.get(sh);
    if (!tip || !a) return { utxos: [], next: null };
    let list;
    if (view === 'script' && a.parts) {
      const { account, parts } = this.scriptReaders(sh, a, tip, accounts);
      list = await scriptUtxos(account, parts, after, limit + 1);
    } else {
      list = await this.reads.utxos(sh, a, tip, after && [after.txNum, after.vout], limit + 1);
    }
    const utxos = list.slice(0, limit).map((o) => ({ txid: D.hashFromHex(o.txid), vout: o.vout, value: o.value, height: o.height, txNum: o.txNum }));
    const last = utxos[utxos.length - 1];
    return { utxos, next: list.length > limit ? C.utxoCursor(last.txNum, last.vout) : null };
  }

  async getTx(txid) {
    C.checkHash(txid, 'txid');
    this.assertOpen();
    const tip = await this.reads.committedTip();
    if (!tip) return null;
    const found = await this.database.retry('getTx', () => this.database.coll(COLL.txs).findOne({ _id: D.hashHex(txid) }));
    const d = found && D.txAt(found, tip.nextTxNum);
    if (!d) return null;
    const b = await this.reads.blockAt(d.height, tip);
    if (!b) throw C.corrupt(`tx ${d._id} is in block ${d.height}, which the index does not hold`);
    return { txNum: D.num(d.txNum), txid: Buffer.from(txid), height: d.height, blockHash: b.hash, position: d.pos, offset: d.off, length: d.len };
  }

  async getTxid(txNum) {
    this.assertOpen();
    const tip = await this.reads.committedTip();
    if (!tip || !C.isTxNum(txNum) || txNum >= tip.nextTxNum) return null;
    const d = await this.reads.txAt(txNum, tip);
    return d ? D.hashFromHex(D.txidOf(d)) : null;
  }

  // ---- reorg groups --------------------------------------------------------------------

  /**
   * A `whole` group (a reorg's revert and its new branch, which are commits one by one here):
   * a lease in `meta` (`'group'`, renewed while the group is open), which readers in every
   * process wait out before they read the tip (Reads#readTip), so they answer at the old tip or
   * at the new one, never at the fork point. A writer that dies inside the group stops holding
   * them once the lease expires (LEASE_MS), and its next open clears it.
   * @param {{whole?: boolean}} [opts]
   */
  async beginBulk({ whole = false } = {}) {
    this.assertWritable();
    if (!whole || this.groupTimer) return;
    const meta = this.database.coll(COLL.meta);
    const renew = () => this.database.retry('group lease', () => meta.replaceOne({ _id: 'group' }, { _id: 'group', until: new Date(Date.now() + LEASE_MS) }, { upsert: true }));
    await renew();
    this.groupTimer = setInterval(() => renew().catch(() => {}), LEASE_MS / 3);
  }

  async endBulk() {
    if (!this.groupTimer) return;
    clearInterval(this.groupTimer);
    this.groupTimer = null;
    await this.database.retry('end the group', () => this.database.coll(COLL.meta).deleteOne({ _id: 'group' }));
  }

  // ---- the mempool snapshot ------------------------------------------------------------

  async putMempool(change) {
    this.assertWritable();
    C.checkChange(change);
    return this.writer.putMempool(change, D.hashHex(decodeChange(change, false).tip));
  }

  async putSourceInfo(info) {
    this.assertWritable();
    const meta = this.database.coll(COLL.meta);
    await this.database.retry('write source info', () => meta.replaceOne({ _id: 'source' }, { _id: 'source', info: JSON.stringify(info) }, { upsert: true }));
  }

  async getSourceInfo() {
    this.assertOpen();
    const d = await this.database.retry('read source info', () => this.database.coll(COLL.meta).findOne({ _id: 'source' }));
    if (!d) return null;
    try {
      return JSON.parse(d.info);
    } catch {
      throw C.corrupt('the source info document is not JSON');
    }
  }

  async getMempoolHead() {
    this.assertOpen();
    return mempoolDocs.getHead(this.database);
  }

  async getMempool({ raws = false } = {}) {
    this.assertOpen();
    return mempoolDocs.getWhole(this.database, raws);
  }

  async getMempoolRaw(place, txid) {
    this.assertOpen();
    C.checkPlace(place);
    C.checkHash(txid, 'txid');
    return mempoolDocs.getRaw(this.database, place, txid);
  }

  async getMempoolChanges(after) {
    this.assertOpen();
    C.checkSeq(after);
    return mempoolDocs.getChanges(this.database, after);
  }

  // ---- whole-index walks ---------------------------------------------------------------

  async stats() {
    this.assertOpen();
    const db = this.database;
    const tables = {};
    let diskBytes = 0;
    for (const name of Object.values(COLL)) {
      const [s] = await db.retry('stats', () => db.coll(name).aggregate([{ $collStats: { storageStats: {} } }]).toArray()
        .catch((err) => {
          // a collection nothing was written to yet does not exist (NamespaceNotFound)
          if (err.code === 26) return [];
          throw err;
        }));
      const st = (s && s.storageStats) || {};
      tables[name] = { rows: st.count || 0, bytes: st.size || 0 };
      diskBytes += (st.storageSize || 0) + (st.totalIndexSize || 0);
    }
    const [sum] = await db.retry('stats', () => db.coll(COLL.accounts).aggregate([
      { $match: { gone: { $ne: true } } }, { $group: { _id: null, entries: { $sum: '$txCount' } } },
    ]).toArray());
    return {
      store: 'mongo',
      tip: await this.getTip(),
      tables,
      bytes: Object.values(tables).reduce((n, t) => n + t.bytes, 0),
      diskBytes,
      historyEntries: sum ? D.num(sum.entries) : 0,
      utxos: tables.utxos.rows,
      engine: { server: this.serverVersion, database: db.db.databaseName },
    };
  }

  async verify(opts = {}) {
    this.assertOpen();
    return verifyIndex(this, opts);
  }

  /**
   * The logical records of every collection (commit numbers and previous versions are left
   * out: they depend on how the index got where it is, not on the chain).
   * @param {{undo?: boolean}} [opts]
   */
  async digest(opts = {}) {
    this.assertOpen();
    const db = this.database;
    const h = crypto.createHash('sha256');
    const tip = await db.retry('digest', () => db.coll(COLL.meta).findOne({ _id: 'tip' }));
    h.update(JSON.stringify(['meta', this.network, D.SCHEMA_VERSION]) + '\n');
    if (tip) h.update(JSON.stringify(['meta', ...D.logicalRecord('meta', tip)]) + '\n');
    const names = [COLL.blocks, COLL.bodies, COLL.txs, COLL.accounts, COLL.history, COLL.utxos, COLL.spends];
    if (opts.undo !== false) names.push(COLL.undo);
    for (const name of names) {
      await db.retry('digest', async () => {
        const part = crypto.createHash('sha256');
        for await (const d of db.coll(name).find({}).sort({ _id: 1 })) {
          if (name === COLL.accounts && d.gone) continue;
          part.update(JSON.stringify(D.logicalRecord(name, d)) + '\n');
        }
        h.update(`${name} ${part.digest('hex')}\n`);
      });
    }
    return h.digest('hex');
  }

  // ---- writes --------------------------------------------------------------------------

  async apply(blocks) {
    this.assertWritable();
    if (C.checkBlocks(blocks).length === 0) return;
    await this.writer.apply(blocks);
  }

  async revert(height) {
    this.assertWritable();
    C.checkRevertHeight(height);
    await this.writer.revert(height);
  }

  /** @private */
  assertWritable() {
    this.assertOpen();
    if (this.readOnly) throw C.readOnly(this.describe());
  }

  // ---- bitcore v8 wallets (mongo/wallets.js): collections of their own, not chain data ----
  // Unlike the key-value stores, any open MongoStore writes them, read-only ones too: the
  // server orders writes from many clients, and opening the chain's writer (which repairs what
  // a crashed sync left) beside a running sync is what a wallet write must never do.

  /** @private */
  wallets() {
    this.assertOpen();
    if (!this.walletRows || this.walletRows.db !== this.database) this.walletRows = new MongoWallets(this.database);
    return this.walletRows;
  }

  async createWallet(fields) {
    return this.wallets().create(fields);
  }

  async addWalletAddresses(pubKey, entries) {
    return this.wallets().add(pubKey, entries);
  }

  async getWallet(pubKey) {
    return this.wallets().get(pubKey);
  }

  async getWalletAddresses(walletId, opts) {
    return this.wallets().list(walletId, opts);
  }

  async getWalletsOf(scripthashes) {
    C.checkHashes(scripthashes, 'getWalletsOf');
    return this.wallets().walletsOf(scripthashes);
  }
}

function dbNameOf(url) {
  const m = /^mongodb(?:\+srv)?:\/\/[^/]*\/([^?]+)/i.exec(url);
  return m && m[1] ? decodeURIComponent(m[1]) : 'addrindex';
}

module.exports = { MongoStore };
