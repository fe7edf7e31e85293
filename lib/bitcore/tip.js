'use strict';

const { EventEmitter } = require('node:events');

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
 * A tip lower than the last one handed on is held back until it has stayed the tip for
 * `rewindHoldMs`: a follower that reorganizes commits the revert to the fork before the blocks
 * of the new branch, and a node announces only the tip a reorg settles on (bitcore-node's
 * listeners wait for a height and would see it twice).
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
   * @param {number} [opts.rewindHoldMs=2000] how long a lower tip must stay before it is handed on
   * @param {() => number} [opts.now=Date.now]
   */
  constructor(store, { pollMs = 1000, onChange, mempool = null, onMempool = null, rewindHoldMs = 2000, now = Date.now }) {
    super();
    this.store = store;
    this.pollMs = pollMs;
    this.rewindHoldMs = rewindHoldMs;
    this.now = now;
    /** @type {{hash: string|null, since: number}|null} the lower tip being held back */
    this.rewind = null;
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
    const moved = (tip && tip.hash) !== (prev && prev.hash);
    if (!moved) this.rewind = null;
    else if (this._holding(tip, prev)) return false;
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

  /** Whether `tip`, lower than `prev`, is still held back (see the class comment). */
  _holding(tip, prev) {
    if (!prev || (tip && tip.height >= prev.height)) {
      this.rewind = null;
      return false;
    }
    const hash = tip ? tip.hash : null;
    if (!this.rewind || this.rewind.hash !== hash) this.rewind = { hash, since: this.now() };
    if (this.now() - this.rewind.since < this.rewindHoldMs) return true;
    this.rewind = null;
    return false;
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
