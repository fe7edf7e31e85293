'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { ClassicLevel } = require('classic-level');
const { KvStore } = require('./kvstore');
const { guardHolds } = require('./guard');
const { StoreError, UsageError } = require('../errors');
const { noIndex, notAnIndex } = require('../core/checks');

/**
 * The LevelDB backend (classic-level): the key-value schema of kvstore.js in one LevelDB
 * database whose files live directly in the datadir.
 *
 * **LevelDB allows one process at a time.** Opening takes an exclusive lock on the datadir;
 * a second process fails with ERR_LOCKED naming the holder. So `addrindex sync` and
 * `addrindex serve` cannot share a LevelDB datadir the way they share an LMDB one: stop one
 * first. `addrindex serve --store level` opens it in the primary process, and its HTTP
 * workers forward their reads there (lib/cluster/forward.js).
 *
 * Within one process every store object opened on the same datadir shares one handle
 * (LevelDB's lock is per process too), counted, and closed with the last of them.
 *
 * Writes: one atomic LevelDB batch per commit, tip included, after comparing the tip row
 * while holding the handle's write lock (no other writer exists: the process lock sees to
 * other processes, the write lock to this one). Batches go to LevelDB's log with a plain
 * write(), not fsync: a killed process loses nothing committed (the bytes are in the OS page
 * cache); a power loss can lose the last commits but not tear one — a batch is one
 * checksummed log record, and recovery drops a torn tail — so the index reopens at an earlier
 * block boundary and the sync resumes.
 *
 * Reads: a snapshot is a LevelDB snapshot; gets, getMany and iterators all read through it.
 */
class LevelStore extends KvStore {
  /**
   * @param {object} opts see AbstractStore, plus
   * @param {string} opts.datadir directory of the LevelDB database (created when writable)
   */
  constructor(opts) {
    super(opts);
    if (!opts.datadir || typeof opts.datadir !== 'string') {
      throw new UsageError('ERR_USAGE', 'the LevelDB store needs a datadir');
    }
    this.datadir = opts.datadir;
  }

  describe() {
    return `LevelDB datadir ${this.datadir}`;
  }

  get kind() {
    return 'level';
  }

  async openKv() {
    if (fs.existsSync(path.join(this.datadir, 'data.mdb'))) throw notAnIndex(this.describe(), 'an LMDB index (open it with --store lmdb)');
    if (this.readOnly && !fs.existsSync(path.join(this.datadir, 'CURRENT'))) throw noIndex(this.describe());
    return new LevelKv(await acquire(this.datadir));
  }
}

// ---------------------------------------------------------------------------------------
// one handle per datadir and process

/** @type {Map<string, Promise<SharedDb>>} by resolved datadir */
const handles = new Map();
/** @type {Map<string, Promise<void>>} handles being closed: a new open waits for the lock */
const closing = new Map();

/** Who holds the datadir, written beside LevelDB's own files for the lock error. */
const OWNER_FILE = 'addrindex.owner';

class SharedDb {
  constructor(key, db) {
    this.key = key;
    this.db = db;
    this.refs = 0;
    this.tail = Promise.resolve(); // the write lock: commits chain on it
  }

  /** Runs fn once every commit queued before it has finished. */
  exclusive(fn) {
    const run = this.tail.then(fn);
    this.tail = run.catch(() => {});
    return run;
  }
}

async function acquire(datadir) {
  const key = path.resolve(datadir);
  let pending = handles.get(key);
  if (!pending) {
    pending = (closing.get(key) || Promise.resolve()).then(() => openShared(key));
    handles.set(key, pending);
    pending.catch(() => handles.delete(key));
  }
  const shared = await pending;
  shared.refs++;
  return shared;
}

async function release(shared) {
  if (--shared.refs > 0) return;
  handles.delete(shared.key);
  fs.rmSync(path.join(shared.key, OWNER_FILE), { force: true });
  const done = shared.db.close();
  const settled = done.catch(() => {}).then(() => {
    if (closing.get(shared.key) === settled) closing.delete(shared.key);
  });
  closing.set(shared.key, settled);
  await done;
}

async function openShared(dir) {
  const db = new ClassicLevel(dir, {
    keyEncoding: 'buffer',
    valueEncoding: 'buffer',
    // a batch commits a few hundred thousand rows: a larger memtable flushes less often
    writeBufferSize: 32 * 1024 * 1024,
    // No Snappy: the rows are hashes, varints and already-compressed values, which it shrank by
    // ~6 % for ~15 % of the sync's CPU (every compaction compresses what it writes and
    // decompresses what it reads; docs/SCALING.md). LevelDB flags each block, so files written
    // compressed before still read.
    compression: false,
    // Uncompressed, a cached block is the same bytes as the file's page in the page cache:
    // LevelDB's default 8 MiB block cache, not 64, leaves the rest to the page cache, which
    // holds more of the files (the 5M chain in 1 GiB: 1.09-1.18x the rate, ~10 % less CPU)
    cacheSize: 8 * 1024 * 1024,
    maxOpenFiles: 2000,
  });
  try {
    await db.open();
  } catch (err) {
    const cause = err.cause || err;
    if (cause.code === 'LEVEL_LOCKED') {
      const owner = readOwner(dir);
      throw new StoreError('ERR_LOCKED', `LevelDB datadir ${dir} is open in another process` +
        `${owner ? ` (${owner})` : ''}: LevelDB allows one process at a time. Stop that process first ` +
        '(a sync, serve, status, verify or query on the same datadir), or use --store lmdb, whose readers ' +
        'run beside a writer', { datadir: dir, owner });
    }
    throw new StoreError('ERR_OPEN', `cannot open ${dir} as a LevelDB database: ${cause.message}`);
  }
  try {
    fs.writeFileSync(path.join(dir, OWNER_FILE), `pid ${process.pid}: ${[path.basename(process.argv[1] || ''), ...process.argv.slice(2)].join(' ').slice(0, 300)}\n`);
  } catch {
    // only ever read to name the holder in ERR_LOCKED; the lock itself is LevelDB's
  }
  return new SharedDb(dir, db);
}

function readOwner(dir) {
  try {
    return fs.readFileSync(path.join(dir, OWNER_FILE), 'utf8').trim();
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------
// the key-value surface of kvstore.js

/** The key-value surface kvstore.js needs, over a shared classic-level handle. */
class LevelKv {
  /** @param {SharedDb} shared */
  constructor(shared) {
    this.shared = shared;
    this.db = shared.db;
    this.closed = false;
  }

  get(key) {
    return this.db.getSync(key);
  }

  getMany(keys) {
    return getMany(this.db, keys, undefined);
  }

  range(opts) {
    return range(this.db, opts, undefined);
  }

  snapshot() {
    return new LevelSnapshot(this.db);
  }

  /**
   * @param {{keys: Buffer[], values: Array<Buffer|null>}} batch
   * @param {{key: Buffer, value: Buffer|undefined}} guard
   * @returns {Promise<boolean>}
   */
  write(batch, guard) {
    const db = this.db;
    return this.shared.exclusive(async () => {
      if (!guardHolds(db.getSync(guard.key), guard)) return false;
      const { keys, values } = batch;
      const ops = new Array(keys.length);
      for (let i = 0; i < keys.length; i++) {
        ops[i] = values[i] === null ? { type: 'del', key: keys[i] } : { type: 'put', key: keys[i], value: values[i] };
      }
      await db.batch(ops);
      return true;
    });
  }

  async close() {
    if (this.closed) return;
    this.closed = true;
    // commits already queued finish first
    await this.shared.exclusive(() => {});
    await release(this.shared);
  }

  sizeOnDisk() {
    let bytes = 0;
    for (const name of fs.readdirSync(this.shared.key)) {
      try {
        bytes += fs.statSync(path.join(this.shared.key, name)).size;
      } catch {
        // a table file removed by a compaction between the listing and the stat
      }
    }
    return bytes;
  }

  engineStats() {
    const filesAtLevel = [];
    for (let level = 0; level < 7; level++) filesAtLevel.push(Number(this.db.getProperty(`leveldb.num-files-at-level${level}`)));
    return {
      filesAtLevel,
      approximateMemoryUsage: Number(this.db.getProperty('leveldb.approximate-memory-usage')),
    };
  }
}

/** One LevelDB snapshot: a consistent view until release(). */
class LevelSnapshot {
  constructor(db) {
    this.db = db;
    this.snap = db.snapshot();
    this.opts = { snapshot: this.snap };
  }

  get(key) {
    return this.db.getSync(key, this.opts);
  }

  getMany(keys) {
    return getMany(this.db, keys, this.opts);
  }

  range(opts) {
    return range(this.db, opts, this.snap);
  }

  release() {
    if (this.snap) {
      // closing waits for reads still holding it; nothing waits on that here
      this.snap.close().catch(() => {});
      this.snap = null;
    }
  }
}

/**
 * Keys per native getMany call. A getMany reads its keys one after another on one thread of
 * libuv's pool; a batch's lookups (tens of thousands) split into parts read on several
 * threads at once, so when the index is larger than the memory the disk serves several
 * reads at a time instead of one.
 */
const GET_MANY_PART = 4096;

async function getMany(db, keys, opts) {
  if (keys.length <= GET_MANY_PART) return keys.length ? db.getMany(keys, opts) : [];
  const parts = [];
  for (let i = 0; i < keys.length; i += GET_MANY_PART) parts.push(db.getMany(keys.slice(i, i + GET_MANY_PART), opts));
  // concat keeps every place, a missing key's included
  return [].concat(...await Promise.all(parts));
}

/**
 * {gte, lt, reverse, limit} as an async iterable of {key, value}, read in chunks (one
 * native call per chunk instead of per row).
 */
async function* range(db, { gte, lt, reverse = false, limit } = {}, snapshot) {
  const o = { reverse };
  if (gte) o.gte = gte;
  if (lt) o.lt = lt;
  if (limit !== undefined) o.limit = limit;
  if (snapshot) o.snapshot = snapshot;
  const it = db.iterator(o);
  try {
    for (;;) {
      const chunk = await it.nextv(limit !== undefined && limit < 1000 ? limit : 1000);
      if (chunk.length === 0) return;
      for (const [key, value] of chunk) yield { key, value };
    }
  } finally {
    await it.close();
  }
}

module.exports = { LevelStore };
