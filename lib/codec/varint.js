'use strict';

const { CodecError } = require('../errors');

/**
 * Unsigned LEB128 varints for every count, amount and TxNum addrindex stores: 7 bits per byte,
 * least significant group first, high bit set on every byte but the last.
 *
 * JavaScript numbers are exact up to 2^53 - 1, so that is the largest value: at most 8 bytes.
 * Decoding is strict, because a stored value that decodes two ways is a silent wrong answer:
 * a truncated varint, a ninth byte, a value above 2^53 - 1 and a non-minimal encoding (a
 * trailing 0x00 group) all throw CodecError. Encoding always writes the minimal form, which is
 * what makes two indexes of the same chain byte-identical.
 */

const MAX_VARINT = Number.MAX_SAFE_INTEGER;
const MAX_VARINT_BYTES = 8;

/**
 * @param {number} n integer 0 ..= 2^53 - 1
 * @returns {number} bytes the varint takes
 */
function varintLength(n) {
  if (n < 0x80) return 1;
  if (n < 0x4000) return 2;
  if (n < 0x200000) return 3;
  if (n < 0x10000000) return 4;
  let len = 4;
  let v = Math.floor(n / 0x10000000);
  while (v > 0) {
    len++;
    v = Math.floor(v / 0x80);
  }
  return len;
}

/**
 * Writes n at buf[pos]; the caller guarantees room (varintLength(n) bytes).
 * @param {Uint8Array} buf
 * @param {number} pos
 * @param {number} n integer 0 ..= 2^53 - 1
 * @returns {number} position after the varint
 */
function writeVarint(buf, pos, n) {
  if (!(n >= 0 && n <= MAX_VARINT) || Math.floor(n) !== n) {
    throw new CodecError('ERR_VARINT_RANGE', `cannot encode ${n} as a varint: not an integer in 0..2^53-1`);
  }
  // bitwise ops are exact below 2^31; above, divide
  while (n >= 0x80000000) {
    buf[pos++] = (n % 0x80) | 0x80;
    n = Math.floor(n / 0x80);
  }
  while (n >= 0x80) {
    buf[pos++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  buf[pos++] = n;
  return pos;
}

/**
 * Reads a varint at r.pos (not past r.end) and advances r.pos.
 * @param {{buf: Uint8Array, pos: number, end: number, what: string}} r a Reader
 * @returns {number}
 */
function readVarint(r) {
  const buf = r.buf;
  let pos = r.pos;
  if (pos >= r.end) throw truncated(r);
  let b = buf[pos++];
  if (b < 0x80) {
    r.pos = pos;
    return b;
  }
  let value = b & 0x7f;
  let mul = 0x80;
  for (let i = 1; ; i++) {
    if (pos >= r.end) throw truncated(r);
    if (i >= MAX_VARINT_BYTES) {
      throw new CodecError('ERR_VARINT_OVERFLOW', `${r.what}: varint longer than ${MAX_VARINT_BYTES} bytes at offset ${r.pos}`,
        { what: r.what, offset: r.pos });
    }
    b = buf[pos++];
    value += (b & 0x7f) * mul;
    if (b < 0x80) {
      if (b === 0) {
        throw new CodecError('ERR_VARINT_NONCANONICAL', `${r.what}: non-minimal varint at offset ${r.pos}`,
          { what: r.what, offset: r.pos });
      }
      break;
    }
    mul *= 0x80;
  }
  if (value > MAX_VARINT) {
    throw new CodecError('ERR_VARINT_OVERFLOW', `${r.what}: varint above 2^53-1 at offset ${r.pos}`,
      { what: r.what, offset: r.pos });
  }
  r.pos = pos;
  return value;
}

function truncated(r) {
  return new CodecError('ERR_TRUNCATED', `${r.what}: value ends inside a varint at offset ${r.pos}`,
    { what: r.what, offset: r.pos });
}

module.exports = { MAX_VARINT, MAX_VARINT_BYTES, varintLength, writeVarint, readVarint };
