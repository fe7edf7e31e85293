'use strict';

const { RowCache } = require('./rowcache');

/**
 * A backend's key-value surface (kvstore.js's, from lmdb.js or level.js) with the writer's
 * row cache (rowcache.js) in front of it while the sync catches up.
 *
 * Outside a bulk group every call goes to the backend, and a commit also updates the rows
 * the cache holds. Inside one (beginBulk .. endBulk), commits land in the cache instead and
 * every read of this process sees them (the backend's rows overlaid with the cache's); the
 * group reaches the backend as one commit at endBulk, guarded by the tip the group started
 * from, so the index on disk only ever moves from one group's tip to the next. Rows read
 * from the backend stay cached, clean, for the next groups, within the cache's budget.
 *
 * Other processes see only what was committed, as before. A process that reads the store
 * while it writes in groups would see their uncommitted blocks: the sync ends its groups for
 * good when it first catches up (SyncService's bulk groups), before anything else reads.
 */
class CachedKv {
  /** @param {object} base the backend's key-value surface */
  constructor(base) {
    this.base = base;
    /** @type {RowCache|null} */
    this.cache = null;
    this.bulk = null;
  }

  get(key) {
    return this.bulk ? readThrough(this.cache, key, () => this.base.get(key)) : this.base.get(key);
  }

  getMany(keys) {
    if (!this.bulk) return this.base.getMany(keys);
    const s = this.snapshot();
    return settle(s.getMany(keys), (rows) => {
      s.release();
      return rows;
    });
  }

  range(opts) {
    if (!this.bulk) return this.base.range(opts);
    return this.snapshot().range(opts, true);
  }

  snapshot() {
    return this.bulk ? new OverlaySnapshot(this.cache, this.base) : this.base.snapshot();
  }

  /**
   * @param {{keys: Buffer[], values: Array<Buffer|null>}} batch
   * @param {{key: Buffer, value: Buffer|undefined}} guard
   */
  write(batch, guard) {
    if (this.bulk) return this.writeInGroup(batch, guard);
    return settle(this.base.write(batch, guard), (ok) => {
      if (ok && this.cache) for (let i = 0; i < batch.keys.length; i++) this.cache.update(batch.keys[i], batch.values[i]);
      return ok;
    });
  }

  /** @private */
  writeInGroup(batch, guard) {
    const b = this.bulk;
    return settle(this.get(guard.key), (current) => {
      if (!sameRow(current, guard.value)) return false;
      // the backend's tip when the group's first write read it: the group commits on it
      if (!b.guard) b.guard = { key: guard.key, value: guard.value === undefined ? undefined : Buffer.from(guard.value) };
      try {
        for (let i = 0; i < batch.keys.length; i++) this.cache.set(batch.keys[i], batch.values[i]);
      } catch (err) {
        b.failed = true;
        throw err;
      }
      return true;
    });
  }

  /**
   * Opens a group: commits are kept in the cache (of `maxBytes`, the first time) until
   * endBulk.
   * @param {{maxBytes: number}} opts
   */
  beginBulk({ maxBytes }) {
    if (this.bulk) return;
    if (!this.cache) this.cache = new RowCache({ maxBytes });
    this.bulk = { guard: null, failed: false };
  }

  /** Whether the open group's rows fill the cache's budget. */
  bulkFull() {
    return Boolean(this.bulk && this.cache.full);
  }

  /**
   * Ends the open group: its rows go to the backend as one commit (unless `commit` is false
   * or a write failed half way: then they are dropped, and the cache with them).
   * @param {boolean} commit
   * @returns {Promise<'committed'|'discarded'|'conflict'|'none'>} conflict: another writer
   *   moved the tip since the group began; nothing of it was written
   */
  async endBulk(commit) {
    const b = this.bulk;
    if (!b) return 'none';
    this.bulk = null;
    if (!commit || b.failed) {
      this.cache.discard();
      return 'discarded';
    }
    if (this.cache.dirtyCount === 0) return 'committed';
    let ok;
    try {
      ok = await this.base.write(this.cache.dirtyRows(), b.guard);
    } catch (err) {
      this.cache.discard();
      throw err;
    }
    if (!ok) {
      this.cache.discard();
      return 'conflict';
    }
    this.cache.committed();
    return 'committed';
  }

  /** Drops the cache (between groups only): the sync caught up. */
  dropCache() {
    if (!this.bulk) this.cache = null;
  }

  /** @returns {object|null} the cache's figures, for metrics */
  cacheStats() {
    const c = this.cache;
    return c && { bytes: c.bytes, maxBytes: c.maxBytes, rows: c.n, dirty: c.dirtyCount, ...c.stats };
  }

  async close() {
    if (this.bulk) await this.endBulk(false);
    this.cache = null;
    return this.base.close();
  }

  compact() {
    if (this.bulk) throw Object.assign(new Error('cannot compact while a bulk group is open'), { code: 'ERR_IN_USE' });
    this.cache = null;
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
 * Reads inside a group: the cache's rows, else the backend's (a snapshot taken at the first
 * miss: the backend changes only at endBulk, never inside a read), which the cache keeps.
 */
class OverlaySnapshot {
  /**
   * @param {RowCache} cache
   * @param {object} base the backend's key-value surface
   */
  constructor(cache, base) {
    this.cache = cache;
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
    return readThrough(this.cache, key, () => this.backend().get(key));
  }

  getMany(keys) {
    const out = new Array(keys.length);
    let missing = null;
    for (let i = 0; i < keys.length; i++) {
      const v = this.cache.get(keys[i]);
      if (v === undefined) (missing || (missing = [])).push(i);
      else out[i] = v === null ? undefined : v;
    }
    if (!missing) return out;
    const keysMissing = missing.map((i) => keys[i]);
    return settle(this.backend().getMany(keysMissing), (rows) => {
      for (let k = 0; k < missing.length; k++) {
        this.cache.fill(keysMissing[k], rows[k]);
        out[missing[k]] = rows[k];
      }
      return out;
    });
  }

  /**
   * The backend's rows of the range with the cache's dirty rows laid over them (an async
   * iterable: the writer's ranges are short, one account's UTXO rows, a batch's blocks).
   * @param {{gte?: Buffer, lt?: Buffer, reverse?: boolean, limit?: number}} opts
   * @param {boolean} [releaseAtEnd] release this snapshot when the iteration ends
   */
  async* range({ gte, lt, reverse = false, limit } = {}, releaseAtEnd = false) {
    try {
      const dirty = this.cache.dirtyInRange(gte, lt, reverse);
      const rows = this.backend().range({ gte, lt, reverse, limit: dirty.length ? undefined : limit });
      yield* merge(this.cache, rows, dirty, reverse, limit);
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

/** The backend's rows (iterable or async iterable, in range order) and the dirty entries, merged. */
async function* merge(cache, rows, dirty, reverse, limit = Infinity) {
  let d = 0;
  let n = 0;
  const sign = reverse ? -1 : 1;
  for await (const row of rows) {
    while (d < dirty.length && sign * Buffer.compare(cache.keyOf(dirty[d]), row.key) < 0) {
      const e = dirty[d++];
      if (cache.valLen[e] < 0) continue;
      if (n++ >= limit) return;
      yield { key: cache.keyOf(e), value: cache.value(e) };
    }
    if (d < dirty.length && Buffer.compare(cache.keyOf(dirty[d]), row.key) === 0) {
      const e = dirty[d++];
      if (cache.valLen[e] < 0) continue;
      if (n++ >= limit) return;
      yield { key: cache.keyOf(e), value: cache.value(e) };
      continue;
    }
    if (n++ >= limit) return;
    yield row;
  }
  for (; d < dirty.length; d++) {
    const e = dirty[d];
    if (cache.valLen[e] < 0) continue;
    if (n++ >= limit) return;
    yield { key: cache.keyOf(e), value: cache.value(e) };
  }
}

/** A read through the cache: its row when it knows the key, else the backend's, kept. */
function readThrough(cache, key, read) {
  const v = cache.get(key);
  if (v !== undefined) return v === null ? undefined : v;
  return settle(read(), (row) => {
    cache.fill(key, row);
    return row;
  });
}

/** f(x) for a value or a promise of one, without a promise when there is none. */
function settle(x, f) {
  return x && typeof x.then === 'function' ? x.then(f) : f(x);
}

function sameRow(a, b) {
  if (a === undefined || a === null) return b === undefined || b === null;
  return b !== undefined && b !== null && Buffer.compare(a, b) === 0;
}

module.exports = { CachedKv };
