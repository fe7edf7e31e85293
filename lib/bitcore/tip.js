'use strict';

const { EventEmitter } = require('node:events');
const { RewindHold } = require('../core/rewind-hold');

/**
 * Watches the index's tip and its mempool snapshot: the service's `block`/`tip` events come
 * from here, where bitcore-node's came from the node's ZMQ `hashblock`, and its mempool
 * transactions' `tx` events, where bitcore-node's came from ZMQ `rawtx`. The index is written
 * by another process (`addrindex sync --follow`) or another part of this one, so both are
 * polled; each change is handed on once, with what it moved from, and the next poll waits
 * until it is handled, so changes are handled one at a time in the order they happened: a
 * new tip (`onChange`) before the snapshot that goes with it (`onMempool`, given only views
 * that go with the tip, by the pairing rule of lib/mempool/reader.js).
 *
 * A tip lower than the last one handed on waits (lib/core/rewind-hold.js): a node announces
 * only the tip a reorg settles on.
 *
 * Events: 'error' (err) when a poll or its handling fails (polling goes on).
 */
class TipWatcher extends EventEmitter {
  /**
   * @param {import('../stores/abstract').AbstractStore} store
   * @param {object} opts
   * @param {number} [opts.pollMs=1000]
   * @param {(tip: object|null, prev: object|null) => Promise<void>|void} opts.onChange
   * @param {import('../mempool/reader').MempoolReader|null} [opts.mempool] where snapshots are read
   * @param {(view: import('../core/mempool').MempoolView, prev: import('../core/mempool').MempoolView|null) => Promise<void>|void} [opts.onMempool]
   *   a snapshot of the current tip with a new seq; prev: the last one handed on (null at first)
   * @param {RewindHold} [opts.rewind] when a lower tip is handed on
   */
  constructor(store, { pollMs = 1000, onChange, mempool = null, onMempool = null, rewind = new RewindHold() }) {
    super();
    this.store = store;
    this.pollMs = pollMs;
    this.rewind = rewind;
    this.onChange = onChange;
    this.mempool = onMempool ? mempool : null;
    this.onMempool = onMempool;
    this.tip = null;
    /** @type {import('../core/mempool').MempoolView|null} the last snapshot seen */
    this.view = null;
    this.timer = null;
    this.stopped = true;
    this._polling = null;
  }

  /** Reads the tip and its snapshot once (not a change), then polls. */
  async start() {
    this.tip = await this.store.getTip();
    if (this.mempool) this.view = await this.mempool.at(this.tip);
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
   * One poll: reports a change of tip, then a new snapshot of the tip.
   * @returns {Promise<boolean>} whether the tip moved
   */
  async poll() {
    const tip = await this.store.getTip();
    const prev = this.tip;
    if (this.rewind.holds(tip, prev)) return false;
    const moved = (tip && tip.hash) !== (prev && prev.hash);
    if (moved) {
      this.tip = tip;
      await this.onChange(tip, prev);
    }
    if (this.mempool) {
      const view = await this.mempool.at(tip);
      if (view && (!this.view || view.seq !== this.view.seq)) {
        const before = this.view;
        this.view = view;
        await this.onMempool(view, before);
      }
    }
    return moved;
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
