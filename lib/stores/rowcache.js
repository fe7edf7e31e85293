'use strict';

const { sortRows } = require('./packed-rows');

/**
 * One generation of the writer's rows held in memory between commits (cached-kv.js keeps
 * two): the rows a sync wrote since the generation began ("dirty", deletes included), and
 * rows it read that equal the committed ones ("clean", absent keys included). Together they
 * are what Bitcoin Core's dbcache is to its UTXO set, for every row the sync reads and
 * writes: the young outputs the next blocks spend, the accounts of the scripts they pay again.
 *
 * Rows live in an arena of shared memory (chunks of a 32nd of the budget, at most 16 MiB; a
 * value as large as a chunk in a chunk of its own), entries in typed columns, and keys in an open-addressing
 * table: about 40 bytes per entry beside its key and value, no object per row — a cache of
 * millions of rows must not cost the garbage collector what it holds. A row written again
 * appends its new value; the old bytes stay until the generation is dropped.
 *
 * What it does not know: when to commit, what a guard is, which backend persists it
 * (cached-kv.js); what the rows mean (kvstore.js and the codecs).
 */

/** Arena chunks: a 32nd of the budget, between 64 KiB and 16 MiB (a power of two). */
const MIN_CHUNK = 1 << 16;
const MAX_CHUNK = 1 << 24;

const DIRTY = 1;

/** Tables whose dirty rows are listed by account (hashX), for the range reads of one account. */
const BY_ACCOUNT = new Uint8Array(256);
BY_ACCOUNT[0x75 /* u */] = 1;
BY_ACCOUNT[0x68 /* h */] = 1;
/** A table byte and a hashX: the bytes a range of one account's rows shares. */
const ACCOUNT_PREFIX = 13;

class RowCache {
  /** @param {{maxBytes: number}} opts what this generation may hold, overhead included */
  constructor({ maxBytes }) {
    if (!(Number.isFinite(maxBytes) && maxBytes > 0)) throw new TypeError('RowCache needs a positive maxBytes');
    this.maxBytes = maxBytes;
    let chunk = MIN_CHUNK;
    while (chunk < MAX_CHUNK && chunk * 32 < maxBytes) chunk *= 2;
    this.chunkSize = chunk;
    this.chunks = [];
    this.chunkIndex = -1;
    this.chunkBytes = 0;
    this.pos = chunk;
    this.n = 0;
    const cap = 1 << 10;
    this.keyAt = new Float64Array(cap);
    this.keyLen = new Uint16Array(cap);
    this.valAt = new Float64Array(cap);
    this.valLen = new Int32Array(cap);
    this.flags = new Uint8Array(cap);
    this.hashes = new Int32Array(cap);
    this.slots = new Int32Array(2 * cap).fill(-1);
    this.mask = 2 * cap - 1;
    this.dirty = 0;
    this.dirtyBytes = 0;
    /** @type {Map<number, number[]>} dirty entries by group (groupOf), for range reads */
    this.groups = new Map();
    this.stats = { hits: 0, misses: 0 };
  }

  /** Bytes held: the arena's chunks and the entries' columns and slots. */
  get bytes() {
    return this.chunkBytes + this.slots.byteLength + this.keyAt.length * 27;
  }

  /** Whether the generation holds its budget. */
  get full() {
    return this.bytes >= this.maxBytes;
  }

  /** Rows written in this generation. */
  get dirtyCount() {
    return this.dirty;
  }

  // --- lookups ---------------------------------------------------------------------------

  /**
   * @param {Uint8Array} key
   * @returns {number} the entry, or -1 when the generation does not know the row
   */
  find(key) {
    const h = hashKey(key);
    const { slots, mask, hashes } = this;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const e = slots[s];
      if (e < 0) return -1;
      if (hashes[e] === h && this.sameKey(e, key)) return e;
    }
  }

  /**
   * The row as the writer would read it: undefined when the generation does not know it,
   * null when the key has no row, else a view of the cached bytes (read-only; it stays
   * valid as long as the generation is referenced).
   * @param {Uint8Array} key
   * @returns {Buffer|null|undefined}
   */
  get(key) {
    const e = this.find(key);
    if (e < 0) {
      this.stats.misses++;
      return undefined;
    }
    this.stats.hits++;
    return this.value(e);
  }

  /** @param {number} e */
  value(e) {
    const len = this.valLen[e];
    return len < 0 ? null : this.view(this.valAt[e], len);
  }

  /** @param {number} e */
  keyOf(e) {
    return this.view(this.keyAt[e], this.keyLen[e]);
  }

  /** @param {number} e */
  isDelete(e) {
    return this.valLen[e] < 0;
  }

  // --- filling and writing ---------------------------------------------------------------

  /**
   * Remembers a committed row (null or undefined: no such row) the writer read, unless the
   * generation knows the key already (a row written is newer than anything read).
   * @param {Uint8Array} key
   * @param {Uint8Array|null|undefined} value
   */
  fill(key, value) {
    const h = hashKey(key);
    const s = this.slotFor(key, h);
    if (this.slots[s] >= 0) return;
    this.store(this.insert(s, key, h), value);
  }

  /**
   * Writes a row (null: deletes it), to be committed with the generation.
   * @param {Uint8Array} key
   * @param {Uint8Array|null} value
   */
  set(key, value) {
    const h = hashKey(key);
    const s = this.slotFor(key, h);
    let e = this.slots[s];
    if (e < 0) e = this.insert(s, key, h);
    else if (this.valLen[e] > 0 && this.flags[e] & DIRTY) this.dirtyBytes -= this.valLen[e];
    this.store(e, value);
    if (!(this.flags[e] & DIRTY)) {
      this.flags[e] |= DIRTY;
      this.dirty++;
      this.dirtyBytes += key.length;
      const g = groupOf(key);
      const list = this.groups.get(g);
      if (list) list.push(e);
      else this.groups.set(g, [e]);
    }
    if (value) this.dirtyBytes += value.length;
  }

  // --- what the generation wrote ---------------------------------------------------------

  /**
   * The dirty rows in key order, handed out one by one (views of the arena), so a commit of
   * millions of rows holds no object per row.
   * @returns {{length: number, sorted: true, each: (fn: (key: Buffer, value: Buffer|null) => void) => void}}
   */
  dirtyRows() {
    const order = sortRows(this.chunks, this.chunkSize, this.keyAt, this.keyLen, this.dirtyList());
    return {
      length: order.length,
      sorted: true,
      each: (fn) => {
        for (let i = 0; i < order.length; i++) fn(this.keyOf(order[i]), this.value(order[i]));
      },
    };
  }

  /**
   * The dirty rows as a committer on another thread reads them: the arena's chunks (shared
   * memory, not copied) and copies of the written entries' columns. The generation must not
   * be written to afterwards (cached-kv.js freezes it); it stays readable here meanwhile.
   * @returns {SharedRows}
   */
  share() {
    const list = Int32Array.from(this.dirtyList());
    const n = list.length;
    const keyAt = new Float64Array(n);
    const keyLen = new Uint16Array(n);
    const valAt = new Float64Array(n);
    const valLen = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const e = list[i];
      keyAt[i] = this.keyAt[e];
      keyLen[i] = this.keyLen[e];
      valAt[i] = this.valAt[e];
      valLen[i] = this.valLen[e];
    }
    return { chunks: this.chunks.map((c) => c.buffer), chunkSize: this.chunkSize, keyAt, keyLen, valAt, valLen };
  }

  /**
   * Dirty rows (deletes included) with gte <= key < lt, in key order (reverse: descending),
   * as entries: lay them over the committed rows of that range.
   * @param {Uint8Array|undefined} gte
   * @param {Uint8Array|undefined} lt
   * @param {boolean} reverse
   * @returns {number[]}
   */
  dirtyInRange(gte, lt, reverse) {
    if (this.dirty === 0) return [];
    let candidates;
    if (gte && lt && BY_ACCOUNT[gte[0]] && gte.length >= ACCOUNT_PREFIX && Buffer.compare(lt, successor(gte, ACCOUNT_PREFIX)) <= 0) {
      candidates = this.groups.get(groupOf(gte)) || [];
    } else if (gte && lt && !BY_ACCOUNT[gte[0]] && Buffer.compare(lt, successor(gte, 1)) <= 0) {
      candidates = this.groups.get(groupOf(gte)) || [];
    } else {
      candidates = this.dirtyList();
    }
    const out = [];
    for (const e of candidates) {
      const k = this.keyOf(e);
      if (gte && Buffer.compare(k, gte) < 0) continue;
      if (lt && Buffer.compare(k, lt) >= 0) continue;
      out.push(e);
    }
    out.sort((a, b) => Buffer.compare(this.keyOf(a), this.keyOf(b)));
    if (reverse) out.reverse();
    return out;
  }

  // --- internals -------------------------------------------------------------------------

  /** @private */
  dirtyList() {
    const list = [];
    for (const g of this.groups.values()) for (const e of g) list.push(e);
    return list;
  }

  /** @private the slot holding key, or the empty slot where it would go */
  slotFor(key, h) {
    const { slots, mask, hashes } = this;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const e = slots[s];
      if (e < 0 || (hashes[e] === h && this.sameKey(e, key))) return s;
    }
  }

  /** @private */
  insert(s, key, h) {
    if (this.n === this.keyAt.length) this.grow();
    if (2 * (this.n + 1) > this.slots.length) {
      // at most half full: a bigger table, and the key's slot in it
      this.rehash(2 * this.slots.length);
      s = this.slotFor(key, h);
    }
    const e = this.n++;
    const at = this.alloc(key.length);
    this.put(at, key);
    this.keyAt[e] = at;
    this.keyLen[e] = key.length;
    this.hashes[e] = h;
    this.valLen[e] = -1;
    this.flags[e] = 0;
    this.slots[s] = e;
    return e;
  }

  /** @private */
  store(e, value) {
    if (value === null || value === undefined) {
      this.valLen[e] = -1;
      return;
    }
    const at = this.alloc(value.length);
    this.put(at, value);
    this.valAt[e] = at;
    this.valLen[e] = value.length;
  }

  /** @private arena space for n bytes: an address (chunk index * chunkSize + offset) */
  alloc(n) {
    const size = this.chunkSize;
    if (n >= size) {
      this.chunks.push(sharedBuffer(n));
      this.chunkBytes += n;
      return (this.chunks.length - 1) * size;
    }
    if (this.pos + n > size) {
      this.chunks.push(sharedBuffer(size));
      this.chunkBytes += size;
      this.chunkIndex = this.chunks.length - 1;
      this.pos = 0;
    }
    const at = this.chunkIndex * size + this.pos;
    this.pos += n;
    return at;
  }

  /** @private */
  put(at, bytes) {
    const c = this.chunks[Math.floor(at / this.chunkSize)];
    const o = at % this.chunkSize;
    const n = bytes.length;
    if (n <= 64) for (let i = 0; i < n; i++) c[o + i] = bytes[i];
    else c.set(bytes, o);
  }

  /** @private */
  copyOut(at, len, out, to) {
    const c = this.chunks[Math.floor(at / this.chunkSize)];
    const o = at % this.chunkSize;
    if (len <= 64) for (let i = 0; i < len; i++) out[to + i] = c[o + i];
    else c.copy(out, to, o, o + len);
  }

  /** @private */
  view(at, len) {
    const o = at % this.chunkSize;
    return this.chunks[Math.floor(at / this.chunkSize)].subarray(o, o + len);
  }

  /** @private */
  sameKey(e, key) {
    const n = key.length;
    if (this.keyLen[e] !== n) return false;
    const at = this.keyAt[e];
    const c = this.chunks[Math.floor(at / this.chunkSize)];
    const o = at % this.chunkSize;
    for (let i = 0; i < n; i++) if (c[o + i] !== key[i]) return false;
    return true;
  }

  /** @private */
  grow() {
    const cap = 2 * this.keyAt.length;
    const g = (A, old) => {
      const x = new A(cap);
      x.set(old);
      return x;
    };
    this.keyAt = g(Float64Array, this.keyAt);
    this.keyLen = g(Uint16Array, this.keyLen);
    this.valAt = g(Float64Array, this.valAt);
    this.valLen = g(Int32Array, this.valLen);
    this.flags = g(Uint8Array, this.flags);
    this.hashes = g(Int32Array, this.hashes);
  }

  /** @private */
  rehash(size) {
    this.slots = new Int32Array(size).fill(-1);
    this.mask = size - 1;
    const { slots, mask, hashes } = this;
    for (let e = 0; e < this.n; e++) {
      let s = hashes[e] & mask;
      while (slots[s] >= 0) s = (s + 1) & mask;
      slots[s] = e;
    }
  }
}

/**
 * A chunk of the arena: shared memory, so a committer thread reads the rows where they are.
 * @param {number} n
 */
function sharedBuffer(n) {
  return Buffer.from(new SharedArrayBuffer(n));
}

/**
 * @typedef {object} SharedRows
 * @property {SharedArrayBuffer[]} chunks
 * @property {number} chunkSize
 * @property {Float64Array} keyAt   per written row: where its key is (chunk index * chunkSize + offset)
 * @property {Uint16Array} keyLen
 * @property {Float64Array} valAt
 * @property {Int32Array} valLen    -1: the row is deleted
 */

/** FNV-1a over the key's bytes, then a final mix: keys here share their first byte. */
function hashKey(key) {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key[i], 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  return h & 0x7fffffff;
}

/**
 * The group a dirty row is listed under, as a number (no string per row): its table byte,
 * and for per-account tables the first five bytes of its hashX too (two accounts sharing
 * them share a list; a range read filters by key anyway).
 */
function groupOf(key) {
  if (!BY_ACCOUNT[key[0]] || key.length < ACCOUNT_PREFIX) return key[0];
  return (((key[0] * 256 + key[1]) * 256 + key[2]) * 256 + key[3]) * 65536 + key[4] * 256 + key[5] + 2 ** 50;
}

/** The smallest key above every key that starts with key's first n bytes. */
function successor(key, n) {
  const s = Buffer.from(key.subarray(0, n));
  for (let i = n - 1; i >= 0; i--) {
    if (s[i] !== 0xff) {
      s[i]++;
      return s.subarray(0, i + 1);
    }
  }
  return Buffer.alloc(65, 0xff);
}

module.exports = { RowCache };
