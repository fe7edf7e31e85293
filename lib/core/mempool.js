'use strict';

const { toDisplayHex } = require('../chain/hash');
const { parseTransaction } = require('../chain/tx');
const { StoreError } = require('../errors');

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
 */

class MempoolView {
  /**
   * @param {import('../codec/mempool').MempoolSnapshot} snap decoded; its buffers must outlive the view
   */
  constructor(snap) {
    this.seq = snap.seq;
    /** the confirmed tip the snapshot was resolved against, display hex */
    this.tip = toDisplayHex(snap.tip);
    this.txs = snap.txs;
    /** @type {Map<string, import('../codec/mempool').MempoolTx>} by latin1 txid */
    this.byTxid = new Map();
    /** @type {{address: Map<string, MempoolEntry[]>, script: Map<string, MempoolEntry[]>}} by view, then latin1 script hash, in snapshot order */
    this.byView = { address: new Map(), script: new Map() };
    /** @type {Map<import('../codec/mempool').MempoolTx, number>} each transaction's place in the snapshot */
    this.position = new Map();
    /** @type {Map<string, {tx: import('../codec/mempool').MempoolTx, vin: number}>} by latin1 txid + ':' + vout */
    this.spenders = new Map();
    let vsize = 0;
    let fee = 0;
    for (const tx of snap.txs) {
      this.byTxid.set(tx.txid.latin1Slice(0, 32), tx);
      this.position.set(tx, this.position.size);
      vsize += tx.vsize;
      fee += tx.fee;
      const mine = { address: new Map(), script: new Map() };
      const entries = (sh, p2pk) => {
        const out = [];
        const add = (view, key) => {
          const k = key.latin1Slice(0, 32);
          let e = mine[view].get(k);
          if (!e) {
            e = { tx, funded: false, spent: false, received: 0, sent: 0, fundedCount: 0, spentCount: 0 };
            mine[view].set(k, e);
          }
          out.push(e);
        };
        add('address', sh);
        if (p2pk) add('address', p2pk);
        add('script', p2pk || sh);
        return out;
      };
      tx.inputs.forEach((i, vin) => {
        this.spenders.set(`${i.txid.latin1Slice(0, 32)}:${i.vout}`, { tx, vin });
        if (!i.scripthash) return;
        for (const e of entries(i.scripthash, i.p2pk)) {
          e.spent = true;
          e.sent += i.value;
          e.spentCount++;
        }
      });
      for (const o of tx.outputs) {
        if (!o.scripthash) continue;
        for (const e of entries(o.scripthash, o.p2pk)) {
          e.funded = true;
          e.received += o.value;
          e.fundedCount++;
        }
      }
      for (const view of ['address', 'script']) {
        for (const [k, e] of mine[view]) {
          let list = this.byView[view].get(k);
          if (!list) this.byView[view].set(k, (list = []));
          list.push(e);
        }
      }
    }
    this.vsize = vsize;
    this.fee = fee;
    /** @type {Array<[number, number]>|null} */
    this.histogram = null;
    /** @type {Map<import('../codec/mempool').MempoolTx, import('../chain/tx').Tx>} transactions parsed so far */
    this.parsedTxs = new Map();
  }

  /** @param {Buffer} txid internal order */
  get(txid) {
    return this.byTxid.get(txid.latin1Slice(0, 32)) || null;
  }

  /**
   * A transaction of the snapshot parsed, as a block's transactions are (once per view, when a
   * reader first needs it), and checked: its bytes must hash to the txid the snapshot files
   * them under.
   * @param {import('../codec/mempool').MempoolTx} m one of this view's transactions
   * @returns {import('../chain/tx').Tx}
   */
  parsed(m) {
    let tx = this.parsedTxs.get(m);
    if (!tx) {
      tx = parseTransaction(m.raw);
      if (!tx.txid.equals(m.txid)) throw new StoreError('ERR_CORRUPT', `the mempool snapshot's transaction ${toDisplayHex(m.txid)} hashes to ${tx.hash}`);
      this.parsedTxs.set(m, tx);
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
    return this.byView[view].get(scripthash.latin1Slice(0, 32)) || [];
  }

  /**
   * The unconfirmed transactions touching a script hash, newest first (Esplora's
   * /txs/mempool): by first-seen time, and within one second children before parents.
   * @param {Buffer} scripthash
   * @returns {MempoolEntry[]}
   */
  newest(scripthash) {
    return this.entries(scripthash).slice().sort((a, b) => this.newer(a.tx, b.tx));
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
    return b.time - a.time || this.position.get(b) - this.position.get(a);
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
      if (!e.funded) continue;
      e.tx.outputs.forEach((o, vout) => {
        if (!o.scripthash || this.spender(e.tx.txid, vout)) return;
        const pays = view === 'script' ? (o.p2pk || o.scripthash).equals(scripthash)
          : o.scripthash.equals(scripthash) || Boolean(o.p2pk && o.p2pk.equals(scripthash));
        if (pays) out.push({ tx: e.tx, vout, value: o.value });
      });
    }
    return out;
  }

  /**
   * The mempool transaction spending an outpoint (confirmed or not), or null.
   * @param {Buffer} txid internal order
   * @param {number} vout
   */
  spender(txid, vout) {
    return this.spenders.get(`${txid.latin1Slice(0, 32)}:${vout}`) || null;
  }

  /** Whether a transaction spends an output of another mempool transaction. */
  hasUnconfirmedInputs(tx) {
    return tx.inputs.some((i) => i.unconfirmed);
  }

  /**
   * Vsize by fee rate, highest first: [[feerate sat/vB, vsize]] where each bin holds about
   * HISTOGRAM_BIN_VSIZE vbytes of transactions paying at least its rate (and less than the
   * previous bin's), as Esplora's /mempool and Electrum's mempool.get_fee_histogram answer.
   */
  feeHistogram() {
    // a sort of the whole mempool: once per snapshot, not per request
    if (!this.histogram) this.histogram = this.computeHistogram();
    return this.histogram;
  }

  /** @private */
  computeHistogram() {
    const rates = this.txs.map((t) => ({ rate: t.fee / t.vsize, vsize: t.vsize })).sort((a, b) => b.rate - a.rate);
    const bins = [];
    let acc = 0;
    for (let i = 0; i < rates.length; i++) {
      acc += rates[i].vsize;
      const last = i === rates.length - 1;
      if (acc >= HISTOGRAM_BIN_VSIZE || last) {
        bins.push([Math.floor(rates[i].rate * 1000) / 1000, acc]);
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
    return [...this.txs].sort((a, b) => this.newer(a, b)).slice(0, n);
  }
}

/** An empty view, for an index without a follower. */
function emptyMempool(tipHash) {
  return new MempoolView({ seq: 0, tip: Buffer.from(tipHash || '00'.repeat(32), 'hex').reverse(), txs: [] });
}

module.exports = { MempoolView, emptyMempool, HISTOGRAM_BIN_VSIZE };
