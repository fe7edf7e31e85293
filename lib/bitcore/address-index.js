'use strict';

const { toDisplayHex } = require('../chain/hash');

/** Entries asked of the store per call when a whole list is wanted. */
const PAGE = 10000;

/**
 * The patched bitcoind's confirmed address RPCs (`getaddressbalance`, `getaddressutxos`,
 * `getaddresstxids`), answered from the index, in that node's orders:
 *
 *  - txids of one address in chain order (its index is keyed by height, then position in
 *    the block); of several, sorted by height and then by txid as a hex string (it merged them
 *    in a std::set of (height, txid) pairs). A transaction appears once.
 *  - unspent outputs sorted by height (ties: chain order, then output index; the node's sort
 *    was not stable).
 *
 * bitcore-node reverses both lists (newest first). A list of several pages belongs to one tip
 * only when it is read inside PairedReads#consistent, as AddressApi reads every answer.
 */
class AddressIndex {
  /** @param {import('../stores/abstract').AbstractStore} store */
  constructor(store) {
    this.store = store;
  }

  /**
   * `getaddressbalance`: received counts every output paying the addresses (change too).
   * @param {import('./addresses').Target[]} targets
   * @returns {Promise<{balance: number, received: number}>}
   */
  async balance(targets) {
    const summaries = await this.store.getSummaries(targets.map((t) => t.scripthash));
    let balance = 0;
    let received = 0;
    for (const s of summaries) {
      if (!s) continue;
      balance += s.balance;
      received += s.received;
    }
    return { balance, received };
  }

  /**
   * `getaddressutxos`, oldest first.
   * @param {import('./addresses').Target[]} targets
   * @returns {Promise<Array<{address: string, txid: string, outputIndex: number, script: string, satoshis: number, height: number}>>}
   */
  async utxos(targets) {
    const all = [];
    for (const t of targets) {
      let cursor;
      do {
        const page = await this.store.getUtxos(t.scripthash, { limit: PAGE, cursor });
        for (const u of page.utxos) all.push({ t, u });
        cursor = page.next;
      } while (cursor);
    }
    if (targets.length > 1) all.sort((a, b) => a.u.height - b.u.height || a.u.txNum - b.u.txNum || a.u.vout - b.u.vout);
    return all.map(({ t, u }) => ({
      address: t.address, txid: toDisplayHex(u.txid), outputIndex: u.vout, script: t.script, satoshis: u.value, height: u.height,
    }));
  }

  /**
   * `getaddresstxids`, oldest first, optionally within heights [start, end].
   * @param {import('./addresses').Target[]} targets
   * @param {{start: number, end: number}|null} [range]
   * @returns {Promise<string[]>} display hex
   */
  async txids(targets, range = null) {
    if (targets.length === 0) return [];
    const opts = { limit: PAGE, order: 'asc' };
    if (range) {
      opts.fromHeight = range.start;
      opts.toHeight = range.end;
    }
    const entries = [];
    let cursor;
    do {
      const page = targets.length === 1
        ? await this.store.getHistory(targets[0].scripthash, { ...opts, cursor })
        : await this.store.getHistories(targets.map((t) => t.scripthash), { ...opts, cursor });
      for (const e of page.entries) entries.push(e);
      cursor = page.next;
    } while (cursor);
    const txids = entries.map((e) => ({ height: e.height, txid: toDisplayHex(e.txid) }));
    if (targets.length > 1) txids.sort((a, b) => a.height - b.height || (a.txid < b.txid ? -1 : a.txid > b.txid ? 1 : 0));
    return txids.map((e) => e.txid);
  }
}

module.exports = { AddressIndex };
