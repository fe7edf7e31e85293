'use strict';

const { ParseError } = require('../errors');
const { parseTransaction } = require('../chain/tx');
const { toDisplayHex } = require('../chain/hash');
const { classify, writeOutputScripthash, p2pkScripthash } = require('../chain/script');
const { encodeMempoolTx } = require('../codec/mempool');

/**
 * MempoolEntry's flags, each a boolean property of it kept as a bit of `bits` (defined on the
 * class below):
 *   included       in the snapshot: every input resolved, from the index or from an included transaction
 *   alive          still in the node's mempool (a removed entry stays referenced by children until they settle)
 *   stored         the store holds a part of it, at `storedRank`
 *   storedCurrent  what the store holds is its part as resolved now (_forget() clears it)
 *   arrived        not resolved yet since it arrived
 */
const FLAGS = { included: 1, alive: 2, stored: 4, storedCurrent: 8, arrived: 16 };
const EMPTY = Buffer.alloc(0);

/** Input and output flags, as the snapshot stores them (docs/FORMAT.md, `M` rows). */
const INDEXED = 1;
const UNCONFIRMED = 2;

/** Where an input's spent output was found (MempoolEntry#state). */
const ASK = 0; // not known: the index is to be asked
const CONFIRMED = 1; // unspent in the index, at the pool's tip
const MISSING = 2; // neither in the index at the pool's tip nor in a held transaction
const PARENT = 3; // an output of a held transaction (MempoolEntry#refs)
const UNSPENDABLE = 4; // an output its held parent lacks, or an OP_RETURN one

/**
 * One transaction of the node's mempool as the follower holds it: what it pays (parsed once,
 * when it arrives), what each input spends as last resolved, and its bytes until the store
 * holds them. A mempool holds 150,000 of these and every poll looks at them, so each keeps
 * its flat fields in a run of bytes of a shared slab (`mem` from `at`), rather than an object,
 * or a typed array, per field, input or output: a typed array's objects alone take ~180 bytes,
 * and a Buffer view of its own ~100 (bench/mempool.js at 150,000: 14 MB of them). Its flags
 * share one number (`bits`) and what its fields imply (the offsets past the outpoints, the
 * outputs' total, its weight toward --mempool-max-mb) is computed when asked.
 *
 * `mem` from `at`: [txid | output script hashes × m | script hashes of what the inputs spend × n]
 * (32 bytes each), [the inputs' outpoints × n] (36 bytes each: txid, vout LE, as serialized),
 * [output values × m | values of the outputs the inputs spend × n] (f64), [output flags × m |
 * input flags × n | input state × n] (u8).
 *
 * The bytes (`raw`) go once the store holds them (markStored): a mempool's bytes are ~60 MB at
 * 150,000 transactions, and the follower needs them again only to write the transaction
 * again (its part changed, or its place), when it reads them back from the store.
 */
class MempoolEntry {
  /**
   * @param {Buffer} raw the transaction as the node serializes it (witness included)
   * @param {number} time first seen, seconds
   * @param {import('../chain/tx').Tx} tx raw, parsed
   */
  constructor(raw, time, tx) {
    const n = tx.inputs.length;
    const m = tx.outputs.length;
    /** display hex: the node's name for it, and the pool's key */
    this.id = toDisplayHex(tx.txid);
    /** its bytes until the store holds them (a part holds none: the store keeps them in a row of their own) */
    this._raw = raw;
    /** the bytes' length */
    this.size = raw.length;
    this.time = time;
    this.vsize = tx.vsize;
    this.n = n;
    this.m = m;
    /** @type {Buffer} the slab its fields are in, from `at` (entryMem sets both; set here first so every entry has one shape) */
    this.mem = EMPTY;
    this.at = 0;
    entryMem(this, 32 * (1 + m + n) + 36 * n + 8 * (m + n) + m + 2 * n);
    /** where in `mem` the outpoints start (the values and the flags follow: valuesAt, flagsAt) */
    this.insAt = this.at + 32 * (1 + m + n);
    tx.txid.copy(this.mem, this.at);
    /**
     * the held transaction each input spends (state PARENT), else null; null until one does,
     * and for a transaction of one input the parent itself (ref(), setRef(): no array for the
     * most common spends of a mempool parent)
     * @type {Array<MempoolEntry|null>|MempoolEntry|null}
     */
    this.refs = null;
    /**
     * [a P2PK output's own script hash × m | that of the P2PK output an input spends × n]
     * (the script view's key, beside the index key in `mem`); null until there is one
     * @type {Array<Buffer|null>|null}
     */
    this.own = null;
    for (let i = 0; i < n; i++) {
      // the 36 bytes as serialized: txid, vout
      const at = tx.inputs[i].txid.byteOffset - raw.byteOffset;
      raw.copy(this.mem, this.insAt + 36 * i, at, at + 36);
    }
    const { valuesAt, flagsAt } = this;
    for (let o = 0; o < m; o++) {
      const out = tx.outputs[o];
      this.mem.writeDoubleLE(out.value, valuesAt + 8 * o);
      // OP_RETURN: not indexed (flag 0), and never spendable
      const c = classify(out.script);
      if (writeOutputScripthash(out.script, c, this.mem, this._hashAt(o))) this.mem[flagsAt + o] = INDEXED;
      this.setOwn(o, p2pkScripthash(out.script, c));
    }
    this.fee = 0;
    /** its FLAGS */
    this.bits = FLAGS.alive | FLAGS.arrived;
    /** its encoded part of the snapshot (encodeMempoolTx) while its resolution holds, until the store holds it */
    this.record = null;
    /** its place in the snapshot (0: none; pool.js) */
    this.rank = 0;
    /** where the store holds its part, when it does (`stored`) */
    this.storedRank = 0;
    /** the part a follower starting again read from the store, compared once with its own (pool.changes()) */
    this.loadedPart = null;
    /** while it waits: its parents' display txids (parentIds()) */
    this.parentIdList = null;
    // the pool's walk
    this.mark = 0;
    this.cursor = 0;
    /** its slot in the pool's TxidIndex */
    this.slot = -1;
    /**
     * held transactions that spend its outputs (spendParent): null, the one, or several
     * (kids(): most parents have one)
     * @type {MempoolEntry[]|MempoolEntry|null}
     */
    this._kids = null;
  }

  /** @returns {number} where in `mem` the values start */
  get valuesAt() {
    return this.insAt + 36 * this.n;
  }

  /** @returns {number} where in `mem` the flags start */
  get flagsAt() {
    return this.insAt + 44 * this.n + 8 * this.m;
  }

  /** @returns {number} what its outputs pay */
  get outTotal() {
    let total = 0;
    for (let o = 0; o < this.m; o++) total += this.value(o);
    return total;
  }

  /** @returns {number} what it takes in the follower's memory, estimated (the pool's --mempool-max-mb) */
  get bytes() {
    return entryBytes(this.size, this.n, this.m);
  }

  /** @param {number} k output k (k < m), or the output input k − m spends @returns {number} where its script hash is in `mem` */
  _hashAt(k) {
    return this.at + 32 * (1 + k);
  }

  /** @returns {Buffer|null} the transaction as the node serializes it; null once the store holds it (markStored) */
  get raw() {
    return this._raw;
  }

  /** Its bytes copied out of the buffer they were fetched in (shared with other transactions), if still held. */
  ownRaw() {
    if (this._raw !== null) this._raw = Buffer.from(this._raw);
  }

  /** @param {Buffer} raw its bytes, read back from the store (checked by the caller) */
  setRaw(raw) {
    this._raw = raw;
  }

  /** @param {number} i @returns {number} where input `i`'s outpoint starts in `mem` */
  _outpointAt(i) {
    return this.insAt + 36 * i;
  }

  /** @param {number} i @returns {number} the output input `i` spends */
  vout(i) {
    return this.mem.readUInt32LE(this.insAt + 36 * i + 32);
  }

  /** @param {number} k output k (k < m), or what input k − m spends @returns {number} */
  value(k) {
    return this.mem.readDoubleLE(this.valuesAt + 8 * k);
  }

  /** @param {number} o @returns {boolean} output o is filed (not OP_RETURN) */
  indexed(o) {
    return (this.mem[this.flagsAt + o] & INDEXED) !== 0;
  }

  /** @param {number} i @returns {MempoolEntry|null} the held transaction input `i` spends */
  ref(i) {
    if (this.n === 1 || this.refs === null) return this.refs;
    return this.refs[i];
  }

  /** @param {number} i @param {MempoolEntry|null} p */
  setRef(i, p) {
    if (this.n === 1) {
      this.refs = p;
      return;
    }
    if (this.refs === null) {
      if (p === null) return;
      this.refs = new Array(this.n).fill(null);
    }
    this.refs[i] = p;
  }

  /** @returns {MempoolEntry[]} the held transactions that spend its outputs (a new array when one) */
  kids() {
    const k = this._kids;
    return k === null ? [] : Array.isArray(k) ? k : [k];
  }

  /**
   * The held transaction input `i` spends, found by its txid's bytes in the pool.
   * @param {number} i
   * @param {(buf: Buffer, at: number) => MempoolEntry|null} find
   * @returns {MempoolEntry|null}
   */
  findParent(i, find) {
    return find(this.mem, this._outpointAt(i));
  }

  /** @returns {Buffer} 32 bytes, internal order */
  get txid() {
    return this.mem.subarray(this.at, this.at + 32);
  }

  /**
   * @param {Buffer} buf
   * @param {number} at
   * @returns {boolean} its txid is the 32 bytes at `at` in `buf` (internal order)
   */
  isTxid(buf, at) {
    const mem = this.mem;
    const from = this.at;
    for (let i = 31; i >= 0; i--) if (mem[from + i] !== buf[at + i]) return false;
    return true;
  }

  /**
   * The display hex of the transaction input `i` spends (the pool's key of a held parent),
   * from the bytes: a mempool of 150,000 holds no string per input.
   * @param {number} i
   * @returns {string}
   */
  parentId(i) {
    const at = this._outpointAt(i);
    return toDisplayHex(this.mem.subarray(at, at + 32));
  }

  /**
   * parentId() of every input, kept while the entry waits outside the snapshot (the pool
   * looks a waiting entry up by what it waits for).
   * @returns {string[]}
   */
  parentIds() {
    if (!this.parentIdList) this.parentIdList = Array.from({ length: this.n }, (_, i) => this.parentId(i));
    return this.parentIdList;
  }

  /**
   * Its part of the snapshot, encoded once while its resolution holds.
   * @returns {Buffer}
   */
  encoded() {
    if (this.record === null) this.record = encodeMempoolTx(this.toMempoolTx());
    return this.record;
  }

  /** @returns {boolean} its part is to be encoded anew: neither encoded nor stored since its resolution changed */
  partChanged() {
    return this.record === null && !this.storedCurrent;
  }

  /** The store took its part at its place, and its bytes: what it held of them goes. */
  markStored() {
    this.stored = true;
    this.storedRank = this.rank;
    this.storedCurrent = true;
    this.loadedPart = null;
    this.record = null;
    this._raw = null;
  }

  /**
   * Taken from the stored snapshot when the follower starts again: the store holds its bytes
   * (they go) and `part` at `rank`, which pool.changes() compares once with its own part.
   * @param {number} rank
   * @param {Uint8Array} part a view of the read (copied)
   */
  markLoaded(rank, part) {
    this.rank = rank;
    this.stored = true;
    this.storedRank = rank;
    this.storedCurrent = false;
    this.loadedPart = Buffer.from(part);
    this._raw = null;
  }

  /** The store holds nothing of it any more. */
  markUnstored() {
    this.stored = false;
    this.storedRank = 0;
    this.storedCurrent = false;
    this.loadedPart = null;
  }

  /** @param {number} i @returns {number} */
  state(i) {
    return this.mem[this.flagsAt + this.m + this.n + i];
  }

  /** @param {number} i @param {number} s */
  setState(i, s) {
    this.mem[this.flagsAt + this.m + this.n + i] = s;
  }

  /**
   * The outpoint input `i` spends, copied into `dst` at `at` (36 bytes: txid internal, vout LE).
   * @param {number} i
   * @param {Buffer} dst
   * @param {number} at
   */
  copyOutpoint(i, dst, at) {
    const from = this._outpointAt(i);
    this.mem.copy(dst, at, from, from + 36);
  }

  /**
   * Input `i` spends output `vout` of the held transaction `parent`.
   * @returns {boolean} whether that output exists and can be spent (not OP_RETURN)
   */
  spendParent(i, parent) {
    const vout = this.vout(i);
    const was = this.ref(i);
    if (was !== parent) {
      if (was !== null) was.forgetKid(this);
      parent._addKid(this);
    }
    this.setRef(i, parent);
    if (vout >= parent.m || !parent.indexed(vout)) {
      this.setState(i, UNSPENDABLE);
      return false;
    }
    this.setState(i, PARENT);
    this._spend(i, parent.value(vout), INDEXED | UNCONFIRMED, parent.mem, parent._hashAt(vout));
    this.setOwn(this.m + i, parent.ownAt(vout));
    return true;
  }

  /** @param {MempoolEntry} kid no longer one that spends this one's outputs (every place it held) */
  forgetKid(kid) {
    const k = this._kids;
    if (k === null) return;
    if (!Array.isArray(k)) {
      if (k === kid) this._kids = null;
      return;
    }
    const left = k.filter((x) => x !== kid);
    this._kids = left.length > 1 ? left : left.length ? left[0] : null;
  }

  /** @private @param {MempoolEntry} kid */
  _addKid(kid) {
    const k = this._kids;
    if (k === null || k === kid) this._kids = kid;
    else if (Array.isArray(k)) k.push(kid);
    else this._kids = [k, kid];
  }

  /**
   * Input `i` spends an output the index holds unspent (store.getPrevouts' answer), or,
   * `prevout` null, one it does not hold.
   * @param {number} i
   * @param {{value: number, scripthash: Buffer, p2pk?: Buffer|null}|null} prevout  a scripthash
   *   of zeros: not indexed
   */
  spendConfirmed(i, prevout) {
    if (!prevout) {
      this.setRef(i, null);
      this.setState(i, MISSING);
      return;
    }
    const indexed = !isZero(prevout.scripthash);
    this._spendConfirmed(i, prevout.value, indexed, prevout.scripthash, 0, indexed && prevout.p2pk ? prevout.p2pk : null);
  }

  /**
   * Input `i` (state PARENT) spends an output of `parent`, a held transaction a block has just
   * confirmed: the index now files that output as the parent did (the same script rules), so
   * it is settled as the index would answer, with no lookup.
   * @param {number} i
   * @param {MempoolEntry} parent
   */
  spendConfirmedParent(i, parent) {
    const vout = this.vout(i);
    this._spendConfirmed(i, parent.value(vout), true, parent.mem, parent._hashAt(vout), parent.ownAt(vout));
  }

  /**
   * Input `i` spends a confirmed output: `value`, its script hash at `at` in `hashes` (when
   * `indexed`), a P2PK output's own script hash (`own`, else null).
   * @private
   */
  _spendConfirmed(i, value, indexed, hashes, at, own) {
    this.setRef(i, null);
    this.setState(i, CONFIRMED);
    this._spend(i, value, indexed ? INDEXED : 0, hashes, at);
    this.setOwn(this.m + i, own);
  }

  /**
   * Slot k of `own`. An outpoint fixes the script it spends, so an input's own hash changes
   * only with what _spend compares: the encoded part needs no other reset.
   * @param {number} k
   * @param {Buffer|null} hash
   */
  setOwn(k, hash) {
    if (!hash && !this.own) return;
    if (!this.own) this.own = new Array(this.m + this.n).fill(null);
    this.own[k] = hash ? Buffer.from(hash) : null;
  }

  /** @param {number} k @returns {Buffer|null} */
  ownAt(k) {
    return this.own ? this.own[k] : null;
  }

  /**
   * Records what input i spends; the encoded part goes when that changes it. A parent
   * confirmed is no change: the part's UNCONFIRMED flag says the input spent a mempool output
   * when the part was written, and readers ask the snapshot whether that parent is still in it
   * (docs/FORMAT.md, `M` rows, format 4 on), so a block leaves its children's parts as they are.
   */
  _spend(i, value, flags, hashes, at) {
    const m = this.m;
    const h = this._hashAt(m + i);
    const f = this.flagsAt + m + i;
    const was = this.mem[f];
    const same = this.value(m + i) === value && (was === flags || was === (flags | UNCONFIRMED)) &&
      (!(flags & INDEXED) || hashes.compare(this.mem, h, h + 32, at, at + 32) === 0);
    if (same) {
      this.mem[f] = flags;
      return;
    }
    this.mem.writeDoubleLE(value, this.valuesAt + 8 * (m + i));
    this.mem[f] = flags;
    if (flags & INDEXED) hashes.copy(this.mem, h, at, at + 32);
    this._forget();
  }

  /** The encoded part, and the stored one, no longer hold. */
  _forget() {
    this.record = null;
    this.storedCurrent = false;
  }

  /**
   * Whether every input is resolved: from the index, or from an included, still-held parent
   * (parents are settled first). Sets the fee; false when it would be negative.
   * @returns {boolean}
   */
  settle() {
    const { n, m } = this;
    const states = this.flagsAt + m + n;
    let total = 0;
    for (let i = 0; i < n; i++) {
      const s = this.mem[states + i];
      if (s === PARENT) {
        const p = this.ref(i);
        if (!p.alive || !p.included) return false;
      } else if (s !== CONFIRMED) {
        return false;
      }
      total += this.value(m + i);
    }
    const fee = total - this.outTotal;
    if (fee < 0) return false;
    if (fee !== this.fee) {
      this.fee = fee;
      this._forget();
    }
    return true;
  }

  /**
   * The transaction as the snapshot codec takes it (lib/codec/mempool.js, MempoolTx): views
   * into this entry's buffers.
   * @returns {import('../codec/mempool').MempoolTx}
   */
  toMempoolTx() {
    const { n, m, mem } = this;
    const inFlags = this.flagsAt + m;
    const inputs = new Array(n);
    for (let i = 0; i < n; i++) {
      const at = this._outpointAt(i);
      const flags = mem[inFlags + i];
      inputs[i] = {
        txid: mem.subarray(at, at + 32),
        vout: this.vout(i),
        value: this.value(m + i),
        scripthash: flags & INDEXED ? mem.subarray(this._hashAt(m + i), this._hashAt(m + i) + 32) : null,
        p2pk: flags & INDEXED ? this.ownAt(m + i) : null,
        unconfirmed: (flags & UNCONFIRMED) !== 0,
      };
    }
    const outputs = new Array(m);
    for (let o = 0; o < m; o++) {
      const indexed = this.indexed(o);
      outputs[o] = { value: this.value(o), scripthash: indexed ? mem.subarray(this._hashAt(o), this._hashAt(o) + 32) : null, p2pk: indexed ? this.ownAt(o) : null };
    }
    return { txid: this.txid, time: this.time, fee: this.fee, vsize: this.vsize, size: this.size, inputs, outputs };
  }
}

for (const [name, bit] of Object.entries(FLAGS)) {
  Object.defineProperty(MempoolEntry.prototype, name, {
    get() {
      return (this.bits & bit) !== 0;
    },
    set(v) {
      this.bits = v ? this.bits | bit : this.bits & ~bit;
    },
  });
}

/**
 * An entry's `mem` and `at`: `size` zeroed bytes cut from slabs that hold entries' fields
 * only. Cut from Node's shared pool, 150,000 of them lay between the short-lived buffers of
 * the poll that fetched them (the node client's, the parts), whose slabs each of them then
 * kept: 63 MB of slabs for 42 MB of entries after a first load of 150,000.
 * @param {MempoolEntry} entry
 * @param {number} size
 */
function entryMem(entry, size) {
  if (size > SLAB_BYTES / 4) {
    entry.mem = Buffer.alloc(size);
    entry.at = 0;
    return;
  }
  if (slabAt + size > slab.length) {
    slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
    slabAt = 0;
  }
  slab.fill(0, slabAt, slabAt + size);
  entry.mem = slab;
  entry.at = slabAt;
  slabAt += size;
}
/** As Node's pool: a slab is kept while one entry cut from it is; the more each holds, the longer */
const SLAB_BYTES = 8192;
let slab = Buffer.allocUnsafeSlow(0);
let slabAt = 0;

/**
 * What an entry counts toward --mempool-max-mb: about what Bitcoin Core's DynamicMemoryUsage
 * counts for the same transaction (its entry, the transaction's inputs, outputs and scripts,
 * its index nodes; some 1.8 KB for a typical 430-byte transaction), so that a follower at
 * Core's default of 300 holds what a Core node at its default holds, and evicts what Core
 * would. What the follower itself takes per transaction is measured by bench/mempool.js
 * (about 1.15 KB of V8 heap and buffers: lib/mempool/README.md); its memory is bounded at that
 * multiple of the limit.
 * @param {number} rawLength
 * @param {number} inputs
 * @param {number} outputs
 * @returns {number}
 */
function entryBytes(rawLength, inputs, outputs) {
  return ENTRY_BYTES + 2 * rawLength + INPUT_BYTES * inputs + OUTPUT_BYTES * outputs;
}
const ENTRY_BYTES = 600;
const INPUT_BYTES = 100;
const OUTPUT_BYTES = 60;

/**
 * A transaction the node returned, checked and parsed: it must be one transaction, not a
 * coinbase, and hash to the txid it was asked for.
 * @param {Buffer} raw
 * @param {number} time first seen, seconds
 * @param {string} [id] the txid asked for (display hex)
 * @returns {MempoolEntry}
 * @throws {ParseError} bytes that are not that transaction
 */
function mempoolEntry(raw, time, id) {
  const tx = parseTransaction(raw);
  if (tx.coinbase) throw new ParseError('ERR_BAD_TX', 'a coinbase transaction cannot be in a mempool');
  const entry = new MempoolEntry(raw, time, tx);
  if (id !== undefined && entry.id !== id) {
    throw new ParseError('ERR_BAD_TX', `the bytes given for ${id} are transaction ${entry.id}`);
  }
  return entry;
}

function isZero(buf) {
  for (let i = 0; i < 32; i++) if (buf[i] !== 0) return false;
  return true;
}

module.exports = { mempoolEntry, entryBytes, ASK, MISSING, PARENT, UNSPENDABLE };
