'use strict';

const { CodecError } = require('../errors');
const { readVarint, writeVarint, MAX_VARINT_BYTES } = require('./varint');

/**
 * A bounds-checked cursor over one stored value. Every read checks the end first, so hostile
 * bytes end in a CodecError, never in a read past the value or an unbounded loop.
 */
class Reader {
  /**
   * @param {Uint8Array} buf
   * @param {string} what the value kind, for error messages
   * @param {number} [pos=0]
   * @param {number} [end=buf.length]
   */
  constructor(buf, what, pos = 0, end = buf.length) {
    this.buf = buf;
    this.what = what;
    this.pos = pos;
    this.end = end;
  }

  /** @returns {number} bytes left */
  left() {
    return this.end - this.pos;
  }

  /** @returns {number} */
  u8() {
    if (this.pos >= this.end) throw this.truncated(1);
    return this.buf[this.pos++];
  }

  /** @returns {number} */
  varint() {
    return readVarint(this);
  }

  /**
   * Start offset of the next n bytes (the caller slices or copies them), after a bounds check.
   * @param {number} n
   * @returns {number}
   */
  skip(n) {
    if (this.end - this.pos < n) throw this.truncated(n);
    const at = this.pos;
    this.pos += n;
    return at;
  }

  /**
   * A copy of the next n bytes.
   * @param {number} n
   * @returns {Buffer}
   */
  copy(n) {
    const at = this.skip(n);
    return Buffer.from(this.buf.subarray(at, at + n));
  }

  /** Throws unless every byte was consumed: trailing bytes mean the value is not what we think. */
  done() {
    if (this.pos !== this.end) {
      throw new CodecError('ERR_TRAILING_BYTES', `${this.what}: ${this.end - this.pos} unexpected bytes after the value`,
        { what: this.what, offset: this.pos });
    }
  }

  /**
   * Checks a count read from the value against the bytes left (each item takes at least
   * minBytes), so a hostile count cannot make a decoder allocate or loop without bound.
   * @param {number} count
   * @param {number} minBytes
   * @returns {number} count
   */
  count(count, minBytes) {
    if (count * minBytes > this.end - this.pos) {
      throw new CodecError('ERR_BAD_COUNT', `${this.what}: count ${count} does not fit in the ${this.end - this.pos} bytes left`,
        { what: this.what, offset: this.pos, count });
    }
    return count;
  }

  /** @param {number} n */
  truncated(n) {
    return new CodecError('ERR_TRUNCATED', `${this.what}: needs ${n} more bytes at offset ${this.pos}, has ${this.end - this.pos}`,
      { what: this.what, offset: this.pos });
  }

  /**
   * A CodecError about this value.
   * @param {string} code
   * @param {string} message
   */
  error(code, message) {
    return new CodecError(code, `${this.what}: ${message}`, { what: this.what, offset: this.pos });
  }
}

const ARENA = 1 << 20;

/**
 * Builds many values back to back in large arenas and hands out views: one allocation per
 * megabyte instead of one per value, which matters when a batch writes a million values.
 * A view stays valid after later values are written (a full arena is left alone, never reused).
 */
class Writer {
  constructor(arenaSize = ARENA) {
    this.arenaSize = arenaSize;
    this.buf = Buffer.allocUnsafe(arenaSize);
    this.pos = 0;
    this.start = 0;
  }

  /** Starts a new value. */
  begin() {
    this.start = this.pos;
    return this;
  }

  /**
   * Makes room for n more bytes of the current value, moving it to a fresh arena when needed.
   * @param {number} n
   */
  ensure(n) {
    if (this.pos + n <= this.buf.length) return;
    const sofar = this.pos - this.start;
    const next = Buffer.allocUnsafe(Math.max(this.arenaSize, 2 * (sofar + n)));
    this.buf.copy(next, 0, this.start, this.pos);
    this.buf = next;
    this.start = 0;
    this.pos = sofar;
  }

  /** @param {number} v */
  u8(v) {
    this.ensure(1);
    this.buf[this.pos++] = v;
  }

  /** @param {number} n */
  varint(n) {
    this.ensure(MAX_VARINT_BYTES);
    this.pos = writeVarint(this.buf, this.pos, n);
  }

  /**
   * @param {Uint8Array} src
   * @param {number} [from=0]
   * @param {number} [to=src.length]
   */
  bytes(src, from = 0, to = src.length) {
    const n = to - from;
    this.ensure(n);
    if (n === 32) {
      // most copies are 32-byte hashes: a loop beats Buffer.copy's call overhead
      const b = this.buf;
      let p = this.pos;
      for (let i = from; i < to; i++) b[p++] = src[i];
    } else {
      this.buf.set(src.subarray(from, to), this.pos);
    }
    this.pos += n;
  }

  /**
   * Ends the current value.
   * @returns {Buffer} a view of its bytes
   */
  end() {
    return this.buf.subarray(this.start, this.pos);
  }
}

/**
 * A 40-bit unsigned integer, big-endian (TxNums in keys and cursors: key order is numeric order).
 * @param {Buffer} buf
 * @param {number} pos
 * @param {number} n < 2^40
 */
function writeU40(buf, pos, n) {
  buf[pos] = Math.floor(n / 0x100000000) & 0xff;
  buf.writeUInt32BE(n % 0x100000000, pos + 1);
}

/**
 * @param {Buffer} buf
 * @param {number} pos
 * @returns {number}
 */
function readU40(buf, pos) {
  return buf[pos] * 0x100000000 + buf.readUInt32BE(pos + 1);
}

module.exports = { Reader, Writer, writeU40, readU40 };
