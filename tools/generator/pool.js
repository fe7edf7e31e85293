'use strict';

/**
 * The generator's spendable outputs: a bounded pool held as parallel typed arrays (about 53
 * bytes per output, no object per output), in creation order from `head` (oldest) to
 * `tail` (youngest).
 *
 * Spending marks an entry dead where it lies, so positions keep meaning "how many outputs
 * ago"; dead entries are squeezed out when the arrays fill. When more than `cap` outputs
 * are live, compaction drops the oldest: they stay unspent forever, like the dust and lost
 * coins of the real UTXO set.
 *
 * Draws are young-biased with a long tail of old coins (see `pick`): most real spends are of
 * recent outputs, and some coins move after years.
 */
class UtxoPool {
  /** @param {number} cap most live outputs kept */
  constructor(cap) {
    this.cap = cap;
    this.maxAlloc = cap + (cap >> 2) + 1024;
    this.head = 0;
    this.tail = 0;
    this.live = 0;
    this.dropped = 0;
    this._alloc(Math.min(this.maxAlloc, 1 << 14));
  }

  _alloc(n) {
    const old = this.alloc ? this : null;
    this.alloc = n;
    const txid = Buffer.alloc(n * 32);
    const vout = new Uint32Array(n);
    const value = new Float64Array(n);
    const script = new Uint32Array(n);
    const height = new Uint32Array(n);
    const alive = new Uint8Array(n);
    if (old) {
      old.txid.copy(txid, 0, 0, old.tail * 32);
      vout.set(old.vout.subarray(0, old.tail));
      value.set(old.value.subarray(0, old.tail));
      script.set(old.script.subarray(0, old.tail));
      height.set(old.height.subarray(0, old.tail));
      alive.set(old.alive.subarray(0, old.tail));
    }
    Object.assign(this, { txid, vout, value, script, height, alive });
  }

  /**
   * Adds a spendable output (youngest).
   * @param {Buffer} txidBuf buffer holding the 32-byte txid at txidOff
   * @param {number} txidOff
   * @param {number} vout
   * @param {number} value satoshis
   * @param {number} script script id
   * @param {number} height block height it was created at
   */
  add(txidBuf, txidOff, vout, value, script, height) {
    if (this.tail === this.alloc) this._makeRoom();
    const i = this.tail++;
    txidBuf.copy(this.txid, i * 32, txidOff, txidOff + 32);
    this.vout[i] = vout;
    this.value[i] = value;
    this.script[i] = script;
    this.height[i] = height;
    this.alive[i] = 1;
    this.live++;
  }

  _makeRoom() {
    const dead = this.tail - this.head - this.live;
    if (this.alloc < this.maxAlloc && dead < (this.alloc >> 2)) {
      this._alloc(Math.min(this.maxAlloc, this.alloc * 2));
      return;
    }
    this.compact();
    if (this.tail > this.alloc - (this.alloc >> 3) && this.alloc < this.maxAlloc) {
      this._alloc(Math.min(this.maxAlloc, this.alloc * 2));
    }
  }

  /** Squeezes out dead entries and drops the oldest live ones beyond `cap`. */
  compact() {
    let drop = Math.max(0, this.live - this.cap);
    this.dropped += drop;
    let w = 0;
    for (let r = this.head; r < this.tail; r++) {
      if (!this.alive[r]) continue;
      if (drop > 0) {
        drop--;
        this.alive[r] = 0;
        continue;
      }
      if (w !== r) {
        this.txid.copy(this.txid, w * 32, r * 32, r * 32 + 32);
        this.vout[w] = this.vout[r];
        this.value[w] = this.value[r];
        this.script[w] = this.script[r];
        this.height[w] = this.height[r];
        this.alive[w] = 1;
      }
      w++;
    }
    this.alive.fill(0, w, this.tail);
    this.head = 0;
    this.tail = w;
    this.live = w;
  }

  /** Compacts when at least half the span is dead, so draws rarely land on dead entries. */
  maintain() {
    const dead = this.tail - this.head - this.live;
    if (dead > 4096 && dead > this.live) this.compact();
  }

  /**
   * Draws a live output and marks it spent. With probability `youngShare` its age (in
   * positions from the youngest) is exponential with mean `youngMean`; otherwise it is the
   * long tail of old coins: position head + span·u², so the oldest part of the pool is the
   * likeliest (the density falls as 1/√distance from the oldest output).
   * @param {import('./rng').Rng} rng
   * @param {number} youngShare
   * @param {number} youngMean
   * @returns {number} the entry's index (valid until the next add)
   */
  pick(rng, youngShare, youngMean) {
    const span = this.tail - this.head;
    let pos = 0;
    for (let attempt = 0; attempt < 6; attempt++) {
      if (rng.float() < youngShare) {
        const age = Math.floor(rng.exp(youngMean));
        pos = age < span ? this.tail - 1 - age : this.head + rng.below(span);
      } else {
        const u = rng.float();
        pos = this.head + Math.floor(span * u * u);
      }
      if (this.alive[pos]) return this._take(pos);
    }
    // a dead stretch: the nearest live entry, older first, so the draw stays near its age
    for (let d = 1; ; d++) {
      if (pos - d >= this.head && this.alive[pos - d]) return this._take(pos - d);
      if (pos + d < this.tail && this.alive[pos + d]) return this._take(pos + d);
      if (pos - d < this.head && pos + d >= this.tail) throw new Error('pick from an empty pool');
    }
  }

  /**
   * Puts back an entry drawn by pick (a coin the wallet decided not to spend). Only valid
   * before the next add.
   * @param {number} i
   */
  unpick(i) {
    this.alive[i] = 1;
    this.live++;
  }

  _take(i) {
    this.alive[i] = 0;
    this.live--;
    return i;
  }

  /** @returns {UtxoPool} an independent copy (for forking a generator) */
  clone() {
    const c = Object.create(UtxoPool.prototype);
    c.cap = this.cap;
    c.maxAlloc = this.maxAlloc;
    c.head = this.head;
    c.tail = this.tail;
    c.live = this.live;
    c.dropped = this.dropped;
    c.alloc = this.alloc;
    c.txid = Buffer.from(this.txid);
    c.vout = this.vout.slice();
    c.value = this.value.slice();
    c.script = this.script.slice();
    c.height = this.height.slice();
    c.alive = this.alive.slice();
    return c;
  }
}

module.exports = { UtxoPool };
