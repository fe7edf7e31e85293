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
 * commit. Since the writer's row cache commits many batches at once (lib/stores/rowcache.js),
 * a batch's size only weighs its own fixed costs against the memory it holds: on the 1M-tx
 * chain 16, 32 and 64 MiB took 26.2, 24.1 and 24.2 s of main-thread CPU with 1.06, 1.16 and
 * 1.38 GB of peak anonymous memory (a batch is parsed, queued and applied at once: ~4x its
 * raw bytes), so 32 MiB. See profiles/README.md.
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
 * Batches committed at once while `addrindex sync` catches up (SyncService's bulkBatches): as
 * many as the store's writer cache holds (`--cache-mb`). Before that cache, groups of 8 batches
 * in one LMDB transaction dirtied each page of the hash-keyed tables once per group instead
 * of once per batch (on the 5M-tx chain 41.0 µs of main-thread CPU per tx in one group
 * against 49.7 committing every batch, profiles/README.md); the cache keeps that and also
 * reads and writes each row once per group, and its budget, not a count of batches, bounds
 * the memory a group takes.
 */
const CATCH_UP_BULK = Infinity;

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

module.exports = { CATCH_UP_BULK, BATCH_DEFAULTS, batchLimits, Batch };
