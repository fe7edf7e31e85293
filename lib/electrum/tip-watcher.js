'use strict';

const { RewindHold } = require('../core/rewind-hold');

/**
 * @typedef {object} IndexChange
 * @property {{height: number, hash: string}|null} previous the tip before
 * @property {{height: number, hash: string}} tip
 * @property {boolean} moved the tip changed (else only the mempool snapshot did)
 * @property {number} forkHeight the highest height whose block both chains share (-1: unknown)
 * @property {() => Promise<import('../core/mempool').MempoolView|null>} mempool the mempool
 *   snapshot that goes with `tip` (null: none, or one the follower has not yet resolved against
 *   this tip), decoded when first asked for
 */

/** Block hashes remembered below the tip, to find where a reorg forked. */
const REMEMBER = 64;

/**
 * Notices new blocks and mempool snapshots: reads the index's tip and the snapshot's head every
 * `pollMs` (two small reads; the writer is another process and LMDB has no cross-process
 * notification) and, when either changed, works out the fork height of a tip move (the highest
 * height whose block the old and the new chain share) from the block hashes it remembers, then
 * awaits `onChange` before polling again. A tip lower than the current one waits
 * (lib/core/rewind-hold.js): ElectrumX and electrs notify only the tip a reorg settles on.
 */
class TipWatcher {
  /**
   * @param {object} opts
   * @param {import('./reader').StoreReader} opts.reader
   * @param {number} opts.pollMs
   * @param {(change: IndexChange) => Promise<void>} opts.onChange
   * @param {(msg: string) => void} opts.log
   * @param {RewindHold} [opts.rewind] when a lower tip is handed on
   */
  constructor({ reader, pollMs, onChange, log, rewind = new RewindHold() }) {
    this.reader = reader;
    this.pollMs = pollMs;
    this.rewind = rewind;
    this.onChange = onChange;
    this.log = log;
    this.current = null;
    /** @type {number|null} the seq of the mempool snapshot that goes with `current` */
    this.seq = null;
    /** @type {Map<number, string>} height → block hash of the chain last seen */
    this.seen = new Map();
    this.timer = null;
    this.running = null;
    this.stopped = false;
  }

  /** Reads the tip once and starts polling. */
  async start() {
    this.current = await this.reader.tip();
    this.seq = seqOf(await this.reader.mempoolHeadAt(this.current));
    await this.remember(-1);
    this.schedule();
  }

  schedule() {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.poll().catch((err) => this.log(`electrum: reading the tip failed: ${err && err.stack ? err.stack : err}`))
        .finally(() => {
          this.running = null;
          this.schedule();
        });
    }, this.pollMs);
  }

  /** One poll: resolves after onChange has handled a change. */
  async poll() {
    const tip = await this.reader.tip();
    if (!tip || this.rewind.holds(tip, this.current)) return;
    // the head only: a worker decodes a snapshot when something needs it
    const seq = seqOf(await this.reader.mempoolHeadAt(tip));
    const previous = this.current;
    const moved = !previous || previous.hash !== tip.hash;
    if (!moved && seq === this.seq) return;
    const forkHeight = moved ? await this.forkHeight(previous, tip) : tip.height;
    // a failed onChange leaves `current` alone: the next poll handles the same change again
    await this.onChange({ previous, tip, forkHeight, moved, mempool: () => this.reader.mempoolAt(tip) });
    this.current = tip;
    this.seq = seq;
    if (moved) await this.remember(forkHeight);
  }

  async forkHeight(previous, tip) {
    if (!previous) return -1;
    for (let h = Math.min(previous.height, tip.height); h >= 0 && this.seen.has(h); h--) {
      if ((await this.reader.blockHash(h)) === this.seen.get(h)) return h;
    }
    return -1; // deeper than remembered: treat every height as changed
  }

  /** Remembers the current chain's hashes above `forkHeight` (the last REMEMBER heights). */
  async remember(forkHeight) {
    const top = this.current ? this.current.height : -1;
    for (const h of this.seen.keys()) if (h > forkHeight || h <= top - REMEMBER) this.seen.delete(h);
    for (let h = Math.max(0, forkHeight + 1, top - REMEMBER + 1); h <= top; h++) {
      const hash = await this.reader.blockHash(h);
      if (hash) this.seen.set(h, hash);
    }
    // the index moved on while these were read: they may mix two branches, so none is trusted
    // (the next move then counts as "everything changed")
    if (this.current && this.seen.get(top) !== this.current.hash) this.seen.clear();
  }

  /** Stops polling; resolves when a poll in progress has finished. */
  async stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.running) await this.running;
  }
}

function seqOf(head) {
  return head ? head.seq : null;
}

module.exports = { TipWatcher };
