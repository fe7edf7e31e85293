'use strict';

const { ParseError } = require('../errors');

// Bitcoin Core's MAX_SIZE: no serialized length or count is ever larger.
const MAX_COMPACT_SIZE = 0x02000000;

/**
 * A bounds-checked read position over a Buffer. Every read that would pass `end`
 * throws ParseError ERR_TRUNCATED, so hostile lengths can never read garbage or loop.
 */
class Cursor {
  /**
   * @param {Buffer} buf
   * @param {number} [pos=0]
   * @param {number} [end=buf.length]
   */
  constructor(buf, pos = 0, end = buf.length) {
    this.buf = buf;
    this.pos = pos;
    this.end = end;
  }

  /** @returns {number} bytes left before `end` */
  remaining() {
    return this.end - this.pos;
  }

  /**
   * Throws unless n more bytes are available.
   * @param {number} n
   * @param {string} what
   */
  need(n, what) {
    if (this.pos + n > this.end) {
      throw new ParseError('ERR_TRUNCATED',
        `truncated: ${what} needs ${n} bytes at offset ${this.pos}, only ${this.end - this.pos} left`,
        { offset: this.pos, need: n });
    }
  }

  u8(what = 'byte') {
    this.need(1, what);
    return this.buf[this.pos++];
  }

  u32(what = 'uint32') {
    this.need(4, what);
    const v = this.buf.readUInt32LE(this.pos);
    this.pos += 4;
    return v;
  }

  /**
   * A little-endian uint64 as a Number; throws when it is not a safe integer.
   * @param {string} what
   */
  u64(what = 'uint64') {
    this.need(8, what);
    const lo = this.buf.readUInt32LE(this.pos);
    const hi = this.buf.readUInt32LE(this.pos + 4);
    if (hi > 0x1fffff) {
      throw new ParseError('ERR_BAD_VALUE', `${what} at offset ${this.pos} does not fit in 53 bits`, { offset: this.pos });
    }
    this.pos += 8;
    return hi * 0x100000000 + lo;
  }

  /**
   * Bitcoin's CompactSize, canonical form only (as Bitcoin Core requires) and at most MAX_SIZE.
   * @param {string} what
   */
  varint(what = 'varint') {
    const at = this.pos;
    const first = this.u8(what);
    let v;
    if (first < 0xfd) return first;
    if (first === 0xfd) {
      this.need(2, what);
      v = this.buf.readUInt16LE(this.pos);
      this.pos += 2;
      if (v < 0xfd) throw nonCanonical(what, at);
    } else if (first === 0xfe) {
      v = this.u32(what);
      if (v < 0x10000) throw nonCanonical(what, at);
    } else {
      v = this.u64(what);
      if (v < 0x100000000) throw nonCanonical(what, at);
    }
    if (v > MAX_COMPACT_SIZE) {
      throw new ParseError('ERR_BAD_VARINT', `${what} ${v} at offset ${at} exceeds the maximum ${MAX_COMPACT_SIZE}`, { offset: at });
    }
    return v;
  }

  /**
   * A count of items that each take at least `minItemBytes`: rejects counts the
   * remaining bytes cannot hold before anything is allocated for them.
   * @param {number} minItemBytes
   * @param {string} what
   */
  count(minItemBytes, what) {
    const at = this.pos;
    const n = this.varint(what);
    if (n * minItemBytes > this.end - this.pos) {
      throw new ParseError('ERR_TRUNCATED',
        `truncated: ${what} ${n} at offset ${at} cannot fit in the ${this.end - this.pos} bytes left`, { offset: at, count: n });
    }
    return n;
  }

  /**
   * A view of the next n bytes (no copy).
   * @param {number} n
   * @param {string} what
   * @returns {Buffer}
   */
  slice(n, what = 'bytes') {
    this.need(n, what);
    const s = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return s;
  }

  /** Advances past n bytes without making a view. */
  skip(n, what = 'bytes') {
    this.need(n, what);
    this.pos += n;
  }
}

function nonCanonical(what, at) {
  return new ParseError('ERR_BAD_VARINT', `non-canonical ${what} at offset ${at}`, { offset: at });
}

module.exports = { Cursor, MAX_COMPACT_SIZE };
