'use strict';

const { UsageError } = require('../errors');

/**
 * When a batch of parsed blocks is committed. A batch is one store.apply: one atomic commit,
 * one getPrevouts round for every input the batch cannot resolve itself. Bigger batches
 * amortize the commit, resolve more spends in memory and rewrite a reused address's row once
 * instead of once per block; smaller ones bound memory, the work a crash loses and the time
 * between tip updates. Whichever limit is reached first closes the batch.
 *
 * The defaults come from bench/sync.js-style runs on a 400k-tx generated chain on this
 * project's shared 2-core machine, measured as transactions per CPU second of the main
 * thread (the sync's bottleneck; wall time there depends on the neighbours): 4 MiB batches
 * ~25k, 16 MiB ~39k, 64 MiB 42-55k, 128 MiB 52-57k — when every batch was its own LMDB
 * commit. Since a catch-up commits many batches at once (bulk groups), a batch's size weighs
 * its own fixed costs against the memory it holds (a batch is parsed, queued and applied at
 * once: ~4-5x its raw bytes): 32 MiB, and `addrindex sync` makes it an eighth of --cache-mb
 * (catchUpLimits). See profiles/README.md.
 */
const BATCH_DEFAULTS = Object.freeze({
  /** blocks per commit */
  maxBlocks: 1000,
  /** raw block bytes per commit */
  maxBytes: 32 * 1024 * 1024,
  /** milliseconds from a batch's first block to its commit */
  maxMs: 10000,
});

/**
 * Batches committed at once while `addrindex sync` catches up (SyncService's bulkBatches): no
 * count, the group's bytes decide (catchUpLimits). One LMDB transaction for a group dirties
 * each page of the hash-keyed tables once per group instead of once per batch (on the 5M-tx
 * chain 41.0 µs of main-thread CPU per tx in one group against 49.7 committing every batch,
 * profiles/README.md).
 */
const CATCH_UP_BULK = Infinity;

/** `addrindex sync --cache-mb`'s default: MiB of blocks one commit holds while catching up. */
const DEFAULT_CACHE_MB = 256;

/**
 * The one setting of a catch-up's memory, `--cache-mb`, turned into its parts: a group of
 * batches commits once its blocks reach that many MiB (the pages it reads and writes stay
 * in memory until then: its cache), and a batch holds an eighth of that, between 4 and 32
 * MiB (what a batch takes in the process's own memory: about 4-5 times its raw bytes, parsed,
 * queued and applied). On the 5M-tx chain in a 1 GiB memory cgroup, 128 (batches of 16 MiB,
 * groups of 8) ran ~25 % faster than committing every 16 MiB batch (docs/SCALING.md).
 *
 * A store class may take another share: its catchUpBatchShare (every store's is an eighth
 * today).
 * @param {number} [cacheMb] default DEFAULT_CACHE_MB
 * @param {number} [share] the store class's catchUpBatchShare
 * @returns {{bulkBytes: number, batchBytes: number}}
 */
function catchUpLimits(cacheMb = DEFAULT_CACHE_MB, share = 8) {
  const MiB = 1024 * 1024;
  return { bulkBytes: cacheMb * MiB, batchBytes: Math.min(32, Math.max(4, Math.floor(cacheMb / share))) * MiB };
}

/**
 * Validates and completes batch limits.
 * @param {{maxBlocks?: number, maxBytes?: number, maxMs?: number}} [opts]
 * @returns {{maxBlocks: number, maxBytes: number, maxMs: number}}
 */
function batchLimits(opts = {}) {
  const out = { ...BATCH_DEFAULTS };
  for (const key of Object.keys(BATCH_DEFAULTS)) {
    const v = opts[key];
    if (v === undefined || v === null) continue;
    if (!Number.isFinite(v) || v < 1 || Math.floor(v) !== v) {
      throw new UsageError('ERR_USAGE', `batch limit ${key} must be a positive integer, got ${v}`);
    }
    out[key] = v;
  }
  return out;
}

/**
 * Parsed blocks waiting for one commit, with the running totals the limits look at.
 */
class Batch {
  /**
   * @param {{maxBlocks: number, maxBytes: number, maxMs: number}} limits
   * @param {() => number} [now]
   */
  constructor(limits, now = Date.now) {
    this.limits = limits;
    this.now = now;
    /** @type {Array<{height: number, hash: string, size: number, cols: import('../chain/columns').BlockColumns}>} */
    this.blocks = [];
    this.bytes = 0;
    this.txs = 0;
    this.startedAt = 0;
  }

  /** @param {{height: number, hash: string, size: number, cols: import('../chain/columns').BlockColumns}} block */
  push(block) {
    if (this.blocks.length === 0) this.startedAt = this.now();
    this.blocks.push(block);
    this.bytes += block.size;
    this.txs += block.cols.txCount;
  }

  get length() {
    return this.blocks.length;
  }

  /** @returns {boolean} whether a limit is reached and the batch should be committed now */
  full() {
    const l = this.limits;
    return this.blocks.length >= l.maxBlocks || this.bytes >= l.maxBytes ||
      (this.blocks.length > 0 && this.now() - this.startedAt >= l.maxMs);
  }
}

module.exports = { CATCH_UP_BULK, DEFAULT_CACHE_MB, BATCH_DEFAULTS, batchLimits, catchUpLimits, Batch };
