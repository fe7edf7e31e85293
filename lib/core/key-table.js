'use strict';

/**
 * A set of fixed-length byte keys (txids, script hashes, outpoints) in flat arrays, each key
 * numbered by the entry it takes: what a reader's mempool indexes key their transactions by.
 * A Map keyed by latin1 strings holds a string object (~50 bytes and its header) and a
 * table entry per key; at 150,000 mempool transactions a worker holds some 850,000 keys,
 * which cost it ~90 MB that way and ~50 MB here: the key's bytes, its hash, a slot.
 *
 * Keys are given as latin1 strings of `keyLen` characters (what callers hold), and read
 * where they lie in the arena: nothing is allocated per lookup. Open addressing with linear
 * probing; a deleted key's slot is filled by shifting its followers back, so lookups never
 * meet tombstones. The hash is seeded per table: keys an attacker can grind (txids, script
 * hashes of scripts it chooses) cannot be aimed at one chain of slots.
 */
class KeyTable {
  /**
   * @param {number} keyLen a multiple of 4
   * @param {number} [seed] of the hash (a random one by default; a test's own to repeat a run)
   */
  constructor(keyLen, seed = Math.random() * 0x100000000) {
    if (!(keyLen > 0 && keyLen % 4 === 0)) throw new RangeError(`KeyTable: a key length of ${keyLen}`);
    this.keyLen = keyLen;
    this.seed = seed >>> 0;
    this.count = 0;
    /** entries given out so far (the free ones below are reused first) */
    this.used = 0;
    /** @type {number[]} */
    this.free = [];
    this._entries(64);
    this._slots(128);
  }

  get size() {
    return this.count;
  }

  /**
   * @param {string} key latin1, keyLen characters
   * @returns {number} its entry, or -1
   */
  entryOf(key) {
    if (key.length !== this.keyLen) return -1;
    const h = this._hash(key);
    const { table, mask } = this;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const t = table[i];
      if (t === 0) return -1;
      if (this.hashes[t - 1] === h && this._equals(t - 1, key)) return t - 1;
    }
  }

  /**
   * @param {string} key latin1, keyLen characters
   * @returns {number} its entry: the one it had, or a new one
   */
  insert(key) {
    if (key.length !== this.keyLen) throw new RangeError(`KeyTable: a key of ${key.length} characters in a table of ${this.keyLen}`);
    if (2 * (this.count + 1) > this.table.length) this._slots(2 * this.table.length);
    const h = this._hash(key);
    const { table, mask } = this;
    let i = h & mask;
    for (; table[i] !== 0; i = (i + 1) & mask) {
      const e = table[i] - 1;
      if (this.hashes[e] === h && this._equals(e, key)) return e;
    }
    if (!this.free.length && this.used === this.live.length) this._entries(2 * this.live.length);
    const e = this.free.length ? this.free.pop() : this.used++;
    this.arena.latin1Write(key, e * this.keyLen, this.keyLen);
    this.hashes[e] = h;
    this.live[e] = 1;
    table[i] = e + 1;
    this.count++;
    return e;
  }

  /** Deletes entry `e` (its number may be given to another key after). @param {number} e */
  delete(e) {
    if (!this.live[e]) return;
    const { table, mask, hashes } = this;
    let i = hashes[e] & mask;
    while (table[i] !== e + 1) i = (i + 1) & mask;
    // the followers of its run that may sit in its slot move back into it
    for (let j = (i + 1) & mask; table[j] !== 0; j = (j + 1) & mask) {
      const home = hashes[table[j] - 1] & mask;
      const between = i <= j ? home > i && home <= j : home > i || home <= j;
      if (!between) {
        table[i] = table[j];
        i = j;
      }
    }
    table[i] = 0;
    this.live[e] = 0;
    this.free.push(e);
    this.count--;
  }

  /** @param {number} e a live entry @returns {string} its key, latin1 */
  keyAt(e) {
    return this.arena.latin1Slice(e * this.keyLen, (e + 1) * this.keyLen);
  }

  /** The live entries, in no set order. @returns {Generator<number>} */
  *entries() {
    for (let e = 0; e < this.used; e++) if (this.live[e]) yield e;
  }

  /** @private */
  _hash(key) {
    let h = this.seed;
    for (let i = 0; i < this.keyLen; i += 4) {
      const w = key.charCodeAt(i) | (key.charCodeAt(i + 1) << 8) | (key.charCodeAt(i + 2) << 16) | (key.charCodeAt(i + 3) << 24);
      h = Math.imul(h ^ w, 0x9e3779b1);
      h ^= h >>> 15;
    }
    return h >>> 0;
  }

  /** @private */
  _equals(e, key) {
    const a = this.arena;
    const base = e * this.keyLen;
    for (let i = 0; i < this.keyLen; i++) if (a[base + i] !== key.charCodeAt(i)) return false;
    return true;
  }

  /** Room for `n` entries. @private */
  _entries(n) {
    const arena = Buffer.allocUnsafeSlow(n * this.keyLen);
    const hashes = new Uint32Array(n);
    const live = new Uint8Array(n);
    if (this.arena) {
      this.arena.copy(arena, 0, 0, this.used * this.keyLen);
      hashes.set(this.hashes);
      live.set(this.live);
    }
    this.arena = arena;
    this.hashes = hashes;
    this.live = live;
  }

  /** `n` slots (a power of 2), every live entry placed again. @private */
  _slots(n) {
    const table = new Int32Array(n);
    const mask = n - 1;
    for (let e = 0; e < this.used; e++) {
      if (!this.live[e]) continue;
      let i = this.hashes[e] & mask;
      while (table[i] !== 0) i = (i + 1) & mask;
      table[i] = e + 1;
    }
    this.table = table;
    this.mask = mask;
  }
}

module.exports = { KeyTable };
