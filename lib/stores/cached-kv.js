'use strict';

const { RowCache } = require('./rowcache');
const { guardHolds } = require('./guard');

/**
 * A backend's key-value surface (kvstore.js's, from lmdb.js or level.js) with the writer's
 * row cache (rowcache.js) in front of it while the sync catches up.
 *
 * Inside a bulk group (beginBulk .. endBulk) commits land in the cache's active generation,
 * and every read of this process sees them: the active generation's rows, then the previous
 * one's, then the backend's. endBulk freezes the active generation and commits it as one
 * write, guarded by the tip the group started from, so the index on disk only ever moves
 * from one group's tip to the next; the commit runs in the background (LMDB: on a committer
 * thread) while the next group fills a new generation, which waits for it before its own
 * commit. The frozen generation answers reads until the next one replaces it, so a row
 * written or read in one group is found in memory by the next (young outputs, an active
 * script's account); a row read from the previous generation is copied into the active one.
 *
 * Outside a group, while the cache exists, reads still look in it (a commit may be under
 * way); writes wait for that commit, drop the cache and go to the backend. The sync drops
 * the cache when it first catches up (SyncService's bulk groups): readers that start in this
 * process then (a mempool follower) read the backend, which holds everything.
 */
class CachedKv {
  /** @param {object} base the backend's key-value surface */
  constructor(base) {
    this.base = base;
    /** @type {RowCache|null} the generation commits go to */
    this.active = null;
    /** @type {RowCache|null} the generation before: committed, or being committed */
    this.frozen = null;
    /** @type {Promise<boolean>|null} the frozen generation's commit */
    this.committing = null;
    this.bulk = null;
    this.maxBytes = 0;
    /** reads answered and not by the generations replaced so far */
    this.reads = { hits: 0, misses: 0 };
  }

  /** @private whether reads go through the cache */
  get cached() {
    return this.active !== null;
  }

  get(key) {
    if (!this.cached) return this.base.get(key);
    return readThrough(this.active, this.frozen, key, () => this.base.get(key));
  }

  getMany(keys) {
    if (!this.cached) return this.base.getMany(keys);
    const s = this.snapshot();
    return settle(s.getMany(keys), (rows) => {
      s.release();
      return rows;
    });
  }

  range(opts) {
    if (!this.cached) return this.base.range(opts);
    return this.snapshot().range(opts, true);
  }

  snapshot() {
    return this.cached ? new OverlaySnapshot(this.active, this.frozen, this.base) : this.base.snapshot();
  }

  /**
   * @param {{keys: Buffer[], values: Array<Buffer|null>}} batch
   * @param {{key: Buffer, value: Buffer|undefined}} guard
   */
  write(batch, guard) {
    if (this.bulk) return this.writeInGroup(batch, guard);
    if (!this.cached) return this.base.write(batch, guard);
    return this.dropCache().then((outcome) => outcome === 'committed' && this.base.write(batch, guard));
  }

  /** @private */
  writeInGroup(batch, guard) {
    const b = this.bulk;
    return settle(this.get(guard.key), (current) => {
      if (!guardHolds(current, guard)) return false;
      // the tip the group's first write read: the group commits on it
      if (!b.guard) b.guard = { key: Buffer.from(guard.key), value: guard.value === undefined ? undefined : Buffer.from(guard.value) };
      try {
        for (let i = 0; i < batch.keys.length; i++) this.active.set(batch.keys[i], batch.values[i]);
      } catch (err) {
        b.failed = true;
        throw err;
      }
      return true;
    });
  }

  /**
   * Opens a group: commits are kept in the cache until endBulk. `maxBytes` (the first time)
   * bounds both generations together.
   * @param {{maxBytes: number}} opts
   */
  beginBulk({ maxBytes }) {
    if (this.bulk) return;
    if (!this.active) {
      this.maxBytes = maxBytes;
      this.active = new RowCache({ maxBytes: maxBytes / 2 });
    }
    this.bulk = { guard: null, failed: false };
  }

  /** Whether the open group's generation holds its share of the budget. */
  bulkFull() {
    return Boolean(this.bulk && this.active.full);
  }

  /**
   * Ends the open group: its generation is committed as one write (unless `commit` is false
   * or a write failed half way: then it is dropped). The commit of the group before is
   * awaited first: its failure surfaces here.
   * @param {boolean} commit
   * @param {{wait?: boolean}} [opts] wait: until this group's commit is done too
   * @returns {Promise<'committed'|'pending'|'discarded'|'conflict'|'none'>} pending: under way
   *   (wait for it with settle()); conflict: another writer moved the tip since the group
   *   began, nothing of it was written
   */
  async endBulk(commit, { wait = false } = {}) {
    const b = this.bulk;
    if (!b) return 'none';
    this.bulk = null;
    if (!commit || b.failed) {
      // the rows read stay trustworthy only in the frozen generation: start a fresh one
      this.active = new RowCache({ maxBytes: this.maxBytes / 2 });
      return 'discarded';
    }
    if (this.active.dirtyCount === 0) return wait ? this.settle() : 'committed';
    const before = await this.settle();
    if (before === 'conflict') {
      this.active = new RowCache({ maxBytes: this.maxBytes / 2 });
      return 'conflict';
    }
    const gen = this.active;
    if (this.frozen) this.count(this.frozen);
    this.frozen = gen;
    this.active = new RowCache({ maxBytes: this.maxBytes / 2 });
    const commitOf = this.base.commitAsync ? this.base.commitAsync(gen.share(), b.guard) : Promise.resolve(this.base.write(gen.dirtyRows(), b.guard));
    this.committing = commitOf;
    // observed by the next settle(); never an unhandled rejection meanwhile
    commitOf.catch(() => {});
    return wait ? this.settle() : 'pending';
  }

  /**
   * Waits for the commit under way, if any.
   * @returns {Promise<'committed'|'conflict'>}
   */
  async settle() {
    const c = this.committing;
    if (!c) return 'committed';
    let ok;
    try {
      ok = await c;
    } catch (err) {
      this.committing = null;
      this.forget();
      throw err;
    }
    this.committing = null;
    if (!ok) {
      this.forget();
      return 'conflict';
    }
    return 'committed';
  }

  /**
   * Waits for the commit under way and drops the cache (between groups only): the sync
   * caught up, or a write goes to the backend directly.
   * @returns {Promise<'committed'|'conflict'>} the outcome of the commit waited for
   */
  async dropCache() {
    if (this.bulk) return 'committed';
    try {
      return await this.settle();
    } finally {
      this.forget();
    }
  }

  /** @private */
  forget() {
    if (this.active) this.count(this.active);
    if (this.frozen) this.count(this.frozen);
    this.active = null;
    this.frozen = null;
  }

  /** @private a generation's reads join the totals when it goes */
  count(gen) {
    this.reads.hits += gen.stats.hits;
    this.reads.misses += gen.stats.misses;
  }

  /**
   * The cache's figures, for metrics: bytes and rows held (both generations), rows written in
   * the open one, reads it answered (hits) and passed to the store (misses) since it began.
   * @returns {{bytes: number, maxBytes: number, rows: number, dirty: number, hits: number, misses: number}|null}
   */
  cacheStats() {
    const a = this.active;
    const f = this.frozen;
    const live = (k) => (a ? a.stats[k] : 0) + (f ? f.stats[k] : 0);
    return {
      bytes: a ? a.bytes + (f ? f.bytes : 0) : 0, maxBytes: this.maxBytes, rows: a ? a.n + (f ? f.n : 0) : 0, dirty: a ? a.dirtyCount : 0,
      hits: this.reads.hits + live('hits'), misses: this.reads.misses + live('misses'),
    };
  }

  async close() {
    this.bulk = null;
    try {
      await this.settle();
    } finally {
      this.forget();
      await this.base.close();
    }
  }

  async compact() {
    if (this.bulk) throw Object.assign(new Error('cannot compact while a bulk group is open'), { code: 'ERR_IN_USE' });
    await this.dropCache();
    return this.base.compact();
  }

  sizeOnDisk() {
    return this.base.sizeOnDisk();
  }

  engineStats() {
    return this.base.engineStats();
  }
}

/**
 * Reads through the cache: the active generation's rows, the frozen one's, else the
 * backend's (a snapshot taken at the first miss: the backend changes only by the frozen
 * generation's commit, which writes exactly rows the frozen generation answers for).
 */
class OverlaySnapshot {
  /**
   * @param {RowCache} active
   * @param {RowCache|null} frozen
   * @param {object} base the backend's key-value surface
   */
  constructor(active, frozen, base) {
    this.active = active;
    this.frozen = frozen;
    this.base = base;
    this.snap = null;
    // the backend's snapshot reads synchronously (LMDB): so do these
    if (base.syncReads) {
      this.forEachValue = (keys, fn) => {
        const rows = this.getMany(keys);
        for (let i = 0; i < keys.length; i++) fn(i, rows[i]);
      };
    }
  }

  /** @private */
  backend() {
    if (!this.snap) this.snap = this.base.snapshot();
    return this.snap;
  }

  get(key) {
    return readThrough(this.active, this.frozen, key, () => this.backend().get(key));
  }

  getMany(keys) {
    const out = new Array(keys.length);
    let missing = null;
    for (let i = 0; i < keys.length; i++) {
      const v = cachedRow(this.active, this.frozen, keys[i]);
      if (v === undefined) (missing || (missing = [])).push(i);
      else out[i] = v === null ? undefined : v;
    }
    if (!missing) return out;
    const keysMissing = missing.map((i) => keys[i]);
    return settle(this.backend().getMany(keysMissing), (rows) => {
      for (let k = 0; k < missing.length; k++) {
        this.active.fill(keysMissing[k], rows[k]);
        out[missing[k]] = rows[k];
      }
      return out;
    });
  }

  /**
   * The backend's rows of the range with both generations' written rows laid over them (an
   * async iterable: the writer's ranges are short, one account's UTXO rows, a batch's blocks).
   * @param {{gte?: Buffer, lt?: Buffer, reverse?: boolean, limit?: number}} opts
   * @param {boolean} [releaseAtEnd] release this snapshot when the iteration ends
   */
  async* range({ gte, lt, reverse = false, limit } = {}, releaseAtEnd = false) {
    try {
      const written = writtenInRange(this.active, this.frozen, gte, lt, reverse);
      const rows = this.backend().range({ gte, lt, reverse, limit: written.length ? undefined : limit });
      yield* merge(rows, written, reverse, limit);
    } finally {
      if (releaseAtEnd) this.release();
    }
  }

  release() {
    if (this.snap) {
      this.snap.release();
      this.snap = null;
    }
  }
}

/**
 * The generations' written rows of a range as {key, value} (value null: deleted), in range
 * order, the active generation's where both wrote a key.
 */
function writtenInRange(active, frozen, gte, lt, reverse) {
  const rows = (gen) => gen.dirtyInRange(gte, lt, reverse).map((e) => ({ key: gen.keyOf(e), value: gen.value(e) }));
  const a = rows(active);
  if (!frozen) return a;
  const f = rows(frozen);
  if (!f.length) return a;
  if (!a.length) return f;
  const out = [];
  const sign = reverse ? -1 : 1;
  let i = 0;
  let j = 0;
  while (i < a.length || j < f.length) {
    const c = i >= a.length ? 1 : j >= f.length ? -1 : sign * Buffer.compare(a[i].key, f[j].key);
    if (c <= 0) {
      if (c === 0) j++;
      out.push(a[i++]);
    } else {
      out.push(f[j++]);
    }
  }
  return out;
}

/** The backend's rows (iterable or async iterable, in range order) and the written rows, merged. */
async function* merge(rows, written, reverse, limit = Infinity) {
  let d = 0;
  let n = 0;
  const sign = reverse ? -1 : 1;
  for await (const row of rows) {
    while (d < written.length && sign * Buffer.compare(written[d].key, row.key) < 0) {
      const w = written[d++];
      if (w.value === null) continue;
      if (n++ >= limit) return;
      yield w;
    }
    if (d < written.length && Buffer.compare(written[d].key, row.key) === 0) {
      const w = written[d++];
      if (w.value === null) continue;
      if (n++ >= limit) return;
      yield w;
      continue;
    }
    if (n++ >= limit) return;
    yield row;
  }
  for (; d < written.length; d++) {
    const w = written[d];
    if (w.value === null) continue;
    if (n++ >= limit) return;
    yield w;
  }
}

/**
 * A row from the cache: the active generation's, else the frozen one's (then copied into the
 * active one, which outlives it); undefined when neither knows the key, null when it has no row.
 */
function cachedRow(active, frozen, key) {
  const v = active.get(key);
  if (v !== undefined || !frozen) return v;
  const f = frozen.get(key);
  if (f !== undefined) active.fill(key, f);
  return f;
}

/** A read through the cache, else the backend's row, then kept in the active generation. */
function readThrough(active, frozen, key, read) {
  const v = cachedRow(active, frozen, key);
  if (v !== undefined) return v === null ? undefined : v;
  return settle(read(), (row) => {
    active.fill(key, row);
    return row;
  });
}

/** f(x) for a value or a promise of one, without a promise when there is none. */
function settle(x, f) {
  return x && typeof x.then === 'function' ? x.then(f) : f(x);
}

module.exports = { CachedKv };
