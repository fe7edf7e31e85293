'use strict';

const crypto = require('node:crypto');

// crypto.hash (Node >= 20.12) is a one-shot digest with no Hash object to allocate:
// several times faster than createHash() for the small inputs a chain is made of.
const oneShot = typeof crypto.hash === 'function';

/**
 * @param {Uint8Array} data
 * @returns {Buffer} 32-byte SHA-256
 */
function sha256(data) {
  return oneShot ? crypto.hash('sha256', data, 'buffer') : crypto.createHash('sha256').update(data).digest();
}

/**
 * Bitcoin's double SHA-256 (block hashes, txids, merkle nodes, base58 checksums).
 * @param {Uint8Array} data
 * @returns {Buffer} 32 bytes, internal byte order
 */
function sha256d(data) {
  return sha256(sha256(data));
}

/**
 * RIPEMD-160 of SHA-256: the hash inside P2PKH and P2WPKH.
 * @param {Uint8Array} data
 * @returns {Buffer} 20 bytes
 */
function hash160(data) {
  return crypto.createHash('ripemd160').update(sha256(data)).digest();
}

/**
 * Display form of a hash: bytes reversed, hex (how txids and block hashes are shown).
 * @param {Uint8Array} hash
 * @returns {string}
 */
function toDisplayHex(hash) {
  return Buffer.from(hash).reverse().toString('hex');
}

/**
 * Inverse of toDisplayHex.
 * @param {string} hex 64 hex characters
 * @returns {Buffer}
 */
function fromDisplayHex(hex) {
  return Buffer.from(hex, 'hex').reverse();
}

module.exports = { sha256, sha256d, hash160, toDisplayHex, fromDisplayHex };
