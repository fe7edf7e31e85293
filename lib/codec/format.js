'use strict';

/**
 * The format byte every stored value begins with.
 *
 *   bit 7      LZ4: the rest of the value is compressed (reserved; no v1 value sets it)
 *   bits 0-6   format version of this value kind (1 for every kind in schema 1)
 *
 * A decoder accepts only the versions it knows, so a value written by a newer addrindex, or a
 * damaged one, is refused with a CodecError instead of being misread.
 */

const FORMAT_V1 = 0x01;
const FLAG_LZ4 = 0x80;

/**
 * Reads and checks the format byte.
 * @param {import('./io').Reader} r
 * @returns {number} the version
 */
function readFormat(r) {
  const f = r.u8();
  if (f === FORMAT_V1) return f;
  if (f & FLAG_LZ4) {
    throw r.error('ERR_UNKNOWN_FORMAT', `format byte 0x${hex(f)} says LZ4-compressed, which schema 1 never writes`);
  }
  throw r.error('ERR_UNKNOWN_FORMAT', `unknown format byte 0x${hex(f)} (this addrindex reads format 0x01)`);
}

function hex(b) {
  return b.toString(16).padStart(2, '0');
}

module.exports = { FORMAT_V1, FLAG_LZ4, readFormat };
