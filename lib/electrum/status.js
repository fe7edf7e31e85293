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
 * A script hash's mempool part kept from one status to the next (one with thousands of
 * unconfirmed transactions, to which a poll adds a few): its transactions in the protocol's
 * order, where each one's text ends, and the text.
 * @typedef {object} MempoolPart
 * @property {Uint8Array[]} txids as mempoolTextOf takes them, in order
 * @property {Int8Array} heights
 * @property {Uint32Array} ends
 * @property {Buffer} text mempoolTextOf() of them
 */

/**
 * @param {ArrayLike<Uint8Array>} txids as mempoolTextOf takes them
 * @param {ArrayLike<number>} heights
 * @returns {MempoolPart}
 */
function mempoolPart(txids, heights) {
  const order = mempoolOrder(txids, heights);
  const ends = new Uint32Array(order.length);
  const text = statusTextOf(txids, heights, order, ends);
  return { txids: Array.from(order, (k) => txids[k]), heights: Int8Array.from(order, (k) => heights[k]), ends, text };
}

/**
 * The part with more transactions (none of them in it already): its text is the kept text
 * with theirs put in their places, without writing the others' again.
 * @param {MempoolPart} part
 * @param {ArrayLike<Uint8Array>} txids
 * @param {ArrayLike<number>} heights
 * @returns {MempoolPart}
 */
function extendMempoolPart(part, txids, heights) {
  const add = mempoolPart(txids, heights);
  const n = part.txids.length;
  const m = add.txids.length;
  const out = { txids: new Array(n + m), heights: new Int8Array(n + m), ends: new Uint32Array(n + m), text: Buffer.allocUnsafe(part.text.length + add.text.length) };
  let i = 0;
  let j = 0;
  let at = 0;
  // a run of kept entries (those before the next added one), then that added one
  const take = (from, k, to) => {
    const start = k === 0 ? 0 : from.ends[k - 1];
    const shift = at - start;
    from.text.copy(out.text, at, start, from.ends[to - 1]);
    for (let x = k; x < to; x++) {
      const o = i + j;
      out.txids[o] = from.txids[x];
      out.heights[o] = from.heights[x];
      out.ends[o] = from.ends[x] + shift;
      if (from === part) i++;
      else j++;
    }
    at = out.ends[i + j - 1];
  };
  while (i < n || j < m) {
    if (j < m) {
      let to = i;
      while (to < n && before(part, to, add, j)) to++;
      if (to > i) take(part, i, to);
      take(add, j, j + 1);
    } else {
      take(part, i, n);
    }
  }
  return out;
}

/** Whether entry a of part p comes before entry b of part q in the protocol's order. */
function before(p, a, q, b) {
  const ha = p.heights[a];
  const hb = q.heights[b];
  if (ha !== hb) return ha > hb;
  return compareDisplayed(p.txids[a], q.txids[b]) < 0;
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

module.exports = { statusHash, orderMempool, mempoolText, mempoolTextOf, mempoolPart, extendMempoolPart, statusPrefix, statusOfText };
