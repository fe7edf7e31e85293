'use strict';

const { StoreError } = require('../errors');
const { blockProof } = require('../sources/header-index');

/** Heights between remembered sums (a difficulty period: most of a span shares one `bits`). */
const SPAN = 2016;
/** Headers read from the store per call while summing. */
const READ = 2016;

/**
 * Cumulative chain work up to a block (insight's `chainwork`), from the index's headers.
 *
 * The sum over every header from genesis is remembered at every SPAN-th height together with
 * the hash of the block there, so a block's work costs one store read to check the nearest
 * remembered height below it still holds the same block, then at most SPAN - 1 headers summed.
 * The first request on a long chain sums every header once (mainnet's ~870k: a few seconds).
 * A reorg shows as another hash at a remembered height: the sums from there up are dropped
 * and summed again.
 */
class ChainWork {
  /** @param {import('../stores/abstract').AbstractStore} store */
  constructor(store) {
    this.store = store;
    /** @type {Array<{hash: string, work: bigint}>} index k: the sum up to and including height k * SPAN */
    this.marks = [];
    /** work per `bits` value: a retarget period repeats one */
    this.proofs = new Map();
    /** one walk at a time, so the remembered sums never mix two chains */
    this.queue = Promise.resolve();
  }

  /**
   * @param {number} height a block of the index
   * @returns {Promise<bigint>} its work plus that of every block before it
   */
  at(height) {
    const run = this.queue.then(() => this._at(height));
    this.queue = run.catch(() => {});
    return run;
  }

  async _at(height) {
    let k = Math.min(Math.floor(height / SPAN), this.marks.length - 1);
    while (k >= 0 && (await this.store.getBlockHash(k * SPAN)) !== this.marks[k].hash) k--;
    this.marks.length = k + 1;
    let work = k >= 0 ? this.marks[k].work : 0n;
    let next = k >= 0 ? k * SPAN + 1 : 0;
    while (next <= height) {
      // each read ends at the next remembered height (or at `height`)
      const mark = Math.ceil(next / SPAN) * SPAN;
      const count = Math.min(READ, height - next + 1, mark - next + 1);
      const headers = await this.store.getHeaders(next, count);
      if (headers.length !== 80 * count) throw new StoreError('ERR_INDEX_MOVED', `the index holds no block at height ${next + headers.length / 80} any more`);
      for (let p = 0; p < headers.length; p += 80) work += this.proof(headers.readUInt32LE(p + 72));
      next += count;
      const last = next - 1;
      if (last % SPAN === 0 && last / SPAN === this.marks.length) {
        const hash = await this.store.getBlockHash(last);
        if (hash === null) throw new StoreError('ERR_INDEX_MOVED', `the index holds no block at height ${last} any more`);
        this.marks.push({ hash, work });
      }
    }
    return work;
  }

  proof(bits) {
    let w = this.proofs.get(bits);
    if (w === undefined) {
      w = blockProof(bits);
      if (this.proofs.size < 100000) this.proofs.set(bits, w);
    }
    return w;
  }
}

module.exports = { ChainWork };
