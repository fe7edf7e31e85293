'use strict';

const { createHash } = require('node:crypto');
const { toDisplayHex } = require('../chain/hash');
const { statusText, statusTextOf } = require('./encode');

/**
 * The status of a script hash as the protocol defines it: sha256 of the concatenated
 * `tx_hash:height:` of its confirmed history in chain order, then of its mempool
 * transactions (height 0, or -1 with an unconfirmed input) ordered by (-height, tx_hash);
 * hex in natural byte order; null when there is no transaction at all.
 */

/**
 * @typedef {object} StatusEntry
 * @property {Buffer} txid  32 bytes, internal order
 * @property {number} height  block height; 0 or -1 for a mempool transaction
 */

/**
 * @param {StatusEntry[]} confirmed in chain order (height, then position in the block)
 * @param {StatusEntry[]} [mempool] in any order: sorted here
 * @returns {string|null}
 */
function statusHash(confirmed, mempool = []) {
  return statusOfText(statusPrefix(confirmed), mempool.length ? mempoolText(mempool) : null);
}

/**
 * Mempool entries in the protocol's order: height 0 before -1, then by txid as displayed.
 * @template {StatusEntry} T
 * @param {T[]} mempool
 * @returns {Array<T & {hash: string}>} each with its display hex as `hash`
 */
function orderMempool(mempool) {
  return inMempoolOrder(mempool).map((e) => ({ ...e, hash: toDisplayHex(e.txid) }));
}

/**
 * The mempool part of a status preimage ("txid:height:" of each entry in the protocol's order).
 * @param {StatusEntry[]} mempool
 * @returns {Buffer}
 */
function mempoolText(mempool) {
  return mempoolTextOf(mempool.map((e) => e.txid), mempool.map((e) => e.height));
}

/**
 * mempoolText() of transactions given apart. A busy script hash has thousands of unconfirmed
 * transactions and its status is computed again whenever one of them changes: ordered by
 * their bytes, without an object, a copy or a hex string of each.
 * @param {ArrayLike<Uint8Array>} txids each holds a txid's 32 bytes (internal order) at its start
 * @param {ArrayLike<number>} heights 0, or -1 (an unconfirmed input)
 * @returns {Buffer}
 */
function mempoolTextOf(txids, heights) {
  return statusTextOf(txids, heights, mempoolOrder(txids, heights));
}

/**
 * @template {StatusEntry} T
 * @param {T[]} mempool
 * @returns {T[]} a new array, in the protocol's order
 */
function inMempoolOrder(mempool) {
  return Array.from(mempoolOrder(mempool.map((e) => e.txid), mempool.map((e) => e.height)), (k) => mempool[k]);
}

/**
 * The protocol's order of mempool entries given apart: height 0 before -1 (any other height:
 * higher first), then by txid as displayed.
 * @param {ArrayLike<Uint8Array>} txids as mempoolTextOf takes them
 * @param {ArrayLike<number>} heights
 * @returns {Uint32Array} the entries' indexes in that order
 */
function mempoolOrder(txids, heights) {
  const n = txids.length;
  // one number per entry: height 0 before -1, then the displayed txid's first six bytes (its
  // last six); ties are rare
  const lead = new Float64Array(n);
  const order = new Uint32Array(n);
  let plain = true;
  for (let k = 0; k < n; k++) {
    const t = txids[k];
    const h = heights[k];
    if (h !== 0 && h !== -1) plain = false;
    lead[k] = (h === 0 ? 0 : 2 ** 48) + t[31] * 2 ** 40 + t[30] * 2 ** 32 + t[29] * 2 ** 24 + t[28] * 2 ** 16 + t[27] * 2 ** 8 + t[26];
    order[k] = k;
  }
  const byBytes = (a, b) => lead[a] - lead[b] || compareDisplayed(txids[a], txids[b]);
  return order.sort(plain ? byBytes : (a, b) => heights[b] - heights[a] || byBytes(a, b));
}

/** Two txids (internal order) compared as they are displayed (bytes reversed). */
function compareDisplayed(a, b) {
  for (let i = 31; i >= 0; i--) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

/**
 * The status hash's state after the confirmed history: a status of the same confirmed history
 * with another mempool part is statusOfText(prefix, text), without reading the history again.
 * @param {StatusEntry[]} confirmed in chain order
 * @returns {{hash: import('node:crypto').Hash, count: number}}
 */
function statusPrefix(confirmed) {
  // hashed at once: the shared scratch buffer holds the text only meanwhile
  return { hash: createHash('sha256').update(statusText(confirmed, true)), count: confirmed.length };
}

/**
 * statusHash(confirmed, mempool) from statusPrefix(confirmed) and mempoolText(mempool) (null:
 * no mempool transaction).
 * @param {{hash: import('node:crypto').Hash, count: number}} prefix
 * @param {Buffer|null} text
 * @returns {string|null}
 */
function statusOfText(prefix, text) {
  if (prefix.count === 0 && !text) return null;
  const h = prefix.hash.copy();
  if (text) h.update(text);
  return h.digest('hex');
}

module.exports = { statusHash, orderMempool, mempoolText, mempoolTextOf, statusPrefix, statusOfText };
