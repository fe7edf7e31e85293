'use strict';

const NEWLINE = 0x0a;

/**
 * Splits a byte stream into newline-terminated lines (the Electrum protocol's framing over
 * TCP and TLS), holding at most `maxLineBytes` of an unfinished line. Pure: bytes in, lines
 * out; the session decides what to do with an oversized line.
 */
class LineFramer {
  /** @param {number} maxLineBytes */
  constructor(maxLineBytes) {
    this.max = maxLineBytes;
    /** @type {Buffer[]} pieces of the line not finished yet */
    this.parts = [];
    this.size = 0;
  }

  /**
   * @param {Buffer} chunk
   * @returns {{lines: Buffer[], oversized: boolean}} the lines the chunk completes, in order
   *   (without the newline, a trailing CR dropped, empty lines skipped); `oversized` when an
   *   unfinished line passed the bound: the lines before it are still returned, the framer
   *   keeps nothing and should not be fed again
   */
  push(chunk) {
    const lines = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, start);
      if (nl === -1) break;
      const piece = chunk.subarray(start, nl);
      start = nl + 1;
      if (this.size + piece.length > this.max) return this.overflow(lines);
      let line = this.parts.length ? Buffer.concat([...this.parts, piece]) : piece;
      this.parts = [];
      this.size = 0;
      if (line.length && line[line.length - 1] === 0x0d) line = line.subarray(0, line.length - 1);
      if (line.length) lines.push(line);
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      if (this.size + rest.length > this.max) return this.overflow(lines);
      // a copy: the socket's chunk may be a view into a pooled buffer
      this.parts.push(Buffer.from(rest));
      this.size += rest.length;
    }
    return { lines, oversized: false };
  }

  overflow(lines) {
    this.parts = [];
    this.size = 0;
    return { lines, oversized: true };
  }
}

module.exports = { LineFramer };
