'use strict';

const { toDisplayHex } = require('../chain/hash');

/**
 * The held transactions by txid, in flat arrays: a poll matches every txid the node lists
 * (150,000 of them, poll after poll, as hex in its reply) against what is held and marks it
 * seen, and that should touch neither 150,000 objects scattered over the heap nor make a
 * string of each. An open-addressing table keyed by a txid's first four bytes as displayed,
 * each bucket [key, slot + 1], so a probe reads one place; each slot's record [key, 64
 * lower-case hex digits as 16 int32 words] together, so a match compares where it reads: a
 * txid found costs two or three cache misses. Beside them, dense by slot, each slot's mark
 * (a poll's) and generation (a slot given back and taken again is another txid: list-match.js
 * tells a slot it remembered from the last poll by it).
 * @template T
 */
class TxidIndex {
  constructor() {
    /** @type {Array<T|undefined>} by slot */
    this.items = [];
    /** @type {number[]} slots given back */
    this.free = [];
    /** by slot: [key, hex × 16] (REC words) */
    this.recs = new Int32Array(REC * 1024);
    /** by slot: its last mark (mark()) */
    this.marks = new Int32Array(1024);
    /** by slot: how many times it was given back (remove()) */
    this.gens = new Int32Array(1024);
    /** open addressing, linear probing: [key, slot + 1] per bucket, slot + 1 = 0 empty */
    this.table = new Int32Array(2 * 2048);
    this.size = 0;
  }

  /**
   * The slot of the txid written as 64 hex digits at `at` in `buf` (a node's reply).
   * @param {Buffer} buf
   * @param {number} at
   * @returns {number} its slot, or −1 (not held, or not lower-case hex)
   */
  findHex(buf, at) {
    const key = keyOfHex(buf, at);
    if (key === null) return -1;
    const table = this.table;
    const mask = (table.length >>> 1) - 1;
    for (let t = key & mask; ; t = (t + 1) & mask) {
      const s = table[2 * t + 1] - 1;
      if (s < 0) return -1;
      if (table[2 * t] === key && this._sameHex(s, buf, at)) return s;
    }
  }

  /**
   * The slot of a txid given by its bytes.
   * @param {Buffer} buf
   * @param {number} at where its 32 bytes (internal order) start
   * @param {(item: T, buf: Buffer, at: number) => boolean} isTxidOf whether an item's txid is
   *   the 32 bytes at `at` in `buf`
   * @returns {number} its slot, or −1
   */
  find(buf, at, isTxidOf) {
    const key = keyOfBytes(buf, at);
    const table = this.table;
    const mask = (table.length >>> 1) - 1;
    for (let t = key & mask; ; t = (t + 1) & mask) {
      const s = table[2 * t + 1] - 1;
      if (s < 0) return -1;
      if (table[2 * t] === key && isTxidOf(this.items[s], buf, at)) return s;
    }
  }

  /** @param {number} slot @returns {T|undefined} */
  get(slot) {
    return this.items[slot];
  }

  /**
   * Holds `item` under the txid at `at` in `buf` (not held yet: the caller checks).
   * @param {Buffer} buf
   * @param {number} at where its 32 bytes (internal order) start
   * @param {T} item
   * @returns {number} its slot
   */
  add(buf, at, item) {
    const slot = this.free.length ? this.free.pop() : this.items.length;
    if (slot === this.items.length) {
      this.items.push(item);
      if (REC * this.items.length > this.recs.length) this._growSlots();
    } else {
      this.items[slot] = item;
    }
    const key = keyOfBytes(buf, at);
    const o = REC * slot;
    this.recs[o] = key;
    this.marks[slot] = 0;
    const digits = Buffer.from(toDisplayHex(buf.subarray(at, at + 32)), 'latin1');
    for (let w = 0; w < 16; w++) this.recs[o + 1 + w] = digits.readInt32LE(4 * w);
    this.size++;
    if (4 * this.size > this.table.length) this._rehash(this.table.length);
    else this._place(slot, key);
    return slot;
  }

  /** @param {number} slot a held one */
  remove(slot) {
    const table = this.table;
    const mask = (table.length >>> 1) - 1;
    let t = this.recs[REC * slot] & mask;
    while (table[2 * t + 1] !== slot + 1) t = (t + 1) & mask;
    // backward-shift deletion: the buckets after it that probed past it move up
    table[2 * t + 1] = 0;
    for (let j = (t + 1) & mask; table[2 * j + 1] !== 0; j = (j + 1) & mask) {
      const home = table[2 * j] & mask;
      const between = t <= j ? home > t && home <= j : home > t || home <= j;
      if (!between) {
        table[2 * t] = table[2 * j];
        table[2 * t + 1] = table[2 * j + 1];
        table[2 * j + 1] = 0;
        t = j;
      }
    }
    this.items[slot] = undefined;
    this.gens[slot]++;
    this.free.push(slot);
    this.size--;
  }

  /** @param {number} slot @returns {number} how many times the slot was given back */
  gen(slot) {
    return this.gens[slot];
  }

  /** Marks a slot with `mark` (a poll's epoch); says whether it bore another. */
  mark(slot, mark) {
    const was = this.marks[slot];
    this.marks[slot] = mark;
    return was !== mark;
  }

  /**
   * The held items whose mark is not `mark` (a sequential pass over the marks).
   * @param {number} mark
   * @returns {T[]}
   */
  unmarked(mark) {
    const out = [];
    for (let s = 0; s < this.items.length; s++) {
      if (this.marks[s] !== mark && this.items[s] !== undefined) out.push(this.items[s]);
    }
    return out;
  }

  _sameHex(slot, buf, at) {
    const r = this.recs;
    const o = REC * slot + 1;
    for (let w = 0, b = at; w < 16; w++, b += 4) {
      if (r[o + w] !== (buf[b] | (buf[b + 1] << 8) | (buf[b + 2] << 16) | (buf[b + 3] << 24))) return false;
    }
    return true;
  }

  _place(slot, key) {
    const table = this.table;
    const mask = (table.length >>> 1) - 1;
    let t = key & mask;
    while (table[2 * t + 1] !== 0) t = (t + 1) & mask;
    table[2 * t] = key;
    table[2 * t + 1] = slot + 1;
  }

  /** @param {number} buckets */
  _rehash(buckets) {
    this.table = new Int32Array(2 * buckets);
    for (let s = 0; s < this.items.length; s++) if (this.items[s] !== undefined) this._place(s, this.recs[REC * s]);
  }

  _growSlots() {
    const grow = (a) => {
      const b = new Int32Array(2 * a.length);
      b.set(a);
      return b;
    };
    this.recs = grow(this.recs);
    this.marks = grow(this.marks);
    this.gens = grow(this.gens);
  }
}

/** Words per slot record: key, 16 of hex digits. */
const REC = 17;

/** two hex digits' bytes (big-endian u16) → the byte they write (lower case only), or -1 */
const PAIR = new Int16Array(65536).fill(-1);
{
  const digits = [];
  for (let c = 0; c < 10; c++) digits.push([0x30 + c, c]);
  for (let c = 0; c < 6; c++) digits.push([0x61 + c, 10 + c]);
  for (const [h, hv] of digits) for (const [l, lv] of digits) PAIR[(h << 8) | l] = (hv << 4) | lv;
}

/**
 * The key of a txid written in hex: its first four bytes as displayed.
 * @returns {number|null} null when those eight characters are not lower-case hex digits
 */
function keyOfHex(buf, at) {
  const a = PAIR[(buf[at] << 8) | buf[at + 1]];
  const b = PAIR[(buf[at + 2] << 8) | buf[at + 3]];
  const c = PAIR[(buf[at + 4] << 8) | buf[at + 5]];
  const d = PAIR[(buf[at + 6] << 8) | buf[at + 7]];
  if ((a | b | c | d) < 0) return null;
  return a | (b << 8) | (c << 16) | (d << 24);
}

/** The same key from a txid's bytes (internal order: the displayed first four are its last). */
function keyOfBytes(buf, at) {
  return buf[at + 31] | (buf[at + 30] << 8) | (buf[at + 29] << 16) | (buf[at + 28] << 24);
}

module.exports = { TxidIndex };
