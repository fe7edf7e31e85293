'use strict';

const { toDisplayHex } = require('../chain/hash');
const { strippedTx } = require('./stripped');

/** Transactions remembered as announced (bitcore-node's zmqKnownTransactions). */
const KNOWN_TXS = 5000;

/**
 * The service's transaction announcements, as bitcore-node relayed the node's ZMQ `rawtx`
 * messages: each transaction once (remembered among the last 5,000 announced, as bitcore-node
 * remembered them), as the `tx` event with its bytes, the bus's `bitcoind/rawtransaction`
 * (hex) and `bitcoind/addresstxid` for each subscribed address it names. The node published a
 * transaction when it entered its mempool and again in a block; here they come from the
 * index's mempool snapshots and blocks. Bytes are the non-witness serialization (stripped.js).
 */
class Announcer {
  /**
   * @param {object} opts
   * @param {import('node:events').EventEmitter} opts.emitter the service (its `tx` event)
   * @param {import('./subscriptions').Subscriptions} opts.subscriptions
   * @param {(raw: Buffer) => string[]} opts.addressesOf the addresses a transaction names
   * @param {number} [opts.since] seconds: a first snapshot (none seen before) announces only
   *   transactions its follower first saw at or after this, not the mempool the service found
   */
  constructor({ emitter, subscriptions, addressesOf, since = Math.floor(Date.now() / 1000) }) {
    this.emitter = emitter;
    this.subscriptions = subscriptions;
    this.addressesOf = addressesOf;
    this.since = since;
    /** @type {Set<string>} txids (display hex), oldest first */
    this.known = new Set();
  }

  /**
   * A transaction, unless announced lately.
   * @param {import('../chain/tx').Tx} tx
   */
  tx(tx) {
    if (this.known.has(tx.hash)) return;
    this.known.add(tx.hash);
    if (this.known.size > KNOWN_TXS) this.known.delete(this.known.values().next().value);
    const raw = Buffer.from(strippedTx(tx));
    this.emitter.emit('tx', raw);
    this.subscriptions.rawtransaction(raw.toString('hex'));
    if (this.subscriptions.wantsAddresses) this.subscriptions.addresstxid(tx.hash, this.addressesOf(raw));
  }

  /**
   * A block's transactions, in block order.
   * @param {import('../chain/block').Block} block
   */
  block(block) {
    for (const tx of block.txs) this.tx(tx);
  }

  /**
   * The transactions of a new snapshot that the last one did not hold, in snapshot order
   * (parents first): those that entered the node's mempool since, and those a reorg put back.
   * @param {import('../core/mempool').MempoolView} view
   * @param {import('../core/mempool').MempoolView|null} prev the last snapshot seen, null for none
   */
  async mempool(view, prev) {
    const fresh = newInView(view, prev, this.since).filter((m) => !this.known.has(toDisplayHex(m.txid)));
    // their bytes read from the store at once; one gone from it too (left longer ago than it
    // keeps the bytes) has nothing to relay
    const txs = await Promise.all(fresh.map((m) => view.parsed(m).catch((err) => {
      if (err.code === 'ERR_MEMPOOL_VIEW_GONE') return null;
      throw err;
    })));
    for (const tx of txs) if (tx) this.tx(tx);
  }
}

/**
 * The transactions of `view` that `prev` did not hold, in snapshot order: from the changes
 * between them when the view's line knows them (the work follows the change), else by looking
 * at every transaction of the view. With no `prev` (or one too old to ask), those first seen at
 * or after `since`.
 * @param {import('../core/mempool').MempoolView} view
 * @param {import('../core/mempool').MempoolView|null} prev
 * @param {number} since seconds
 * @returns {import('../codec/mempool').MempoolTx[]}
 */
function newInView(view, prev, since) {
  const changes = prev && prev.line === view.line ? view.changesSince(prev.seq) : null;
  if (changes) {
    // a transaction whose part changed leaves and enters again: not new to `prev`
    return changes.added.filter((m) => view.get(m.txid) === m && !prev.get(m.txid));
  }
  try {
    return view.txs.filter((m) => (prev ? !prev.get(m.txid) : m.time >= since));
  } catch (err) {
    // `prev` was replaced too long ago to answer: what arrived since it was seen
    if (err.code !== 'ERR_MEMPOOL_VIEW_GONE') throw err;
    return view.txs.filter((m) => m.time >= since);
  }
}

module.exports = { Announcer, newInView };
