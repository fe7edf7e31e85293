'use strict';

const path = require('node:path');
const { BlkFile } = require('./blkfile');

/**
 * A small LRU of open blk file handles, shared by the readers of one blocks dir: a handle in
 * use is never closed under its reader; the least recently used idle ones close once more than
 * `max` are open.
 */
class BlkHandles {
  /**
   * @param {string} dir blocks directory
   * @param {number} max handles kept open
   */
  constructor(dir, max) {
    this.dir = dir;
    this.max = Math.max(2, max);
    /** @type {Map<number, {ready: Promise<BlkFile>, busy: number}>} least recently used first */
    this.open = new Map();
  }

  /**
   * Runs `fn` with an open handle on blk file `num`, de-obfuscating with `key`.
   * @template T
   * @param {number} num blk file number
   * @param {string} name its file name
   * @param {Buffer|null} key xor.dat key
   * @param {(blk: BlkFile) => Promise<T>} fn
   * @returns {Promise<T>}
   */
  async use(num, name, key, fn) {
    let h = this.open.get(num);
    if (h) {
      this.open.delete(num); // re-insert: most recently used goes last
    } else {
      // the entry goes in at once, so concurrent users of a file share one open (and one handle)
      h = { ready: BlkFile.open(path.join(this.dir, name), key), busy: 0 };
    }
    this.open.set(num, h);
    h.busy++;
    try {
      let blk;
      try {
        blk = await h.ready;
      } catch (err) {
        if (this.open.get(num) === h) this.open.delete(num);
        throw err;
      }
      blk.key = key;
      this.evict();
      return await fn(blk);
    } finally {
      h.busy--;
      this.evict();
    }
  }

  /** Closes idle handles beyond `max`. */
  evict() {
    if (this.open.size <= this.max) return;
    for (const [num, h] of this.open) {
      if (this.open.size <= this.max) break;
      if (h.busy) continue;
      this.open.delete(num);
      h.ready.then((blk) => blk.close()).catch(() => {});
    }
  }

  /** Closes every handle. */
  async closeAll() {
    const hs = [...this.open.values()];
    this.open.clear();
    await Promise.all(hs.map((h) => h.ready.then((blk) => blk.close(), () => {})));
  }
}

module.exports = { BlkHandles };
