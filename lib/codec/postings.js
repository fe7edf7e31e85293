'use strict';

/**
 * History entries ("postings"): per script hash, the TxNums of every transaction that funds
 * or spends it, in chain order, each with two flags.
 *
 * In memory an entry is one number, `txNum * 4 + flags` (a "posting"): sorting postings sorts
 * by TxNum, and a Float64Array holds them with no per-entry object. TxNum < 2^40 keeps it
 * exact (2^42 < 2^53).
 *
 * On disk an entry is one varint, `delta * 4 + flags`, where delta is the TxNum minus the
 * previous entry's (the first entry's delta is taken from a base the container supplies).
 * Entries are strictly increasing, so every delta after the first is at least 1.
 */

const { FUNDED, SPENT } = require('../core/rules');

/**
 * @param {number} txNum
 * @param {number} flags FUNDED | SPENT
 * @returns {number}
 */
function posting(txNum, flags) {
  return txNum * 4 + flags;
}

/**
 * Appends postings[from..to) to a value being written.
 * @param {import('./io').Writer} w
 * @param {Float64Array|number[]} postings
 * @param {number} from
 * @param {number} to
 * @param {number} base TxNum the first delta is taken from
 */
function writePostings(w, postings, from, to, base) {
  let prev = base;
  for (let i = from; i < to; i++) {
    const p = postings[i];
    const t = Math.floor(p / 4);
    w.varint((t - prev) * 4 + (p % 4));
    prev = t;
  }
}

/**
 * Reads `count` postings into out[at..at+count).
 * @param {import('./io').Reader} r
 * @param {number} count
 * @param {number} base TxNum the first delta is taken from
 * @param {boolean} firstIsBase the first entry's TxNum must equal base (a page keyed by it)
 * @param {Float64Array} out
 * @param {number} at
 */
function readPostings(r, count, base, firstIsBase, out, at) {
  const buf = r.buf;
  const end = r.end;
  let pos = r.pos;
  let prev = base;
  for (let i = 0; i < count; i++) {
    // one- and two-byte varints inline (most deltas); anything longer through readVarint's checks
    let v;
    const b0 = pos < end ? buf[pos] : 0x80;
    if (b0 < 0x80) {
      v = b0;
      pos++;
    } else if (pos + 1 < end && buf[pos + 1] < 0x80 && buf[pos + 1] !== 0) {
      v = (b0 & 0x7f) | (buf[pos + 1] << 7);
      pos += 2;
    } else {
      r.pos = pos;
      v = r.varint();
      pos = r.pos;
    }
    const f = v & 3;
    const d = (v - f) / 4;
    if (f === 0) {
      r.pos = pos;
      throw r.error('ERR_BAD_POSTING', `history entry ${i} has no funded/spent flag`);
    }
    if (i > 0 ? d === 0 : firstIsBase && d !== 0) {
      r.pos = pos;
      throw r.error('ERR_BAD_POSTING', `history entry ${i} is out of chain order`);
    }
    prev += d;
    out[at + i] = prev * 4 + f;
  }
  r.pos = pos;
}

module.exports = { FUNDED, SPENT, posting, writePostings, readPostings };
