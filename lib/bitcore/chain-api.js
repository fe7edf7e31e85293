'use strict';

const { UsageError } = require('../errors');
const { ChainReader } = require('./chain');
const { spendsOf, unconfirmedSpends } = require('./spends');
const { PairedReads } = require('./paired');
const { BlockTimes } = require('./timestamps');
const { detailedTx } = require('./detailed-tx');
const { strippedTx, strippedBlock } = require('./stripped');
const { RPC, rpcError } = require('./rpc-error');

/**
 * bitcore-node 3's block and transaction methods (getBlock, getRawBlock, getBlockHeader,
 * getBlockOverview, getBlockHashesByTimestamp, getRawTransaction, getTransaction,
 * getDetailedTransaction, getSpentInfo) over the index, in that service's result shapes.
 * Promise-based; the service adapts callbacks.
 *
 * Blocks and transactions are handed out in their non-witness serialization, as bitcore-lib
 * objects of the host's own copy (stripped.js says why). Their bytes come from the index
 * (`sync --txstore`) or the blocks dir it was synced from (blocks.js); an index with neither
 * fails these methods with an error saying so (no code: insight-api answers 503).
 *
 * Transactions include the mempool's, as the patched node's `getrawtransaction` did (its
 * mempool first): from the index's snapshot of the tip read (paired.js), at height -1 with
 * no block, and their spenders and those of confirmed outputs a mempool transaction spends at
 * height -1, as that node's spent index gave them.
 */
class ChainApi {
  /**
   * @param {object} opts
   * @param {import('../stores/abstract').AbstractStore} opts.store
   * @param {import('./blocks').IndexBlocks} opts.blocks
   * @param {import('../chain/networks').Network} opts.network
   * @param {object} opts.bitcore the host's bitcore-lib
   * @param {object|null} opts.node
   * @param {PairedReads} [opts.reads] reads at one tip with its mempool (default: confirmed only)
   * @param {number} [opts.detailedCacheSize=10000] detailed transactions kept until the tip or the mempool moves
   */
  constructor({ store, blocks, network, bitcore, node, reads, detailedCacheSize = 10000 }) {
    this.store = store;
    this.reads = reads || new PairedReads(store, null);
    this.blocks = blocks;
    this.network = network;
    this.bitcore = bitcore;
    this.node = node;
    this.chain = new ChainReader({ store, blocks, node });
    this.times = new BlockTimes(store);
    this.detailedCacheSize = detailedCacheSize;
    /** @type {Map<string, Promise<object>>} txid, tip and mempool seq → detailed transaction (spends change with both) */
    this.detailed = new Map();
  }

  /** Forgets what a new block or a new mempool snapshot can change: who spent what. */
  resetCaches() {
    this.detailed.clear();
  }

  _reader() {
    if (!this.blocks.readable) {
      throw new UsageError('ERR_NO_BLOCKS', 'blocks and transactions are read from the index (sync --txstore) or from the blocks dir '
        + `it was synced from, and this index has neither (${this.blocks.where.why}): set servicesConfig.bitcoind.blocksDir`);
    }
    return this.chain;
  }

  async _tipHeight() {
    const tip = await this.store.getTip();
    return tip ? tip.height : -1;
  }

  /** @returns {Promise<Buffer>} */
  async getRawBlock(blockArg) {
    const { raw, block } = await this._reader().block(blockArg);
    return strippedBlock(raw, block);
  }

  /** @returns {Promise<object>} a bitcore-lib Block of the host's copy */
  async getBlock(blockArg) {
    return this.bitcore.Block.fromBuffer(await this.getRawBlock(blockArg));
  }

  async getBlockHeader(blockArg) {
    const chain = this._reader();
    const b = await chain.block(blockArg);
    return chain.header(b, await this._tipHeight());
  }

  /** The header plus the block's txids. */
  async getBlockOverview(blockArg) {
    const chain = this._reader();
    const b = await chain.block(blockArg);
    const header = await chain.header(b, await this._tipHeight());
    return { ...header, txids: b.block.txs.map((t) => t.hash) };
  }

  /**
   * `getblockhashes high low {logicalTimes}` (timestamps.js).
   * @returns {Promise<Array<string|{blockhash: string, logicalts: number}>>}
   */
  async getBlockHashesByTimestamp(high, low, options) {
    if (!Number.isSafeInteger(high) || !Number.isSafeInteger(low)) {
      throw rpcError(this.node, RPC.MISC_ERROR, 'JSON value is not an integer as expected');
    }
    const blocks = await this.times.between(high, low);
    if (options && options.logicalTimes) return blocks.map((b) => ({ blockhash: b.hash, logicalts: b.logicalts }));
    return blocks.map((b) => b.hash);
  }

  /**
   * A transaction by txid: the mempool's first (the patched node's order), then the index's.
   * @param {string} txid display hex
   * @param {import('../core/mempool').MempoolView|null} view the mempool of the tip read
   * @returns {Promise<{tx: import('../chain/tx').Tx, height: number, blockHash?: string, time?: number, unconfirmed?: boolean}>}
   *   rejects with -8 for a txid that is not hex, -5 for one neither holds
   */
  async _tx(txid, view) {
    const id = this.chain.parseTxid(txid);
    const m = id && view ? view.get(id) : null;
    if (m) return { tx: await view.parsed(m), height: -1, unconfirmed: true };
    return this._reader().tx(txid);
  }

  /** @returns {Promise<Buffer>} */
  async getRawTransaction(txid) {
    const { tx } = await this.reads.withMempool(({ view }) => this._tx(txid, view));
    return Buffer.from(strippedTx(tx));
  }

  /** @returns {Promise<object>} a bitcore-lib Transaction of the host's copy */
  async getTransaction(txid) {
    return new this.bitcore.Transaction().fromBuffer(await this.getRawTransaction(txid));
  }

  /**
   * bitcore-node's detailed transaction (detailed-tx.js), kept while the tip and the mempool
   * snapshot it was read with are the index's.
   * @param {string} txid
   * @param {{tip: import('../stores/abstract').Tip|null, view: import('../core/mempool').MempoolView|null}} [at]
   *   the tip and mempool the caller read the txid from (getAddressHistory); without them, the
   *   index's now
   */
  getDetailedTransaction(txid, at) {
    if (at === undefined) return this.reads.withMempool((pool, tip) => this.getDetailedTransaction(txid, { tip, view: pool.view }));
    const { tip, view } = at;
    const key = `${String(txid).toLowerCase()}:${tip ? tip.hash : ''}:${view ? view.seq : ''}`;
    let p = this.detailed.get(key);
    if (!p) {
      p = this._detailed(txid, view);
      p.catch(() => this.detailed.delete(key));
      if (this.detailed.size >= this.detailedCacheSize) this.detailed.delete(this.detailed.keys().next().value);
      this.detailed.set(key, p);
    }
    return p;
  }

  async _detailed(txid, view) {
    const found = await this._tx(txid, view);
    const { tx } = found;
    const [prevouts, spends] = await Promise.all([
      tx.coinbase ? [] : this._reader().outputs(tx.inputs, view),
      found.unconfirmed ? unconfirmedSpends(view, tx) : spendsOf(this.store, tx, view),
    ]);
    return detailedTx(tx, {
      prevouts, spends, height: found.height, blockHash: found.blockHash, time: found.time, network: this.network,
    });
  }

  /**
   * `getspentinfo {txid, index}`: who spent an output (a block's transaction, or the mempool's
   * at height -1), or {} when nobody did (or there is no such output), as bitcore-node turns
   * the node's -5 into {}.
   * @returns {Promise<{txid: string, index: number, height: number}|{}>}
   */
  async getSpentInfo(options) {
    const { txid, index } = options || {};
    return this.reads.withMempool(async ({ view }) => {
      let found;
      try {
        found = await this._tx(txid, view);
      } catch (err) {
        if (err.code === RPC.INVALID_ADDRESS_OR_KEY) return {};
        throw err;
      }
      if (!Number.isInteger(index) || index < 0 || index >= found.tx.outputs.length) return {};
      const spends = found.unconfirmed ? unconfirmedSpends(view, found.tx) : await spendsOf(this.store, found.tx, view);
      return spends[index] || {};
    });
  }
}

module.exports = { ChainApi };
