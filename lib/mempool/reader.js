'use strict';

const { MempoolCache } = require('./cache');

/** paired(): how many times a read is made when the tip moves under it. */
const PAIR_ATTEMPTS = 3;

/**
 * The one rule by which every reader (REST, Electrum) pairs the stored mempool snapshot with
 * the confirmed rows it reads. The follower writes a snapshot only while the tip is the one
 * the snapshot names (store.putMempool refuses it otherwise), so a snapshot naming tip T was
 * resolved against T's rows. A reader may use it only with rows read while T was the tip:
 *
 *   - `at(tip)`: the view of the snapshot naming `tip`, or null. Called with the tip a
 *     seqlock read began at (ApiApp.consistent, StoreReader.consistent), whose closing tip
 *     read confirms T held throughout.
 *   - `paired(read)`: head first, then the read, then the tip: when the tip is the head's T,
 *     T was the tip all along and the read saw T's rows. When the tip moved meanwhile and the
 *     store already holds the new tip's snapshot, the three are read again (up to
 *     PAIR_ATTEMPTS in all).
 *
 * Anything else (no snapshot; one the follower has not replaced since a block; a newer tip)
 * answers as if the mempool were empty: confirmed data alone, never a mix of two states.
 */
class MempoolReader {
  /**
   * @param {import('../stores/abstract').AbstractStore} store
   */
  constructor(store) {
    this.store = store;
    this.cache = new MempoolCache(store);
  }

  /**
   * The head of the snapshot that goes with a tip (what a poll compares), or null.
   * @param {{hash: string}|null} tip
   * @returns {Promise<{seq: number, tip: string}|null>}
   */
  async headAt(tip) {
    if (!tip) return null;
    const head = await this.store.getMempoolHead();
    return head && head.tip === tip.hash ? head : null;
  }

  /**
   * The view of the snapshot that goes with a tip, or null.
   * @param {{hash: string}|null} tip
   * @returns {Promise<import('../core/mempool').MempoolView|null>}
   */
  async at(tip) {
    return (await this.stateAt(tip)).view;
  }

  /**
   * at(tip), and whether the index holds a snapshot at all: a reader that must tell "this index
   * knows no mempool" (no follower has written one) from "the mempool is empty" or "not paired
   * with this tip yet" (the bitcore service: bitcore-node leaves its unconfirmed figures out,
   * rather than answer 0, when it has no mempool to ask) asks this. `view` follows the same
   * rule as at().
   * @param {{hash: string}|null} tip
   * @returns {Promise<{snapshot: boolean, view: import('../core/mempool').MempoolView|null}>}
   */
  async stateAt(tip) {
    const head = await this.store.getMempoolHead();
    if (!head) return { snapshot: false, view: null };
    if (!tip || head.tip !== tip.hash) return { snapshot: true, view: null };
    const view = await this.cache.view(head.seq);
    return { snapshot: true, view: view && view.tip === tip.hash ? view : null };
  }

  /**
   * Runs a confirmed read and pairs it with the snapshot of the tip it was read at.
   * @template T
   * @param {() => Promise<T>} read
   * @returns {Promise<{value: T, view: import('../core/mempool').MempoolView|null, tip: string|null}>}
   *   tip: the hash `value` belongs to when a view is paired with it (null: not known)
   */
  async paired(read) {
    for (let attempt = 1; ; attempt++) {
      const head = await this.store.getMempoolHead();
      const value = await read();
      if (!head) return { value, view: null, tip: null };
      const tip = await this.store.getTip();
      if (tip && tip.hash === head.tip) {
        const view = await this.cache.view(head.seq);
        if (!view || view.tip !== tip.hash) return { value, view: null, tip: null };
        return { value, view, tip: tip.hash };
      }
      // the tip moved after the head was read (a block, a reorg): when the store holds the
      // snapshot of the new tip already, all of it again, so that the answer is that tip's with
      // its mempool, not its confirmed rows alone (a store whose reads are not one snapshot:
      // LevelDB through serve's primary, MongoDB)
      if (attempt >= PAIR_ATTEMPTS || !tip || !(await this.headAt(tip))) return { value, view: null, tip: null };
    }
  }
}

/**
 * A reader over views handed in by a function instead of the store (tests, and an embedder
 * that keeps its mempool elsewhere): the same pairing rule, a view used only with the tip it
 * names.
 * @param {() => (import('../core/mempool').MempoolView|null|Promise<import('../core/mempool').MempoolView|null>)} hook
 * @returns {{at: (tip: {hash: string}|null) => Promise<import('../core/mempool').MempoolView|null>}}
 */
function viewsFrom(hook) {
  return {
    async at(tip) {
      if (!tip) return null;
      const view = await hook();
      return view && view.tip === tip.hash ? view : null;
    },
  };
}

module.exports = { MempoolReader, viewsFrom };
