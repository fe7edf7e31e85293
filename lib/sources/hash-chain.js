'use strict';

const { toDisplayHex } = require('../chain/hash');

/**
 * Block hashes by height, 32 bytes each (internal byte order) in one growing Buffer: a
 * mainnet-long chain costs ~29 MB and nothing for the garbage collector to walk.
 */
class HashChain {
  constructor(capacity = 1024) {
    this.buf = Buffer.alloc(32 * capacity);
    this.length = 0;
  }

  /** @returns {number} height of the last hash (-1 when empty) */
  get tipHeight() {
    return this.length - 1;
  }

  /** @param {Buffer} hash 32 bytes, internal order (copied) */
  push(hash) {
    if (32 * (this.length + 1) > this.buf.length) {
      const grown = Buffer.alloc(Math.max(this.buf.length * 2, 32 * 1024));
      this.buf.copy(grown, 0, 0, 32 * this.length);
      this.buf = grown;
    }
    hash.copy(this.buf, 32 * this.length, 0, 32);
    this.length++;
  }

  /**
   * @param {number} height
   * @returns {Buffer|null} a view of the hash (internal order), valid until the chain changes
   */
  at(height) {
    if (!Number.isInteger(height) || height < 0 || height >= this.length) return null;
    return this.buf.subarray(32 * height, 32 * height + 32);
  }

  /**
   * @param {number} height
   * @returns {string|null} display hex
   */
  hexAt(height) {
    const h = this.at(height);
    return h ? toDisplayHex(h) : null;
  }

  /** Drops every height from `length` on. */
  truncate(length) {
    this.length = Math.max(0, Math.min(this.length, length));
  }

  /** Appends every hash of `other`. */
  append(other) {
    for (let h = 0; h < other.length; h++) this.push(other.at(h));
  }

  /**
   * A copy of heights from..to (inclusive), unaffected by later changes.
   * @returns {Buffer}
   */
  copyRange(from, to) {
    return Buffer.from(this.buf.subarray(32 * from, 32 * (to + 1)));
  }
}

module.exports = { HashChain };
