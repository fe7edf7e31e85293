'use strict';

const bitcore = require('bitcore-lib');
const { outputScripthash, addressScripthash } = require('../../../test/helpers/reference');

/**
 * The soak's truth: what each watched address holds at the tip of any block the soak has
 * seen, stale branches included, computed from the raw blocks with bitcore-lib (never with
 * addrindex's parser or stores), so an answer naming a tip can be checked against that tip.
 *
 * Each block's effect on the watched addresses is computed once, when it is added (its
 * parent must have been added before); the summary at a tip is its parent's plus its own,
 * kept per block. Outputs are resolved through every transaction ever seen: a txid fixes its
 * outputs, whichever branch holds it. The rules are the index's (README "What is indexed"):
 * the genesis block is filed nowhere, OP_RETURN is not indexed, and — the address view — a
 * P2PK output counts toward its key's P2PKH address.
 */
class ChainTruth {
  /**
   * @param {string} genesisHash display hex
   * @param {string[]} addresses the addresses whose summaries are kept
   */
  constructor(genesisHash, addresses) {
    /** sha256 of the script, internal hex → address */
    this.watched = new Map(addresses.map((a) => [addressScripthash(a).toString('hex'), a]));
    /** txid:vout → {sh, value} of every output seen */
    this.outputs = new Map();
    /** display hash → {prev, height, time, summaries: Map<address, Summary>} */
    this.blocks = new Map([[genesisHash, { prev: null, height: 0, time: 0, summaries: new Map() }]]);
    /** address → (balance → when a block first gave it that balance) */
    this.balances = new Map(addresses.map((a) => [a, new Map([[0, 0]])]));
  }

  /** @param {string} hash */
  has(hash) {
    return this.blocks.has(hash);
  }

  /**
   * Adds a block whose parent is known (a block already added is ignored).
   * @param {Buffer} raw
   * @param {number} [seenAt] when the soak first saw it (ms), for "did this balance exist by then"
   * @returns {string} its hash
   */
  add(raw, seenAt = Date.now()) {
    const block = bitcore.Block.fromBuffer(raw);
    const hash = block.hash;
    if (this.blocks.has(hash)) return hash;
    const prev = Buffer.from(block.header.prevHash).reverse().toString('hex');
    const parent = this.blocks.get(prev);
    if (!parent) throw new Error(`block ${hash}: its parent ${prev} was never added`);
    const height = parent.height + 1;
    const summaries = new Map(parent.summaries);
    for (const tx of block.transactions) this._applyTx(tx, height, summaries);
    this.blocks.set(hash, { prev, height, time: seenAt, summaries });
    for (const [address, s] of summaries) {
      const seen = this.balances.get(address);
      if (!seen.has(s.balance)) seen.set(s.balance, seenAt);
    }
    return hash;
  }

  _applyTx(tx, height, summaries) {
    const touched = new Map();
    const touch = (address) => {
      let t = touched.get(address);
      if (!t) touched.set(address, t = { received: 0, sent: 0, funded: 0, spent: 0 });
      return t;
    };
    if (!tx.isCoinbase()) {
      for (const input of tx.inputs) {
        const prev = this.outputs.get(`${input.prevTxId.toString('hex')}:${input.outputIndex}`);
        if (!prev) throw new Error(`tx ${tx.hash} spends an output the soak never saw`);
        const address = this.watched.get(prev.sh);
        if (address) {
          const t = touch(address);
          t.sent += prev.value;
          t.spent++;
        }
      }
    }
    tx.outputs.forEach((out, vout) => {
      const sh = outputScripthash(out.script, 'address');
      if (sh === null) return;
      this.outputs.set(`${tx.hash}:${vout}`, { sh, value: out.satoshis });
      const address = this.watched.get(sh);
      if (address) {
        const t = touch(address);
        t.received += out.satoshis;
        t.funded++;
      }
    });
    for (const [address, t] of touched) {
      const s = summaries.get(address) || EMPTY;
      summaries.set(address, {
        balance: s.balance + t.received - t.sent,
        received: s.received + t.received,
        sent: s.sent + t.sent,
        txCount: s.txCount + 1,
        fundedCount: s.fundedCount + t.funded,
        spentCount: s.spentCount + t.spent,
        utxoCount: s.utxoCount + t.funded - t.spent,
        firstHeight: s.firstHeight === null ? height : s.firstHeight,
        lastHeight: height,
      });
    }
  }

  /**
   * An address's confirmed summary at the tip `hash`, or null for a block never seen.
   * @param {string} hash
   * @param {string} address
   */
  summaryAt(hash, address) {
    const b = this.blocks.get(hash);
    if (!b) return null;
    return b.summaries.get(address) || EMPTY;
  }

  /** @param {string} hash @returns {number|null} */
  heightOf(hash) {
    const b = this.blocks.get(hash);
    return b ? b.height : null;
  }

  /**
   * Whether `address` had a confirmed balance of `balance` at the tip of some block seen by
   * `by` (ms): the check for answers that name no tip (Electrum's get_balance).
   * @param {string} address
   * @param {number} balance
   * @param {number} by
   */
  balanceExisted(address, balance, by) {
    const since = this.balances.get(address).get(balance);
    return since !== undefined && since <= by;
  }
}

const EMPTY = Object.freeze({
  balance: 0, received: 0, sent: 0, txCount: 0, fundedCount: 0, spentCount: 0, utxoCount: 0, firstHeight: null, lastHeight: null,
});

/** The summary fields a native answer must match. */
const FIELDS = Object.keys(EMPTY);

module.exports = { ChainTruth, FIELDS, EMPTY };
