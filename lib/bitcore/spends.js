'use strict';

const { toDisplayHex } = require('../chain/hash');

/**
 * Who spent a transaction's outputs, as Core's spent index answered (`spentTxId`,
 * `spentIndex`, `spentHeight`): from the index's spender rows, one read per transaction.
 * An output a BIP30 coinbase overwrote was spent by no input: the spent index had no entry
 * for it, and neither is one made up here.
 * @param {import('../stores/abstract').AbstractStore} store
 * @param {import('../chain/tx').Tx} tx a confirmed transaction of the index
 * @returns {Promise<Array<{txid: string, index: number, height: number}|null>>} one per
 *   output, null when unspent (or unspendable: OP_RETURN)
 */
async function spendsOf(store, tx) {
  const spends = new Array(tx.outputs.length).fill(null);
  for (const s of (await store.getSpenders(tx.txid)) || []) {
    if (s.vin !== null && s.vout < spends.length) spends[s.vout] = { txid: toDisplayHex(s.txid), index: s.vin, height: s.height };
  }
  return spends;
}

module.exports = { spendsOf };
