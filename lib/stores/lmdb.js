'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { open, ABORT } = require('lmdb');
const { KvStore } = require('./kvstore');
const { guardHolds } = require('./guard');
const { StoreError, UsageError } = require('../errors');
const { noIndex, notAnIndex } = require('../core/checks');
const { Prefetcher } = require('./prefetcher');
const { compactEnv, untilCompacted, compactingOwner, allocated } = require('./lmdb-compact');
const { inspectDataFile, mapFits } = require('./lmdb-preflight');

/**
 * Readers map 1 TiB of address space: virtual only, so they never remap however far the
 * writer grows the file. (lmdb-js grows a full map by mapping the file again at twice the size
 * and keeps the old mappings alive, each with the pages it had touched resident.)
 */
const READER_MAP_SIZE = 2 ** 40;

/**
 * The page size of every environment: LMDB's default, 4 KiB, on purpose. Larger pages dirty
 * fewer pages per transaction once the hash-keyed tables outgrow a batch (on the 5M-tx chain
 * 16 KiB pages took 14 % less main-thread CPU per transaction), but the LMDB that lmdb-js
 * 3.5 builds fails page splits with MDB_PAGE_FULL at 16 and 64 KiB on this schema's rows
 * (the conformance suite's reads-during-commits case: "mdb_node_add: no room in page"), and
 * a failed split stops the sync at that block for good. (profiles/README.md)
 */
const PAGE_SIZE = 4096;

/** The writer's map never starts below this (the file's length is the map's: see openKv). */
const MIN_WRITER_MAP = 2 ** 26;

/**
 * The LMDB backend (lmdb-js): the key-value schema of kvstore.js in one LMDB environment,
 * one unnamed database, prefix bytes as tables (layout.js).
 *
 * Writes: one `transactionSync` per commit. The batch is fully built before the transaction
 * starts, so it holds the writer lock only for the puts themselves; a throw aborts it and
 * nothing is written. Commits use lmdb-js's default overlapping sync on Linux/macOS: the
 * commit is visible at once and its fsync completes after the lock is released. A killed
 * process loses nothing that was committed (the data is in the OS page cache); a power loss
 * can lose the last commits but never tears one — LMDB's meta pages switch atomically, so the
 * index reopens at an earlier block boundary and the sync resumes from there.
 *
 * The writer maps the file writable (MDB_WRITEMAP): a dirtied page is written in place in
 * the map instead of being copied into a malloc'd page that LMDB tracks in a sorted array
 * (one insertion, a memmove of that array, per dirtied page: on the 5M-tx chain that array
 * was 37 % of the sync's CPU, and the cause of most of its slowdown). The pages written for a
 * commit are still new or free pages, never ones a committed snapshot uses, so a process
 * killed mid-commit leaves the previous tip intact as before. With WRITEMAP, LMDB sizes the
 * file to the map (sparse beyond the data): the writer maps 1.25 times the bytes the file
 * really uses when it opens (at least 64 MiB), which trims the file's length back to about
 * its data, and lmdb-js doubles the map when it fills. (`du` shows what the file holds; its
 * length runs up to twice that.)
 *
 * Reads: every query runs in its own read transaction (a snapshot), so it sees one committed
 * tip from start to end. Any number of processes may open the datadir with readOnly: true
 * beside the one writer; they never block it.
 */
class LmdbStore extends KvStore {
  /**
   * @param {object} opts see AbstractStore, plus
   * @param {string} opts.datadir directory of the LMDB environment (created when writable)
   * @param {'auto'|'on'|'off'} [opts.prefetch='off'] a writer's reads ahead of its batches
   *   (prefetcher.js): auto while the file is more than half the memory the process may use.
   *   Off by default: in a 1 GiB cgroup on the 5M-tx chain the sync was 1.4–1.6× faster
   *   without them (docs/SCALING.md)
   * @param {(pid: number) => void} [opts.onCompactionWait] a reader opening while process
   *   `pid` compacts the datadir waits for it; told once
   * @param {number} [opts.mapRoom=0] bytes the writer's map leaves free beyond the data at
   *   least (writerMapSize): a process that will also write a mempool snapshot asks for room
   *   for it, so that the snapshot's rows do not make lmdb-js map the file again
   */
  constructor(opts) {
    super(opts);
    if (!opts.datadir || typeof opts.datadir !== 'string') {
      throw new UsageError('ERR_USAGE', 'the LMDB store needs a datadir');
    }
    const mode = opts.prefetch === undefined ? 'off' : opts.prefetch;
    if (!['auto', 'on', 'off'].includes(mode)) throw new UsageError('ERR_USAGE', `prefetch is auto, on or off, got ${opts.prefetch}`);
    this.datadir = opts.datadir;
    this.prefetcher = this.readOnly ? null : new Prefetcher({ datadir: this.datadir, mode });
    this.onCompactionWait = opts.onCompactionWait;
    const room = opts.mapRoom === undefined ? 0 : opts.mapRoom;
    if (!Number.isSafeInteger(room) || room < 0) throw new UsageError('ERR_USAGE', `mapRoom is a count of bytes, got ${opts.mapRoom}`);
    this.mapRoom = room;
  }

  prefetch(blocks) {
    return this.prefetcher && this.kv ? this.prefetcher.prefetch(blocks) : null;
  }

  async close() {
    if (this.prefetcher) await this.prefetcher.close();
    await super.close();
  }

  describe() {
    return `datadir ${this.datadir}`;
  }

  get kind() {
    return 'lmdb';
  }

  /**
   * Rewrites the environment with every row in key order into full pages, and without the
   * free pages copy-on-write leaves behind (a commit's dirtied pages are freed only once the
   * next commit no longer needs the old ones, and random inserts leave B-tree pages about two
   * thirds full): the file shrinks to about its rows plus LMDB's per-row overhead. Offline:
   * the store must be open writable and no other process may have the datadir open (a
   * process that had it open would keep reading the replaced file): refused with ERR_IN_USE
   * while one reads, or, on Linux, has it open at all (lmdb-compact.js lockHolders).
   * @returns {Promise<{before: number, after: number, rows: number}>} file bytes, rows copied
   */
  async compact() {
    this.assertWritable();
    // the prefetcher's thread holds the environment too: it must let go of the old file
    if (this.prefetcher) await this.prefetcher.close();
    return this.kv.compact();
  }

  async openKv() {
    if (this.readOnly) {
      // a reader must not open the file a compaction is about to replace (compact())
      for (;;) {
        await untilCompacted(this.datadir, this.onCompactionWait);
        const kv = await this.openEnv();
        if (!compactingOwner(this.datadir)) return kv;
        await kv.close();
      }
    }
    return this.openEnv();
  }

  /** @private */
  async openEnv() {
    const file = path.join(this.datadir, 'data.mdb');
    // lmdb-js crashes the process when an open fails (lmdb-preflight.js): refuse what would fail
    const head = inspectFile(file, this.describe());
    if (this.readOnly && (head.state === 'absent' || head.state === 'creating')) throw noIndex(this.describe());
    if (head.state !== 'ok' && head.state !== 'absent' && !(head.state === 'creating' && head.size === 0)) {
      throw notAnIndex(this.describe(), UNOPENABLE[head.state](head));
    }
    const st = statOrNull(file);
    const mapSize = this.readOnly ? READER_MAP_SIZE : writerMapSize(st, this.mapRoom);
    const room = mapFits(mapSize);
    if (!room.fits) {
      throw new StoreError('ERR_OPEN', `cannot open ${this.describe()}: LMDB maps ${mapSize} bytes, and this process's address space is limited to ` +
        `${room.limit} bytes (ulimit -v) with ${room.used} in use`);
    }
    let db;
    const options = {
      path: this.datadir,
      encoding: 'binary',
      keyEncoding: 'binary',
      readOnly: this.readOnly,
      // cluster workers each hold a reader slot
      maxReaders: 512,
      mapSize,
      useWritemap: !this.readOnly,
      pageSize: PAGE_SIZE,
      // MDB_NORDAHEAD (madvise MADV_RANDOM): a page fault reads its page, not the disk's
      // read-ahead window around it (8 MiB on this machine's disk). Every lookup here is a
      // random one; once the file outgrows the page cache, read-around made the 10M-tx sync
      // read ~3 MB from disk per fault (docs/SCALING.md, "Beyond RAM").
      noReadAhead: true,
    };
    try {
      db = open(options);
    } catch (err) {
      throw new StoreError('ERR_OPEN', `cannot open ${this.describe()} as an LMDB environment: ${err.message}`);
    }
    return new LmdbKv(db, this.datadir, () => this.openKv());
  }
}

/**
 * The writer's map: 1.25 times the bytes the file has allocated (its data: the tail beyond is
 * sparse), or those bytes and `room` if more, at least MIN_WRITER_MAP. LMDB raises a map below
 * the data's end to that end.
 *
 * The room is for what a process knows it will write beyond the sync's own growth: a mempool
 * follower's rows (at 150,000 transactions the file grew by ~140 MB). When a write finds the
 * map full, lmdb-js maps the file again at twice its data and keeps the old mapping until the
 * environment closes, with every page it had touched resident: a page in both counts twice in
 * the process's RSS (the follower of bench/mempool.js on a 58 MB index: 48 MB counted twice).
 * @param {fs.Stats|null} st
 * @param {number} [room=0]
 */
function writerMapSize(st, room = 0) {
  const used = st ? allocated(st) : 0;
  const step = 2 ** 26; // 64 MiB
  return Math.max(MIN_WRITER_MAP, Math.ceil(Math.max(1.25 * used, used + room) / step) * step);
}

function statOrNull(file) {
  try {
    return fs.statSync(file);
  } catch (err) {
    if (err.code === 'ENOENT') return null;
    throw new StoreError('ERR_OPEN', `cannot read ${file}: ${err.message}`);
  }
}

function inspectFile(file, describe) {
  try {
    return inspectDataFile(file);
  } catch (err) {
    throw new StoreError('ERR_OPEN', `cannot read ${file} (${describe}): ${err.message}`);
  }
}

/** Why a data.mdb in each state LMDB cannot open is not an index, for ERR_NOT_AN_INDEX. */
const UNOPENABLE = {
  creating: () => 'a data.mdb whose first page is still empty (an index being created, or a file of zeros)',
  'cut-short': (h) => `a data.mdb cut short (${h.size} bytes, less than its two ${h.pageSize}-byte meta pages)`,
  foreign: () => 'a data.mdb that is not an LMDB environment',
  'other-version': (h) => `an LMDB environment of format version ${h.version}, not lmdb-js's`,
};

/** The key-value surface kvstore.js needs, over an lmdb-js root database. */
class LmdbKv {
  /**
   * @param {object} db lmdb-js root database
   * @param {string} dir
   * @param {() => Promise<LmdbKv>} reopen opens the environment again (after compact)
   */
  constructor(db, dir, reopen) {
    this.db = db;
    this.dir = dir;
    this.reopen = reopen;
  }

  get(key) {
    return this.db.getBinary(key);
  }

  getMany(keys) {
    return getMany(this.db, keys, undefined);
  }

  range(opts) {
    return range(this.db, opts, undefined);
  }

  snapshot() {
    // inside a bulk group, reads go through its write transaction: lmdb-js reads a get there
    // whatever transaction it is given, but a range in the one it is given, so a snapshot
    // with a read transaction of its own would mix the two states
    return new LmdbSnapshot(this.db, !this.bulk);
  }

  /**
   * @param {{keys: Buffer[], values: Array<Buffer|null>}} batch
   * @param {{key: Buffer, value: Buffer|undefined}} guard
   */
  write(batch, guard) {
    // Synchronous on purpose: lmdb-js's asynchronous writes (the batch as one conditional
    // block committed on its write thread) took ~25% less time on bench/stores.js's 104k-row
    // commit, but their commit completes only on an event-loop turn, which a caller whose
    // reads all resolve as microtasks never yields (the conformance suite's interleaved
    // reader spun forever); and their condition sees only a row's first 8 bytes.
    const db = this.db;
    const { keys, values } = batch;
    const order = keyOrder(keys);
    const run = () => {
      if (!guardHolds(db.getBinary(guard.key), guard)) return false;
      for (let k = 0; k < order.length; k++) {
        const i = order[k];
        if (values[i] === null) db.removeSync(keys[i]);
        else db.putSync(keys[i], values[i]);
      }
      return true;
    };
    if (this.bulk) {
      // inside the open transaction: a put that throws half way leaves a torn batch in it,
      // so the whole group is then discarded, never committed
      try {
        return run();
      } catch (err) {
        this.bulk.failed = true;
        throw err;
      }
    }
    const done = db.transactionSync(() => (run() ? true : ABORT)) === true;
    // refused: another process committed what the guard names since this one's reads began.
    // lmdb-js keeps a read transaction until the next macrotask, so a read right after would
    // still miss that commit (a sync creating an index while a second writer process did found
    // no meta row either way, and stopped with ERR_NO_INDEX)
    if (!done) db.resetReadTxn();
    return done;
  }

  /**
   * Opens one write transaction that the following writes join until endBulk(): a group of
   * batches committed at once dirties each page of the hash-keyed tables once for the group
   * instead of once per batch. The pages a group reads and writes are the sync's cache: under
   * MDB_WRITEMAP they are the file's own pages in the page cache, not the process's memory,
   * and the commit writes each once. lmdb-js reads every get and range of this process
   * through an open write transaction, snapshots included, so while a group is open this
   * process sees its uncommitted writes: only a writer with no readers of its own may use it
   * (the sync's catch-up). Other processes see the last commit, as always.
   */
  beginBulk() {
    if (this.bulk) return;
    let settle;
    const open = new Promise((resolve) => { settle = resolve; });
    const committed = Promise.resolve(this.db.transactionSync(() => open));
    // the outcome is awaited by endBulk; a rejection before then must not go unhandled
    committed.catch(() => {});
    this.bulk = { settle, committed, failed: false };
  }

  /**
   * Commits the open group (or discards it, when `commit` is false or a write in it failed).
   * @param {boolean} commit
   * @returns {Promise<boolean>} whether it was committed
   */
  async endBulk(commit) {
    const b = this.bulk;
    if (!b) return false;
    this.bulk = null;
    const keep = commit && !b.failed;
    b.settle(keep ? true : ABORT);
    await b.committed;
    return keep;
  }

  async close() {
    if (this.bulk) await this.endBulk(false);
    await this.db.close();
  }

  /** See LmdbStore#compact. */
  async compact() {
    if (this.bulk) throw new StoreError('ERR_IN_USE', 'cannot compact while a bulk group is open');
    const r = await compactEnv(this.db, this.dir, { pageSize: PAGE_SIZE, mapSize: writerMapSize(statOrNull(path.join(this.dir, 'data.mdb'))) });
    const fresh = await this.reopen();
    this.db = fresh.db;
    return r;
  }

  sizeOnDisk() {
    try {
      return fs.statSync(path.join(this.dir, 'data.mdb')).size;
    } catch {
      return 0;
    }
  }

  engineStats() {
    const s = this.db.getStats();
    return {
      pageSize: s.pageSize,
      treeDepth: s.treeDepth,
      branchPages: s.treeBranchPageCount,
      leafPages: s.treeLeafPageCount,
      overflowPages: s.overflowPages,
      entries: s.entryCount,
      mapSize: s.mapSize,
      lastPage: s.lastPageNumber,
      freePages: s.free ? s.free.treeLeafPageCount + s.free.overflowPages : 0,
    };
  }
}

/** One LMDB read transaction: a consistent view until release(). */
class LmdbSnapshot {
  /**
   * @param {object} db
   * @param {boolean} ownTxn false: read through the open write transaction (a bulk group)
   */
  constructor(db, ownTxn) {
    this.db = db;
    this.txn = ownTxn ? db.useReadTransaction() : null;
    this.opts = ownTxn ? { transaction: this.txn } : undefined;
  }

  get(key) {
    return this.db.getBinary(key, this.opts);
  }

  getMany(keys) {
    return getMany(this.db, keys, this.txn);
  }

  /** fn(i, value) with LMDB's reused buffer: no copy per row (see query.js eachValue). */
  forEachValue(keys, fn) {
    for (let i = 0; i < keys.length; i++) fn(i, this.db.getBinaryFast(keys[i], this.opts));
  }

  /**
   * fn(i, value) for the n keys keyOf(i), which may fill and return one Buffer each time:
   * lmdb-js copies the key before reading, and fn sees LMDB's reused value buffer.
   */
  forEachValueOf(n, keyOf, fn) {
    for (let i = 0; i < n; i++) fn(i, this.db.getBinaryFast(keyOf(i), this.opts));
  }

  range(opts) {
    return range(this.db, opts, this.txn);
  }

  release() {
    if (this.txn) {
      this.txn.done();
      this.txn = null;
    }
  }
}

/**
 * The order to write a batch in: by the first four key bytes, ties in batch order (so two
 * writes of one key keep their order). B-tree inserts in key order walk the same pages one
 * after another, which costs a fraction of the cache misses of random order; a full Buffer
 * sort would cost more than it saves, a packed numeric sort does not.
 * @param {Buffer[]} keys
 * @returns {Uint32Array|Float64Array} indices into keys
 */
function keyOrder(keys) {
  const n = keys.length;
  if (n >= 2 ** 21) {
    const idx = new Uint32Array(n);
    for (let i = 0; i < n; i++) idx[i] = i;
    return idx;
  }
  const packed = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const k = keys[i];
    const head = k[0] * 0x1000000 + (k.length > 1 ? k[1] * 0x10000 : 0) + (k.length > 2 ? k[2] * 0x100 : 0) + (k.length > 3 ? k[3] : 0);
    packed[i] = head * 0x200000 + i;
  }
  packed.sort();
  for (let i = 0; i < n; i++) packed[i] %= 0x200000;
  return packed;
}

function getMany(db, keys, txn) {
  const opts = txn ? { transaction: txn } : undefined;
  const out = new Array(keys.length);
  for (let i = 0; i < keys.length; i++) out[i] = db.getBinary(keys[i], opts);
  return out;
}

// above every key of the schema, as the start of a reverse scan with no upper bound
const TOP = Buffer.alloc(64, 0xff);

/**
 * {gte, lt, reverse, limit} in lmdb-js terms: forward start/end are [start, end); reverse
 * runs from start down to end, so the bounds swap and change their inclusiveness.
 */
function range(db, { gte, lt, reverse = false, limit } = {}, txn) {
  const o = { limit };
  if (txn) o.transaction = txn;
  if (reverse) {
    o.reverse = true;
    o.start = lt || TOP;
    o.exclusiveStart = true;
    if (gte) {
      o.end = gte;
      o.inclusiveEnd = true;
    }
  } else {
    if (gte) o.start = gte;
    if (lt) o.end = lt;
  }
  return db.getRange(o);
}

module.exports = { LmdbStore };
