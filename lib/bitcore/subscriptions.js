'use strict';

/**
 * The bitcoind service's bus events, as bitcore-node 3 publishes them: `bitcoind/hashblock`
 * (a block hash, hex), `bitcoind/rawtransaction` (a transaction, hex) and
 * `bitcoind/addresstxid` ({address, txid} for each subscribed address a transaction names).
 * A bus (one per socket.io client) subscribes and unsubscribes; closing it unsubscribes all.
 */
class Subscriptions {
  /**
   * @param {object} opts
   * @param {(address: string) => boolean} opts.isAddress whether an address may be subscribed to
   * @param {{info: Function}|null} [opts.log] bitcore-node's logger
   */
  constructor({ isAddress, log = null }) {
    this.isAddress = isAddress;
    this.log = log;
    /** @type {{rawtransaction: object[], hashblock: object[]}} */
    this.topics = { rawtransaction: [], hashblock: [] };
    /** @type {Map<string, object[]>} address → emitters */
    this.addresses = new Map();
  }

  _note(emitter, what, total) {
    if (this.log) this.log.info(emitter.remoteAddress, what, 'total:', total);
  }

  /** The entries for the service's getPublishEvents(). */
  publishEvents(scope) {
    return [
      { name: 'bitcoind/rawtransaction', scope, subscribe: this.subscribe.bind(this, 'rawtransaction'), unsubscribe: this.unsubscribe.bind(this, 'rawtransaction') },
      { name: 'bitcoind/hashblock', scope, subscribe: this.subscribe.bind(this, 'hashblock'), unsubscribe: this.unsubscribe.bind(this, 'hashblock') },
      { name: 'bitcoind/addresstxid', scope, subscribe: this.subscribeAddress.bind(this), unsubscribe: this.unsubscribeAddress.bind(this) },
    ];
  }

  subscribe(topic, emitter) {
    const list = this.topics[topic];
    if (!list.includes(emitter)) list.push(emitter);
    this._note(emitter, `subscribe: bitcoind/${topic}`, list.length);
  }

  unsubscribe(topic, emitter) {
    const list = this.topics[topic];
    const i = list.indexOf(emitter);
    if (i >= 0) list.splice(i, 1);
    this._note(emitter, `unsubscribe: bitcoind/${topic}`, list.length);
  }

  /** Invalid addresses are skipped, as bitcore-node skips them. */
  subscribeAddress(emitter, addresses) {
    for (const a of Array.isArray(addresses) ? addresses : []) {
      if (typeof a !== 'string' || !this.isAddress(a)) continue;
      const list = this.addresses.get(a);
      if (!list) this.addresses.set(a, [emitter]);
      else if (!list.includes(emitter)) list.push(emitter);
    }
    this._note(emitter, 'subscribe: bitcoind/addresstxid', this.addresses.size);
  }

  /** Without addresses: every address of this emitter. */
  unsubscribeAddress(emitter, addresses) {
    const names = addresses ? (Array.isArray(addresses) ? addresses : []) : [...this.addresses.keys()];
    for (const a of names) {
      const list = this.addresses.get(a);
      if (!list) continue;
      const i = list.indexOf(emitter);
      if (i >= 0) list.splice(i, 1);
      if (list.length === 0) this.addresses.delete(a);
    }
    this._note(emitter, 'unsubscribe: bitcoind/addresstxid', this.addresses.size);
  }

  /** @param {string} hashHex */
  hashblock(hashHex) {
    for (const e of [...this.topics.hashblock]) e.emit('bitcoind/hashblock', hashHex);
  }

  /** @param {string} rawHex */
  rawtransaction(rawHex) {
    for (const e of [...this.topics.rawtransaction]) e.emit('bitcoind/rawtransaction', rawHex);
  }

  /** Whether anyone listens for addresses (so their extraction can be skipped). */
  get wantsAddresses() {
    return this.addresses.size > 0;
  }

  /**
   * @param {string} txid display hex
   * @param {string[]} addresses the distinct addresses the transaction names
   */
  addresstxid(txid, addresses) {
    for (const address of addresses) {
      const list = this.addresses.get(address);
      if (!list) continue;
      for (const e of [...list]) e.emit('bitcoind/addresstxid', { address, txid });
    }
  }
}

module.exports = { Subscriptions };
