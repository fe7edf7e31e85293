'use strict';

/**
 * A bounded memo of string keys: what a served transaction recomputes most is an address per
 * input and output, and the same scripts recur (an address's own history, change outputs,
 * a block's busiest payees). The oldest entry goes first once `max` are held.
 */
class Memo {
  /** @param {number} max entries kept */
  constructor(max) {
    this.max = max;
    /** @type {Map<string, *>} */
    this.map = new Map();
  }

  /**
   * @template T
   * @param {string} key
   * @param {() => T} compute called on a miss
   * @returns {T}
   */
  get(key, compute) {
    let v = this.map.get(key);
    if (v === undefined && !this.map.has(key)) {
      v = compute();
      if (this.map.size >= this.max) this.map.delete(this.map.keys().next().value);
      this.map.set(key, v);
    }
    return v;
  }
}

module.exports = { Memo };
