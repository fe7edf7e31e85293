'use strict';

/**
 * The one rule by which every reader (REST's three APIs, Electrum, the bitcore service) merges
 * a mempool view into confirmed unspent outputs and balances, as electrs and Esplora do and
 * bitcore-node's updateWithMempool did: a confirmed output a mempool transaction spends is
 * no longer unspent; an output a mempool transaction pays the script hash is unspent (height
 * none) unless another mempool transaction spends it; the unconfirmed balance is what the
 * mempool pays the script hash less what it spends of it.
 */

/**
 * @template T
 * @param {import('./mempool').MempoolView|null} view paired with the confirmed read's tip (null: none)
 * @param {Buffer} scripthash
 * @param {T[]} confirmed the confirmed unspent outputs read
 * @param {object} [opts]
 * @param {'address'|'script'} [opts.view='address'] the view the confirmed read was of
 * @param {(u: T) => {txid: Buffer, vout: number}} [opts.outpoint] where a confirmed output is
 *   (default: its own txid and vout)
 * @returns {{confirmed: T[], unconfirmed: Array<{tx: import('../codec/mempool').MempoolTx, vout: number, value: number}>}}
 *   confirmed: in their order, those no mempool transaction spends; unconfirmed: in snapshot
 *   order (parents first)
 */
function mergeUtxos(view, scripthash, confirmed, { view: which = 'address', outpoint } = {}) {
  return { confirmed: unspentConfirmed(view, confirmed, outpoint), unconfirmed: unspentUnconfirmed(view, scripthash, which) };
}

/**
 * mergeUtxos' confirmed half, for outputs of any script hashes.
 * @template T
 * @param {import('./mempool').MempoolView|null} view
 * @param {T[]} confirmed
 * @param {(u: T) => {txid: Buffer, vout: number}} [outpoint]
 * @returns {T[]}
 */
function unspentConfirmed(view, confirmed, outpoint = (u) => u) {
  if (!view) return confirmed;
  return confirmed.filter((u) => {
    const o = outpoint(u);
    return !view.spender(o.txid, o.vout);
  });
}

/**
 * mergeUtxos' unconfirmed half.
 * @param {import('./mempool').MempoolView|null} view
 * @param {Buffer} scripthash
 * @param {'address'|'script'} [which='address']
 */
function unspentUnconfirmed(view, scripthash, which = 'address') {
  return view ? view.utxos(scripthash, which) : [];
}

/**
 * What the mempool adds to a confirmed balance (negative when it spends more than it pays).
 * @param {import('./mempool').MempoolView|null} view
 * @param {Buffer} scripthash
 * @param {'address'|'script'} [which='address']
 * @returns {number} satoshis
 */
function unconfirmedBalance(view, scripthash, which = 'address') {
  return view ? view.summary(scripthash, which).balance : 0;
}

module.exports = { mergeUtxos, unspentConfirmed, unspentUnconfirmed, unconfirmedBalance };
