'use strict';

/** Block times read from the store at once while building. */
const BATCH = 512;

/**
 * The patched bitcoind's timestamp index (`getblockhashes high low`), over the index's best
 * chain. That node keyed blocks by a *logical* timestamp: the block's time, or one second
 * after its parent's logical timestamp when that is not earlier, so the keys grow strictly
 * along the chain and a time range is one run of heights. They are kept here in memory
 * (4 bytes a block), built on first use and extended as the tip moves; after a reorg the last
 * `undoDepth` blocks are recomputed. Blocks off the best chain are not listed (the node listed
 * them unless asked not to).
 */
class BlockTimes {
  /** @param {import('../stores/abstract').AbstractStore} store */
  constructor(store) {
    this.store = store;
    this.logical = new Uint32Array(1024);
    this.length = 0;
    this.lastHash = null;
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
      this.length = 0;
      this.lastHash = null;
      return;
    }
    if (tip.hash === this.lastHash) return;
    if (this.length > 0 && (await this.store.getBlockHash(this.length - 1)) !== this.lastHash) {
      this.length = Math.max(0, this.length - 1 - this.store.undoDepth); // below that, no block can have changed
    }
    while (this.length <= tip.height) {
      const from = this.length;
      const to = Math.min(tip.height, from + BATCH - 1);
      const heights = [];
      for (let h = from; h <= to; h++) heights.push(h);
      const blocks = await Promise.all(heights.map((h) => this.store.getBlock(h)));
      for (const b of blocks) {
        if (!b) return; // the tip moved back while reading: the next update starts over from here
        this._push(b.time);
      }
    }
    this.lastHash = await this.store.getBlockHash(this.length - 1);
  }

  _push(time) {
    if (this.length === this.logical.length) {
      const grown = new Uint32Array(this.logical.length * 2);
      grown.set(this.logical);
      this.logical = grown;
    }
    const prev = this.length ? this.logical[this.length - 1] : 0;
    this.logical[this.length++] = time > prev ? time : prev + 1;
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
