'use strict';

const { toDisplayHex, fromDisplayHex } = require('../chain/hash');
const { unconfirmedBalance, unspentConfirmed, unspentUnconfirmed } = require('../core/mempool-merge');

/**
 * The unconfirmed part of the service's address answers, as bitcore-node 3 merged the patched
 * node's `getaddressmempool` deltas into its confirmed answers, read from the index's mempool
 * snapshot (lib/core/mempool.js's MempoolView: every reader's meaning of it). Pure.
 *
 * The patched node gave the deltas of the asked addresses sorted by the time each
 * transaction entered its mempool; bitcore-node kept each txid once and reversed the list.
 * So: newest first, by first-seen time (MempoolView#newer; within one second, which the node
 * left unordered, children before parents). Its unconfirmed balance was the sum of the deltas:
 * what the transactions pay the addresses less what they spend of them.
 */

/**
 * The unconfirmed transactions touching the addresses, each once, newest first.
 * @param {import('../core/mempool').MempoolView} view
 * @param {import('./addresses').Target[]} targets
 * @returns {string[]} display hex
 */
function mempoolTxids(view, targets) {
  return view.newestOf(targets.map((t) => t.scripthash)).map((tx) => toDisplayHex(tx.txid));
}

/**
 * The net unconfirmed change of the addresses' balance, satoshis.
 * @param {import('../core/mempool').MempoolView} view
 * @param {import('./addresses').Target[]} targets
 * @returns {number}
 */
function mempoolBalance(view, targets) {
  let satoshis = 0;
  for (const t of targets) satoshis += unconfirmedBalance(view, t.scripthash);
  return satoshis;
}

/**
 * Unspent outputs with the mempool applied (bitcore-node's `updateWithMempool`): the outputs
 * mempool transactions pay the addresses and no other spends, newest first (within one
 * transaction, the higher index first, as the node's delta order reversed), each with the
 * time it arrived instead of a height; then the confirmed ones but those a mempool
 * transaction spends.
 * @param {Array<{address: string, txid: string, outputIndex: number, script: string, satoshis: number, height: number}>} confirmed newest first
 * @param {import('../core/mempool').MempoolView|null} view
 * @param {import('./addresses').Target[]} targets
 * @returns {object[]}
 */
function withMempoolUtxos(confirmed, view, targets) {
  if (!view || view.txs.length === 0) return confirmed;
  const created = [];
  for (const t of targets) {
    for (const u of unspentUnconfirmed(view, t.scripthash)) created.push({ t, u });
  }
  created.sort((a, b) => view.newer(a.u.tx, b.u.tx) || b.u.vout - a.u.vout);
  const out = created.map(({ t, u }) => ({
    address: t.address, txid: toDisplayHex(u.tx.txid), outputIndex: u.vout, script: t.script, satoshis: u.value, timestamp: u.tx.time,
  }));
  for (const c of unspentConfirmed(view, confirmed, (u) => ({ txid: fromDisplayHex(u.txid), vout: u.outputIndex }))) out.push(c);
  return out;
}

module.exports = { mempoolTxids, mempoolBalance, withMempoolUtxos };
