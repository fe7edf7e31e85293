'use strict';

const { ParseError } = require('../errors');
const { sha256d, toDisplayHex } = require('./hash');

const HEADER_SIZE = 80;

/**
 * @typedef {object} BlockHeader
 * @property {string} hash        display hex
 * @property {Buffer} hashBytes   32 bytes, internal order
 * @property {number} version
 * @property {string} prev        previous block hash, display hex
 * @property {Buffer} prevBytes   32 bytes, internal order (a view into the block)
 * @property {Buffer} merkleRoot  32 bytes, internal order (a view into the block)
 * @property {number} time
 * @property {number} bits
 * @property {number} nonce
 * @property {Buffer} raw         the 80 header bytes (a view into the block)
 */

/**
 * Parses the 80-byte header at `offset`.
 * @param {Buffer} buf
 * @param {number} [offset=0]
 * @returns {BlockHeader}
 */
function parseHeader(buf, offset = 0) {
  if (offset + HEADER_SIZE > buf.length) {
    throw new ParseError('ERR_TRUNCATED',
      `truncated: a block header needs 80 bytes at offset ${offset}, only ${Math.max(0, buf.length - offset)} left`, { offset });
  }
  const raw = buf.subarray(offset, offset + HEADER_SIZE);
  const hashBytes = sha256d(raw);
  const prevBytes = raw.subarray(4, 36);
  return {
    hash: toDisplayHex(hashBytes),
    hashBytes,
    version: raw.readInt32LE(0),
    prev: toDisplayHex(prevBytes),
    prevBytes,
    merkleRoot: raw.subarray(36, 68),
    time: raw.readUInt32LE(68),
    bits: raw.readUInt32LE(72),
    nonce: raw.readUInt32LE(76),
    raw,
  };
}

module.exports = { parseHeader, HEADER_SIZE };
