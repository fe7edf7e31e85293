'use strict';

const { toDisplayHex } = require('../chain/hash');

/**
 * Who spent a transaction's outputs, as the patched node's spent index answered (`spentTxId`,
 * `spentIndex`, `spentHeight`): from the index's spender rows, one read per transaction, and
 * for an output no block has spent, the mempool transaction spending it, at height -1 as that
 * node's mempool spent index gave it. An output a BIP30 coinbase overwrote was spent by no
 * input: the spent index had no entry for it, and neither is one made up here.
 */

/**
 * @typedef {{txid: string, index: number, height: number}} Spend
 */

/**
 * @param {import('../stores/abstract').AbstractStore} store
 * @param {import('../chain/tx').Tx} tx a confirmed transaction of the index
 * @param {import('../core/mempool').MempoolView|null} [view] the mempool of the tip read
 * @returns {Promise<Array<Spend|null>>} one per output, null when unspent (or unspendable: OP_RETURN)
 */
async function spendsOf(store, tx, view = null) {
  const spends = new Array(tx.outputs.length).fill(null);
  const settled = new Set();
  for (const s of (await store.getSpenders(tx.txid)) || []) {
    if (s.vout >= spends.length) continue;
    settled.add(s.vout);
    if (s.vin !== null) spends[s.vout] = { txid: toDisplayHex(s.txid), index: s.vin, height: s.height };
  }
  if (view) for (let vout = 0; vout < spends.length; vout++) if (!settled.has(vout)) spends[vout] = mempoolSpend(view, tx.txid, vout);
  return spends;
}

/**
 * Who in the mempool spends a transaction's outputs (for a mempool transaction: no block has).
 * @param {import('../core/mempool').MempoolView} view
 * @param {import('../chain/tx').Tx} tx
 * @returns {Array<Spend|null>}
 */
function unconfirmedSpends(view, tx) {
  return tx.outputs.map((_, vout) => mempoolSpend(view, tx.txid, vout));
}

function mempoolSpend(view, txid, vout) {
  const s = view.spender(txid, vout);
  return s ? { txid: toDisplayHex(s.tx.txid), index: s.vin, height: -1 } : null;
}

module.exports = { spendsOf, unconfirmedSpends };
