'use strict';

const { createHash } = require('node:crypto');
const { sha256, toDisplayHex } = require('../chain/hash');
const { statusText } = require('./encode');

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
  if (confirmed.length === 0 && mempool.length === 0) return null;
  const text = mempool.length ? Buffer.concat([statusText(confirmed), statusText(orderMempool(mempool))]) : statusText(confirmed, true);
  return sha256(text).toString('hex');
}

/**
 * Mempool entries in the protocol's order: height 0 before -1, then by txid as displayed.
 * @template {StatusEntry} T
 * @param {T[]} mempool
 * @returns {Array<T & {hash: string}>} each with its display hex as `hash`
 */
function orderMempool(mempool) {
  return mempool
    .map((e) => ({ ...e, hash: toDisplayHex(e.txid) }))
    .sort((a, b) => b.height - a.height || (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0));
}

/**
 * The status hash's state after the confirmed history: a status of the same confirmed history
 * with another mempool part is statusOf(prefix, mempool), without reading the history again.
 * @param {StatusEntry[]} confirmed in chain order
 * @returns {{hash: import('node:crypto').Hash, count: number}}
 */
function statusPrefix(confirmed) {
  return { hash: createHash('sha256').update(statusText(confirmed)), count: confirmed.length };
}

/**
 * statusHash(confirmed, mempool) from statusPrefix(confirmed).
 * @param {{hash: import('node:crypto').Hash, count: number}} prefix
 * @param {StatusEntry[]} mempool
 * @returns {string|null}
 */
function statusOf(prefix, mempool) {
  if (prefix.count === 0 && mempool.length === 0) return null;
  const h = prefix.hash.copy();
  if (mempool.length) h.update(statusText(orderMempool(mempool)));
  return h.digest('hex');
}

module.exports = { statusHash, orderMempool, statusPrefix, statusOf };
