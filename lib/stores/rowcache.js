'use strict';

/**
 * Rows of the key-value schema held in the writer's memory between commits: the rows a sync
 * has written and not yet committed ("dirty", deletes included), and rows it read that still
 * equal the committed ones ("clean", absent keys included), within one byte budget. It is
 * what Bitcoin Core's dbcache is to its UTXO set, for every row the sync reads and writes:
 * the young outputs the next blocks spend, the accounts of the scripts they pay again.
 *
 * Rows live in an arena (chunks of a 32nd of the budget, at most 16 MiB; a value as large
 * as a chunk in a chunk of its own),
 * entries in typed columns, and keys in an open-addressing table: about 40 bytes per entry
 * beside its key and value, no object per row — a cache of millions of rows must not cost
 * the garbage collector what it holds. A row written again appends its new value; the old
 * bytes are garbage until the next compaction, which happens only when the cache is
 * trimmed after a commit.
 *
 * What it does not know: when to commit, what a guard is, which backend persists it
 * (cached-kv.js); what the rows mean (kvstore.js and the codecs).
 */

/** Arena chunks: a 32nd of the budget, between 64 KiB and 16 MiB (a power of two). */
const MIN_CHUNK = 1 << 16;
const MAX_CHUNK = 1 << 24;

const DIRTY = 1;
const USED = 2; // read or written since the last commit
const PREV = 4; // ... and in the interval before it

/** Bytes an entry costs beside its key and value: its columns and its share of the slots. */
const ENTRY_OVERHEAD = 40;

/** Tables whose dirty rows are grouped by hashX (1 + 12 bytes), for the range reads of one account. */
const GROUP_BY_HASHX = new Set([0x75 /* u */, 0x68 /* h */]);
const HASHX_GROUP = 13;

class RowCache {
  /**
   * @param {{maxBytes: number}} opts the budget: dirty and clean rows with their overhead
   */
  constructor({ maxBytes }) {
    if (!(Number.isFinite(maxBytes) && maxBytes > 0)) throw new TypeError('RowCache needs a positive maxBytes');
    this.maxBytes = maxBytes;
    let chunk = MIN_CHUNK;
    while (chunk < MAX_CHUNK && chunk * 32 < maxBytes) chunk *= 2;
    /** values of a chunk's size or more get a chunk of their own */
    this.chunkSize = chunk;
    this.reset();
  }

  /** Forgets every row. */
  reset() {
    this.chunks = [];
    this.chunk = null;
    this.chunkIndex = -1;
    this.chunkBytes = 0;
    this.pos = this.chunkSize;
    this.allocated = 0; // arena bytes handed out
    this.garbage = 0; // of them, values replaced since
    this.n = 0;
    const cap = 1 << 12;
    this.keyAt = new Float64Array(cap);
    this.keyLen = new Uint16Array(cap);
    this.valAt = new Float64Array(cap);
    this.valLen = new Int32Array(cap);
    this.flags = new Uint8Array(cap);
    this.hashes = new Int32Array(cap);
    this.slots = new Int32Array(2 * cap).fill(-1);
    this.mask = 2 * cap - 1;
    this.dirty = 0;
    /** @type {Map<string, number[]>} dirty entries by group (see groupOf), for range reads */
    this.groups = new Map();
    this.stats = { hits: 0, misses: 0, evicted: 0, trims: 0 };
  }

  /**
   * Bytes held: the arena's chunks (replaced values included, until a trim compacts them)
   * and the entries' columns and slots.
   */
  get bytes() {
    let b = this.chunkBytes + this.slots.byteLength;
    b += this.keyAt.byteLength + this.keyLen.byteLength + this.valAt.byteLength + this.valLen.byteLength + this.flags.byteLength + this.hashes.byteLength;
    return b;
  }

  /** Whether the rows fill the budget (the writer should commit, then trim). */
  get full() {
    return this.bytes >= this.maxBytes;
  }

  /** Rows written and not yet committed. */
  get dirtyCount() {
    return this.dirty;
  }

  // --- lookups ---------------------------------------------------------------------------

  /**
   * @param {Uint8Array} key
   * @returns {number} the entry, or -1 when the cache does not know the row
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
   * The row as the writer would read it: undefined when the cache does not know it, null
   * when the key has no row, else a view of the cached bytes (read-only; it stays valid).
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
    this.flags[e] |= USED;
    return this.value(e);
  }

  /** @param {number} e */
  value(e) {
    const len = this.valLen[e];
    if (len < 0) return null;
    return this.view(this.valAt[e], len);
  }

  // --- filling and writing ---------------------------------------------------------------

  /**
   * Remembers a committed row (null: no such row) the writer read, unless the cache knows the
   * key already (a dirty row is newer than anything read from the store).
   * @param {Uint8Array} key
   * @param {Uint8Array|null|undefined} value
   */
  fill(key, value) {
    const h = hashKey(key);
    const s = this.slotFor(key, h);
    if (this.slots[s] >= 0) return;
    const e = this.insert(s, key, h);
    this.store(e, value);
    this.flags[e] = USED;
  }

  /**
   * Writes a row (null: deletes it), to be committed with the others.
   * @param {Uint8Array} key
   * @param {Uint8Array|null} value
   */
  set(key, value) {
    const h = hashKey(key);
    const s = this.slotFor(key, h);
    let e = this.slots[s];
    if (e < 0) {
      e = this.insert(s, key, h);
      this.flags[e] = 0;
    } else if (this.valLen[e] > 0) {
      this.garbage += this.valLen[e];
    }
    this.store(e, value);
    if (!(this.flags[e] & DIRTY)) {
      this.dirty++;
      const g = groupOf(key);
      const list = this.groups.get(g);
      if (list) list.push(e);
      else this.groups.set(g, [e]);
    }
    this.flags[e] = DIRTY | USED;
  }

  /**
   * A committed write made outside the cache (not through `set`): the rows it holds for
   * those keys take the committed values.
   * @param {Uint8Array} key
   * @param {Uint8Array|null} value
   */
  update(key, value) {
    const e = this.find(key);
    if (e < 0) return;
    if (this.flags[e] & DIRTY) throw new Error('RowCache.update of a row not yet committed');
    if (this.valLen[e] > 0) this.garbage += this.valLen[e];
    this.store(e, value);
  }

  // --- committing ------------------------------------------------------------------------

  /**
   * The dirty rows in key order, for one commit: a batch for a backend's write that hands
   * out each row as it is written (views of the cache's bytes), so a commit of millions of
   * rows holds no object per row.
   * @returns {{length: number, sorted: true, each: (fn: (key: Buffer, value: Buffer|null) => void) => void}}
   */
  dirtyRows() {
    const order = this.sortedDirty();
    return {
      length: order.length,
      sorted: true,
      each: (fn) => {
        for (let i = 0; i < order.length; i++) {
          const e = order[i];
          fn(this.view(this.keyAt[e], this.keyLen[e]), this.value(e));
        }
      },
    };
  }

  /**
   * The dirty rows were committed: they are clean now. Then, when the rows exceed half the
   * budget (the other half is room for the next batches' writes), only half the budget is
   * kept: first the rows touched both since the last commit and in the interval before it
   * (an active script's account, a transaction spent from again and again), then the rows
   * touched since the last commit, newest first (the young outputs the next blocks spend);
   * the rest is dropped.
   */
  committed() {
    for (const list of this.groups.values()) for (const e of list) this.flags[e] &= ~DIRTY;
    this.groups.clear();
    this.dirty = 0;
    if (this.bytes > this.maxBytes / 2) {
      this.stats.trims++;
      const before = this.n;
      const keep = new Uint8Array(this.n);
      let room = this.maxBytes / 2;
      const take = (e) => {
        const size = ENTRY_OVERHEAD + this.keyLen[e] + Math.max(0, this.valLen[e]);
        if (size > room) return false;
        room -= size;
        keep[e] = 1;
        return true;
      };
      for (let e = this.n - 1; e >= 0 && room > 0; e--) if ((this.flags[e] & (USED | PREV)) === (USED | PREV)) take(e);
      for (let e = this.n - 1; e >= 0 && room > 0; e--) if (!keep[e] && (this.flags[e] & USED)) take(e);
      this.rebuild((e) => keep[e] === 1);
      this.stats.evicted += before - this.n;
    } else if (this.garbage > this.allocated / 2) {
      this.rebuild(() => true);
    }
    for (let e = 0; e < this.n; e++) this.flags[e] = this.flags[e] & USED ? PREV : 0;
  }

  /** The writes since the last commit are abandoned: nothing cached can be trusted to be committed. */
  discard() {
    const stats = this.stats;
    this.reset();
    this.stats = stats;
  }

  /**
   * Dirty rows (deletes included) with gte <= key < lt, in key order (reverse: descending),
   * as entries: overlay them on the committed rows of that range.
   * @param {Uint8Array|undefined} gte
   * @param {Uint8Array|undefined} lt
   * @param {boolean} reverse
   * @returns {number[]}
   */
  dirtyInRange(gte, lt, reverse) {
    if (this.dirty === 0) return [];
    let candidates;
    if (gte && lt && GROUP_BY_HASHX.has(gte[0]) && gte.length >= HASHX_GROUP && Buffer.compare(lt, successor(gte, HASHX_GROUP)) <= 0) {
      candidates = this.groups.get(groupOf(gte)) || [];
    } else if (gte && lt && !GROUP_BY_HASHX.has(gte[0]) && Buffer.compare(lt, successor(gte, 1)) <= 0) {
      candidates = this.groups.get(groupOf(gte)) || [];
    } else {
      candidates = [];
      for (const list of this.groups.values()) for (const e of list) candidates.push(e);
    }
    const out = [];
    for (const e of candidates) {
      const k = this.keyOf(e);
      if (gte && Buffer.compare(k, gte) < 0) continue;
      if (lt && Buffer.compare(k, lt) >= 0) continue;
      out.push(e);
    }
    out.sort((a, b) => this.compareEntries(a, b));
    if (reverse) out.reverse();
    return out;
  }

  /** @param {number} e */
  keyOf(e) {
    return this.view(this.keyAt[e], this.keyLen[e]);
  }

  // --- internals -------------------------------------------------------------------------

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
      // at most half full: grow the table, and find the slot again
      this.rehash(this.slots.length * 2);
      s = this.slotFor(key, h);
    }
    const e = this.n++;
    this.keyAt[e] = this.alloc(key.length);
    this.put(this.keyAt[e], key);
    this.keyLen[e] = key.length;
    this.hashes[e] = h;
    this.valLen[e] = -1;
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
    this.allocated += n;
    const size = this.chunkSize;
    if (n >= size) {
      this.chunks.push(Buffer.allocUnsafeSlow(n));
      this.chunkBytes += n;
      return (this.chunks.length - 1) * size;
    }
    if (this.pos + n > size) {
      this.chunk = Buffer.allocUnsafeSlow(size);
      this.chunkBytes += size;
      this.chunks.push(this.chunk);
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
  compareEntries(a, b) {
    return Buffer.compare(this.keyOf(a), this.keyOf(b));
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

  /**
   * @private Keeps the entries `keep` accepts (never a dirty one dropped: only called with
   * none dirty), copied into a fresh arena: the garbage of replaced values goes.
   */
  rebuild(keep) {
    const old = {
      n: this.n, keyAt: this.keyAt, keyLen: this.keyLen, valAt: this.valAt, valLen: this.valLen, flags: this.flags,
      hashes: this.hashes, chunks: this.chunks,
    };
    const size = this.chunkSize;
    const view = (at, len) => {
      const o = at % size;
      return old.chunks[Math.floor(at / size)].subarray(o, o + len);
    };
    let count = 0;
    for (let e = 0; e < old.n; e++) if (keep(e)) count++;
    const stats = this.stats;
    this.reset();
    this.stats = stats;
    let cap = this.keyAt.length;
    while (cap < count) cap *= 2;
    if (cap > this.keyAt.length) {
      this.keyAt = new Float64Array(cap);
      this.keyLen = new Uint16Array(cap);
      this.valAt = new Float64Array(cap);
      this.valLen = new Int32Array(cap);
      this.flags = new Uint8Array(cap);
      this.hashes = new Int32Array(cap);
    }
    let slots = this.slots.length;
    while (slots < 2 * count + 2) slots *= 2;
    if (slots > this.slots.length) {
      this.slots = new Int32Array(slots).fill(-1);
      this.mask = slots - 1;
    }
    for (let e = 0; e < old.n; e++) {
      if (!keep(e)) continue;
      const d = this.n++;
      this.keyAt[d] = this.alloc(old.keyLen[e]);
      this.put(this.keyAt[d], view(old.keyAt[e], old.keyLen[e]));
      this.keyLen[d] = old.keyLen[e];
      this.hashes[d] = old.hashes[e];
      this.flags[d] = old.flags[e];
      this.valLen[d] = old.valLen[e];
      if (old.valLen[e] >= 0) {
        this.valAt[d] = this.alloc(old.valLen[e]);
        this.put(this.valAt[d], view(old.valAt[e], old.valLen[e]));
      }
      let s = old.hashes[e] & this.mask;
      while (this.slots[s] >= 0) s = (s + 1) & this.mask;
      this.slots[s] = d;
    }
  }

  /** @private the dirty entries in key order */
  sortedDirty() {
    const list = [];
    for (const g of this.groups.values()) for (const e of g) list.push(e);
    return sortByKey(this, list);
  }
}

/**
 * Entries in key order: bucketed by their first two key bytes (a counting sort), then each
 * bucket sorted by the next four packed with the entry's place in the bucket, compared in
 * full only where those six bytes tie. Keys here are hashes or big-endian numbers after a
 * table byte, so six bytes almost always decide.
 * @param {RowCache} cache
 * @param {number[]} list
 * @returns {Int32Array}
 */
function sortByKey(cache, list) {
  const n = list.length;
  const { chunks, keyAt, keyLen, chunkSize } = cache;
  const byte = (e, i) => (i < keyLen[e] ? chunks[Math.floor(keyAt[e] / chunkSize)][(keyAt[e] % chunkSize) + i] : 0);
  const head = new Uint16Array(n);
  const counts = new Int32Array(65537);
  for (let i = 0; i < n; i++) {
    const e = list[i];
    const h = (byte(e, 0) << 8) | byte(e, 1);
    head[i] = h;
    counts[h + 1]++;
  }
  for (let b = 1; b <= 65536; b++) counts[b] += counts[b - 1];
  const bucketed = new Int32Array(n);
  const fill = counts.slice(0, 65536);
  for (let i = 0; i < n; i++) bucketed[fill[head[i]]++] = list[i];
  const out = new Int32Array(n);
  const SLOT = 0x200000;
  const whole = (x, y) => cache.compareEntries(x, y);
  let packed = new Float64Array(1024);
  for (let b = 0; b < 65536; b++) {
    const from = counts[b];
    const to = counts[b + 1];
    const m = to - from;
    if (m === 0) continue;
    if (m === 1) {
      out[from] = bucketed[from];
      continue;
    }
    if (m >= SLOT) {
      out.set(Array.from(bucketed.subarray(from, to)).sort(whole), from);
      continue;
    }
    if (packed.length < m) packed = new Float64Array(2 * m);
    const p = packed.subarray(0, m);
    for (let i = 0; i < m; i++) {
      const e = bucketed[from + i];
      p[i] = ((byte(e, 2) * 0x1000000) + (byte(e, 3) << 16) + (byte(e, 4) << 8) + byte(e, 5)) * SLOT + i;
    }
    p.sort();
    for (let i = 0; i < m; i++) out[from + i] = bucketed[from + (p[i] % SLOT)];
    // six bytes tie (or a key shorter than six): settle those runs by the whole key
    for (let i = 1; i < m; i++) {
      const top = Math.floor(p[i - 1] / SLOT);
      if (Math.floor(p[i] / SLOT) !== top) continue;
      let k = i;
      while (k + 1 < m && Math.floor(p[k + 1] / SLOT) === top) k++;
      out.set(Array.from(out.subarray(from + i - 1, from + k + 1)).sort(whole), from + i - 1);
      i = k;
    }
  }
  return out;
}

/** FNV-1a over the key's bytes, then a final mix: keys here share their first byte. */
function hashKey(key) {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key[i], 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  return h & 0x7fffffff;
}

/** The group a dirty row is listed under: its table and, for per-account tables, its hashX. */
function groupOf(key) {
  if (GROUP_BY_HASHX.has(key[0]) && key.length >= HASHX_GROUP) return Buffer.prototype.latin1Slice.call(key, 0, HASHX_GROUP);
  return String.fromCharCode(key[0]);
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

module.exports = { RowCache, ENTRY_OVERHEAD };
