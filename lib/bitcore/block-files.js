'use strict';

const { SourceError } = require('../errors');
const { BlocksDirSource } = require('../sources/blocksdir');
const { BlockReader } = require('../sources/blockreader');

/**
 * Whole blocks by hash, for the service's block and transaction answers.
 *
 * The index does not record where blocks lie yet, so this finds them itself: it scans the
 * headers of a Bitcoin Core blocks dir (88 bytes per block, the bodies skipped; again, for
 * the new records only, when asked for a block it has not seen) and reads a block through
 * the checked BlockReader, which serves it only when its header hashes to the hash asked for
 * and its transactions to the header's merkle root. When the store records block locators,
 * they replace the scan; a node's `getblock` plugs in as the reader's `fetchFromNode`.
 */
const RESCAN_MS = 1000;

class BlockFiles {
  /**
   * @param {object} opts
   * @param {string} opts.dir the blocks dir the index was synced from
   * @param {import('../chain/networks').Network} opts.network
   * @param {number} [opts.maxBytes] the reader's cache of parsed blocks
   */
  constructor({ dir, network, maxBytes }) {
    this.source = new BlocksDirSource({ dir, network });
    this.reader = new BlockReader({ dir, network, maxBytes });
    this.scannedAt = 0;
  }

  /**
   * Reads the headers of new records for a hash a request names, at most once a second: an
   * unknown hash asked for again and again must not turn into a directory walk per request.
   * (A block the index holds is always looked for: read() rescans at once.)
   */
  async _rescan() {
    if (Date.now() - this.scannedAt < RESCAN_MS) return;
    await this.source.scan();
    this.scannedAt = Date.now();
  }

  /** The first scan: a dir that is not a blocks dir of this network fails here. */
  async open() {
    await this.source.scan();
    this.scannedAt = Date.now();
  }

  /**
   * @param {string} hash display hex, a block of the index
   * @returns {Promise<import('../sources/blockreader').ReadBlock>}
   * @throws {SourceError} ERR_BLOCK_UNAVAILABLE
   */
  async read(hash) {
    let locator = this.source.locate(hash);
    if (!locator) {
      await this.source.scan(); // the index holds a block the last scan had not seen
      locator = this.source.locate(hash);
    }
    if (!locator) {
      throw new SourceError('ERR_BLOCK_UNAVAILABLE', `block ${hash} is not in the blocks dir ${this.source.dir}`, { hash });
    }
    return this.reader.read(hash, locator);
  }

  /**
   * @param {string} hash display hex
   * @returns {Promise<number|null>} its height when it is on the blocks dir's best chain
   */
  async heightOf(hash) {
    let height = this.source.heightOf(hash);
    if (height === null) {
      await this._rescan();
      height = this.source.heightOf(hash);
    }
    return height;
  }

  /**
   * @param {string} hash display hex, a block of the index
   * @returns {Promise<bigint|null>} cumulative work up to and including the block
   */
  async chainWork(hash) {
    let work = this.source.chainWork(hash);
    if (work === null) {
      await this.source.scan();
      work = this.source.chainWork(hash);
    }
    return work;
  }

  /** @returns {Promise<number>} the best height the blocks dir holds (new headers read at most once a second) */
  async tipHeight() {
    await this._rescan();
    return this.source.tip().height;
  }

  async close() {
    await this.reader.close();
    await this.source.close();
  }
}

module.exports = { BlockFiles };
