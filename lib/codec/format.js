'use strict';

const lz4 = require('lz4-napi');
const { Reader } = require('./io');

/**
 * The format byte every stored value begins with, and the LZ4 framing behind it.
 *
 *   bit 7      LZ4: the rest of the value is one lz4-napi block (a 4-byte little-endian
 *              uncompressed size, then the LZ4 block) holding the value's body
 *   bits 0-6   format version of this value kind
 *
 * A decoder accepts only the version it knows for its kind, and the LZ4 flag only on the
 * kinds that may be compressed, so a value written by a newer addrindex, or a damaged one, is
 * refused with a CodecError instead of being misread. The uncompressed size is checked
 * against a bound before anything is allocated: lz4-napi would otherwise allocate whatever
 * the 4-byte prefix claims.
 */

const FLAG_LZ4 = 0x80;
const VERSION_MASK = 0x7f;

/**
 * No value's body is larger uncompressed: the largest, a block's undo, is at most about 5 MB
 * (a 4 MB block has under 100k inputs of at least 41 bytes; an undo entry is at most 51).
 */
const MAX_UNCOMPRESSED = 16 * 1024 * 1024;
/** LZ4 cannot expand more than this: each match byte codes at most 255 more bytes. */
const MAX_LZ4_RATIO = 255;
const LZ4_SIZE_BYTES = 4;

/**
 * Opens a stored value: checks the format byte and, when the LZ4 flag is set, decompresses
 * the body. Returns a Reader positioned at the body (over the decompressed bytes when
 * compressed).
 * @param {Uint8Array} buf the stored value
 * @param {string} what the value kind, for errors
 * @param {number} version the one format version this addrindex reads for the kind
 * @param {boolean} [mayCompress=false] whether the kind is ever written compressed
 * @returns {Reader}
 */
function openValue(buf, what, version, mayCompress = false) {
  const r = new Reader(buf, what);
  const f = r.u8();
  if (f === version) return r;
  if ((f & VERSION_MASK) !== version) {
    throw r.error('ERR_UNKNOWN_FORMAT', `unknown format byte 0x${hex(f)} (this addrindex reads version ${version} of this kind)`);
  }
  if (!mayCompress) throw r.error('ERR_UNKNOWN_FORMAT', `format byte 0x${hex(f)} says LZ4-compressed, which this kind never is`);
  return new Reader(uncompressBody(r), what);
}

/**
 * @param {Reader} r positioned after the format byte
 * @returns {Buffer}
 */
function uncompressBody(r) {
  const left = r.left();
  if (left < LZ4_SIZE_BYTES + 1) throw r.error('ERR_BAD_LZ4', `an LZ4 body of ${left} bytes is too short`);
  const b = r.buf;
  const p = r.pos;
  const size = (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16)) + b[p + 3] * 0x1000000;
  const bound = Math.min(MAX_UNCOMPRESSED, MAX_LZ4_RATIO * (left - LZ4_SIZE_BYTES));
  if (size === 0 || size > bound) {
    throw r.error('ERR_BAD_LZ4', `LZ4 body claims ${size} uncompressed bytes from ${left} (at most ${bound})`);
  }
  let out;
  try {
    out = lz4.uncompressSync(Buffer.from(b.buffer, b.byteOffset + p, left));
  } catch (err) {
    throw r.error('ERR_BAD_LZ4', `LZ4 body does not decompress (${err.message})`);
  }
  if (out.length !== size) throw r.error('ERR_BAD_LZ4', `LZ4 body gave ${out.length} bytes, its header says ${size}`);
  return out;
}

function hex(b) {
  return b.toString(16).padStart(2, '0');
}

module.exports = { FLAG_LZ4, MAX_UNCOMPRESSED, openValue };
