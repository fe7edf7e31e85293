'use strict';

const { StoreError } = require('../errors');
const { sha256d, fromDisplayHex } = require('../chain/hash');

/**
 * What the Electrum handlers read, and nothing else: a small interface that an index can
 * answer directly. StoreReader implements it over the store contract
 * (lib/stores/abstract.js) as it is today; README.md lists what each method needs from a
 * store and what the store does not keep yet.
 *
 * Heights are the best chain's. Hashes and txids are 32-byte Buffers in internal order.
 *
 * @typedef {object} ElectrumTip
 * @property {number} height
 * @property {string} hash    display hex
 * @property {Buffer} header  80 bytes
 *
 * @typedef {object} ElectrumHistoryEntry
 * @property {Buffer} txid
 * @property {number} height
 *
 * @typedef {object} ElectrumMempoolEntry
 * @property {Buffer} txid
 * @property {number} height  0, or -1 when one of its inputs is unconfirmed
 * @property {number} fee     satoshis
 *
 * @typedef {object} Bodies
 * @property {(from: number, count: number) => Promise<Buffer[]>} headers the 80-byte headers
 *   of the chain at from..from+count-1 (heights the index holds)
 * @property {(loc: {txid: Buffer, height: number, position: number}) => Promise<Buffer|null>} [rawTx]
 *   the serialized transaction at a place of the index's chain
 * @property {() => Promise<void>} [refresh] look again (a blocks dir that a sync extends or
 *   reorganizes): called once when a header disagrees with the index
 *
 * @typedef {object} ElectrumUtxo
 * @property {Buffer} txid
 * @property {number} vout
 * @property {number} value
 * @property {number} height  0 for a mempool output
 */

/** Reads repeated when a commit landed between their parts, before giving up. */
const READ_ATTEMPTS = 4;

/** Blocks whose txids are kept for merkle branches (wallets ask for several txs of a block). */
const TXID_CACHE_BLOCKS = 16;

class StoreReader {
  /**
   * @param {object} opts
   * @param {import('../stores/abstract').AbstractStore} opts.store open (read-only is enough)
   * @param {Bodies} opts.bodies where block headers (and raw transactions) come from: the
   *   store keeps neither yet. Every header is checked against the index's block hash before
   *   it is answered.
   */
  constructor({ store, bodies }) {
    this.store = store;
    this.bodies = bodies;
    /**
     * Whether a script hash means exactly sha256 of the output script. The store files P2PK
     * outputs under their key's P2PKH script hash (the REST API's address rule) and keeps no
     * second view yet, so over this reader a P2PK output is found under the P2PKH script
     * hash and not under its own.
     */
    this.exactScripthash = false;
    /** The store keeps no mempool: unconfirmed parts are empty. */
    this.hasMempool = false;
    this.hasRawTx = typeof bodies.rawTx === 'function';
    /** @type {Map<string, Buffer[]>} block hash → txids, least recently used first */
    this.txidCache = new Map();
  }

  /**
   * Runs `read` so that what it returns belongs to one committed tip (read before and after;
   * repeated when they differ), as the REST API does.
   * @template T
   * @param {(tip: import('../stores/abstract').Tip|null) => Promise<T>} read
   * @returns {Promise<{tip: import('../stores/abstract').Tip|null, value: T}>}
   */
  async consistent(read) {
    for (let attempt = 1; ; attempt++) {
      const before = await this.store.getTip();
      const value = await read(before);
      const after = await this.store.getTip();
      if (before === after || (before && after && before.hash === after.hash)) return { tip: before, value };
      if (attempt === READ_ATTEMPTS) {
        throw new StoreError('ERR_INDEX_MOVING',
          `the index committed new blocks during each of ${READ_ATTEMPTS} attempts to read a consistent answer`);
      }
    }
  }

  /**
   * The index's tip, without its header (what a poll for new blocks reads).
   * @returns {Promise<{height: number, hash: string}|null>}
   */
  async tip() {
    const t = await this.store.getTip();
    return t && { height: t.height, hash: t.hash };
  }

  /** @returns {Promise<ElectrumTip|null>} the tip with its header */
  async tipHeader() {
    const { tip, value } = await this.consistent(async (t) => (t ? this.checkedHeaders(t.height, 1) : null));
    return tip && { height: tip.height, hash: tip.hash, header: value[0] };
  }

  /**
   * @param {number} height
   * @returns {Promise<string|null>} the block hash (display hex) at a height of the index
   */
  async blockHash(height) {
    return this.store.getBlockHash(height);
  }

  /**
   * Up to `count` headers from `from`: fewer when the chain ends first, none above the tip.
   * @returns {Promise<Buffer[]>}
   */
  async headers(from, count) {
    const { value } = await this.consistent(async (t) => {
      const n = t ? Math.max(0, Math.min(count, t.height - from + 1)) : 0;
      return n ? this.checkedHeaders(from, n) : [];
    });
    return value;
  }

  async checkedHeaders(from, count) {
    const hashes = await this.blockHashes(from, count);
    for (let attempt = 1; ; attempt++) {
      const headers = await this.bodies.headers(from, count);
      const bad = hashes.findIndex((h, i) => !headers[i] || headers[i].length !== 80 || !sha256d(headers[i]).equals(h));
      if (bad === -1) return headers;
      if (attempt === 2 || !this.bodies.refresh) {
        throw new StoreError('ERR_HEADER_MISMATCH', `the header source's block at height ${from + bad} is not the index's`);
      }
      await this.bodies.refresh();
    }
  }

  /**
   * Block hashes of heights the index holds.
   * @returns {Promise<Buffer[]>}
   */
  async blockHashes(from, count) {
    const hashes = await Promise.all(Array.from({ length: count }, (_, i) => this.store.getBlockHash(from + i)));
    return hashes.map((h, i) => {
      if (!h) throw new StoreError('ERR_NO_BLOCK', `the index holds no block at height ${from + i}`);
      return fromDisplayHex(h);
    });
  }

  /**
   * The txids of the block at `height`, in block order (for merkle branches).
   * @returns {Promise<Buffer[]|null>} null above the tip
   */
  async blockTxids(height) {
    const { value } = await this.consistent(async () => {
      const block = await this.store.getBlock(height);
      if (!block) return null;
      let txids = this.txidCache.get(block.hash);
      if (!txids) {
        txids = await Promise.all(Array.from({ length: block.txCount }, (_, i) => this.store.getTxid(block.firstTxNum + i)));
        if (txids.some((t) => !t)) throw new StoreError('ERR_CORRUPT', `the index lacks a txid of block ${height}`);
      }
      return { hash: block.hash, txids };
    });
    if (!value) return null;
    // keyed by block hash: a reorg gives the height another key, never stale txids
    this.txidCache.delete(value.hash);
    this.txidCache.set(value.hash, value.txids);
    if (this.txidCache.size > TXID_CACHE_BLOCKS) this.txidCache.delete(this.txidCache.keys().next().value);
    return value.txids;
  }

  /**
   * Where a confirmed transaction is.
   * @returns {Promise<{height: number, position: number}|null>}
   */
  async txLocation(txid) {
    const loc = await this.store.getTx(txid);
    return loc && { height: loc.height, position: loc.position };
  }

  /**
   * Confirmed history in chain order, at most `limit` entries (one store call: one snapshot).
   * @param {Buffer} scripthash
   * @param {number} limit
   * @returns {Promise<{entries: ElectrumHistoryEntry[], more: boolean}>}
   *   more: the history holds more than `limit` entries (they are not returned)
   */
  async history(scripthash, limit) {
    const page = await this.store.getHistory(scripthash, { limit: limit + 1 });
    const more = page.entries.length > limit;
    return { entries: more ? [] : page.entries.map((e) => ({ txid: e.txid, height: e.height })), more };
  }

  /**
   * @param {Buffer} scripthash
   * @returns {Promise<{confirmed: number, unconfirmed: number}>}
   */
  async balance(scripthash) {
    const s = await this.store.getSummary(scripthash);
    return { confirmed: s ? s.balance : 0, unconfirmed: 0 };
  }

  /**
   * Unspent outputs in chain order, at most `limit`.
   * @returns {Promise<{utxos: ElectrumUtxo[], more: boolean}>}
   */
  async utxos(scripthash, limit) {
    const page = await this.store.getUtxos(scripthash, { limit: limit + 1 });
    const more = page.utxos.length > limit;
    return { utxos: more ? [] : page.utxos.map((u) => ({ txid: u.txid, vout: u.vout, value: u.value, height: u.height })), more };
  }

  /**
   * Unconfirmed transactions touching the script hash.
   * @returns {Promise<ElectrumMempoolEntry[]>}
   */
  async mempool() {
    return [];
  }

  /**
   * The height of the last confirmed transaction of each script hash (-1: none), the cheap
   * test of whether a subscribed status can have changed since a height.
   * @param {Buffer[]} scripthashes
   * @returns {Promise<number[]>}
   */
  async lastHeights(scripthashes) {
    const summaries = await this.store.getSummaries(scripthashes);
    return summaries.map((s) => (s && s.txCount > 0 ? s.lastHeight : -1));
  }

  /**
   * A confirmed transaction's bytes.
   * @returns {Promise<Buffer|null>} null when the index does not know the txid
   */
  async rawTx(txid) {
    if (!this.hasRawTx) return null;
    const loc = await this.store.getTx(txid);
    if (!loc) return null;
    return this.bodies.rawTx({ txid, height: loc.height, position: loc.position });
  }
}

module.exports = { StoreReader };
