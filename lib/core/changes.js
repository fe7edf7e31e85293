'use strict';

/**
 * What a batch (apply) or a revert does to each script hash it touches, gathered in memory
 * before anything is read or written: counters, new history entries, UTXOs added and
 * removed. One slot per script hash; entries and UTXOs are linked lists through flat typed
 * arrays, so a batch of 100k transactions allocates a handful of arrays, not a million objects.
 *
 * apply adds (positive counters, entries appended); revert subtracts (negative counters; its
 * history change is "drop every entry from TxNum cutoff on", which needs no list).
 *
 * Two script hashes are one slot when their first `keyBytes` bytes agree: a backend that keys
 * accounts by a prefix (the key-value schema's 12-byte hashX) must see them as one account.
 *
 * `parts` says, per slot of an address account that a P2PK output joined or left in the batch,
 * which P2PK scripts it counts (their own script hash, with the TxNum of the first entry the
 * batch gives them) and its "both" entries: the transactions that touch it through a P2PK
 * script and through another script, with the flags of the other (lib/core/p2pk.js).
 */
class Changes {
  /**
   * @param {number} [capacity] expected script hashes
   * @param {number} [keyBytes=32] bytes of a script hash that name its account
   */
  constructor(capacity = 1024, keyBytes = 32) {
    this.keyBytes = keyBytes;
    this.n = 0;
    this.cap = 0;
    this.entries = new Links(capacity * 2, 1);
    this.adds = new Links(capacity * 2, 3);
    this.dels = new Links(capacity, 2);
    /** @type {Map<number, {p2pk: Map<string, {sh: Buffer, first: number}>, both: number[]}>} */
    this.parts = new Map();
    this.growSlots(capacity);
  }

  /** @private */
  growSlots(cap) {
    const copyF = (a) => { const b = new Float64Array(cap); if (a) b.set(a); return b; };
    const copyI = (a, fill) => { const b = new Int32Array(cap).fill(fill); if (a) b.set(a); return b; };
    const shs = Buffer.allocUnsafe(32 * cap);
    if (this.shs) this.shs.copy(shs, 0, 0, 32 * this.n);
    this.shs = shs;
    this.received = copyF(this.received);
    this.sent = copyF(this.sent);
    this.funded = copyF(this.funded);
    this.spent = copyF(this.spent);
    this.firstHeight = copyF(this.firstHeight);
    this.lastHeight = copyF(this.lastHeight);
    this.entryCount = copyF(this.entryCount);
    this.entryHead = copyI(this.entryHead, -1);
    this.entryTail = copyI(this.entryTail, -1);
    this.addHead = copyI(this.addHead, -1);
    this.addTail = copyI(this.addTail, -1);
    this.delHead = copyI(this.delHead, -1);
    this.delTail = copyI(this.delTail, -1);
    this.cap = cap;
    this.rehash();
  }

  /**
   * The slot table: open addressing over an Int32Array (slot + 1, 0 = free) holding at most
   * half its size, hashed from 8 bytes of the script hash mixed with a per-process secret —
   * script hashes are chosen by whoever makes the outputs, so a fixed hash could be attacked
   * with colliding addresses. Several times faster than a Map keyed by latin1 strings.
   * @private
   */
  rehash() {
    let size = 1024;
    while (size < 2 * this.cap) size *= 2;
    this.table = new Int32Array(size);
    this.mask = size - 1;
    for (let j = 0; j < this.n; j++) {
      let h = hash(this.shs, 32 * j) & this.mask;
      while (this.table[h] !== 0) h = (h + 1) & this.mask;
      this.table[h] = j + 1;
    }
  }

  /**
   * The slot of a script hash, created on first touch.
   * @param {Buffer} buf
   * @param {number} at byte offset of the 32-byte script hash
   * @param {number} height block being applied or reverted
   * @returns {number}
   */
  touch(buf, at, height) {
    const table = this.table;
    const shs = this.shs;
    let h = hash(buf, at) & this.mask;
    for (;;) {
      const s = table[h];
      if (s === 0) break;
      if (same(shs, 32 * (s - 1), buf, at, this.keyBytes)) {
        this.lastHeight[s - 1] = height;
        return s - 1;
      }
      h = (h + 1) & this.mask;
    }
    let j = this.n;
    if (j === this.cap) {
      this.growSlots(2 * this.cap);
      return this.touch(buf, at, height);
    }
    this.n++;
    for (let k = 0, d = 32 * j; k < 32; k++) shs[d + k] = buf[at + k];
    table[h] = j + 1;
    this.firstHeight[j] = height;
    this.lastHeight[j] = height;
    return j;
  }

  /**
   * Adds a history entry (TxNums arrive in chain order; a second flag for the same tx merges).
   * @param {number} j
   * @param {number} txNum
   * @param {number} flag FUNDED or SPENT
   */
  entry(j, txNum, flag) {
    const e = this.entries;
    const t = this.entryTail[j];
    if (t >= 0) {
      const p = e.num[t];
      if (Math.floor(p / 4) === txNum) {
        if (((p % 4) & flag) === 0) e.num[t] = p + flag;
        return;
      }
    }
    const i = e.push(txNum * 4 + flag);
    this.link(this.entryHead, this.entryTail, e, j, i);
    this.entryCount[j]++;
  }

  /**
   * An unspent output the batch creates (or a revert puts back).
   * @returns {number} its index, to cancel it when the batch spends it again
   */
  addUtxo(j, txNum, vout, value) {
    const a = this.adds;
    const i = a.push(txNum, vout, value);
    this.link(this.addHead, this.addTail, a, j, i);
    return i;
  }

  /** Cancels an added UTXO (spent later in the same batch). */
  cancelUtxo(i) {
    this.adds.dead[i] = 1;
  }

  /** An unspent output the index holds and the batch spends (or a revert removes). */
  delUtxo(j, txNum, vout) {
    const d = this.dels;
    const i = d.push(txNum, vout);
    this.link(this.delHead, this.delTail, d, j, i);
  }

  /**
   * Slot j (an address account) counts the P2PK script whose own script hash is `own`, from
   * TxNum txNum on when the batch had not named it yet.
   * @param {number} j
   * @param {Buffer} own 32 bytes
   * @param {number} txNum
   */
  p2pkPart(j, own, txNum) {
    const p = this.partsOf(j);
    const k = own.latin1Slice(0, 32);
    if (!p.p2pk.has(k)) p.p2pk.set(k, { sh: Buffer.from(own), first: txNum });
  }

  /**
   * Transaction txNum touches slot j through a P2PK script and, with `flags`, through another.
   * @param {number} j
   * @param {number} txNum in chain order, once per transaction
   * @param {number} flags FUNDED | SPENT
   */
  bothEntry(j, txNum, flags) {
    this.partsOf(j).both.push(txNum * 4 + flags);
  }

  /** @private */
  partsOf(j) {
    let p = this.parts.get(j);
    if (!p) this.parts.set(j, (p = { p2pk: new Map(), both: [] }));
    return p;
  }

  /** @private */
  link(head, tail, list, j, i) {
    if (head[j] < 0) head[j] = i;
    else list.next[tail[j]] = i;
    tail[j] = i;
  }
}

const SEED = require('node:crypto').randomBytes(8);
const S0 = SEED.readInt32LE(0);
const S1 = SEED.readInt32LE(4) | 1;

/** 32-bit mix of bytes at..at+8 with the process secret. */
function hash(buf, at) {
  const a = (buf[at] | (buf[at + 1] << 8) | (buf[at + 2] << 16) | (buf[at + 3] << 24)) ^ S0;
  const b = buf[at + 4] | (buf[at + 5] << 8) | (buf[at + 6] << 16) | (buf[at + 7] << 24);
  let h = Math.imul(a, 0x9e3779b1) ^ Math.imul(b ^ (a >>> 15), S1);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  return h ^ (h >>> 13);
}

function same(x, i, y, j, n) {
  for (let k = 0; k < n; k++) if (x[i + k] !== y[j + k]) return false;
  return true;
}

/**
 * Singly linked list nodes over flat arrays: up to three numbers per node, a next pointer and
 * a dead flag.
 */
class Links {
  constructor(cap, width) {
    this.width = width;
    this.n = 0;
    this.alloc(cap);
  }

  /** @private */
  alloc(cap) {
    const f = (a) => { const b = new Float64Array(cap); if (a) b.set(a); return b; };
    this.num = f(this.num);
    if (this.width > 1) this.num2 = f(this.num2);
    if (this.width > 2) this.num3 = f(this.num3);
    const next = new Int32Array(cap).fill(-1);
    if (this.next) next.set(this.next);
    this.next = next;
    const dead = new Uint8Array(cap);
    if (this.dead) dead.set(this.dead);
    this.dead = dead;
    this.cap = cap;
  }

  push(a, b, c) {
    const i = this.n++;
    if (i === this.cap) this.alloc(2 * this.cap);
    this.num[i] = a;
    if (this.width > 1) this.num2[i] = b;
    if (this.width > 2) this.num3[i] = c;
    return i;
  }
}

module.exports = { Changes };
