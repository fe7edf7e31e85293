'use strict';

/**
 * @typedef {object} TipChange
 * @property {{height: number, hash: string}|null} previous
 * @property {{height: number, hash: string}} tip
 * @property {number} forkHeight the highest height whose block both chains share (-1: unknown)
 */

/** Block hashes remembered below the tip, to find where a reorg forked. */
const REMEMBER = 64;

/**
 * Notices new blocks: reads the index's tip every `pollMs` (one small read; the writer is
 * another process and LMDB has no cross-process notification) and, when it moved, works out
 * the fork height (the highest height whose block the old and the new chain share) from the
 * block hashes it remembers, then awaits `onChange` before polling again.
 */
class TipWatcher {
  /**
   * @param {object} opts
   * @param {import('./reader').StoreReader} opts.reader
   * @param {number} opts.pollMs
   * @param {(change: TipChange) => Promise<void>} opts.onChange
   * @param {(msg: string) => void} opts.log
   */
  constructor({ reader, pollMs, onChange, log }) {
    this.reader = reader;
    this.pollMs = pollMs;
    this.onChange = onChange;
    this.log = log;
    this.current = null;
    /** @type {Map<number, string>} height → block hash of the chain last seen */
    this.seen = new Map();
    this.timer = null;
    this.running = null;
    this.stopped = false;
  }

  /** Reads the tip once and starts polling. */
  async start() {
    this.current = await this.reader.tip();
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

  /** One poll: resolves after onChange has handled a move. */
  async poll() {
    const tip = await this.reader.tip();
    const previous = this.current;
    if (!tip || (previous && previous.hash === tip.hash)) return;
    const forkHeight = await this.forkHeight(previous, tip);
    // a failed onChange leaves `current` alone: the next poll handles the same move again
    await this.onChange({ previous, tip, forkHeight });
    this.current = tip;
    await this.remember(forkHeight);
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
  }

  /** Stops polling; resolves when a poll in progress has finished. */
  async stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.running) await this.running;
  }
}

module.exports = { TipWatcher };
