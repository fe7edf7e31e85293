'use strict';

const { fromDisplayHex, toDisplayHex } = require('../chain/hash');

const TWO_256 = 1n << 256n;
const LIMBS = 8; // chain work as 8 x 32-bit limbs: exact for any 256-bit value

/**
 * The work a header with compact target `bits` proves: 2^256 / (target + 1), as Bitcoin
 * Core's GetBlockProof. A negative, zero or overflowing target proves nothing.
 * @param {number} bits
 * @returns {bigint}
 */
function blockProof(bits) {
  const exponent = bits >>> 24;
  const mantissa = bits & 0x007fffff;
  if (mantissa === 0 || (bits & 0x00800000) !== 0) return 0n;
  const target = exponent <= 3
    ? BigInt(mantissa >>> (8 * (3 - exponent)))
    : BigInt(mantissa) << BigInt(8 * (exponent - 3));
  if (target === 0n || target >= TWO_256) return 0n;
  return TWO_256 / (target + 1n);
}

function toLimbs(v) {
  const limbs = new Uint32Array(LIMBS);
  for (let i = 0; i < LIMBS; i++) {
    limbs[i] = Number(v & 0xffffffffn);
    v >>= 32n;
  }
  return limbs;
}

/**
 * Every block header seen in a blocks dir, linked into a tree rooted at genesis, and the
 * best chain through it (most cumulative work; ties go to the tip seen first).
 *
 * Entries are numbered in the order they were seen ("seq") and kept in flat typed arrays,
 * with hashes in one Buffer and an open-addressing hash table over them: about 100 bytes
 * per block and almost nothing for the garbage collector to walk, so a mainnet-sized index
 * (~900k headers) stays under 100 MB. Block bodies are never held.
 */
class HeaderIndex {
  /** @param {string} genesis genesis block hash, display hex */
  constructor(genesis) {
    this.genesis = fromDisplayHex(genesis);
    this.count = 0;
    this.cap = 0;
    this.connected = 0;
    /** prev hash (latin1 string) → seqs of blocks waiting for that parent to connect */
    this.waiting = new Map();
    this.best = -1;
    /** @type {number[]} seq at each height of the best chain */
    this.chain = [];
    this._bestDirty = false;
    this._proofs = new Map();
    this._grow(1024);
  }

  _grow(cap) {
    const grow = (Type, per, old) => {
      const a = new Type(cap * per);
      if (old) a.set(old.subarray(0, this.count * per));
      return a;
    };
    this.hashes = grow(Uint8Array, 32, this.hashes);
    this.hashes = Buffer.from(this.hashes.buffer, this.hashes.byteOffset, this.hashes.length);
    this.file = grow(Uint32Array, 1, this.file);
    this.offset = grow(Float64Array, 1, this.offset); // a file may pass 4 GiB
    this.size = grow(Uint32Array, 1, this.size);
    this.bits = grow(Uint32Array, 1, this.bits);
    this.parent = grow(Int32Array, 1, this.parent);
    this.height = grow(Int32Array, 1, this.height);
    this.work = grow(Uint32Array, LIMBS, this.work);
    this.cap = cap;
    // the table stays at most half full, so probe runs are short
    let size = 1;
    while (size < cap * 2) size *= 2;
    this.table = new Int32Array(size).fill(-1);
    this.mask = this.table.length - 1;
    for (let i = 0; i < this.count; i++) this._insert(i);
  }

  _insert(seq) {
    let slot = this.hashes.readUInt32LE(seq * 32) & this.mask;
    while (this.table[slot] !== -1) slot = (slot + 1) & this.mask;
    this.table[slot] = seq;
  }

  /**
   * @param {Buffer} buf
   * @param {number} at where a 32-byte hash (internal order) starts in buf
   * @returns {number} its seq, or -1
   */
  find(buf, at = 0) {
    const head = buf.readUInt32LE(at);
    const hs = this.hashes;
    for (let slot = head & this.mask; ; slot = (slot + 1) & this.mask) {
      const seq = this.table[slot];
      if (seq === -1) return -1;
      const o = seq * 32;
      if (hs.readUInt32LE(o) === head && hs.compare(buf, at, at + 32, o, o + 32) === 0) return seq;
    }
  }

  /**
   * Records a header. Returns its seq, or -1 when that block was already seen (Core can
   * store a block twice; the first copy is kept).
   * @param {Buffer} hash 32 bytes, internal order
   * @param {Buffer} prev 32 bytes, internal order
   * @param {number} bits
   * @param {number} file blk file number
   * @param {number} offset where the block starts in the file
   * @param {number} size block size in bytes
   */
  add(hash, prev, bits, file, offset, size) {
    if (this.find(hash) !== -1) return -1;
    if (this.count === this.cap) this._grow(Math.ceil(this.cap * 1.5));
    const i = this.count++;
    hash.copy(this.hashes, i * 32, 0, 32);
    this._insert(i);
    this.file[i] = file;
    this.offset[i] = offset;
    this.size[i] = size;
    this.bits[i] = bits;
    this.parent[i] = -1;
    this.height[i] = -1;
    if (hash.equals(this.genesis)) {
      this._connect(i, -1);
      return i;
    }
    const p = this.find(prev);
    if (p !== -1 && this.height[p] >= 0) {
      this._connect(i, p);
    } else {
      const key = prev.toString('latin1');
      const list = this.waiting.get(key);
      if (list) list.push(i);
      else this.waiting.set(key, [i]);
    }
    return i;
  }

  _proof(bits) {
    let w = this._proofs.get(bits);
    if (w === undefined) {
      w = toLimbs(blockProof(bits));
      this._proofs.set(bits, w);
    }
    return w;
  }

  /** Links `i` under `p` (-1 for genesis), then every block that was waiting for it. */
  _connect(first, firstParent) {
    const stack = [first, firstParent];
    while (stack.length) {
      const p = stack.pop();
      const i = stack.pop();
      this.parent[i] = p;
      this.height[i] = p < 0 ? 0 : this.height[p] + 1;
      this._addWork(i, p);
      this.connected++;
      const b = this.best;
      let cmp;
      if (b < 0 || (cmp = this._cmpWork(i, b)) > 0 || (cmp === 0 && i < b)) {
        this.best = i;
        this._bestDirty = true;
      }
      if (this.waiting.size) {
        const key = this.hashes.toString('latin1', i * 32, i * 32 + 32);
        const kids = this.waiting.get(key);
        if (kids) {
          this.waiting.delete(key);
          for (const k of kids) stack.push(k, i);
        }
      }
    }
  }

  /** work[i] = work[p] + proof(bits[i]), over 32-bit limbs. */
  _addWork(i, p) {
    const w = this.work;
    const proof = this._proof(this.bits[i]);
    const oi = i * LIMBS;
    const op = p * LIMBS;
    let carry = 0;
    for (let k = 0; k < LIMBS; k++) {
      const sum = (p < 0 ? 0 : w[op + k]) + proof[k] + carry;
      w[oi + k] = sum >>> 0;
      carry = sum > 0xffffffff ? 1 : 0;
    }
  }

  _cmpWork(a, b) {
    const w = this.work;
    for (let k = LIMBS - 1; k >= 0; k--) {
      const x = w[a * LIMBS + k];
      const y = w[b * LIMBS + k];
      if (x !== y) return x > y ? 1 : -1;
    }
    return 0;
  }

  /**
   * Brings `chain` up to date with the best tip after a batch of adds: rewrites heights
   * back to the fork point only.
   * @returns {boolean} whether the best chain changed
   */
  settle() {
    if (!this._bestDirty) return false;
    this._bestDirty = false;
    let i = this.best;
    const oldTip = this.chain.length ? this.chain[this.chain.length - 1] : -1;
    this.chain.length = this.height[i] + 1;
    while (i >= 0 && this.chain[this.height[i]] !== i) {
      this.chain[this.height[i]] = i;
      i = this.parent[i];
    }
    return this.best !== oldTip;
  }

  /** @returns {number} height of the best tip, -1 when genesis was not seen */
  get tipHeight() {
    return this.chain.length - 1;
  }

  /** @param {number} seq @returns {string} display hex */
  hashOf(seq) {
    return toDisplayHex(this.hashes.subarray(seq * 32, seq * 32 + 32));
  }

  /** Whether `hash` (32 bytes, internal order) is entry `seq`'s. */
  hashEquals(seq, hash) {
    return this.hashes.compare(hash, 0, 32, seq * 32, seq * 32 + 32) === 0;
  }

  /**
   * @param {string} hash display hex
   * @returns {number} seq, or -1 when unknown
   */
  seqOf(hash) {
    if (typeof hash !== 'string' || !/^[0-9a-f]{64}$/i.test(hash)) return -1;
    return this.find(fromDisplayHex(hash));
  }

  /** @param {number} seq @returns {bigint} cumulative work up to and including `seq` */
  workOf(seq) {
    let v = 0n;
    for (let k = LIMBS - 1; k >= 0; k--) v = (v << 32n) | BigInt(this.work[seq * LIMBS + k]);
    return v;
  }
}

module.exports = { HeaderIndex, blockProof };
