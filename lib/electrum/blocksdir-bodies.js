'use strict';

const { BlocksDirSource } = require('../sources/blocksdir');
const { parseBlock } = require('../chain/block');
const { StoreError } = require('../errors');

/** Parsed blocks kept for raw transactions (a wallet fetches the txs of a block together). */
const BLOCK_CACHE = 4;

/**
 * Block headers and raw transactions read from a Bitcoin Core blocks directory, for the
 * Electrum server while the index keeps neither: a header is 80 bytes read at the block's
 * place in its blk file; a transaction is cut out of its block, found by the index's height
 * and position. The blocks dir may run ahead of the index (a sync reads it): heights above
 * its last scan trigger a rescan. What it answers is checked against the index by the
 * caller (StoreReader compares header hashes) and here (txids).
 */
class BlocksDirBodies {
  /**
   * @param {{dir: string, network: string}} opts
   */
  constructor({ dir, network }) {
    this.source = new BlocksDirSource({ dir, network });
    /** @type {Map<string, import('../chain/block').Block>} */
    this.blocks = new Map();
  }

  /** Scans the directory (headers only). */
  async open() {
    await this.source.scan();
    return this;
  }

  async reach(height) {
    const tip = this.source.tip();
    if (!tip || tip.height < height) await this.source.scan();
    const now = this.source.tip();
    if (!now || now.height < height) {
      throw new StoreError('ERR_NO_BLOCK', `the blocks dir ${this.source.dir} holds no block at height ${height} yet`);
    }
  }

  /**
   * @param {number} from
   * @param {number} count
   * @returns {Promise<Buffer[]>}
   */
  async headers(from, count) {
    if (count === 0) return [];
    await this.reach(from + count - 1);
    return this.source.headers(from, count);
  }

  /**
   * @param {{txid: Buffer, height: number, position: number}} loc
   * @returns {Promise<Buffer>}
   */
  async rawTx({ txid, height, position }) {
    for (let attempt = 1; ; attempt++) {
      const block = await this.block(height);
      const tx = block.txs[position];
      if (tx && tx.txid.equals(txid)) return Buffer.from(tx.raw);
      // the dir's best chain as last scanned is not the index's here: a reorg the scan has not seen yet
      if (attempt === 2) throw new StoreError('ERR_BLOCK_MISMATCH', `block ${block.hash} in the blocks dir is not the index's block ${height}`);
      await this.refresh();
    }
  }

  /** Rescans the directory (new blocks, another best chain). */
  async refresh() {
    await this.source.scan();
  }

  async block(height) {
    await this.reach(height);
    const hash = this.source.hashAt(height);
    let block = this.blocks.get(hash);
    if (!block) {
      for await (const b of this.source.blocks(height, height)) block = parseBlock(b.raw);
      this.blocks.set(hash, block);
      if (this.blocks.size > BLOCK_CACHE) this.blocks.delete(this.blocks.keys().next().value);
    }
    return block;
  }

  async close() {
    this.blocks.clear();
    await this.source.close();
  }
}

module.exports = { BlocksDirBodies };
