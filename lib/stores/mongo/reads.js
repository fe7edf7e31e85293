'use strict';

const D = require('./documents');
const { StoreError } = require('../../errors');
const { corrupt } = require('../../core/checks');

const C = D.COLLECTIONS;

/** How often a reader looks again while a reorg's group holds the tip (readTip). */
const GROUP_POLL_MS = 25;
/** A reader whose tip is older than both versions of an account re-reads the tip, this many times. */
const READ_ATTEMPTS = 20;
/** Decoded accounts kept for reads at an unchanged tip (a balance, then the same address's history). */
const ACCOUNT_CACHE = 20000;
/** UTXO sets up to this size are read whole once per tip for paging; larger ones page by query. */
const ROWS_CACHED = 10000;
/** Row lists of large UTXO sets kept, each for the tip it was read at. */
const ROW_LISTS = 64;
/** Blocks (by height) and txs (by TxNum) kept per tip, each. */
const NUMBERED_CACHED = 10000;
/** On FerretDB, a read by height or TxNum also reads this many on either side (one scan either way). */
const NUMBERED_NEAR = 500;

/**
 * Reading a MongoDB index as of one committed tip, and what a process keeps of what it read.
 *
 * Readers see committed blocks only: documents above the tip are outside every query's
 * bounds, and each account document carries the version before it, tagged with commit
 * numbers (docs/MONGO.md, "Readers"). A version read at commit `seq` cannot change while
 * `seq` is the tip, so what was read at it is kept for the next read at the same tip.
 */
class Reads {
  /**
   * @param {import('../mongo').MongoStore} store
   */
  constructor(store) {
    this.store = store;
    /** @type {import('./bulk').Database} */
    this.db = store.database;
    /** decoded account versions by script hash, each with the commit it was read at */
    this.accounts = new Map();
    /** blocks and txs documents read at one commit, by collection (see numbered) */
    this.byNumber = new Map();
    /** unspent outputs of accounts past INLINE_UTXOS, by script hash, each with its commit */
    this.rowLists = new Map();
  }

  /** The committed tip: the writer's own, or the database's for a reader. */
  async committedTip() {
    const w = this.store.writer;
    return w ? w.tip : this.readTip();
  }

  /**
   * The committed tip, once no reorg's group holds it: while the writer's `'group'` lease
   * stands (MongoStore#beginBulk: a revert and its new branch, commits one by one), the tip is
   * read again every GROUP_POLL_MS, so a reader answers at the old tip or the new one. The
   * lease and the tip are read in one query: a reader that finds no lease has the tip from
   * before the group or from after it.
   */
  async readTip() {
    for (;;) {
      const docs = await this.db.retry('read tip', () => this.db.coll(C.meta).find({ _id: { $in: ['tip', 'group'] } }).toArray());
      const group = docs.find((d) => d._id === 'group');
      if (!(group && group.until instanceof Date && group.until.getTime() > Date.now())) {
        const d = docs.find((x) => x._id === 'tip');
        return d ? D.fromTipDoc(d) : null;
      }
      await sleep(GROUP_POLL_MS);
    }
  }

  /**
   * The accounts of script hashes as of one committed tip: each document's own version or the
   * one before it, by commit number. With `parts`, the accounts of the P2PK parts of those that
   * have them too (the script view), read at the same tip. A reader whose tip is older than
   * both versions of a document re-reads the tip and reads them all again.
   * @param {string[]} shs
   * @param {{parts?: boolean}} [opts]
   * @returns {Promise<{tip: object|null, accounts: Map<string, D.Account|null>}>}
   */
  async accountsAt(shs, { parts = false } = {}) {
    for (let attempt = 1; attempt <= READ_ATTEMPTS; attempt++) {
      const tip = await this.committedTip();
      if (!tip || shs.length === 0) return { tip, accounts: new Map() };
      const accounts = await this.versionsAt(shs, tip);
      if (accounts && parts) {
        const more = [...new Set([...accounts.values()].flatMap((a) => (a && a.parts ? a.parts.p2pk.map((p) => D.hashHex(p.sh)) : [])))]
          .filter((sh) => !accounts.has(sh));
        const got = more.length ? await this.versionsAt(more, tip) : new Map();
        if (got) {
          for (const [sh, a] of got) accounts.set(sh, a);
          return { tip, accounts };
        }
      } else if (accounts) {
        return { tip, accounts };
      }
      await sleep(5 * attempt);
    }
    throw new StoreError('ERR_INDEX_MOVING', `${this.store.describe()}: new blocks were committed during each of ${READ_ATTEMPTS} reads; retry`);
  }

  /**
   * The versions of accounts a reader at `tip` sees (kept for the next read at it), or null
   * when some document has moved two versions past it.
   * @private
   */
  async versionsAt(shs, tip) {
    const accounts = new Map();
    const need = [];
    for (const sh of shs) {
      const c = this.accounts.get(sh);
      if (c && c.seq === tip.seq) accounts.set(sh, c.account);
      else need.push(sh);
    }
    if (need.length === 0) return accounts;
    const docs = await this.db.findByIds(C.accounts, need);
    const missing = need.filter((sh) => !docs.has(sh));
    if (missing.length && (await this.swapping())) {
      for (const [sh, d] of await this.db.findByIds(C.staging, missing)) docs.set(sh, d);
    }
    for (const sh of need) {
      const d = docs.get(sh);
      const v = d ? D.versionAt(d, tip.seq) : null;
      if (v === undefined) return null;
      accounts.set(sh, v ? D.fromAccountFields(v, sh) : null);
    }
    for (const sh of need) this.remember(sh, tip.seq, accounts.get(sh));
    return accounts;
  }

  /**
   * The unspent outputs of an account as of the tip, in (TxNum, vout) order, up to `limit`
   * past `after`. Inline lists and sets up to ROWS_CACHED are read whole once per tip (on
   * FerretDB each query is a scan); larger ones page by query.
   * @param {string} sh
   * @param {D.Account} a
   * @param {object} tip
   * @param {[number, number]|null} after (TxNum, vout)
   * @param {number} limit
   * @returns {Promise<D.Out[]>}
   */
  async utxos(sh, a, tip, after, limit) {
    if (a.utxos !== null || a.fundedCount - a.spentCount <= ROWS_CACHED) {
      const all = a.utxos !== null ? a.utxos : await this.rowsAt(sh, tip);
      return (after ? all.filter((o) => o.txNum > after[0] || (o.txNum === after[0] && o.vout > after[1])) : all).slice(0, limit);
    }
    const filter = { sh, txNum: { $lt: D.long(tip.nextTxNum) } };
    if (after) filter.$or = [{ txNum: { $gt: D.long(after[0]) } }, { txNum: D.long(after[0]), vout: { $gt: after[1] } }];
    const docs = await this.db.retry('getUtxos', () => this.db.coll(C.utxos).find(filter).sort({ txNum: 1, vout: 1 }).limit(limit).toArray());
    return docs.map(D.fromUtxoDoc);
  }

  /**
   * All unspent outputs of an account that keeps them in rows, as of the tip, kept for the
   * next page while the tip stands. Not kept when read during a swap, which may already miss
   * the outputs the committing batch spends.
   */
  async rowsAt(sh, tip) {
    const c = this.rowLists.get(sh);
    if (c && c.seq === tip.seq) return c.list;
    const quiet = !(await this.swapping());
    const docs = await this.db.retry('getUtxos', () => this.db.coll(C.utxos).find({ sh, txNum: { $lt: D.long(tip.nextTxNum) } })
      .sort({ txNum: 1, vout: 1 }).toArray());
    const list = docs.map(D.fromUtxoDoc);
    if (quiet && !(await this.swapping())) {
      this.rowLists.delete(sh);
      this.rowLists.set(sh, { seq: tip.seq, list });
      if (this.rowLists.size > ROW_LISTS) this.rowLists.delete(this.rowLists.keys().next().value);
    }
    return list;
  }

  /** The block document at a height at or below the tip (see numbered). */
  blockAt(height, tip) {
    return this.numbered(C.blocks, '_id', height, tip.height, tip);
  }

  /** The txs document of a TxNum below the tip (see numbered). */
  txAt(txNum, tip) {
    return this.numbered(C.txs, 'txNum', txNum, tip.nextTxNum - 1, tip);
  }

  /** TxNum of the first tx at or above `height` (nextTxNum past the tip). */
  async firstTxNumAt(height, tip) {
    if (height <= 0) return 0;
    if (height > tip.height) return tip.nextTxNum;
    const b = await this.blockAt(height, tip);
    if (!b) throw corrupt(`no block document for height ${height} below the tip ${tip.height}`);
    return D.num(b.firstTxNum);
  }

  /**
   * The document of `coll` whose numeric `field` is `n` (at most `max`: within the tip), kept
   * while the tip stands (a revert and re-apply may change it, nothing else does). On FerretDB
   * a lookup by a number scans the collection anyway, so a miss reads the documents around it
   * in that one scan.
   */
  async numbered(coll, field, n, max, tip) {
    let cache = this.byNumber.get(coll);
    if (!cache || cache.seq !== tip.seq) this.byNumber.set(coll, (cache = { seq: tip.seq, docs: new Map() }));
    const { docs } = cache;
    if (docs.has(n)) return docs.get(n);
    if (docs.size >= NUMBERED_CACHED) docs.clear();
    const value = field === '_id' ? (x) => x : D.long;
    const filter = this.db.ferret
      ? { [field]: { $gte: value(Math.max(0, n - NUMBERED_NEAR)), $lte: value(Math.min(max, n + NUMBERED_NEAR)) } }
      : { [field]: value(n) };
    for (const d of await this.db.retry(`read ${coll}`, () => this.db.coll(coll).find(filter).toArray())) docs.set(D.num(d[field]), d);
    return docs.get(n) || null;
  }

  /**
   * A sealed history page.
   * @param {string} sh
   * @param {number} page
   * @returns {Promise<D.Entry[]>}
   */
  async page(sh, page) {
    const id = D.pageId(sh, page);
    const doc = await this.db.retry('read history page', () => this.db.coll(C.history).findOne({ _id: id }));
    if (!doc) throw corrupt(`history page ${id} is missing though account ${sh} has more entries`);
    return D.fromPageDoc(doc, sh, page);
  }

  /** Keeps a decoded account version for reads at the same commit (least recently read out first). */
  remember(sh, seq, account) {
    this.accounts.delete(sh);
    this.accounts.set(sh, { seq, account });
    if (this.accounts.size > ACCOUNT_CACHE) this.accounts.delete(this.accounts.keys().next().value);
  }

  /** Whether the writer is swapping accounts in (its staged versions are the ones to read). */
  async swapping() {
    const w = this.store.writer;
    if (w) return w.phase === 'swap';
    const p = await this.db.retry('read pending marker', () => this.db.coll(C.meta).findOne({ _id: 'pending' }));
    return Boolean(p && p.phase === 'swap');
  }

  /**
   * The committed txs documents of coinbase txids the index already holds (BIP30), each with
   * the unspent outputs of that transaction.
   * @param {string[]} txids
   * @returns {Promise<Map<string, {doc: object, outs: D.Out[]}>>}
   */
  async reusedTxids(txids) {
    const out = new Map();
    for (const [txid, doc] of await this.db.findByIds(C.txs, txids)) {
      const docs = await this.db.retry('read utxos', () => this.db.coll(C.utxos).find({ _id: { $regex: `^${txid}:` } }).toArray());
      // each output's first document (a P2PK output's second one is its own account's)
      out.set(txid, { doc, outs: docs.map(D.fromUtxoDoc).filter((o, i) => o.id === docs[i]._id) });
    }
    return out;
  }

  /** Unspent outputs (committed, from `utxos`) of accounts, by script hash. */
  async rowsOf(shs) {
    const out = new Map();
    if (shs.length === 0) return out;
    const docs = await this.db.retry('read utxos', () => this.db.coll(C.utxos).find({ sh: { $in: shs } }).toArray());
    for (const d of docs) {
      const o = D.fromUtxoDoc(d);
      if (!out.has(o.sh)) out.set(o.sh, []);
      out.get(o.sh).push(o);
    }
    return out;
  }
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

module.exports = { Reads };
