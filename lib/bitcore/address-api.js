'use strict';

const { AddressSets, addressList, addressString } = require('./addresses');
const { mempoolTxids, mempoolBalance, withMempoolUtxos } = require('./mempool');
const { PairedReads } = require('./paired');
const { emptyMempool } = require('../core/mempool');

/** The mempool of an index whose snapshot does not go with the tip read: empty. */
const EMPTY_VIEW = emptyMempool(null);

/** Address sets whose confirmed txids are kept until the tip moves (bitcore-node's txidsCache). */
const TXIDS_CACHE = 1000;

/** bitcore-node 3's limits (Bitcoin.DEFAULT_*), settable by the same option names. */
const DEFAULTS = Object.freeze({ maxTxids: 1000, maxTransactionHistory: 50, maxAddressesQuery: 10000, transactionConcurrency: 5 });

/**
 * bitcore-node 3's address methods (getAddressBalance, getAddressUnspentOutputs,
 * getAddressTxids, getAddressHistory, getAddressSummary) with its option handling, orders,
 * limits and errors, over the index's confirmed answers (address-index.js) and its mempool
 * snapshot (mempool.js), each answer read at one tip with the snapshot of that tip
 * (paired.js). Promise-based; the service adapts callbacks.
 *
 * Options are read as bitcore-node reads them: `options.queryMempool` defaults to true, so
 * `true`, `false` and `{}` all ask for the mempool. An index that holds no snapshot (no
 * follower writes one) knows no mempool: its answers are what bitcore-node gives for
 * `queryMempool: false`, with no `unconfirmed*` figures made up. A snapshot that does not go
 * with the tip read (a block was committed and the follower has not written the new tip's yet)
 * counts as an empty mempool, as for every reader of the index.
 */
class AddressApi {
  /**
   * @param {object} opts
   * @param {import('./address-index').AddressIndex} opts.index
   * @param {PairedReads} [opts.reads] the index's reads at one tip and its mempool (default:
   *   confirmed data only)
   * @param {(txid: string, at: {tip: object|null, view: import('../core/mempool').MempoolView|null}) => Promise<object>} opts.detailedTx
   *   the service's getDetailedTransaction, with the tip and mempool the txid was listed from
   * @param {() => number} opts.height the service's current height
   * @param {import('../chain/networks').Network} opts.network
   * @param {object} opts.bitcore the host's bitcore-lib (its preconditions make the node's errors)
   * @param {object|null} opts.node
   * @param {object} [opts.limits] maxTxids, maxTransactionHistory, maxAddressesQuery, transactionConcurrency
   */
  constructor({ index, reads, detailedTx, height, network, bitcore, node, limits = {} }) {
    this.index = index;
    this.reads = reads || new PairedReads(index.store, null);
    this.detailedTx = detailedTx;
    this.height = height;
    this.network = network;
    this.$ = bitcore.util.preconditions;
    this.node = node;
    this.limits = { ...DEFAULTS };
    for (const k of Object.keys(DEFAULTS)) if (limits[k]) this.limits[k] = limits[k];
    this.sets = new AddressSets(network, node);
    /** @type {Map<string, string[]>} address set and tip → the set's confirmed txids, oldest first */
    this.txidsCache = new Map();
  }

  /**
   * Forgets what a new block changes. As bitcore-node, the txids of an address set are kept
   * until then: insight pages through one wallet's history request by request. (Each is kept
   * under the tip it was read at, so an answer never mixes them with another tip's rows, even
   * before the tip watcher has seen the new block.)
   */
  resetCaches() {
    this.txidsCache.clear();
  }

  /**
   * The confirmed txids of the whole history at `tip`, oldest first, from the cache when it
   * has them.
   * @param {import('./addresses').Target[] & {key: string}} targets
   * @param {import('../stores/abstract').Tip|null} tip the tip the read began at (reads.consistent)
   */
  async _confirmedTxids(targets, tip) {
    const key = `${targets.key}${tip ? tip.hash : ''}`;
    const hit = this.txidsCache.get(key);
    if (hit) return hit;
    const txids = await this.index.txids(targets);
    if (this.txidsCache.size >= TXIDS_CACHE) this.txidsCache.delete(this.txidsCache.keys().next().value);
    this.txidsCache.set(key, txids);
    return txids;
  }

  _targets(arg) {
    return this.sets.parse(arg);
  }

  /**
   * The mempool to merge into an answer read at `tip` (inside reads.consistent): null when it
   * is not asked (`queryMempool` false) or the index holds no snapshot; an empty view when the
   * snapshot is not the tip's.
   * @param {boolean} queryMempool
   * @param {import('../stores/abstract').Tip|null} tip
   * @returns {Promise<import('../core/mempool').MempoolView|null>}
   */
  async _pool(queryMempool, tip) {
    return queryMempool ? merged(await this.reads.poolAt(tip)) : null;
  }

  /** @returns {Promise<{balance: number, received: number}>} */
  async getAddressBalance(addressArg) {
    return this.index.balance(this._targets(addressArg));
  }

  /** Newest first: the mempool's outputs, then confirmed ones it does not spend. */
  async getAddressUnspentOutputs(addressArg, options) {
    const targets = this._targets(addressArg);
    const queryMempool = queryMempoolOf(options);
    return this.reads.consistent(async (tip) => {
      const [view, confirmed] = await Promise.all([this._pool(queryMempool, tip), this.index.utxos(targets)]);
      return withMempoolUtxos(confirmed.reverse(), view, targets);
    });
  }

  /**
   * bitcore-node's `_getHeightRangeQuery`: both `start` and `end` >= 0, `end` <= `start`
   * (newest first), else a TypeError. The patched node applied a range only when both heights
   * were above 0: `end: 0` asks for the whole history, as it did.
   * @returns {{start: number, end: number}|null|false} null: no range; false: the whole history
   */
  _range(options) {
    if (!(options.start >= 0 && options.end >= 0)) return null;
    if (options.end > options.start) throw new TypeError('"end" is expected to be less than or equal to "start"');
    return options.end > 0 ? { start: Number(options.end), end: Number(options.start) } : false;
  }

  /** Newest first: mempool txids, then confirmed ones. */
  async getAddressTxids(addressArg, options) {
    return (await this._txids(addressArg, options)).txids;
  }

  /**
   * getAddressTxids, with the tip and mempool view they were read at (`at`: where the
   * transactions' details are read, the mempool's spenders included).
   */
  async _txids(addressArg, options) {
    return this.reads.consistent(this._txidsRead(addressArg, options));
  }

  /**
   * The read of _txids, for reads.consistent (the options are checked now).
   * @returns {(tip: import('../stores/abstract').Tip|null) => Promise<{txids: string[], at: {tip: object|null, view: object|null}}>}
   */
  _txidsRead(addressArg, options) {
    let queryMempool = queryMempoolOf(options);
    const mempoolOnly = Boolean(options && options.queryMempoolOnly);
    const range = this._range(options || {});
    if (range !== null) queryMempool = false;
    if (mempoolOnly) queryMempool = true;
    const targets = this._targets(addressArg);
    return async (tip) => {
      // the tip's mempool also says who spends the listed transactions' outputs, asked or not,
      // as the patched node's getrawtransaction always told
      const pool = await this.reads.poolAt(tip);
      const view = queryMempool ? merged(pool) : null;
      const unconfirmed = view ? mempoolTxids(view, targets) : [];
      const at = { tip, view: pool.view };
      if (mempoolOnly) return { txids: unconfirmed, at };
      const confirmed = range ? await this.index.txids(targets, range) : await this._confirmedTxids(targets, tip);
      return { txids: unconfirmed.concat([...confirmed].reverse()), at };
    };
  }

  /** `_paginateTxids`: from < to, as the host's preconditions check it. */
  _page(txids, fromArg, toArg) {
    const from = parseInt(fromArg, 10);
    const to = parseInt(toArg, 10);
    this.$.checkState(from < to, `"from" (${from}) is expected to be less than "to" (${to})`);
    return txids.slice(from, to);
  }

  /**
   * Transactions of the addresses, newest first, each with what it did to them.
   * @returns {Promise<{totalCount: number, items: object[]}>}
   */
  async getAddressHistory(addressArg, options) {
    const opts = objectOf(options);
    const list = addressList(addressArg);
    if (list.length > this.limits.maxAddressesQuery) {
      throw new TypeError(`Maximum number of addresses (${this.limits.maxAddressesQuery}) exceeded`);
    }
    if (!list.every((a) => typeof a === 'string' || addressString(a) !== null)) {
      throw new TypeError('Addresses are expected to be strings');
    }
    const from = parseInt(opts.from || 0, 10);
    const to = parseInt(opts.to || this.limits.maxTransactionHistory, 10);
    if (to - from > this.limits.maxTransactionHistory) {
      throw new Error(`"from" (${opts.from}) and "to" (${opts.to}) range should be less than or equal to ${this.limits.maxTransactionHistory}`);
    }
    const readTxids = this._txidsRead(list, opts);
    const wanted = this._targets(list).wanted;
    // the page's transactions are read at the tip their txids were listed at: an index that
    // moves meanwhile has the whole page read again
    const { totalCount, txs } = await this.reads.consistent(async (tip) => {
      const { txids, at } = await readTxids(tip);
      const page = this._page(txids, from, to);
      return { totalCount: txids.length, txs: await mapLimit(page, this.limits.transactionConcurrency, (txid) => this.detailedTx(txid, at)) };
    });
    const items = txs.map((tx) => ({ ...addressDetails(tx, wanted), confirmations: this._confirmations(tx), tx }));
    return { totalCount, items };
  }

  _confirmations(tx) {
    const height = this.height();
    this.$.checkState(height > 0, 'current height is unknown');
    return tx.height >= 0 ? Math.max(0, height - tx.height + 1) : 0;
  }

  /**
   * Balance, totals and txids (newest first, paged by from/to) of the addresses.
   * @returns {Promise<object>}
   */
  async getAddressSummary(addressArg, options) {
    const opts = objectOf(options);
    const targets = this._targets(addressArg);
    const queryMempool = queryMempoolOf(opts);
    const [confirmed, balance, view] = await this.reads.consistent((tip) => Promise.all([
      this._confirmedTxids(targets, tip), this.index.balance(targets), this._pool(queryMempool, tip),
    ]));
    const summary = {
      appearances: confirmed.length,
      totalReceived: balance.received,
      totalSpent: balance.received - balance.balance,
      balance: balance.balance,
    };
    const unconfirmed = view ? mempoolTxids(view, targets) : [];
    if (view) {
      summary.unconfirmedAppearances = unconfirmed.length;
      summary.unconfirmedBalance = mempoolBalance(view, targets);
    }
    if (opts.noTxList) return summary;
    const from = parseInt(opts.from || 0, 10);
    const to = parseInt(opts.to || this.limits.maxTxids, 10);
    if (to - from > this.limits.maxTxids) {
      throw new Error(`"from" (${from}) and "to" (${to}) range should be less than or equal to ${this.limits.maxTxids}`);
    }
    summary.txids = this._page(unconfirmed.concat([...confirmed].reverse()), from, to);
    return summary;
  }
}

/**
 * The mempool an answer merges: none when the index holds no snapshot, else the tip's view,
 * empty when the snapshot is not the tip's.
 * @param {{snapshot: boolean, view: import('../core/mempool').MempoolView|null}} pool
 */
function merged(pool) {
  if (!pool.snapshot) return null;
  return pool.view || EMPTY_VIEW;
}

/** `options.queryMempool`, true unless false (bitcore-node reads it off true/false too). */
function queryMempoolOf(options) {
  return !(options && typeof options === 'object' && options.queryMempool !== undefined) || Boolean(options.queryMempool);
}

function objectOf(options) {
  return options && typeof options === 'object' ? options : {};
}

/**
 * bitcore-node's `_getAddressDetailsForTransaction`: which inputs and outputs of a detailed
 * transaction belong to the asked addresses, and the net satoshis it moved for them.
 * @param {object} tx a detailed transaction
 * @param {Set<string>} wanted
 */
function addressDetails(tx, wanted) {
  const addresses = {};
  let satoshis = 0;
  const at = (address) => addresses[address] || (addresses[address] = { inputIndexes: [], outputIndexes: [] });
  tx.inputs.forEach((input, i) => {
    if (!input.address || !wanted.has(input.address)) return;
    at(input.address).inputIndexes.push(i);
    satoshis -= input.satoshis;
  });
  tx.outputs.forEach((output, i) => {
    if (!output.address || !wanted.has(output.address)) return;
    at(output.address).outputIndexes.push(i);
    satoshis += output.satoshis;
  });
  return { addresses, satoshis };
}

/** async.mapLimit: results in input order, at most `limit` running. */
async function mapLimit(items, limit, fn) {
  const out = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

module.exports = { AddressApi, DEFAULTS };
