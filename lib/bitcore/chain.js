'use strict';

const { fromDisplayHex } = require('../chain/hash');
const { coreDifficulty, medianTimePast } = require('../chain/difficulty');
const { RPC, rpcError } = require('./rpc-error');

/**
 * The confirmed chain as the bitcoind service reads it: blocks by hash or height and
 * transactions by txid, from the index (where each block and transaction sits on the best
 * chain, and where its bytes are: blocks.js). It answers Bitcoin Core 0.12.1's RPC errors where
 * Core gave them: -5 for an unknown block or transaction, -8 for a height out of range.
 */
class ChainReader {
  /**
   * @param {object} opts
   * @param {import('../stores/abstract').AbstractStore} opts.store
   * @param {import('./blocks').IndexBlocks} opts.blocks
   * @param {object|null} opts.node the host Node (its RPCError)
   */
  constructor({ store, blocks, node }) {
    this.store = store;
    this.blocks = blocks;
    this.node = node;
  }

  _error(code, message) {
    return rpcError(this.node, code, message);
  }

  /**
   * A block of the index's best chain by hash, or by height as bitcore-node's
   * `_maybeGetBlockHash` tells them apart (a number, or a string of fewer than 40 digits).
   * @param {string|number} arg
   * @returns {Promise<{height: number, hash: string}>}
   */
  async locate(arg) {
    const byHeight = typeof arg === 'number' || (typeof arg === 'string' && arg.length < 40 && /^[0-9]+$/.test(arg));
    if (byHeight) {
      const height = Number(arg);
      // Core's getblockhash reads its argument with get_int: anything else fails with -1
      if (!Number.isSafeInteger(height)) throw this._error(RPC.MISC_ERROR, 'JSON value is not an integer as expected');
      const hash = height >= 0 ? await this.store.getBlockHash(height) : null;
      if (!hash) throw this._error(RPC.INVALID_PARAMETER, 'Block height out of range');
      return { height, hash };
    }
    const hash = typeof arg === 'string' ? arg.toLowerCase() : '';
    const height = /^[0-9a-f]{64}$/.test(hash) ? await this.blocks.heightOf(hash) : null;
    if (height === null || (await this.store.getBlockHash(height)) !== hash) {
      throw this._error(RPC.INVALID_ADDRESS_OR_KEY, 'Block not found');
    }
    return { height, hash };
  }

  /**
   * The block's bytes, parsed and checked.
   * @param {string|number} arg
   * @returns {Promise<{height: number, hash: string, raw: Buffer, block: import('../chain/block').Block}>}
   */
  async block(arg) {
    const { height, hash } = await this.locate(arg);
    const { raw, block } = await this.blocks.read(hash);
    return { height, hash, raw, block };
  }

  /**
   * Core's getblockheader as bitcore-node renames it (`chainWork`, `prevHash`, `nextHash`,
   * `medianTime`); prevHash is left out for genesis and nextHash at the tip, as Core leaves
   * them out.
   * @param {{height: number, hash: string, block: import('../chain/block').BlockHeader}} b
   * @param {number} tipHeight
   * @returns {Promise<object>}
   */
  async header({ height, hash, block }, tipHeight) {
    const [chainWork, nextHash, medianTime] = await Promise.all([
      this.blocks.chainWork(height), this.store.getBlockHash(height + 1), this.medianTime(height, block.time),
    ]);
    return {
      hash,
      version: block.version,
      confirmations: tipHeight - height + 1,
      height,
      chainWork: chainWork.toString(16).padStart(64, '0'),
      prevHash: height > 0 ? block.prev : undefined,
      nextHash: nextHash || undefined,
      merkleRoot: Buffer.from(block.merkleRoot).reverse().toString('hex'),
      time: block.time,
      medianTime,
      nonce: block.nonce,
      bits: block.bits.toString(16).padStart(8, '0'),
      difficulty: coreDifficulty(block.bits),
    };
  }

  /** BIP113's median time past of the block at `height` (its own time and up to 10 before). */
  async medianTime(height, time) {
    const heights = [];
    for (let h = Math.max(0, height - 10); h < height; h++) heights.push(h);
    const before = await Promise.all(heights.map((h) => this.store.getBlock(h)));
    return medianTimePast([...before.map((b) => b.time), time]);
  }

  /**
   * Where a confirmed transaction is and its bytes.
   * @param {string} txid display hex
   * @returns {Promise<{tx: import('../chain/tx').Tx, txNum: number, height: number, blockHash: string, time: number, position: number}>}
   *   rejects with -8 for a txid that is not hex, -5 for one the index does not hold
   */
  async tx(txid) {
    const id = this.parseTxid(txid);
    const loc = id ? await this.store.getTx(id) : null;
    // Core keeps the genesis coinbase out of its transaction index (its getrawtransaction
    // answers -5), and insight-ui's genesis page then waited forever for the block's list of
    // transactions; the index holds it (TxNum 0), so it is answered like any other
    if (!loc) throw this._error(RPC.INVALID_ADDRESS_OR_KEY, 'No information available about transaction');
    const [{ block }, info] = await Promise.all([this.blocks.read(loc.blockHash), this.store.getBlock(loc.height)]);
    const tx = block.txs[loc.position];
    if (!tx || !tx.txid.equals(id)) {
      throw this._error(RPC.INVALID_ADDRESS_OR_KEY, 'No information available about transaction');
    }
    return { tx, txNum: loc.txNum, height: loc.height, blockHash: loc.blockHash, time: info.time, position: loc.position };
  }

  /**
   * A txid as Core 0.12.1's ParseHashV reads it: not hex is -8; hex of another length names
   * no transaction (null).
   * @param {unknown} txid
   * @returns {Buffer|null} internal order
   */
  parseTxid(txid) {
    const s = typeof txid === 'string' ? txid : String(txid);
    if (!/^([0-9a-fA-F]{2})+$/.test(s)) {
      throw this._error(RPC.INVALID_PARAMETER, `txid must be hexadecimal string (not '${s.slice(0, 100)}')`);
    }
    return s.length === 64 ? fromDisplayHex(s.toLowerCase()) : null;
  }

  /**
   * The outputs some inputs spend (value and script), read from the transactions that made
   * them, each read once: a confirmed one from its block, a mempool one from `view`.
   * @param {Array<{txid: Buffer, vout: number}>} outpoints txid in internal order
   * @param {import('../core/mempool').MempoolView|null} [view] the mempool of the tip read
   * @returns {Promise<Array<{value: number, script: Buffer, height: number}>>} height -1: unconfirmed
   */
  async outputs(outpoints, view = null) {
    const funding = new Map();
    for (const o of outpoints) {
      const key = o.txid.toString('hex');
      if (funding.has(key)) continue;
      const parent = view && view.get(o.txid);
      funding.set(key, parent ? view.parsed(parent).then((tx) => ({ tx, height: -1 })) : this.tx(Buffer.from(o.txid).reverse().toString('hex')));
    }
    return Promise.all(outpoints.map(async (o) => {
      const f = await funding.get(o.txid.toString('hex'));
      const out = f.tx.outputs[o.vout];
      if (!out) throw new Error(`transaction ${f.tx.hash} has no output ${o.vout}`);
      return { value: out.value, script: out.script, height: f.height };
    }));
  }
}

module.exports = { ChainReader };
