'use strict';

const { StoreError } = require('../errors');
const { blockKey } = require('./layout');
const { decodeBlock } = require('../codec/records');

/**
 * TxNum -> height, in memory: the first TxNum of every block, binary-searched.
 *
 * History rows hold TxNums only; every answer needs heights, and a read per entry would cost
 * more than the rest of a history query. The array is 8 bytes per block (7 MB for mainnet)
 * plus an 8-byte tag of each block hash, used to notice reorgs.
 *
 * Other processes write (LMDB readers beside a writer), so the index follows the stored tip:
 * when the tip moved, it walks down from the lower of the two tips until a block's tag matches
 * (blocks are hash-chained: a matching block means everything below matches too) and reloads
 * above that. Appending keeps the same arrays; a reorg builds new ones, so a query still
 * running against the old object keeps a consistent view.
 */
class HeightIndex {
  constructor(capacity = 1024) {
    this.first = new Float64Array(capacity);
    this.tagA = new Uint32Array(capacity);
    this.tagB = new Uint32Array(capacity);
    this.count = 0;
    this.nextTxNum = 0;
  }

  /**
   * Height of the block holding txNum, or -1 when the index does not hold it.
   * @param {number} txNum
   */
  heightOf(txNum) {
    if (!(txNum >= 0 && txNum < this.nextTxNum)) return -1;
    const first = this.first;
    let lo = 0;
    let hi = this.count - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (first[mid] <= txNum) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /**
   * First TxNum of a block; the next TxNum for heights above the tip.
   * @param {number} height
   */
  firstTxNum(height) {
    if (height <= 0) return 0;
    return height < this.count ? this.first[height] : this.nextTxNum;
  }

  /**
   * The index for a stored tip: this one when nothing changed or blocks were only added,
   * a new one after a reorg.
   * @param {{get: Function, range: Function}} reader a snapshot of the store
   * @param {{height: number, hash: Buffer, nextTxNum: number}|null} tip as stored
   * @returns {Promise<HeightIndex>}
   */
  async follow(reader, tip) {
    if (!tip) return this.count === 0 ? this : new HeightIndex();
    const top = this.count - 1;
    if (top === tip.height && this.matches(top, tip.hash)) return this;
    let h = Math.min(top, tip.height);
    while (h >= 0) {
      const buf = await reader.get(blockKey(h));
      if (!buf) throw missingBlock(h);
      if (this.matches(h, decodeBlock(buf).hash)) break;
      h--;
    }
    const target = h === top ? this : this.copy(h + 1, tip.height + 1);
    await target.load(reader, h + 1, tip.height);
    target.nextTxNum = tip.nextTxNum;
    return target;
  }

  /** @private */
  matches(h, hash) {
    return this.tagA[h] === hash.readUInt32LE(0) && this.tagB[h] === hash.readUInt32LE(4);
  }

  /** @private a new index holding heights [0, keep), with room for `need` */
  copy(keep, need) {
    const c = new HeightIndex(Math.max(need, 1024));
    c.first.set(this.first.subarray(0, keep));
    c.tagA.set(this.tagA.subarray(0, keep));
    c.tagB.set(this.tagB.subarray(0, keep));
    c.count = keep;
    return c;
  }

  /** @private reads blocks from..to (inclusive) and appends them */
  async load(reader, from, to) {
    if (to < from) {
      this.count = from;
      return;
    }
    this.reserve(to + 1);
    let h = from;
    for await (const { key, value } of reader.range({ gte: blockKey(from), lt: blockKey(to + 1) })) {
      const height = key.readUInt32BE(1);
      if (height !== h) throw missingBlock(h);
      const b = decodeBlock(value);
      this.first[h] = b.firstTxNum;
      this.tagA[h] = b.hash.readUInt32LE(0);
      this.tagB[h] = b.hash.readUInt32LE(4);
      h++;
    }
    if (h !== to + 1) throw missingBlock(h);
    this.count = to + 1;
  }

  /** @private */
  reserve(n) {
    if (n <= this.first.length) return;
    const size = Math.max(n, 2 * this.first.length);
    const first = new Float64Array(size);
    const tagA = new Uint32Array(size);
    const tagB = new Uint32Array(size);
    first.set(this.first);
    tagA.set(this.tagA);
    tagB.set(this.tagB);
    this.first = first;
    this.tagA = tagA;
    this.tagB = tagB;
  }
}

function missingBlock(h) {
  return new StoreError('ERR_CORRUPT', `the index has no block row for height ${h} below its tip: ` +
    'the datadir is damaged; run "addrindex verify" and re-sync into a new --datadir', { height: h });
}

module.exports = { HeightIndex };
