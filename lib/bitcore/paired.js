'use strict';

const { StoreError } = require('../errors');

/** Times a read is retried when the index commits a block while it runs. */
const READ_ATTEMPTS = 5;

/** What an index without a mempool snapshot (or without a reader of it) gives. */
const NO_MEMPOOL = Object.freeze({ snapshot: false, view: null });

/**
 * One answer of the service, one tip: its reads are repeated until the index's tip is the
 * same before and after them (a seqlock: the index is written by another process or part), and
 * the mempool snapshot is used only with the tip it names (lib/mempool/reader.js, the rule
 * every reader of the index follows).
 */
class PairedReads {
  /**
   * @param {import('../stores/abstract').AbstractStore} store
   * @param {import('../mempool/reader').MempoolReader|null} mempool null: confirmed data only
   * @param {{onTip?: (tip: import('../stores/abstract').Tip) => void}} [opts] onTip: the tip each
   *   answer was read at (the service's `height` follows it at once)
   */
  constructor(store, mempool, { onTip = null } = {}) {
    this.store = store;
    this.mempool = mempool;
    this.onTip = onTip;
  }

  /**
   * Runs `read(tip)` until the tip is the same before and after it.
   * @template T
   * @param {(tip: import('../stores/abstract').Tip|null) => Promise<T>} read
   * @returns {Promise<T>}
   */
  async consistent(read) {
    for (let attempt = 1; ; attempt++) {
      const before = await this.store.getTip();
      const value = await read(before);
      const after = await this.store.getTip();
      if ((before && before.hash) === (after && after.hash)) {
        if (before && this.onTip) this.onTip(before);
        return value;
      }
      if (attempt === READ_ATTEMPTS) {
        throw new StoreError('ERR_INDEX_MOVING', `the index committed new blocks during each of ${READ_ATTEMPTS} attempts to read a consistent answer`);
      }
    }
  }

  /**
   * consistent(), with the mempool as it goes with the tip the read began at: `view` is the
   * snapshot naming that tip (null when none does: confirmed data alone), `snapshot` whether
   * the index holds one at all.
   * @template T
   * @param {(pool: {snapshot: boolean, view: import('../core/mempool').MempoolView|null}, tip: import('../stores/abstract').Tip|null) => Promise<T>} read
   * @returns {Promise<T>}
   */
  withMempool(read) {
    return this.consistent(async (tip) => read(await this.poolAt(tip), tip));
  }

  /**
   * The mempool that goes with a tip, for a read that runs inside consistent().
   * @param {import('../stores/abstract').Tip|null} tip
   */
  async poolAt(tip) {
    return this.mempool ? this.mempool.stateAt(tip) : NO_MEMPOOL;
  }
}

module.exports = { PairedReads, NO_MEMPOOL };
