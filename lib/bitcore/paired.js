'use strict';

const { StoreError } = require('../errors');
const { readConsistent, movedRows } = require('../core/consistent');

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
   * Runs `read(tip)` until the tip is the same before and after it (lib/core/consistent.js);
   * a read that finds rows of two states itself (ERR_INDEX_MOVED) is repeated the same way,
   * as ApiApp.consistent repeats it, and so is one that failed while the tip moved from the one
   * it began at (a row it listed gone with a reorg: a transaction -5, a block no longer held).
   * @template T
   * @param {(tip: import('../stores/abstract').Tip|null) => Promise<T>} read
   * @returns {Promise<T>}
   * @throws {import('../errors').StoreError} ERR_INDEX_MOVING when it never is
   */
  async consistent(read) {
    const { tip, value } = await readConsistent(this.store, (at) => this._read(read, at), { retry: movedRows });
    if (tip && this.onTip) this.onTip(tip);
    return value;
  }

  /** `read(at)`; its failure, when the tip is no longer `at`, is the move's (ERR_INDEX_MOVED). */
  async _read(read, at) {
    try {
      return await read(at);
    } catch (err) {
      if (movedRows(err) || sameTip(at, await this.store.getTip())) throw err;
      throw new StoreError('ERR_INDEX_MOVED', `the index moved during the read: ${err.message}`);
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

function sameTip(a, b) {
  if (!a || !b) return a === b;
  return a.height === b.height && a.hash === b.hash;
}

module.exports = { PairedReads };
