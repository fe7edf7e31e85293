'use strict';

/**
 * The unconfirmed part of the service's address answers: how bitcore-node 3 merged the
 * patched node's `getaddressmempool` deltas into its confirmed answers. Pure; the service
 * calls these only when a mempool source is configured. Without one (until addrindex's
 * mempool lands) it answers as bitcore-node does with `queryMempool: false`: confirmed data
 * only, no `unconfirmed*` keys, never a made-up zero.
 *
 * A mempool source gives, for some addresses, the deltas `getaddressmempool` gave, oldest
 * first:
 *
 * @typedef {object} MempoolDelta
 * @property {string} address
 * @property {string} txid       display hex
 * @property {number} index      the input (satoshis < 0) or output (> 0) index
 * @property {number} satoshis   negative for a spend
 * @property {number} timestamp  when the transaction entered the mempool, seconds
 * @property {string} [prevtxid] for a spend: the output it spends
 * @property {number} [prevout]
 *
 * @typedef {object} MempoolSource
 * @property {(addresses: string[]) => Promise<MempoolDelta[]>} addressDeltas
 */

/**
 * Distinct txids of the deltas, newest first (bitcore-node's `_getTxidsFromMempool`, then
 * reversed as every caller reverses it).
 * @param {MempoolDelta[]} deltas
 * @returns {string[]}
 */
function mempoolTxids(deltas) {
  const seen = new Set();
  const txids = [];
  for (const d of deltas) {
    if (!seen.has(d.txid)) {
      seen.add(d.txid);
      txids.push(d.txid);
    }
  }
  return txids.reverse();
}

/**
 * The net unconfirmed change (`_getBalanceFromMempool`).
 * @param {MempoolDelta[]} deltas
 * @returns {number}
 */
function mempoolBalance(deltas) {
  let satoshis = 0;
  for (const d of deltas) satoshis += d.satoshis;
  return satoshis;
}

/**
 * Unspent outputs with the mempool applied (`updateWithMempool`): outputs the mempool
 * creates first, newest first, with the time they arrived instead of a height; then the
 * confirmed ones; outputs the mempool spends removed.
 * @param {Array<{address: string, txid: string, outputIndex: number, script: string, satoshis: number}>} confirmed newest first
 * @param {MempoolDelta[]} deltas
 * @param {(address: string) => string} scriptOf an address's output script, hex
 * @returns {object[]}
 */
function withMempoolUtxos(confirmed, deltas, scriptOf) {
  if (!deltas || deltas.length === 0) return confirmed;
  const created = [];
  const spent = new Map();
  for (const d of deltas) {
    if (d.prevtxid && d.satoshis <= 0) {
      if (!spent.has(d.prevtxid)) spent.set(d.prevtxid, new Set());
      spent.get(d.prevtxid).add(d.prevout);
    } else {
      created.push({ address: d.address, txid: d.txid, outputIndex: d.index, script: scriptOf(d.address), satoshis: d.satoshis, timestamp: d.timestamp });
    }
  }
  const all = created.reverse().concat(confirmed);
  if (spent.size === 0) return all;
  return all.filter((u) => !(spent.has(u.txid) && spent.get(u.txid).has(u.outputIndex)));
}

module.exports = { mempoolTxids, mempoolBalance, withMempoolUtxos };
