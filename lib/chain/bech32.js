'use strict';

/**
 * Bech32 (BIP173) and bech32m (BIP350) strings: `hrp` + "1" + data characters, the last six
 * of which are a BCH checksum over the hrp and the data. The two variants differ only in the
 * constant the checksum must leave behind, so one decoder reports which of the two matched.
 *
 * This module knows nothing of witness versions or networks (address.js adds those rules);
 * it only turns strings into 5-bit words and back, with a typed error for each way a string
 * can be malformed.
 */

const { AddressError } = require('../errors');

const CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const CHARSET_REV = new Int8Array(128).fill(-1);
for (let i = 0; i < CHARSET.length; i++) CHARSET_REV[CHARSET.charCodeAt(i)] = i;

const GENERATOR = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];

/** What polymod(hrp, data, checksum) equals for each valid variant. */
const CONSTANTS = { bech32: 1, bech32m: 0x2bc830a3 };

const MAX_LENGTH = 90;
const CHECKSUM_LENGTH = 6;

function polymodStep(chk, value) {
  const top = chk >>> 25;
  chk = ((chk & 0x1ffffff) << 5) ^ value;
  for (let i = 0; i < 5; i++) if ((top >>> i) & 1) chk ^= GENERATOR[i];
  return chk;
}

/** The checksum polynomial over the expanded hrp and the 5-bit words. @param {string} hrp lower case */
function polymod(hrp, words) {
  let chk = 1;
  for (let i = 0; i < hrp.length; i++) chk = polymodStep(chk, hrp.charCodeAt(i) >> 5);
  chk = polymodStep(chk, 0);
  for (let i = 0; i < hrp.length; i++) chk = polymodStep(chk, hrp.charCodeAt(i) & 31);
  for (let i = 0; i < words.length; i++) chk = polymodStep(chk, words[i]);
  return chk >>> 0;
}

function formatError(message, details) {
  return new AddressError('ERR_ADDRESS_FORMAT', message, details);
}

/**
 * Encodes 5-bit words under a human-readable part, lower case.
 * @param {string} hrp 1-83 printable ASCII characters (stored lower case)
 * @param {ArrayLike<number>} words values 0..31
 * @param {'bech32'|'bech32m'} variant
 * @returns {string}
 */
function encode(hrp, words, variant) {
  const constant = CONSTANTS[variant];
  if (constant === undefined) throw new TypeError(`unknown bech32 variant "${variant}"`);
  hrp = checkHrp(hrp).toLowerCase();
  if (hrp.length + 1 + words.length + CHECKSUM_LENGTH > MAX_LENGTH) {
    throw formatError(`bech32 string would be longer than ${MAX_LENGTH} characters`);
  }
  let out = hrp + '1';
  const all = new Array(words.length + CHECKSUM_LENGTH).fill(0);
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    if (!(w >= 0 && w < 32) || w !== Math.floor(w)) throw formatError(`bech32 word ${i} is ${w}, not 0..31`);
    all[i] = w;
    out += CHARSET[w];
  }
  const mod = polymod(hrp, all) ^ constant;
  for (let i = 0; i < CHECKSUM_LENGTH; i++) out += CHARSET[(mod >>> (5 * (5 - i))) & 31];
  return out;
}

function checkHrp(hrp) {
  if (typeof hrp !== 'string' || hrp.length < 1 || hrp.length > MAX_LENGTH - 1 - CHECKSUM_LENGTH) {
    throw formatError('bech32 human-readable part must be 1-83 characters');
  }
  for (let i = 0; i < hrp.length; i++) {
    const c = hrp.charCodeAt(i);
    if (c < 33 || c > 126) throw formatError(`bech32 human-readable part has character code ${c} at ${i}`);
  }
  return hrp;
}

/**
 * Decodes a bech32 or bech32m string. Upper or lower case are both accepted, mixed case is not.
 * @param {string} str
 * @returns {{hrp: string, words: Uint8Array, variant: 'bech32'|'bech32m'}} hrp lower case,
 *   words without the checksum
 * @throws {AddressError} ERR_ADDRESS_FORMAT (length, characters, case, separator),
 *   ERR_ADDRESS_CHECKSUM (checksum matches neither variant)
 */
function decode(str) {
  if (typeof str !== 'string') throw formatError('bech32 input must be a string');
  if (str.length > MAX_LENGTH) {
    throw formatError(`bech32 string is ${str.length} characters, the maximum is ${MAX_LENGTH}`);
  }
  let lower = false;
  let upper = false;
  for (let i = 0; i < str.length; i++) {
    const c = str.charCodeAt(i);
    if (c < 33 || c > 126) throw formatError(`character code ${c} at position ${i} is not allowed in bech32`, { position: i });
    if (c >= 97 && c <= 122) lower = true;
    else if (c >= 65 && c <= 90) upper = true;
  }
  if (lower && upper) throw formatError(`"${str}" mixes upper and lower case`);
  const s = str.toLowerCase();
  const sep = s.lastIndexOf('1');
  if (sep < 0) throw formatError('bech32 string has no "1" separator');
  if (sep === 0) throw formatError('bech32 string has an empty human-readable part');
  if (s.length - sep - 1 < CHECKSUM_LENGTH) {
    throw formatError(`bech32 data part is ${s.length - sep - 1} characters, shorter than the ${CHECKSUM_LENGTH}-character checksum`);
  }
  const hrp = s.slice(0, sep);
  const all = new Uint8Array(s.length - sep - 1);
  for (let i = 0; i < all.length; i++) {
    const v = CHARSET_REV[s.charCodeAt(sep + 1 + i)];
    if (v < 0) {
      throw formatError(`"${str[sep + 1 + i]}" at position ${sep + 1 + i} is not a bech32 data character`, { position: sep + 1 + i });
    }
    all[i] = v;
  }
  const mod = polymod(hrp, all);
  let variant;
  if (mod === CONSTANTS.bech32) variant = 'bech32';
  else if (mod === CONSTANTS.bech32m) variant = 'bech32m';
  else throw new AddressError('ERR_ADDRESS_CHECKSUM', `bad bech32/bech32m checksum in "${str}" (a character is wrong or missing)`);
  return { hrp, words: all.subarray(0, all.length - CHECKSUM_LENGTH), variant };
}

/**
 * Regroups bytes into 5-bit words, zero-padding the last one.
 * @param {Uint8Array} bytes
 * @returns {number[]}
 */
function toWords(bytes) {
  const words = [];
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < bytes.length; i++) {
    acc = ((acc << 8) | bytes[i]) & 0xfff;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      words.push((acc >>> bits) & 31);
    }
  }
  if (bits > 0) words.push((acc << (5 - bits)) & 31);
  return words;
}

/**
 * Regroups 5-bit words into bytes. Strict, as BIP173 requires of decoders: the padding left
 * over must be fewer than 5 bits and all zero.
 * @param {ArrayLike<number>} words
 * @returns {Buffer}
 * @throws {AddressError} ERR_ADDRESS_FORMAT on bad padding
 */
function fromWords(words) {
  const out = Buffer.allocUnsafe((words.length * 5) >> 3);
  let acc = 0;
  let bits = 0;
  let n = 0;
  for (let i = 0; i < words.length; i++) {
    acc = ((acc << 5) | words[i]) & 0xfff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out[n++] = (acc >>> bits) & 0xff;
    }
  }
  if (bits >= 5) throw formatError(`bech32 data has ${bits} bits of padding (at most 4 allowed)`);
  if ((acc & ((1 << bits) - 1)) !== 0) throw formatError('bech32 data has non-zero padding bits');
  return out;
}

module.exports = { encode, decode, toWords, fromWords, CHARSET };
