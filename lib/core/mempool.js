'use strict';

const { toDisplayHex } = require('../chain/hash');
const { parseTransaction } = require('../chain/tx');
const { AddrIndexError, StoreError } = require('../errors');
const { decodeMempoolTx } = require('../codec/mempool');
const { ViewTx, keysOf, entryOf, RANK, FROM, UNTIL } = require('./mempool-tx');
const { KeyTable } = require('./key-table');

/**
 * What the mempool means to the index's answers, indexed once per snapshot for every reader
 * (REST, Electrum, the bitcore service): per script hash, the unconfirmed transactions that
 * pay or spend it (and, computed from their parts when asked, its unconfirmed balance and
 * outputs); which confirmed outputs a mempool transaction spends; fee statistics. Built from
 * the snapshot's parts (lib/codec/mempool.js), never written anywhere: the confirmed rows
 * know nothing of it.
 *
 * Per script hash in either view of the index (lib/core/p2pk.js), as the confirmed reads
 * answer: in the address view (the default) a P2PK output counts toward its key's P2PKH script
 * hash and its own script hash; in the script view (Electrum's) toward its own only.
 */

/** @typedef {import('./mempool-tx').MempoolEntry} MempoolEntry */

/** Vsize per fee-histogram bin, as electrs bins it. */
const HISTOGRAM_BIN_VSIZE = 50000;

/** Transactions parsed for readers (MempoolView#parsed) kept per line, the most recently asked. */
const PARSED_KEPT = 5000;

/**
 * How long a transaction that left stays findable by the views that held it, after the first
 * view without it was made: longer than any request holds a view (requests time out after
 * --timeout-ms, 10 s by default). A view used later than that refuses to answer (ERR_MEMPOOL_VIEW_GONE) rather
 * than answer without what it held.
 */
const KEEP_GONE_MS = 60000;

/**
 * Lists shorter than this grow by a copy of their exact length: an array that grows by push
 * takes room for 17 more, and at 150,000 transactions a worker holds ~140,000 lists of a few
 * (script hashes several transactions share), 23 MB of empty room that way.
 */
const SMALL_LIST = 16;

/** `list` with `tx` inserted at `at`, a new array of its exact length. */
function withOneMore(list, at, tx) {
  const out = new Array(list.length + 1);
  for (let i = 0; i < at; i++) out[i] = list[i];
  out[at] = tx;
  for (let i = at; i < list.length; i++) out[i + 1] = list[i];
  return out;
}

/** No transactions left under a key (shared: never changed). */
const NONE = Object.freeze([]);

/**
 * A map whose values are one transaction or, for a key several share, an array of them in
 * place order: most keys of a mempool (a txid, an outpoint, most script hashes) name one
 * transaction, and an array for each would double what the index takes. Keys are latin1
 * strings of one length, kept as bytes (key-table.js).
 */
class TxMultimap {
  /** @param {number} keyLen 32 (txids, script hashes) or 36 (outpoints) */
  constructor(keyLen) {
    this.table = new KeyTable(keyLen);
    /** @type {Array<ViewTx|ViewTx[]|undefined>} by entry */
    this.vals = [];
  }

  get size() {
    return this.table.size;
  }

  /** @private @param {string} key */
  _get(key) {
    const e = this.table.entryOf(key);
    return e < 0 ? undefined : this.vals[e];
  }

  /** @param {string} key @returns {ViewTx[]} in place order (a new array) */
  all(key) {
    const v = this._get(key);
    return v === undefined ? [] : Array.isArray(v) ? v.slice() : [v];
  }

  /** @param {string} key @param {(tx: ViewTx) => boolean} test @returns {ViewTx[]} those under `key` that pass `test`, in place order */
  filter(key, test) {
    const v = this._get(key);
    if (v === undefined) return [];
    return Array.isArray(v) ? v.filter(test) : test(v) ? [v] : [];
  }

  /** Whether any transaction under `key` passes `test`. */
  some(key, test) {
    const v = this._get(key);
    if (v === undefined) return false;
    return Array.isArray(v) ? v.some(test) : test(v);
  }

  /** The first transaction under `key` that passes `test`, or null. */
  find(key, test) {
    const v = this._get(key);
    if (v === undefined) return null;
    if (!Array.isArray(v)) return test(v) ? v : null;
    for (const tx of v) if (test(tx)) return tx;
    return null;
  }

  /** Adds `tx` under `key`, in place order. */
  add(key, tx) {
    const e = this.table.insert(key);
    const v = this.vals[e];
    if (v === undefined) {
      this.vals[e] = tx;
      return;
    }
    const list = Array.isArray(v) ? v : [v];
    // after every one of a lower or the same place: a busy script hash holds thousands, and a
    // block changes the parts of many of them (each enters again at its place)
    const rank = tx[RANK];
    let at = list.length;
    if (list[at - 1][RANK] > rank) {
      let lo = 0;
      let hi = list.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (list[mid][RANK] > rank) hi = mid;
        else lo = mid + 1;
      }
      at = lo;
    }
    if (list.length < SMALL_LIST) {
      this.vals[e] = withOneMore(list, at, tx);
    } else {
      list.splice(at, 0, tx);
      if (list !== v) this.vals[e] = list;
    }
  }

  /** Removes the members of `txs` from under `key` (once per key: a pass over its list). */
  remove(key, txs) {
    const e = this.table.entryOf(key);
    if (e < 0) return;
    const v = this.vals[e];
    // a key of one transaction holds it, not an array: it goes, or the key stays as it is
    const left = Array.isArray(v) ? v.filter((tx) => !txs.has(tx)) : txs.has(v) ? NONE : null;
    if (left === null) return;
    if (left.length === 0) {
      this.vals[e] = undefined;
      this.table.delete(e);
    } else {
      this.vals[e] = left.length === 1 ? left[0] : left;
    }
  }

  /** @returns {Generator<string>} every key, latin1 */
  *keys() {
    for (const e of this.table.entries()) yield this.table.keyAt(e);
  }
}

/**
 * The indexes a line of views shares: one view built from a snapshot, then each view derived
 * from the last (MempoolView#next). Every transaction any view of the line still may read is
 * indexed once, stamped with the seqs of the views that hold it; a view sees the ones it
 * holds. So deriving a view costs what changed, and the views before it stay as they were.
 * The indexes hold transactions, not per-script-hash figures: those are computed from a
 * transaction's part when a reader asks (mempool-tx.js entryOf).
 */
class ViewLine {
  constructor() {
    /** by latin1 txid (two only while a changed part's old one is kept) */
    this.byTxid = new TxMultimap(32);
    /** by latin1 script hash in the address view */
    this.byKey = new TxMultimap(32);
    /** by latin1 script hash in the script view, of the transactions with a P2PK input or output (the others' are their address view's) */
    this.byScript = new TxMultimap(32);
    /** by what they spend (outpointKey) */
    this.spenders = new TxMultimap(36);
    /** @type {Map<ViewTx, import('../chain/tx').Tx>} transactions parsed lately, least recently asked first */
    this.parsedTxs = new Map();
    /**
     * @type {((tx: ViewTx) => Promise<Buffer|null>)|null} reads a transaction's bytes from the
     * store the line's snapshots come from (MempoolCache sets it), null when the line has none
     */
    this.readRaw = null;
    this.lastRank = -1;
    /** @type {MempoolView|null} the newest view: the only one a next view derives from */
    this.head = null;
    /** @type {Array<{at: number, seq: number, txs: ViewTx[]}>} what left, when */
    this.gone = [];
    /** views below this seq may have lost a transaction they held */
    this.keptFrom = 0;
    /** @type {Array<{seq: number, at: number, added: ViewTx[], removed: ViewTx[]}>} each derived view's change, while kept */
    this.steps = [];
    /** changesSince() knows the changes of views above this seq (the line's first view's) */
    this.stepsFrom = 0;
  }

  /**
   * Indexes transactions that join the line (their places set).
   * @param {ViewTx[]} txs
   * @param {Array<import('../codec/mempool').MempoolTx|undefined>} [decoded] the same, decoded
   */
  add(txs, decoded = []) {
    txs.forEach((tx, k) => this.addOne(tx, decoded[k] || tx.decoded()));
  }

  /**
   * @param {ViewTx} tx its place set
   * @param {import('../codec/mempool').MempoolTx} d its part decoded
   */
  addOne(tx, d) {
    this.byTxid.add(tx.txid.latin1Slice(0, 32), tx);
    for (const i of d.inputs) this.spenders.add(outpointKey(i.txid, i.vout), tx);
    for (const key of keysOf(d, 'address')) this.byKey.add(key, tx);
    if (tx.p2pk) for (const key of keysOf(d, 'script')) this.byScript.add(key, tx);
  }

  /**
   * Forgets transactions no view can read any more.
   * @param {Set<ViewTx>} txs
   */
  drop(txs) {
    // each key once, however many of `txs` it holds
    const txids = new Set();
    const outpoints = new Set();
    const keys = new Set();
    const scripts = new Set();
    for (const tx of txs) {
      const d = tx.decoded();
      txids.add(tx.txid.latin1Slice(0, 32));
      for (const i of d.inputs) outpoints.add(outpointKey(i.txid, i.vout));
      for (const key of keysOf(d, 'address')) keys.add(key);
      if (tx.p2pk) for (const key of keysOf(d, 'script')) scripts.add(key);
      this.parsedTxs.delete(tx);
    }
    for (const k of txids) this.byTxid.remove(k, txs);
    for (const k of outpoints) this.spenders.remove(k, txs);
    for (const k of keys) this.byKey.remove(k, txs);
    for (const k of scripts) this.byScript.remove(k, txs);
  }

  /** Forgets what left before `now - KEEP_GONE_MS`. */
  prune(now) {
    while (this.steps.length && now - this.steps[0].at > KEEP_GONE_MS) this.stepsFrom = this.steps.shift().seq;
    const txs = new Set();
    while (this.gone.length && now - this.gone[0].at > KEEP_GONE_MS) {
      const g = this.gone.shift();
      for (const tx of g.txs) txs.add(tx);
      this.keptFrom = g.seq;
    }
    if (txs.size) this.drop(txs);
  }
}

/** The spenders' key of an outpoint: its txid's bytes and its vout's, LE, latin1. @param {Buffer} txid @param {number} vout */
function outpointKey(txid, vout) {
  return txid.latin1Slice(0, 32) + String.fromCharCode(vout & 0xff, (vout >>> 8) & 0xff, (vout >>> 16) & 0xff, vout >>> 24);
}

class MempoolView {
  /**
   * A view built from a snapshot alone (the first of a line).
   * @param {{seq: number, tip: Buffer, txs: Array<ViewTx|Buffer|import('../codec/mempool').MempoolTx>, ranks?: number[], evicted?: number}} snap
   *   in place order; `ranks`: the stored places (default 0, 1, 2, …); a part (a Buffer:
   *   encodeMempoolTx) becomes the ViewTx that holds it, a decoded transaction is encoded into
   *   a ViewTx of its own
   */
  constructor(snap) {
    this.seq = snap.seq;
    /** the confirmed tip the snapshot was resolved against, display hex */
    this.tip = toDisplayHex(snap.tip);
    /** @type {ViewTx[]} in place order */
    this.txs = new Array(snap.txs.length);
    /** transactions the follower evicted so far (--mempool-max-mb), as its head counts them */
    this.evicted = snap.evicted || 0;
    this.line = new ViewLine();
    this.vsize = 0;
    this.fee = 0;
    /** @type {Array<[number, number]>|null} */
    this.histogram = null;
    /** @type {ViewTx[]|null} by fee rate, highest first (kept per view once asked: byRate()) */
    this.rated = null;
    /** @type {ViewTx[]|null} newest first (kept per view once asked: byNewest()) */
    this.newestFirst = null;
    let rank = -1;
    snap.txs.forEach((t, k) => {
      // a part decoded once, for its figures and its keys, and let go: 150,000 held decoded
      // until the view was built had left a worker ~65 MB larger
      const d = Buffer.isBuffer(t) ? decodeMempoolTx(t) : null;
      const tx = d ? new ViewTx(t, d) : ViewTx.of(t);
      rank = snap.ranks ? snap.ranks[k] : k;
      tx[RANK] = rank;
      tx[FROM] = snap.seq;
      tx[UNTIL] = Infinity;
      this.vsize += tx.vsize;
      this.fee += tx.fee;
      this.line.addOne(tx, d || tx.decoded());
      this.txs[k] = tx;
    });
    this.line.lastRank = rank;
    this.line.stepsFrom = snap.seq;
    this.line.head = this;
  }

  /**
   * The view of the next snapshot, derived from this one and what changed (a stored change,
   * lib/codec/mempool.js): the work follows what changed, and this view stays as it was (a
   * request that began with it reads it to the end). The sorted views (by fee rate, newest
   * first) are carried over by merging, when this view had them.
   *
   * @param {{seq: number, tip: Buffer, evicted?: number}} head the next snapshot's (a higher seq)
   * @param {ViewTx[]} added the transactions that enter, each with its place: `rankOf(tx)`
   * @param {ViewTx[]} removed this view's transactions that leave (a transaction whose part
   *   or place changed leaves and enters again, as a new object)
   * @param {(tx: ViewTx) => number} rankOf
   * @param {number} [now] ms, when the view is made (Date.now())
   * @param {Array<import('../codec/mempool').MempoolTx>} [decoded] `added` decoded
   * @returns {MempoolView|null} null when this view is not the newest of its line, or a place
   *   is taken twice (only a view built from the whole is right then)
   */
  next(head, added, removed, rankOf, now = Date.now(), decoded = []) {
    const line = this.line;
    if (line.head !== this || !(head.seq > this.seq)) return null;
    const gone = new Set(removed);
    const order = added.map((tx, k) => k).sort((x, y) => rankOf(added[x]) - rankOf(added[y]));
    const news = order.map((k) => added[k]);
    for (let k = 1; k < news.length; k++) if (rankOf(news[k]) === rankOf(news[k - 1])) return null;
    for (const tx of news) tx[RANK] = rankOf(tx);
    const txs = mergeSorted(this.txs, gone, news, (x, y) => x[RANK] - y[RANK]);
    if (!txs) return null;
    const view = Object.create(MempoolView.prototype);
    view.seq = head.seq;
    view.tip = toDisplayHex(head.tip);
    view.txs = txs;
    view.evicted = head.evicted || 0;
    view.line = line;
    view.vsize = this.vsize;
    view.fee = this.fee;
    view.histogram = null;
    for (const tx of removed) {
      tx[UNTIL] = head.seq;
      view.vsize -= tx.vsize;
      view.fee -= tx.fee;
    }
    for (const tx of news) {
      if (tx[RANK] > line.lastRank) line.lastRank = tx[RANK];
      tx[FROM] = head.seq;
      tx[UNTIL] = Infinity;
      view.vsize += tx.vsize;
      view.fee += tx.fee;
    }
    view.rated = this.rated && mergeSorted(this.rated, gone, news.slice().sort(byRate), byRate);
    view.newestFirst = this.newestFirst && mergeSorted(this.newestFirst, gone, news.slice().sort(byNewest), byNewest);
    line.add(news, order.map((k) => decoded[k]));
    if (removed.length) line.gone.push({ at: now, seq: head.seq, txs: removed });
    line.steps.push({ seq: head.seq, at: now, added: news, removed });
    line.head = view;
    line.prune(now);
    return view;
  }

  /**
   * What changed from the view of seq `since` to this one: the transactions that entered and
   * left (a changed one in both), and the script hashes (latin1 keys, in `view`) they touch —
   * what a notifier recomputes. Those of the transactions of this view that spend one that
   * left are in `keys` too: their parent confirmed, and their Electrum height went from −1 to 0
   * with their parts unchanged (hasUnconfirmedInputs). Null when the line does not know (the
   * view of `since` was of another line, or too long ago): the caller looks at everything then.
   * `addedTo` and `removedFrom` say it per key: the transactions that entered under a key, and
   * the keys a departure touched (those of what left, and of its children here); a key
   * touched only by arrivals lists what it listed at `since` and these (Electrum's busy
   * statuses are extended so: status.js extendMempoolPart).
   * @param {number} since
   * @param {'address'|'script'} [view='address']
   * @returns {{since: number, added: ViewTx[], removed: ViewTx[], keys: Set<string>, addedTo: Map<string, ViewTx[]>, removedFrom: Set<string>}|null}
   */
  changesSince(since, view = 'address') {
    const line = this.line;
    if (since < line.stepsFrom || since > this.seq) return null;
    const added = [];
    const removed = [];
    const keys = new Set();
    const addedTo = new Map();
    const removedFrom = new Set();
    for (const step of line.steps) {
      if (step.seq <= since || step.seq > this.seq) continue;
      for (const tx of step.added) added.push(tx);
      for (const tx of step.removed) removed.push(tx);
    }
    for (const tx of added) {
      for (const k of keysOf(tx.decoded(), view)) {
        keys.add(k);
        const list = addedTo.get(k);
        if (list) list.push(tx);
        else addedTo.set(k, [tx]);
      }
    }
    const held = (c) => this.holds(c);
    const touch = (k) => {
      keys.add(k);
      removedFrom.add(k);
    };
    for (const tx of removed) {
      const d = tx.decoded();
      for (const k of keysOf(d, view)) touch(k);
      for (let vout = 0; vout < d.outputs.length; vout++) {
        const child = line.spenders.find(outpointKey(tx.txid, vout), held);
        if (child) for (const k of keysOf(child.decoded(), view)) touch(k);
      }
    }
    return { since, added, removed, keys, addedTo, removedFrom };
  }

  /**
   * Whether the view holds a transaction of its line.
   * @private
   */
  holds(tx) {
    return tx[FROM] <= this.seq && this.seq < tx[UNTIL];
  }

  /**
   * The line's indexes, while they still hold everything this view held.
   * @private
   */
  index() {
    if (this.seq < this.line.keptFrom) {
      throw new AddrIndexError('ERR_MEMPOOL_VIEW_GONE', `the mempool view of seq ${this.seq} was read more than ${KEEP_GONE_MS / 1000} s after a newer one replaced it`);
    }
    return this.line;
  }

  /**
   * @param {Buffer} txid internal order
   * @returns {ViewTx|null}
   */
  get(txid) {
    return this.index().byTxid.find(txid.latin1Slice(0, 32), (tx) => this.holds(tx));
  }

  /**
   * A transaction's bytes: those it was made with, else the store's (store.getMempoolRaw, at
   * its place), which keeps the bytes of a transaction that left for as long as it keeps the
   * changes (LMDB, LevelDB; on MongoDB, while it stays).
   * @param {ViewTx} m one of this view's transactions
   * @returns {Promise<Buffer>}
   * @throws {AddrIndexError} ERR_MEMPOOL_VIEW_GONE when the store holds them no more: the view
   *   is older than anything the store keeps (the request retries with the current one)
   */
  async raw(m) {
    if (m.rawBytes) return m.rawBytes;
    const read = this.line.readRaw;
    const raw = read ? await read(m) : null;
    if (!raw) throw new AddrIndexError('ERR_MEMPOOL_VIEW_GONE', `the bytes of mempool transaction ${toDisplayHex(m.txid)} (view of seq ${this.seq}) are no longer stored`);
    return raw;
  }

  /**
   * A transaction of the snapshot parsed, as a block's transactions are (kept for the
   * transactions asked lately), and checked: its bytes must hash to the txid the snapshot files
   * them under.
   * @param {ViewTx} m one of this view's transactions
   * @returns {Promise<import('../chain/tx').Tx>}
   */
  async parsed(m) {
    const kept = this.line.parsedTxs;
    let tx = kept.get(m);
    if (tx) {
      kept.delete(m);
    } else {
      tx = parseTransaction(await this.raw(m));
      if (!tx.txid.equals(m.txid)) throw new StoreError('ERR_CORRUPT', `the mempool snapshot's transaction ${toDisplayHex(m.txid)} hashes to ${tx.hash}`);
      if (kept.size >= PARSED_KEPT) kept.delete(kept.keys().next().value);
    }
    kept.set(m, tx);
    return tx;
  }

  /**
   * The view's transactions touching a script hash (its latin1 key), in place order.
   * @private
   */
  txsOfKey(key, view) {
    const line = this.index();
    const held = (tx) => this.holds(tx);
    if (view !== 'script') return line.byKey.filter(key, held);
    // the script view: the address view's, but for the transactions with a P2PK side, whose
    // keys in this view are their own
    const plain = line.byKey.filter(key, (tx) => !tx.p2pk && held(tx));
    const own = line.byScript.filter(key, held);
    return own.length ? plain.concat(own).sort((a, b) => a[RANK] - b[RANK]) : plain;
  }

  /**
   * The unconfirmed transactions touching a script hash, in snapshot order (parents first),
   * without what each does to it (entries() computes that from their parts): what a reader
   * that needs only their txids, fees and heights asks (Electrum's statuses).
   * @param {Buffer} scripthash
   * @param {'address'|'script'} [view='address']
   * @returns {ViewTx[]}
   */
  transactions(scripthash, view = 'address') {
    return this.txsOfKey(scripthash.latin1Slice(0, 32), view);
  }

  /**
   * The unconfirmed transactions touching a script hash, in snapshot order (parents first).
   * @param {Buffer} scripthash
   * @param {'address'|'script'} [view='address']
   * @returns {MempoolEntry[]}
   */
  entries(scripthash, view = 'address') {
    return this.entriesOfKey(scripthash.latin1Slice(0, 32), view);
  }

  /**
   * entries() by a script hash's latin1 key.
   * @param {string} key
   * @param {'address'|'script'} [view='address']
   * @returns {MempoolEntry[]}
   */
  entriesOfKey(key, view = 'address') {
    return this.txsOfKey(key, view).map((tx) => entryOf(tx, key, view));
  }

  /**
   * The script hashes (latin1 keys) the view's transactions touch.
   * @param {'address'|'script'} [view='address']
   * @returns {IterableIterator<string>}
   */
  * scripthashKeys(view = 'address') {
    const line = this.index();
    const held = (tx) => this.holds(tx);
    if (view !== 'script') {
      for (const k of line.byKey.keys()) if (line.byKey.some(k, held)) yield k;
      return;
    }
    const seen = new Set();
    for (const k of line.byKey.keys()) {
      if (line.byKey.some(k, (tx) => !tx.p2pk && held(tx))) {
        seen.add(k);
        yield k;
      }
    }
    for (const k of line.byScript.keys()) if (!seen.has(k) && line.byScript.some(k, held)) yield k;
  }

  /**
   * Whether the view's transactions touch a script hash (its latin1 key): entriesOfKey()'s
   * test without building the list.
   * @param {string} key
   * @param {'address'|'script'} [view='address']
   */
  touchesKey(key, view = 'address') {
    const line = this.index();
    const held = (tx) => this.holds(tx);
    if (view !== 'script') return line.byKey.some(key, held);
    return line.byKey.some(key, (tx) => !tx.p2pk && held(tx)) || line.byScript.some(key, held);
  }

  /**
   * An upper bound of how many script hashes the view's transactions touch (cheap).
   * @param {'address'|'script'} [view='address']
   */
  scripthashBound(view = 'address') {
    return this.line.byKey.size + (view === 'script' ? this.line.byScript.size : 0);
  }

  /**
   * The unconfirmed transactions touching a script hash, newest first (Esplora's
   * /txs/mempool): by first-seen time, and within one second children before parents.
   * @param {Buffer} scripthash
   * @returns {MempoolEntry[]}
   */
  newest(scripthash) {
    return this.entries(scripthash).sort((a, b) => this.newer(a.tx, b.tx));
  }

  /**
   * The unconfirmed transactions touching any of these script hashes, each once, newest first.
   * @param {Buffer[]} scripthashes
   * @returns {ViewTx[]}
   */
  newestOf(scripthashes) {
    const txs = new Set();
    for (const sh of scripthashes) for (const tx of this.txsOfKey(sh.latin1Slice(0, 32), 'address')) txs.add(tx);
    return [...txs].sort((a, b) => this.newer(a, b));
  }

  /** Sort order, newest first: first-seen time, then later in the snapshot (children after parents) first. */
  newer(a, b) {
    return byNewest(a, b);
  }

  /**
   * A script hash's unconfirmed totals (Esplora's mempool_stats; insight's unconfirmed balance).
   * @param {Buffer} scripthash
   * @param {'address'|'script'} [view='address']
   */
  summary(scripthash, view = 'address') {
    const s = { txCount: 0, received: 0, sent: 0, fundedCount: 0, spentCount: 0, balance: 0 };
    for (const e of this.entries(scripthash, view)) {
      s.txCount++;
      s.received += e.received;
      s.sent += e.sent;
      s.fundedCount += e.fundedCount;
      s.spentCount += e.spentCount;
    }
    s.balance = s.received - s.sent;
    return s;
  }

  /**
   * Outputs paying a script hash that no mempool transaction spends.
   * @param {Buffer} scripthash
   * @param {'address'|'script'} [view='address']
   * @returns {Array<{tx: ViewTx, vout: number, value: number}>}
   */
  utxos(scripthash, view = 'address') {
    const out = [];
    for (const e of this.entries(scripthash, view)) {
      if (!e.vouts.length) continue;
      const outputs = e.tx.outputs;
      for (const vout of e.vouts) if (!this.spender(e.tx.txid, vout)) out.push({ tx: e.tx, vout, value: outputs[vout].value });
    }
    return out;
  }

  /**
   * The mempool transaction spending an outpoint (confirmed or not), or null.
   * @param {Buffer} txid internal order
   * @param {number} vout
   * @returns {{tx: ViewTx, vin: number}|null}
   */
  spender(txid, vout) {
    const tx = this.index().spenders.find(outpointKey(txid, vout), (t) => this.holds(t));
    if (!tx) return null;
    const vin = tx.inputs.findIndex((i) => i.vout === vout && i.txid.equals(txid.subarray(0, 32)));
    return { tx, vin };
  }

  /**
   * Whether a transaction spends an output of another transaction of this view: of those it
   * spent from when its part was written, one still here (a parent confirmed since leaves
   * the part as it was: docs/FORMAT.md, `M` rows).
   * @param {ViewTx} tx
   */
  hasUnconfirmedInputs(tx) {
    if (!tx.flagged) return false;
    const keys = tx.parents();
    // each parent found is kept on the child: a status of a busy script hash asks this of
    // thousands of transactions at every new view, and a parent's part seldom changes
    const found = tx.parentTxs || (tx.parentTxs = new Array(keys.length).fill(null));
    let byTxid = null;
    for (let k = 0; k < keys.length; k++) {
      if (found[k] !== null && this.holds(found[k])) return true;
      if (!byTxid) byTxid = this.index().byTxid;
      // gone from this view, or another version of it (a part written again): asked by txid,
      // and let go when none is here
      found[k] = byTxid.find(keys[k], (p) => this.holds(p));
      if (found[k] !== null) return true;
    }
    return false;
  }

  /**
   * The view's transactions by fee rate, highest first (ties: place order). Sorted once for
   * the first view asked; every view derived after it merges what changed into it.
   * @returns {ViewTx[]}
   */
  byRate() {
    if (!this.rated) this.rated = this.txs.slice().sort(byRate);
    return this.rated;
  }

  /**
   * The view's transactions newest first: first-seen time, then later in place order (children
   * before parents) first. Kept as byRate() is.
   * @returns {ViewTx[]}
   */
  byNewest() {
    if (!this.newestFirst) this.newestFirst = this.txs.slice().sort(byNewest);
    return this.newestFirst;
  }

  /**
   * Vsize by fee rate, highest first: [[feerate sat/vB, vsize]] where each bin holds about
   * HISTOGRAM_BIN_VSIZE vbytes of transactions paying at least its rate (and less than the
   * previous bin's), as Esplora's /mempool and Electrum's mempool.get_fee_histogram answer.
   * One walk of byRate() per view.
   */
  feeHistogram() {
    if (!this.histogram) this.histogram = this.computeHistogram();
    return this.histogram;
  }

  /** @private */
  computeHistogram() {
    const rated = this.byRate();
    const bins = [];
    let acc = 0;
    for (let i = 0; i < rated.length; i++) {
      acc += rated[i].vsize;
      const last = i === rated.length - 1;
      if (acc >= HISTOGRAM_BIN_VSIZE || last) {
        bins.push([Math.floor((rated[i].fee / rated[i].vsize) * 1000) / 1000, acc]);
        acc = 0;
      }
    }
    return bins;
  }

  /**
   * The newest transactions first.
   * @param {number} n
   */
  recent(n) {
    return this.byNewest().slice(0, n);
  }
}

/** Fee rate, highest first; then place order. */
function byRate(a, b) {
  return b.fee / b.vsize - a.fee / a.vsize || a[RANK] - b[RANK];
}

/** Newest first (MempoolView#newer). */
function byNewest(a, b) {
  return b.time - a.time || b[RANK] - a[RANK];
}

/**
 * `list` without the members of `gone`, merged with `news` (sorted by `cmp`, as `list` is):
 * one pass, no sort of the whole. Null when two would compare equal in place order (only
 * possible with a place taken twice).
 */
function mergeSorted(list, gone, news, cmp) {
  const out = new Array(list.length - gone.size + news.length);
  let k = 0;
  let j = 0;
  for (let i = 0; i < list.length; i++) {
    const x = list[i];
    if (gone.size && gone.has(x)) continue;
    while (j < news.length && cmp(news[j], x) < 0) out[k++] = news[j++];
    if (j < news.length && cmp(news[j], x) === 0) return null;
    out[k++] = x;
  }
  while (j < news.length) out[k++] = news[j++];
  out.length = k;
  return out;
}

/** An empty view, for an index without a follower. */
function emptyMempool(tipHash) {
  return new MempoolView({ seq: 0, tip: Buffer.from(tipHash || '00'.repeat(32), 'hex').reverse(), txs: [] });
}

module.exports = { MempoolView, ViewTx, emptyMempool, HISTOGRAM_BIN_VSIZE, KEEP_GONE_MS };
