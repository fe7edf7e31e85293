'use strict';

/** Block times read from the store at once while building. */
const BATCH = 512;
/** Hashes of the last blocks kept, to find where a reorg forked (deeper: rebuilt from genesis). */
const RECENT = 2048;

/**
 * The patched bitcoind's timestamp index (`getblockhashes high low`), over the index's best
 * chain. That node keyed blocks by a *logical* timestamp: the block's time, or one second
 * after its parent's logical timestamp when that is not earlier, so the keys grow strictly
 * along the chain and a time range is one run of heights. They are kept here in memory
 * (4 bytes a block), built on first use and extended as the tip moves; after a reorg they are
 * recomputed from the fork point, found among the last blocks' hashes. Blocks off the best chain
 * are not listed (the node listed them unless asked not to).
 */
class BlockTimes {
  /**
   * @param {import('../stores/abstract').AbstractStore} store
   * @param {{scale?: number}} [opts] units of a logical timestamp per second: 1 (the patched
   *   bitcoind's seconds) or 1000 (bitcore-node v8's `timeNormalized`, in milliseconds, one
   *   millisecond after its parent's when not later)
   */
  constructor(store, { scale = 1 } = {}) {
    this.store = store;
    this.scale = scale;
    this.logical = new Float64Array(1024);
    this.length = 0;
    /** @type {Map<number, string>} hash by height, for the last RECENT heights */
    this.recent = new Map();
    this._updating = null;
  }

  /** Brings the table up to the store's tip (one update at a time). */
  update() {
    if (!this._updating) this._updating = this._update().finally(() => { this._updating = null; });
    return this._updating;
  }

  async _update() {
    const tip = await this.store.getTip();
    if (!tip) {
      this._truncate(0);
      return;
    }
    if (this.length > 0 && this.recent.get(this.length - 1) === tip.hash) return;
    // after a reorg: back to the last height whose block is still the index's
    let h = Math.min(this.length, tip.height + 1) - 1;
    while (h >= 0 && this.recent.has(h) && (await this.store.getBlockHash(h)) !== this.recent.get(h)) h--;
    this._truncate(h >= 0 && !this.recent.has(h) ? 0 : h + 1);
    while (this.length <= tip.height) {
      const from = this.length;
      const to = Math.min(tip.height, from + BATCH - 1);
      const heights = [];
      for (let k = from; k <= to; k++) heights.push(k);
      const blocks = await Promise.all(heights.map((k) => this.store.getBlock(k)));
      for (const b of blocks) {
        if (!b) return; // the tip moved back while reading: the next update goes on from here
        this._push(b.time, b.hash);
      }
    }
  }

  _truncate(length) {
    for (let k = length; k < this.length; k++) this.recent.delete(k);
    this.length = length;
  }

  _push(time, hash) {
    if (this.length === this.logical.length) {
      const grown = new Float64Array(this.logical.length * 2);
      grown.set(this.logical);
      this.logical = grown;
    }
    const prev = this.length ? this.logical[this.length - 1] : 0;
    this.recent.set(this.length, hash);
    this.recent.delete(this.length - RECENT);
    const t = time * this.scale;
    this.logical[this.length++] = t > prev ? t : prev + 1;
  }

  /**
   * The logical timestamp of the block at a height, as of the last update(); null above it.
   * @param {number} height
   * @returns {number|null}
   */
  at(height) {
    return height >= 0 && height < this.length ? this.logical[height] : null;
  }

  /**
   * The highest height whose logical timestamp is at most t (-1: none).
   * @param {number} t
   * @returns {Promise<number>}
   */
  async lastAtOrBefore(t) {
    await this.update();
    return this._lowerBound(Math.floor(t) + 1) - 1;
  }

  /** The first height whose logical timestamp is >= t. */
  _lowerBound(t) {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.logical[mid] < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Blocks with low <= logical timestamp < high, oldest first.
   * @param {number} high
   * @param {number} low
   * @returns {Promise<Array<{hash: string, logicalts: number}>>}
   */
  async between(high, low) {
    await this.update();
    const from = this._lowerBound(low);
    const to = Math.max(from, this._lowerBound(high));
    const heights = [];
    for (let h = from; h < to; h++) heights.push(h);
    const hashes = await Promise.all(heights.map((h) => this.store.getBlockHash(h)));
    return hashes.map((hash, i) => ({ hash, logicalts: this.logical[from + i] }));
  }
}

module.exports = { BlockTimes };
