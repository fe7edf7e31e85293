'use strict';

const os = require('node:os');
const { setTimeout: sleep } = require('node:timers/promises');
const { ParsePool } = require('../chain/parse-pool');
const { getNetwork } = require('../chain/networks');
const { ParseError, SyncError, SourceError } = require('../errors');
const { buildDeltas } = require('./delta');
const { Batch, batchLimits } = require('./batch');
const { Channel } = require('./channel');
const { returnFreeMemory } = require('../ops/free-memory');

/**
 * @typedef {object} SyncProgress
 * @property {'scan'|'reorg'|'batch'|'caught-up'|'behind'|'changed'} phase  changed: the source's
 *   chain moved while its blocks were read (ERR_SOURCE_CHANGED); the run rescans
 * @property {number} height        the index's tip height after this step (-1: empty)
 * @property {number} target        the block source's tip height
 * @property {string} [hash]        the index's tip hash
 * @property {number} blocks        blocks applied since run() started
 * @property {number} txs           transactions applied since run() started
 * @property {number} bytes         raw block bytes applied since run() started
 * @property {number} elapsedMs     since run() started
 * @property {{blocks: number, txs: number, bytes: number, ms: number, commitMs: number}} [batch]  the batch
 *   just committed: ms from its first prevout lookup to the end of its commit, commitMs the commit alone
 * @property {{fromHeight: number, forkHeight: number, depth: number}} [reorg]
 * @property {string} [reason]      phase changed: the source's message
 */

/** Passes in a row (without --follow) whose source changed under them before the run gives up. */
const MAX_SOURCE_CHANGES = 10;
/** A reorg whose new branch reaches at most this many blocks past the index's tip is committed whole, with its revert (beforeReorgCommit). */
const REORG_GROUP_BLOCKS = 100;

/**
 * The sync: block source → parse (worker threads) → deltas → store, one atomic commit per
 * batch with the tip, so a crash at any instant leaves the index at a batch boundary and a
 * restart resumes from the tip.
 *
 * Two loops run side by side: a reader that streams blocks from the source through the
 * parse pool and groups them into batches, at most `ahead` batches in front; and a writer
 * that turns each batch into deltas (prevouts from the batch, then one store lookup) and
 * commits it. Parsing the next batches overlaps the commit of the current one; deltas are
 * built strictly after the previous commit, because their prevouts may come from it.
 */
class SyncService {
  /**
   * @param {object} opts
   * @param {{scan: () => Promise<void>, tip: () => ({height: number, hash: string}|null),
   *   hashAt: (height: number) => (string|null),
   *   blocks: (from: number, to: number) => AsyncIterable<{height: number, hash: string, prev: string, raw: Buffer}>}} opts.source
   * @param {import('../stores/abstract').AbstractStore} opts.store  open, writable
   * @param {string|import('../chain/networks').Network} opts.network
   * @param {{maxBlocks?: number, maxBytes?: number, maxMs?: number}} [opts.batch] see BATCH_DEFAULTS
   * @param {number} [opts.threads]    parse worker threads (default: one per core but one, at least
   *   one; 0 parses inline)
   * @param {number} [opts.undoDepth] the deepest reorg that can be followed (default: the store's undoDepth)
   * @param {(p: SyncProgress) => void} [opts.onProgress]
   * @param {number} [opts.pollMs=1000] follow mode: pause between rescans of the source
   * @param {number} [opts.ahead=1]    whole batches queued ahead of the one being committed
   * @param {number} [opts.parseAheadBytes] raw block bytes posted to the parse pool ahead of
   *   the block being batched (default: one batch's maxBytes, at least 4 MiB)
   * @param {number} [opts.bulkBatches=1] until the index first catches up, commit up to this
   *   many batches at once (store.beginBulk/endBulk; LMDB dirties each page of its hash-keyed
   *   tables once per commit, and those pages are the sync's cache meanwhile). Readers of the
   *   store in this process would see a group's blocks before its commit, so the groups end
   *   for good at the first 'caught-up': whatever starts reading then (a mempool follower,
   *   metrics) never meets one, however far a later pass has to go. The last batch of a
   *   catch-up, a stop and an error always end the group.
   * @param {number} [opts.bulkBytes=Infinity] a group also ends once its batches hold this
   *   many raw block bytes (`addrindex sync --cache-mb`): the pages a group dirties, and so
   *   what a commit writes and the memory it holds until then, grow with its blocks
   * @param {(run: {txs: number, tip: import('../stores/abstract').Tip|null}) => Promise<void>} [opts.onFirstCatchUp]
   *   awaited once, when the index first catches up and before 'caught-up' is reported: every
   *   batch is committed and nothing else writes or reads the store for this service, so the
   *   store may rewrite itself (addrindex sync compacts an LMDB index there). `txs`: applied
   *   by this run.
   * @param {(tip: import('../stores/abstract').Tip|null) => Promise<void>} [opts.beforeReorgCommit]
   *   a reorg's revert and the new branch it leads to (up to REORG_GROUP_BLOCKS) are one bulk
   *   group, committed as one write: a reader in another process sees the old tip's index or
   *   the new tip's, never the fork point's (a store without groups commits them one by one:
   *   MongoDB, and LevelDB, whose only readers are the writer's own process). This is awaited after the branch is applied and before that commit; what it
   *   writes joins the commit (sync --follow stores the new tip's mempool there, as Bitcoin
   *   Core returns the disconnected blocks' transactions to its mempool in the same step).
   * @param {(hash: string, raw: Buffer) => void} [opts.onBlock] each block as the source gives
   *   it, before it is applied (sync --follow's mempool follower takes the blocks the index
   *   connects from here rather than asking the node for them again); `raw` is not to be changed
   * @param {() => void} [opts.freeMemory] called after each batch is applied (default: hands
   *   the C allocator's free pages back to the system, lib/ops/free-memory.js)
   */
  constructor(opts) {
    if (!opts || !opts.source || !opts.store) throw new TypeError('SyncService needs a source and a store');
    this.source = opts.source;
    this.store = opts.store;
    this.network = getNetwork(opts.network);
    this.limits = batchLimits(opts.batch);
    // The main thread (deltas, every store write) is the bottleneck and needs a core of its
    // own: one worker parses about twice as fast as it indexes, and a second one on a 2-core
    // machine only takes turns with the main thread (profiles/README.md).
    this.threads = opts.threads !== undefined ? opts.threads : Math.max(1, os.availableParallelism() - 1);
    // the store prunes undo beyond its own depth, so by default that is the limit
    this.undoDepth = opts.undoDepth !== undefined ? opts.undoDepth : opts.store.undoDepth;
    this.onProgress = opts.onProgress || (() => {});
    this.pollMs = opts.pollMs === undefined ? 1000 : opts.pollMs;
    this.ahead = opts.ahead === undefined ? 1 : opts.ahead;
    this.parseAheadBytes = opts.parseAheadBytes;
    this.verifyMerkle = opts.verifyMerkle !== false;
    this.bulkBatches = opts.bulkBatches === undefined ? 1 : opts.bulkBatches;
    this.onFirstCatchUp = opts.onFirstCatchUp;
    this.beforeReorgCommit = opts.beforeReorgCommit || null;
    this.onBlock = opts.onBlock || null;
    // A batch's parsed blocks, rows and LevelDB's copy of its write are freed once it is
    // applied, in the middle of the allocator's heaps, where glibc keeps them: giving them
    // back after each batch took the anonymous peak of the 1M-tx chain's sync from 755-830 MB
    // to 643-667 on LevelDB and from 597-625 to 505-520 on LMDB (docs/SCALING.md), memory
    // the page cache then has for the index.
    this.freeMemory = opts.freeMemory || returnFreeMemory;
    /** a reorg's group is open (the catch-up opens and ends none of its own meanwhile) */
    this.reorgGroup = false;
    if (!((Number.isInteger(this.bulkBatches) || this.bulkBatches === Infinity) && this.bulkBatches >= 1)) {
      throw new TypeError('bulkBatches must be an integer >= 1 or Infinity');
    }
    this.bulkBytes = opts.bulkBytes === undefined ? Infinity : opts.bulkBytes;
    if (!(this.bulkBytes > 0)) throw new TypeError('bulkBytes must be positive');
    this.caughtUp = false;
  }

  /**
   * Brings the index to the source's best chain: reverts to the fork point when the source's
   * chain no longer contains the index's tip, then applies the missing blocks in batches.
   * Returns when caught up; with `follow`, rescans every `pollMs` until `signal` aborts.
   * An abort stops at a batch boundary: the batch being committed completes, no other starts.
   *
   * @param {{follow?: boolean, signal?: AbortSignal}} [opts]
   * @returns {Promise<{tip: import('../stores/abstract').Tip|null, blocks: number, txs: number,
   *   bytes: number, reorgs: Array<{fromHeight: number, forkHeight: number, depth: number}>,
   *   behind: boolean, elapsedMs: number}>}
   */
  async run({ follow = false, signal } = {}) {
    this.started = Date.now();
    this.totals = { blocks: 0, txs: 0, bytes: 0 };
    this.reorgs = [];
    const pool = new ParsePool({ threads: this.threads, verifyMerkle: this.verifyMerkle });
    let result;
    let changes = 0;
    try {
      for (;;) {
        if (signal && signal.aborted) break;
        try {
          result = await this._pass(pool, signal, follow);
          changes = 0;
        } catch (err) {
          // a source waiting on a node (RPC retries) gives up when the run is stopped
          if (signal && signal.aborted && err.code === 'ERR_ABORTED') break;
          // The source's chain moved while its blocks were read (a node that reorganized or
          // came back with another chain): the batches before are committed, the next pass
          // rescans and finds the fork.
          if (err.code !== 'ERR_SOURCE_CHANGED' || (!follow && ++changes > MAX_SOURCE_CHANGES)) throw err;
          const srcTip = this.source.tip();
          this._emit('changed', await this.store.getTip(), srcTip ? srcTip.height : -1, { reason: err.message });
          try {
            await sleep(follow ? this.pollMs : Math.min(this.pollMs, 100 * changes), undefined, { signal });
          } catch (e) {
            if (e.name !== 'AbortError') throw e;
          }
          continue;
        }
        if (!follow || (signal && signal.aborted)) break;
        try {
          await sleep(this.pollMs, undefined, { signal });
        } catch (err) {
          if (err.name !== 'AbortError') throw err;
        }
      }
    } finally {
      await pool.close();
    }
    const tip = result ? result.tip : await this.store.getTip();
    return {
      tip, ...this.totals, reorgs: this.reorgs, behind: Boolean(result && result.behind),
      elapsedMs: Date.now() - this.started,
    };
  }

  /** One rescan of the source, reorg check and catch-up. */
  async _pass(pool, signal, follow) {
    await this.source.scan();
    const srcTip = this.source.tip();
    if (!srcTip) {
      if (follow) return { tip: await this.store.getTip(), behind: true };
      throw new SourceError('ERR_NO_BLOCKS',
        `the block source holds no ${this.network.name} chain (no block descends from genesis ${this.network.genesis}): ` +
        'check --blocks-dir and --network');
    }
    const before = await this.store.getTip();
    this._emit('scan', before, srcTip.height);
    const reorg = before && this.source.hashAt(before.height) !== before.hash && srcTip.height - before.height <= REORG_GROUP_BLOCKS;
    if (!reorg) return this._reconciled(pool, signal, srcTip, before);
    // the revert and the new branch: one commit (see beforeReorgCommit), or seen by readers as one
    await this.store.beginBulk({ whole: true });
    this.reorgGroup = true;
    let done = false;
    try {
      const result = await this._reconciled(pool, signal, srcTip, before);
      if (this.beforeReorgCommit && !result.behind && result.tip && result.tip.hash === srcTip.hash) await this.beforeReorgCommit(result.tip);
      done = true;
      return result;
    } finally {
      this.reorgGroup = false;
      // a failure before the branch is whole commits what was applied, as a stop does
      await this.store.endBulk({ commit: true }).catch((err) => {
        if (done) throw err;
      });
    }
  }

  /** _pass after the scan: the reorg check and the catch-up. */
  async _reconciled(pool, signal, srcTip, before) {
    const { tip, behind } = await this._reconcile(srcTip, before);
    if (behind) {
      this._emit('behind', tip, srcTip.height);
      return { tip, behind };
    }
    const last = await this._catchUp(pool, tip, srcTip.height, signal);
    if (!signal || !signal.aborted) {
      if (!this.caughtUp && this.onFirstCatchUp) await this.onFirstCatchUp({ txs: this.totals.txs, tip: last });
      this.caughtUp = true;
      this._emit('caught-up', last, srcTip.height);
    }
    return { tip: last, behind: false };
  }

  /**
   * Makes the index's tip a block of the source's best chain, reverting to the fork point.
   * @returns {Promise<{tip: import('../stores/abstract').Tip|null, behind: boolean}>}
   *   behind: the source's chain is a strict prefix of the index's (nothing to do yet)
   */
  async _reconcile(srcTip, tip) {
    if (!tip || this.source.hashAt(tip.height) === tip.hash) return { tip, behind: false };
    const fork = await this._forkPoint(tip.height, srcTip.height);
    // The source stops inside the index's chain: a node still catching up, or an older copy
    // of its blocks dir. Reverting would throw away blocks the source may yet deliver.
    if (fork === srcTip.height && srcTip.height < tip.height) return { tip, behind: true };
    const depth = tip.height - fork;
    if (fork < 0) {
      throw new SyncError('ERR_REORG_TOO_DEEP',
        `the index and the block source share no block, not even genesis: the datadir holds another chain — ` +
        'sync into a new --datadir', { fromHeight: tip.height, forkHeight: fork, depth });
    }
    if (depth > this.undoDepth) throw tooDeep(tip, fork, depth, this.undoDepth);
    const reorg = { fromHeight: tip.height, forkHeight: fork, depth };
    this.reorgs.push(reorg);
    try {
      await this.store.revert(fork);
    } catch (err) {
      if (err.code === 'ERR_UNDO_MISSING') throw tooDeep(tip, fork, depth, this.undoDepth, err);
      throw err;
    }
    const after = await this.store.getTip();
    this._emit('reorg', after, srcTip.height, { reorg });
    return { tip: after, behind: false };
  }

  /**
   * The highest height at which the index and the source's best chain hold the same block
   * (-1 when none). Both are chains, so they agree at every height below the fork and
   * nowhere above it: a binary search needs ~20 lookups even for a deep fork.
   */
  async _forkPoint(storeHeight, sourceHeight) {
    let lo = -1;
    let hi = Math.min(storeHeight, sourceHeight) + 1;
    while (hi - lo > 1) {
      const mid = (lo + hi) >>> 1;
      const ours = await this.store.getBlockHash(mid);
      if (ours !== null && ours === this.source.hashAt(mid)) lo = mid;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Applies source blocks tip+1..to. Returns the index's tip afterwards.
   * @returns {Promise<import('../stores/abstract').Tip|null>}
   */
  async _catchUp(pool, tip, to, signal) {
    const from = tip ? tip.height + 1 : 0;
    if (from > to) return tip;
    if (from === 0 && this.source.hashAt(0) !== this.network.genesis) {
      throw new SourceError('ERR_WRONG_NETWORK',
        `the block source starts at ${this.source.hashAt(0)}, not at the ${this.network.name} genesis ${this.network.genesis}`);
    }
    let nextTxNum = tip ? tip.nextTxNum : 0;
    let current = tip;
    const channel = new Channel(this.ahead);
    const reading = this._read(pool, from, to, channel);
    // batches applied since the last commit of a bulk group (0: no group open), and their bytes
    let grouped = 0;
    let groupBytes = 0;
    try {
      for (;;) {
        if (signal && signal.aborted) break;
        const batch = await channel.take();
        if (!batch || (signal && signal.aborted)) break;
        if (batch.prefetched) await batch.prefetched;
        const lastBlock = batch.blocks[batch.blocks.length - 1];
        if (this.bulkBatches > 1 && !this.caughtUp && !this.reorgGroup && grouped === 0 && lastBlock.height < to) {
          await this.store.beginBulk();
          grouped = 1;
          groupBytes = 0;
        } else if (grouped > 0) {
          grouped++;
        }
        const t0 = Date.now();
        const deltas = await buildDeltas(batch.blocks, this.store, nextTxNum);
        const t1 = Date.now();
        // a write that fails half way marks the open group failed, and the store then discards
        // it whole at endBulk (below, in finally); a failure before any write keeps the batches
        // before it, like any stop
        await this.store.apply(deltas, { chainHeight: to });
        groupBytes += batch.bytes;
        // a group ends at its size, and always with the catch-up's last batch, so commits stay
        // a function of the chain and the limits (and a caught-up index is committed)
        if (grouped > 0 && (grouped >= this.bulkBatches || groupBytes >= this.bulkBytes || lastBlock.height === to)) {
          grouped = 0;
          await this.store.endBulk();
        }
        const commitMs = Date.now() - t1;
        nextTxNum += batch.txs;
        current = { height: lastBlock.height, hash: lastBlock.hash, nextTxNum };
        this.totals.blocks += batch.length;
        this.totals.txs += batch.txs;
        this.totals.bytes += batch.bytes;
        this._emit('batch', current, to, {
          batch: { blocks: batch.length, txs: batch.txs, bytes: batch.bytes, ms: Date.now() - t0, commitMs },
        });
        this.freeMemory();
        // Let the event loop turn between commits. Parse results arrive as worker messages,
        // and Node delivers a backlog of them in one go with the promise jobs of each in
        // between — so without this, batch after batch commits inside one callback while
        // signals (SIGTERM), timers and the progress line wait for the backlog to drain.
        await new Promise(setImmediate);
      }
    } finally {
      // stopped, or the source failed: the batches applied are whole, commit them
      if (grouped > 0) await this.store.endBulk();
      channel.close();
      await reading;
    }
    return current;
  }

  /**
   * The reader loop: source → parse pool → batches → channel. Never rejects; a failure is
   * handed to the writer through the channel, after the batches completed before it (a
   * source's failure also after the blocks it gave before, as a last, shorter batch).
   *
   * Parses are posted up to `parseAheadBytes` of raw blocks ahead of the one being batched.
   * The writer's work (delta building, the commit) runs on this same thread in long
   * synchronous stretches, during which this loop cannot post anything: only the parses
   * already posted keep the workers busy, so the window must cover about a batch.
   */
  async _read(pool, from, to, channel) {
    const aheadBytes = this.parseAheadBytes || Math.max(this.limits.maxBytes, 4 << 20);
    const aheadBlocks = Math.max(64, this.limits.maxBlocks);
    const records = this.source.blocks(from, to)[Symbol.asyncIterator]();
    const queue = [];
    let queuedBytes = 0;
    let sourceDone = false;
    let sourceError = null;
    // Slow start: the first batch may hold 1/16 of maxBytes, each next one twice the one
    // before, up to maxBytes. The writer would otherwise idle until a whole first batch is
    // parsed; a deterministic ramp (not one driven by timing) keeps batch boundaries, and so
    // the index's commits, a function of the chain and the limits alone.
    let rampBytes = Math.max(1, this.limits.maxBytes >>> 4);
    const nextBatch = () => {
      const b = new Batch({ ...this.limits, maxBytes: rampBytes });
      rampBytes = Math.min(this.limits.maxBytes, 2 * rampBytes);
      return b;
    };
    let batch = nextBatch();
    try {
      for (;;) {
        while (!sourceDone && queuedBytes < aheadBytes && queue.length < aheadBlocks) {
          let next;
          try {
            next = await records.next();
          } catch (err) {
            // the blocks read before the failure are good: they are batched and committed first
            sourceError = err;
            sourceDone = true;
            break;
          }
          if (next.done) {
            sourceDone = true;
            break;
          }
          const rec = next.value;
          if (this.onBlock) this.onBlock(rec.hash, rec.raw);
          const parsed = pool.parse(rec.raw); // copies the bytes: rec.raw is not kept
          parsed.catch(() => {}); // observed when its turn comes
          // an index that keeps transactions (--txstore) stores the block's bytes too
          const raw = this.store.keepsTransactions ? Buffer.from(rec.raw) : undefined;
          queue.push({ height: rec.height, hash: rec.hash, size: rec.raw.length, locator: rec.locator, raw, parsed });
          queuedBytes += rec.raw.length;
        }
        if (!queue.length) break;
        const head = queue.shift();
        queuedBytes -= head.size;
        let cols;
        try {
          cols = await head.parsed;
        } catch (err) {
          throw err instanceof ParseError ? unparsable(head, err) : err;
        }
        if (cols.hash !== head.hash) {
          throw new SourceError('ERR_SOURCE_MISMATCH',
            `the block source gave height ${head.height} as ${head.hash}, but its bytes hash to ${cols.hash}`,
            { height: head.height, hash: head.hash });
        }
        batch.push({ height: head.height, hash: head.hash, size: head.size, locator: head.locator, raw: head.raw, cols });
        if (batch.full()) {
          // the store may start reading what the batch needs while the one before commits
          batch.prefetched = this.store.prefetch(batch.blocks);
          if (!(await channel.put(batch))) return;
          batch = nextBatch();
        }
      }
      if (batch.length) batch.prefetched = this.store.prefetch(batch.blocks);
      if (batch.length && !(await channel.put(batch))) return;
      if (sourceError) throw sourceError;
      channel.end();
    } catch (err) {
      channel.fail(err);
    } finally {
      // stops the source's reads when the writer gave up early
      if (!sourceDone) await records.return().catch(() => {});
    }
  }

  _emit(phase, tip, target, extra) {
    this.onProgress({
      phase,
      height: tip ? tip.height : -1,
      hash: tip ? tip.hash : undefined,
      target,
      ...this.totals,
      elapsedMs: Date.now() - this.started,
      ...extra,
    });
  }
}

function unparsable(rec, err) {
  return new SyncError('ERR_BAD_SOURCE_BLOCK',
    `block ${rec.height} (${rec.hash}) of the block source cannot be parsed: ${err.message} [${err.code}] — ` +
    'its blocks file is damaged; nothing of its batch was written (let the node re-download the block, or -reindex)',
    { height: rec.height, hash: rec.hash, parseCode: err.code });
}

function tooDeep(tip, fork, depth, undoDepth, cause) {
  return new SyncError('ERR_REORG_TOO_DEEP',
    `the block source's best chain forks from the index at height ${fork}, ${depth} blocks below the index's tip ` +
    `${tip.height}, but undo data is kept for only ${undoDepth} blocks: sync into a new --datadir ` +
    '(and pass a larger --undo-depth if reorgs this deep are expected); the index is unchanged',
    { fromHeight: tip.height, forkHeight: fork, depth, undoDepth, cause: cause && cause.message });
}

module.exports = { SyncService };
