'use strict';

const { SourceError } = require('../errors');
const { BlockReader } = require('../sources/blockreader');
const { blocksDirOf, indexBlockBytes } = require('../api/txdata');
const { ChainWork } = require('../api/chainwork');
const { blocksDirTip } = require('../ops/node-tip');

/** The blocks dir's tip is read again at most this often (syncPercentage, isSynced, `synced`). */
const TIP_READ_MS = 1000;

/**
 * Whole blocks by hash for the service's block and transaction answers, found where the REST
 * routes find them: by the index's own rows (the block by its hash, its locator in the blocks
 * dir the sync read), its bytes from the index itself after `sync --txstore`, else from that
 * blocks dir at the recorded place, through the checked BlockReader (a block is served only
 * when its header hashes to the hash asked for and its transactions to the header's merkle
 * root), else from the node's `getblock` when the service has one (`rpcUrl`), checked the same
 * way.
 *
 * The blocks dir is the one `blocksDir` names (relative to the config) or else the one the
 * sync recorded in the index; its best height is also what syncPercentage compares with.
 */
class IndexBlocks {
  /**
   * @param {object} opts
   * @param {import('../stores/abstract').AbstractStore} opts.store open
   * @param {import('../chain/networks').Network} opts.network
   * @param {{dir: string|null, from: string|null, readable: boolean, why: string}} opts.where blocksDirOf's answer
   * @param {number} [opts.maxBytes] the reader's cache of parsed blocks
   * @param {((hash: string) => Promise<Buffer|string>)|null} [opts.fetchFromNode] a node's
   *   `getblock HASH 0`, for blocks neither the index nor the blocks dir can give
   */
  constructor({ store, network, where, maxBytes, fetchFromNode = null }) {
    this.store = store;
    this.where = where;
    this.dir = where.readable ? where.dir : null;
    this.fromIndex = store.keepsTransactions;
    this.fromNode = Boolean(fetchFromNode);
    this.reader = new BlockReader({
      dir: this.dir, network, maxBytes, fromIndex: this.fromIndex ? indexBlockBytes(store) : null, fetchFromNode,
    });
    this.chainwork = new ChainWork(store);
    this.dirTip = this.dir ? blocksDirTip({ dir: this.dir, network: network.name }) : null;
    this.tipReadAt = 0;
    this.lastTip = null;
  }

  /**
   * @param {object} opts as the constructor's, with `dir` (the config's blocksDir, resolved) in place of `where`
   * @returns {Promise<IndexBlocks>}
   */
  static async open({ store, network, dir, maxBytes, fetchFromNode }) {
    const blocks = new IndexBlocks({ store, network, where: await blocksDirOf(store, dir), maxBytes, fetchFromNode });
    if (dir && !blocks.dir) {
      throw new SourceError('ERR_BLOCK_UNAVAILABLE', `servicesConfig.bitcoind.blocksDir: ${blocks.where.why}`);
    }
    // a dir that is not a blocks dir of this network fails here, not at the first request
    if (blocks.dirTip) await blocks.tipHeight();
    return blocks;
  }

  /** Whether blocks and transactions can be read at all (from the index, a blocks dir or a node). */
  get readable() {
    return Boolean(this.dir || this.fromIndex || this.fromNode);
  }

  /** Where blocks are read, for the start-up line. */
  describe() {
    const node = this.fromNode ? ', else from the node' : '';
    if (this.fromIndex) return `blocks from the index (--txstore)${node}`;
    if (this.dir) return `blocks from ${this.dir} (${this.where.from === 'index' ? 'recorded by the sync' : 'blocksDir'})${node}`;
    return this.fromNode ? 'blocks from the node' : 'no blocks';
  }

  /**
   * @param {string} hash display hex, a block of the index's best chain
   * @returns {Promise<import('../sources/blockreader').ReadBlock>}
   * @throws {SourceError} ERR_BLOCK_UNAVAILABLE
   */
  async read(hash) {
    const row = await this.store.getBlockByHash(hash);
    if (!row) throw new SourceError('ERR_BLOCK_UNAVAILABLE', `block ${hash} is not on the index's best chain`, { hash });
    return this.reader.read(hash, row.locator);
  }

  /**
   * @param {string} hash 64 hex digits
   * @returns {Promise<number|null>} its height when it is on the index's best chain
   */
  async heightOf(hash) {
    const row = await this.store.getBlockByHash(hash);
    return row ? row.height : null;
  }

  /**
   * @param {number} height a block of the index
   * @returns {Promise<bigint>} cumulative work up to and including it
   */
  chainWork(height) {
    return this.chainwork.at(height);
  }

  /** @returns {Promise<number|null>} the best height the blocks dir holds, read at most once a second; null without one */
  async tipHeight() {
    if (!this.dirTip) return null;
    if (Date.now() - this.tipReadAt >= TIP_READ_MS) {
      const tip = await this.dirTip.read();
      this.lastTip = tip ? tip.height : null;
      this.tipReadAt = Date.now();
    }
    return this.lastTip;
  }

  async close() {
    await this.reader.close();
    if (this.dirTip) await this.dirTip.close();
  }
}

module.exports = { IndexBlocks };
