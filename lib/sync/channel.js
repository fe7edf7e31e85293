'use strict';

/**
 * A bounded FIFO between one producer and one consumer, both async. The producer waits
 * while `capacity` items are queued, which is what keeps parsing at most that far ahead of
 * the commits (and memory bounded); the consumer waits while it is empty.
 */
class Channel {
  /** @param {number} capacity */
  constructor(capacity) {
    this.capacity = Math.max(1, capacity);
    this.items = [];
    this.done = false;
    this.error = null;
    this.closed = false;
    this._wakeTaker = null;
    this._wakePutter = null;
  }

  /**
   * Queues an item; resolves once there is room. Resolves false when the consumer closed
   * the channel (the producer should stop).
   * @returns {Promise<boolean>}
   */
  async put(item) {
    while (this.items.length >= this.capacity && !this.closed) {
      await new Promise((resolve) => { this._wakePutter = resolve; });
    }
    if (this.closed) return false;
    this.items.push(item);
    this._wake('_wakeTaker');
    return true;
  }

  /** The producer is finished: takers get `undefined` once the queue is drained. */
  end() {
    this.done = true;
    this._wake('_wakeTaker');
  }

  /** The producer failed: takers get the error once the items queued before it are taken. */
  fail(err) {
    this.error = err;
    this.done = true;
    this._wake('_wakeTaker');
  }

  /** The consumer stops taking: a waiting or later put() resolves false. */
  close() {
    this.closed = true;
    this.items.length = 0;
    this._wake('_wakePutter');
  }

  /**
   * The next item, or `undefined` at the end; rejects with the producer's error.
   * @returns {Promise<any>}
   */
  async take() {
    while (this.items.length === 0 && !this.done) {
      await new Promise((resolve) => { this._wakeTaker = resolve; });
    }
    if (this.items.length) {
      const item = this.items.shift();
      this._wake('_wakePutter');
      return item;
    }
    if (this.error) throw this.error;
    return undefined;
  }

  _wake(which) {
    const fn = this[which];
    if (fn) {
      this[which] = null;
      fn();
    }
  }
}

module.exports = { Channel };
