'use strict';

const { toDisplayHex } = require('../chain/hash');
const { parseTransaction } = require('../chain/tx');
const { AddrIndexError, StoreError } = require('../errors');

/**
 * What the mempool means to the index's answers, computed once per snapshot for every reader
 * (REST, Electrum, the bitcore service): per script hash, the unconfirmed transactions that
 * pay or spend it and its unconfirmed balance and outputs; which confirmed outputs a mempool
 * transaction spends; fee statistics. Built from a decoded snapshot (lib/codec/mempool.js),
 * never written anywhere: the confirmed rows know nothing of it.
 *
 * Per script hash in either view of the index (lib/core/p2pk.js), as the confirmed reads
 * answer: in the address view (the default) a P2PK output counts toward its key's P2PKH script
 * hash and its own script hash; in the script view (Electrum's) toward its own only.
 */

/** Vsize per fee-histogram bin, as electrs bins it. */
const HISTOGRAM_BIN_VSIZE = 50000;

/**
 * @typedef {object} MempoolEntry  one unconfirmed transaction as a script hash sees it
 * @property {import('../codec/mempool').MempoolTx} tx
 * @property {boolean} funded    it pays the script hash
 * @property {boolean} spent     it spends an output of the script hash
 * @property {number} received   satoshis it pays the script hash
 * @property {number} sent       satoshis of the script hash's outputs it spends
 * @property {number} fundedCount
 * @property {number} spentCount
 * @property {number[]} vouts    its outputs paying the script hash, in order
 */

/**
 * Per transaction, what the views compute of it once (a transaction decoded once is shared by
 * every view of the snapshots that hold it): its place in snapshot order, its entries by
 * script hash, and the seqs of the views that hold it (from FROM, until UNTIL). Symbols, so a
 * transaction's JSON and spreads stay what the codec gave.
 */
const RANK = Symbol('mempool rank');
const TOUCHES = Symbol('mempool touches');
const FROM = Symbol('mempool from');
const UNTIL = Symbol('mempool until');

/** The index's two views of a script hash (lib/core/p2pk.js): the address view and Electrum's script view. */
const VIEWS = Object.freeze(['address', 'script']);

/**
 * How long a transaction that left stays findable by the views that held it, after the first
 * view without it was made: longer than any request holds a view (requests time out after
 * --timeout-ms, 10 s by default). A view used later than that refuses to answer (ERR_MEMPOOL_VIEW_GONE) rather
 * than answer without what it held.
 */
const KEEP_GONE_MS = 60000;

/**
 * The indexes a line of views shares: one view built from a snapshot, then each view derived
 * from the last (MempoolView#next). Every transaction any view of the line still may read is
 * indexed once, stamped with the seqs of the views that hold it; a view sees the ones it
 * holds. So deriving a view costs what changed, and the views before it stay as they were.
 */
class ViewLine {
  constructor() {
    /** @type {Map<string, import('../codec/mempool').MempoolTx[]>} by latin1 txid (two only while a changed part's old one is kept) */
    this.byTxid = new Map();
    /** @type {{address: Map<string, MempoolEntry[]>, script: Map<string, MempoolEntry[]>}} by view, then latin1 script hash, in snapshot order */
    this.byView = { address: new Map(), script: new Map() };
    /** @type {WeakMap<import('../codec/mempool').MempoolTx, import('../chain/tx').Tx>} transactions parsed so far (a transaction object's bytes never change) */
    this.parsedTxs = new WeakMap();
    /** @type {Map<string, Array<{tx: import('../codec/mempool').MempoolTx, vin: number}>>} by latin1 txid + ':' + vout */
    this.spenders = new Map();
    this.lastRank = -1;
    /** @type {MempoolView|null} the newest view: the only one a next view derives from */
    this.head = null;
    /** @type {Array<{at: number, seq: number, txs: import('../codec/mempool').MempoolTx[]}>} what left, when */
    this.gone = [];
    /** views below this seq may have lost a transaction they held */
    this.keptFrom = 0;
    /** @type {Array<{seq: number, at: number, added: import('../codec/mempool').MempoolTx[], removed: import('../codec/mempool').MempoolTx[]}>} each derived view's change, while kept */
    this.steps = [];
    /** changesSince() knows the changes of views above this seq (the line's first view's) */
    this.stepsFrom = 0;
  }

  /**
   * Indexes transactions that join the line.
   * @param {import('../codec/mempool').MempoolTx[]} txs in snapshot order (their places increasing)
   */
  add(txs) {
    /** @type {{address: Map<string, MempoolEntry[]>, script: Map<string, MempoolEntry[]>}} */
    const lists = { address: new Map(), script: new Map() };
    for (const tx of txs) {
      const key = tx.txid.latin1Slice(0, 32);
      const same = this.byTxid.get(key);
      if (same) same.push(tx);
      else this.byTxid.set(key, [tx]);
      tx.inputs.forEach((i, vin) => {
        const k = `${i.txid.latin1Slice(0, 32)}:${i.vout}`;
        const list = this.spenders.get(k);
        if (list) list.push({ tx, vin });
        else this.spenders.set(k, [{ tx, vin }]);
      });
      if (!tx[TOUCHES]) tx[TOUCHES] = touches(tx);
      for (const view of VIEWS) {
        for (const [k, e] of tx[TOUCHES][view]) {
          const list = lists[view].get(k);
          if (list) list.push(e);
          else lists[view].set(k, [e]);
        }
      }
    }
    for (const view of VIEWS) {
      const map = this.byView[view];
      for (const [k, news] of lists[view]) {
        const list = map.get(k);
        if (!list) map.set(k, news);
        else if (list[list.length - 1].tx[RANK] <= news[0].tx[RANK]) for (const e of news) list.push(e);
        // one whose part changed takes the place of the one it replaces: merged in place order
        else map.set(k, mergeByRank(list, news));
      }
    }
  }

  /**
   * Forgets transactions no view can read any more: each list they were on is filtered once.
   * @param {Set<import('../codec/mempool').MempoolTx>} txs
   */
  drop(txs) {
    const keep = (map, key, list, left) => {
      if (left.length === list.length) return;
      if (left.length) map.set(key, left);
      else map.delete(key);
    };
    const ids = new Set();
    const outpoints = new Set();
    const scripthashes = { address: new Set(), script: new Set() };
    for (const tx of txs) {
      ids.add(tx.txid.latin1Slice(0, 32));
      for (const i of tx.inputs) outpoints.add(`${i.txid.latin1Slice(0, 32)}:${i.vout}`);
      for (const view of VIEWS) for (const [k] of tx[TOUCHES][view]) scripthashes[view].add(k);
    }
    for (const k of ids) {
      const list = this.byTxid.get(k);
      if (list) keep(this.byTxid, k, list, list.filter((t) => !txs.has(t)));
    }
    for (const k of outpoints) {
      const list = this.spenders.get(k);
      if (list) keep(this.spenders, k, list, list.filter((x) => !txs.has(x.tx)));
    }
    for (const view of VIEWS) {
      const map = this.byView[view];
      for (const k of scripthashes[view]) {
        const list = map.get(k);
        if (list) keep(map, k, list, list.filter((e) => !txs.has(e.tx)));
      }
    }
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

class MempoolView {
  /**
   * A view built from a snapshot alone (the first of a line).
   * @param {import('../codec/mempool').MempoolSnapshot & {ranks?: number[]}} snap decoded, in
   *   place order; its buffers must outlive the view, and its transactions belong to this
   *   view's line from now on. `ranks`: the stored places (default 0, 1, 2, …)
   */
  constructor(snap) {
    this.seq = snap.seq;
    /** the confirmed tip the snapshot was resolved against, display hex */
    this.tip = toDisplayHex(snap.tip);
    this.txs = snap.txs;
    this.line = new ViewLine();
    this.vsize = 0;
    this.fee = 0;
    /** @type {Array<[number, number]>|null} */
    this.histogram = null;
    /** @type {import('../codec/mempool').MempoolTx[]|null} by fee rate, highest first (kept per view once asked: byRate()) */
    this.rated = null;
    /** @type {import('../codec/mempool').MempoolTx[]|null} newest first (kept per view once asked: byNewest()) */
    this.newestFirst = null;
    let rank = -1;
    snap.txs.forEach((tx, k) => {
      rank = snap.ranks ? snap.ranks[k] : k;
      tx[RANK] = rank;
      tx[FROM] = snap.seq;
      tx[UNTIL] = Infinity;
      this.vsize += tx.vsize;
      this.fee += tx.fee;
    });
    this.line.add(snap.txs);
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
   * @param {{seq: number, tip: Buffer}} head the next snapshot's (a higher seq)
   * @param {import('../codec/mempool').MempoolTx[]} added the transactions that enter (decoded
   *   for it), each with its place: `rankOf(tx)`
   * @param {import('../codec/mempool').MempoolTx[]} removed this view's transactions that leave
   *   (a transaction whose part or place changed leaves and enters again, as a new object)
   * @param {(tx: import('../codec/mempool').MempoolTx) => number} rankOf
   * @param {number} [now] ms, when the view is made (Date.now())
   * @returns {MempoolView|null} null when this view is not the newest of its line, or a place
   *   is taken twice (only a view built from the whole is right then)
   */
  next(head, added, removed, rankOf, now = Date.now()) {
    const line = this.line;
    if (line.head !== this || !(head.seq > this.seq)) return null;
    const gone = new Set(removed);
    const news = added.slice().sort((x, y) => rankOf(x) - rankOf(y));
    for (let k = 1; k < news.length; k++) if (rankOf(news[k]) === rankOf(news[k - 1])) return null;
    for (const tx of news) tx[RANK] = rankOf(tx);
    const txs = mergeSorted(this.txs, gone, news, (x, y) => x[RANK] - y[RANK]);
    if (!txs) return null;
    const view = Object.create(MempoolView.prototype);
    view.seq = head.seq;
    view.tip = toDisplayHex(head.tip);
    view.txs = txs;
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
    line.add(news);
    if (removed.length) line.gone.push({ at: now, seq: head.seq, txs: removed });
    line.steps.push({ seq: head.seq, at: now, added: news, removed });
    line.head = view;
    line.prune(now);
    return view;
  }

  /**
   * What changed from the view of seq `since` to this one: the transactions that entered and
   * left (a changed one in both), and the script hashes (latin1 keys, in `view`) they touch —
   * what a notifier recomputes. Null when the line does not know (the view of `since` was
   * of another line, or too long ago): the caller looks at everything then.
   * @param {number} since
   * @param {'address'|'script'} [view='address']
   * @returns {{added: import('../codec/mempool').MempoolTx[], removed: import('../codec/mempool').MempoolTx[], keys: Set<string>}|null}
   */
  changesSince(since, view = 'address') {
    const line = this.line;
    if (since < line.stepsFrom || since > this.seq) return null;
    const added = [];
    const removed = [];
    const keys = new Set();
    for (const step of line.steps) {
      if (step.seq <= since || step.seq > this.seq) continue;
      for (const tx of step.added) added.push(tx);
      for (const tx of step.removed) removed.push(tx);
    }
    for (const list of [added, removed]) for (const tx of list) for (const k of tx[TOUCHES][view].keys()) keys.add(k);
    return { added, removed, keys };
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

  /** @param {Buffer} txid internal order */
  get(txid) {
    const same = this.index().byTxid.get(txid.latin1Slice(0, 32));
    if (same) for (const tx of same) if (this.holds(tx)) return tx;
    return null;
  }

  /**
   * A transaction of the snapshot parsed, as a block's transactions are (once per line of
   * views, when a reader first needs it), and checked: its bytes must hash to the txid the
   * snapshot files them under.
   * @param {import('../codec/mempool').MempoolTx} m one of this view's transactions
   * @returns {import('../chain/tx').Tx}
   */
  parsed(m) {
    const parsedTxs = this.line.parsedTxs;
    let tx = parsedTxs.get(m);
    if (!tx) {
      tx = parseTransaction(m.raw);
      if (!tx.txid.equals(m.txid)) throw new StoreError('ERR_CORRUPT', `the mempool snapshot's transaction ${toDisplayHex(m.txid)} hashes to ${tx.hash}`);
      parsedTxs.set(m, tx);
    }
    return tx;
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
    const list = this.index().byView[view].get(key);
    return list ? list.filter((e) => this.holds(e.tx)) : [];
  }

  /**
   * The script hashes (latin1 keys) the view's transactions touch.
   * @param {'address'|'script'} [view='address']
   * @returns {IterableIterator<string>}
   */
  * scripthashKeys(view = 'address') {
    for (const [k, list] of this.index().byView[view]) if (list.some((e) => this.holds(e.tx))) yield k;
  }

  /**
   * Whether the view's transactions touch a script hash (its latin1 key): entriesOfKey()'s
   * test without building the list.
   * @param {string} key
   * @param {'address'|'script'} [view='address']
   */
  touchesKey(key, view = 'address') {
    const list = this.index().byView[view].get(key);
    return list !== undefined && list.some((e) => this.holds(e.tx));
  }

  /**
   * An upper bound of how many script hashes the view's transactions touch (cheap).
   * @param {'address'|'script'} [view='address']
   */
  scripthashBound(view = 'address') {
    return this.line.byView[view].size;
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
   * @returns {import('../codec/mempool').MempoolTx[]}
   */
  newestOf(scripthashes) {
    const txs = new Set();
    for (const sh of scripthashes) for (const e of this.entries(sh)) txs.add(e.tx);
    return [...txs].sort((a, b) => this.newer(a, b));
  }

  /** Sort order, newest first: first-seen time, then later in the snapshot (children after parents) first. */
  newer(a, b) {
    return b.time - a.time || b[RANK] - a[RANK];
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
   * @returns {Array<{tx: import('../codec/mempool').MempoolTx, vout: number, value: number}>}
   */
  utxos(scripthash, view = 'address') {
    const out = [];
    for (const e of this.entries(scripthash, view)) {
      for (const vout of e.vouts) if (!this.spender(e.tx.txid, vout)) out.push({ tx: e.tx, vout, value: e.tx.outputs[vout].value });
    }
    return out;
  }

  /**
   * The mempool transaction spending an outpoint (confirmed or not), or null.
   * @param {Buffer} txid internal order
   * @param {number} vout
   */
  spender(txid, vout) {
    const list = this.index().spenders.get(`${txid.latin1Slice(0, 32)}:${vout}`);
    if (list) for (const s of list) if (this.holds(s.tx)) return s;
    return null;
  }

  /** Whether a transaction spends an output of another mempool transaction. */
  hasUnconfirmedInputs(tx) {
    return tx.inputs.some((i) => i.unconfirmed);
  }

  /**
   * The view's transactions by fee rate, highest first (ties: place order). Sorted once for
   * the first view asked; every view derived after it merges what changed into it.
   * @returns {import('../codec/mempool').MempoolTx[]}
   */
  byRate() {
    if (!this.rated) this.rated = this.txs.slice().sort(byRate);
    return this.rated;
  }

  /**
   * The view's transactions newest first: first-seen time, then later in place order (children
   * before parents) first. Kept as byRate() is.
   * @returns {import('../codec/mempool').MempoolTx[]}
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

/** Two lists of entries ordered by place, as one (a new array). */
function mergeByRank(a, b) {
  const out = new Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) out[k++] = a[i].tx[RANK] <= b[j].tx[RANK] ? a[i++] : b[j++];
  while (i < a.length) out[k++] = a[i++];
  while (j < b.length) out[k++] = b[j++];
  return out;
}

/**
 * A transaction's entries by view and script hash (latin1 key), in the order its inputs and
 * outputs first name them: in the address view a P2PK output (or an input spending one)
 * counts toward its key's P2PKH script hash and its own script hash, in the script view toward
 * its own only (lib/core/p2pk.js).
 * @param {import('../codec/mempool').MempoolTx} tx
 * @returns {{address: Map<string, MempoolEntry>, script: Map<string, MempoolEntry>}}
 */
function touches(tx) {
  const mine = { address: new Map(), script: new Map() };
  const entries = (sh, p2pk) => {
    const out = [];
    const add = (view, key) => {
      const k = key.latin1Slice(0, 32);
      let e = mine[view].get(k);
      if (!e) {
        e = { tx, funded: false, spent: false, received: 0, sent: 0, fundedCount: 0, spentCount: 0, vouts: [] };
        mine[view].set(k, e);
      }
      out.push(e);
    };
    add('address', sh);
    if (p2pk) add('address', p2pk);
    add('script', p2pk || sh);
    return out;
  };
  for (const i of tx.inputs) {
    if (!i.scripthash) continue;
    for (const e of entries(i.scripthash, i.p2pk)) {
      e.spent = true;
      e.sent += i.value;
      e.spentCount++;
    }
  }
  tx.outputs.forEach((o, vout) => {
    if (!o.scripthash) return;
    for (const e of entries(o.scripthash, o.p2pk)) {
      e.funded = true;
      e.received += o.value;
      e.fundedCount++;
      e.vouts.push(vout);
    }
  });
  return mine;
}

/** An empty view, for an index without a follower. */
function emptyMempool(tipHash) {
  return new MempoolView({ seq: 0, tip: Buffer.from(tipHash || '00'.repeat(32), 'hex').reverse(), txs: [] });
}

module.exports = { MempoolView, emptyMempool, HISTOGRAM_BIN_VSIZE, KEEP_GONE_MS };
