'use strict';

/**
 * When a tip watcher may announce a tip lower than the last one it announced.
 *
 * `addrindex sync --follow` commits a reorg's revert to the fork point before the new branch's
 * blocks: two commits (only LMDB could group them, and only with no readers in the writer's
 * process). A reader polling the tip may see the fork point in between. Nodes and Electrum
 * servers announce only the tip a reorg settles on, and their clients may wait for a height
 * (bitcore-node's listeners would see it twice), so a lower tip is held back until it has
 * stayed the tip for `holdMs`; a node told to invalidate a block does settle lower.
 */
class RewindHold {
  /**
   * @param {object} [opts]
   * @param {number} [opts.holdMs=2000]
   * @param {() => number} [opts.now=Date.now]
   */
  constructor({ holdMs = 2000, now = Date.now } = {}) {
    this.holdMs = holdMs;
    this.now = now;
    /** @type {{hash: string, since: number}|null} the lower tip being held back */
    this.held = null;
  }

  /**
   * Whether to keep `tip` back for now (call on every poll).
   * @param {{height: number, hash: string}|null} tip the index's tip
   * @param {{height: number, hash: string}|null} last the tip last announced
   * @returns {boolean}
   */
  holds(tip, last) {
    if (!tip || !last || tip.height >= last.height) {
      this.held = null;
      return false;
    }
    if (!this.held || this.held.hash !== tip.hash) this.held = { hash: tip.hash, since: this.now() };
    if (this.now() - this.held.since < this.holdMs) return true;
    this.held = null;
    return false;
  }
}

module.exports = { RewindHold };
