'use strict';

const { StoreError } = require('../errors');
const { outputScripthash } = require('../chain/script');
const { toDisplayHex } = require('../chain/hash');

/** History entries read per step of a walk. */
const WALK_PAGE = 64;

/**
 * Who spent a transaction's outputs (Core's spent index: `spentTxId`, `spentIndex`,
 * `spentHeight`), found from what the index holds today.
 *
 * An output still in the index's UTXO set is unspent. For a spent one, the spending
 * transaction is in the history of the output's script hash, after the funding transaction
 * and flagged as spending from it: those entries are read in chain order and their inputs
 * checked until every spent output of the transaction is matched. That reads transactions
 * (from blocks kept in the reader's cache) in proportion to the script's later history; the
 * store's spender rows, when they land, answer each output with one read instead.
 */
class SpendFinder {
  /**
   * @param {object} opts
   * @param {import('../stores/abstract').AbstractStore} opts.store
   * @param {import('./chain').ChainReader} opts.chain
   */
  constructor({ store, chain }) {
    this.store = store;
    this.chain = chain;
  }

  /**
   * @param {import('../chain/tx').Tx} tx a confirmed transaction of the index
   * @param {number} txNum its TxNum
   * @param {number} height its height
   * @returns {Promise<Array<{txid: string, index: number, height: number}|null>>} one per
   *   output, null when unspent (or unspendable: OP_RETURN)
   */
  async spendsOf(tx, txNum, height) {
    const n = tx.outputs.length;
    const outpoints = Buffer.alloc(36 * n);
    for (let i = 0; i < n; i++) {
      tx.txid.copy(outpoints, 36 * i);
      outpoints.writeUInt32LE(i, 36 * i + 32);
    }
    const unspent = await this.store.getPrevouts(outpoints);
    const spends = new Array(n).fill(null);
    /** script hash hex → the output indexes spent from it */
    const wanted = new Map();
    tx.outputs.forEach((o, i) => {
      if (unspent[i]) return;
      const sh = outputScripthash(o.script);
      if (!sh) return; // OP_RETURN: never spendable
      const key = sh.toString('hex');
      if (!wanted.has(key)) wanted.set(key, new Set());
      wanted.get(key).add(i);
    });
    await Promise.all([...wanted].map(([sh, outs]) => this._walk(Buffer.from(sh, 'hex'), tx, txNum, height, outs, spends)));
    return spends;
  }

  async _walk(scripthash, tx, txNum, height, outs, spends) {
    let cursor;
    while (outs.size) {
      const page = await this.store.getHistory(scripthash, { fromHeight: height, limit: WALK_PAGE, cursor });
      const candidates = page.entries.filter((e) => e.spent && e.txNum > txNum);
      const read = await Promise.all(candidates.map((e) => this.chain.tx(toDisplayHex(e.txid))));
      for (const r of read) {
        r.tx.inputs.forEach((input, vin) => {
          if (outs.has(input.vout) && input.txid.equals(tx.txid)) {
            spends[input.vout] = { txid: r.tx.hash, index: vin, height: r.height };
            outs.delete(input.vout);
          }
        });
      }
      if (!page.next) break;
      cursor = page.next;
    }
    if (outs.size) {
      throw new StoreError('ERR_SPENDER_NOT_FOUND',
        `output ${tx.hash}:${[...outs][0]} is not unspent, yet no later transaction of its script's history spends it`);
    }
  }
}

module.exports = { SpendFinder };
