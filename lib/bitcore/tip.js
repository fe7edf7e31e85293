'use strict';

const { EventEmitter } = require('node:events');

/**
 * Watches the index's tip: the service's `block`/`tip` events come from here, where
 * bitcore-node's came from the node's ZMQ `hashblock`. The index is written by another
 * process (`addrindex sync --follow`) or another part of this one, so the tip is polled; each
 * change is handed to `onChange` once, with the tip it moved from, and the next poll waits
 * until it is handled, so changes are handled one at a time in the order they happened.
 *
 * Events: 'error' (err) when a poll or its handling fails (polling goes on).
 */
class TipWatcher extends EventEmitter {
  /**
   * @param {import('../stores/abstract').AbstractStore} store
   * @param {{pollMs?: number, onChange: (tip: object|null, prev: object|null) => Promise<void>|void}} opts
   */
  constructor(store, { pollMs = 1000, onChange }) {
    super();
    this.store = store;
    this.pollMs = pollMs;
    this.onChange = onChange;
    this.tip = null;
    this.timer = null;
    this.stopped = true;
    this._polling = null;
  }

  /** Reads the tip once (not a change), then polls. */
  async start() {
    this.tip = await this.store.getTip();
    this.stopped = false;
    this._schedule();
    return this.tip;
  }

  _schedule() {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this._polling = this.poll().catch((err) => this.emit('error', err)).finally(() => {
        this._polling = null;
        this._schedule();
      });
    }, this.pollMs);
  }

  /**
   * One poll: reports a change of tip.
   * @returns {Promise<boolean>} whether the tip moved
   */
  async poll() {
    const tip = await this.store.getTip();
    const prev = this.tip;
    if ((tip && tip.hash) === (prev && prev.hash)) return false;
    this.tip = tip;
    await this.onChange(tip, prev);
    return true;
  }

  /** Stops polling; waits for a poll under way. */
  async stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this._polling) await this._polling;
  }
}

/**
 * The heights of the blocks a tip change added, oldest first: those above the old tip when the
 * new one extends it; after a reorg (or when more than `max` arrived, as while catching up)
 * only the new tip, as a node announces the tip it settled on.
 * @param {import('../stores/abstract').AbstractStore} store
 * @param {object|null} tip
 * @param {object|null} prev
 * @param {number} max
 * @returns {Promise<number[]>}
 */
async function addedHeights(store, tip, prev, max) {
  if (!tip) return [];
  const extends_ = prev && tip.height > prev.height && tip.height - prev.height <= max &&
    (await store.getBlockHash(prev.height)) === prev.hash;
  if (!extends_) return [tip.height];
  const heights = [];
  for (let h = prev.height + 1; h <= tip.height; h++) heights.push(h);
  return heights;
}

module.exports = { TipWatcher, addedHeights };
