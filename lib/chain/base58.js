'use strict';

/**
 * Base58 and base58check (legacy P2PKH/P2SH addresses). Schoolbook base conversion,
 * quadratic in the length, which is nothing for 25-byte addresses.
 */

const { AddressError } = require('../errors');
const { sha256d } = require('./hash');
const { sha256Into, SINGLE_BLOCK_MAX } = require('./sha256-small');

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const ALPHABET_REV = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) ALPHABET_REV[ALPHABET.charCodeAt(i)] = i;

/** Longer strings are refused before any arithmetic: no address comes near this. */
const MAX_DECODE_LENGTH = 128;

// Encoding works in limbs of five base58 digits (58^5 < 2^30): a limb times 256 plus a carry
// stays far below 2^53, so plain doubles hold it exactly and each input byte costs a fifth of
// the digit-by-digit loop. Serving a transaction encodes an address per input and output.
const LIMB = 58 ** 5;
const LIMB_DIGITS = 5;
let limbScratch = new Float64Array(32);
const digitScratch = [];

/**
 * @param {Uint8Array} bytes
 * @returns {string}
 */
function encode(bytes) {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  // log(256) / log(58) ≈ 1.366 digits per byte; limbs hold the number least significant first
  const need = Math.ceil((((bytes.length - zeros) * 1366) / 1000 + 1) / LIMB_DIGITS) + 1;
  if (limbScratch.length < need) limbScratch = new Float64Array(need);
  const limbs = limbScratch;
  let used = 0;
  for (let i = zeros; i < bytes.length; i++) {
    let carry = bytes[i];
    for (let k = 0; k < used; k++) {
      carry += limbs[k] * 256;
      const q = Math.floor(carry / LIMB);
      limbs[k] = carry - q * LIMB;
      carry = q;
    }
    while (carry > 0) {
      const q = Math.floor(carry / LIMB);
      limbs[used++] = carry - q * LIMB;
      carry = q;
    }
  }
  const digits = digitScratch;
  let n = 0;
  for (let k = 0; k < used; k++) {
    let v = limbs[k];
    for (let d = 0; d < LIMB_DIGITS && (k < used - 1 || v > 0); d++) {
      const q = Math.floor(v / 58);
      digits[n++] = v - q * 58;
      v = q;
    }
  }
  let out = zeros ? '1'.repeat(zeros) : '';
  while (n > 0) out += ALPHABET[digits[--n]];
  return out;
}

/**
 * True when every character of `str` is in the base58 alphabet.
 * @param {string} str
 */
function isBase58(str) {
  for (let i = 0; i < str.length; i++) {
    const c = str.charCodeAt(i);
    if (c >= 128 || ALPHABET_REV[c] < 0) return false;
  }
  return str.length > 0;
}

/**
 * @param {string} str
 * @returns {Buffer}
 * @throws {AddressError} ERR_ADDRESS_FORMAT for a character outside the alphabet or an absurd length
 */
function decode(str) {
  if (typeof str !== 'string') throw new AddressError('ERR_ADDRESS_FORMAT', 'base58 input must be a string');
  if (str.length > MAX_DECODE_LENGTH) {
    throw new AddressError('ERR_ADDRESS_FORMAT', `base58 string of ${str.length} characters is too long for an address`);
  }
  let zeros = 0;
  while (zeros < str.length && str[zeros] === '1') zeros++;
  // log(58) / log(256) ≈ 0.733 bytes per digit
  const bytes = new Uint8Array((((str.length - zeros) * 733) / 1000 | 0) + 1);
  for (let i = zeros; i < str.length; i++) {
    const c = str.charCodeAt(i);
    let carry = c < 128 ? ALPHABET_REV[c] : -1;
    if (carry < 0) {
      throw new AddressError('ERR_ADDRESS_FORMAT', `"${str[i]}" at position ${i} is not a base58 character`, { position: i });
    }
    for (let k = bytes.length - 1; k >= 0; k--) {
      carry += bytes[k] * 58;
      bytes[k] = carry & 0xff;
      carry >>>= 8;
    }
  }
  let k = 0;
  while (k < bytes.length && bytes[k] === 0) k++;
  const out = Buffer.alloc(zeros + bytes.length - k);
  out.set(bytes.subarray(k), zeros);
  return out;
}

/**
 * Base58 of payload + the first 4 bytes of its double SHA-256.
 * @param {Uint8Array} payload
 * @returns {string}
 */
function encodeCheck(payload) {
  const buf = Buffer.allocUnsafe(payload.length + 4);
  buf.set(payload, 0);
  if (payload.length <= SINGLE_BLOCK_MAX) {
    // an address payload: two single-block hashes in JS, without node:crypto's per-call cost
    sha256Into(payload, CHECK_SCRATCH, 0);
    sha256Into(CHECK_SCRATCH, CHECK_SCRATCH, 0);
    CHECK_SCRATCH.copy(buf, payload.length, 0, 4);
  } else {
    sha256d(payload).copy(buf, payload.length, 0, 4);
  }
  return encode(buf);
}

const CHECK_SCRATCH = Buffer.alloc(32);

/**
 * @param {string} str
 * @returns {Buffer} the payload, checksum removed
 * @throws {AddressError} ERR_ADDRESS_FORMAT (characters, too short), ERR_ADDRESS_CHECKSUM
 */
function decodeCheck(str) {
  const buf = decode(str);
  if (buf.length < 5) {
    throw new AddressError('ERR_ADDRESS_FORMAT', `base58check string decodes to ${buf.length} bytes, too short to hold a checksum`);
  }
  const payload = buf.subarray(0, buf.length - 4);
  if (!sha256d(payload).subarray(0, 4).equals(buf.subarray(buf.length - 4))) {
    throw new AddressError('ERR_ADDRESS_CHECKSUM', `bad base58check checksum in "${str}" (a character is wrong or missing)`);
  }
  return payload;
}

module.exports = { encode, decode, encodeCheck, decodeCheck, isBase58, ALPHABET };
