'use strict';

const { ParseError } = require('../errors');
const { parseTransaction } = require('../chain/tx');
const { toDisplayHex } = require('../chain/hash');
const { classify, writeOutputScripthash, p2pkScripthash } = require('../chain/script');
const { encodeMempoolTx, mempoolTxRawAt } = require('../codec/mempool');

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
 * One transaction of the node's mempool as the follower holds it: its bytes, what it pays
 * (parsed once, when it arrives), and what each input spends as last resolved. A mempool
 * holds tens of thousands of these and every poll looks at them, so each keeps a few flat
 * arrays rather than an object per input or output.
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
    this.raw = raw;
    this.time = time;
    this.vsize = tx.vsize;
    this.n = n;
    this.m = m;
    /** the held transaction each input spends (state PARENT), else null */
    this.refs = new Array(n).fill(null);
    /** [vout × n | offset of the input's 36-byte outpoint in raw × n] */
    this.ins = new Uint32Array(2 * n);
    /** [output values × m | values of the outputs the inputs spend × n] */
    this.values = new Float64Array(m + n);
    /** [output flags × m | input flags × n | input state × n] */
    this.flags = new Uint8Array(m + 2 * n);
    /** [txid | output script hashes × m | script hashes of what the inputs spend × n], 32 bytes each */
    this.hashes = Buffer.allocUnsafe(32 * (1 + m + n)).fill(0);
    tx.txid.copy(this.hashes, 0);
    /**
     * [a P2PK output's own script hash × m | that of the P2PK output an input spends × n]
     * (the script view's key, beside the index key in `hashes`); null until there is one
     * @type {Array<Buffer|null>|null}
     */
    this.own = null;
    for (let i = 0; i < n; i++) {
      const input = tx.inputs[i];
      this.ins[i] = input.vout;
      this.ins[n + i] = input.txid.byteOffset - raw.byteOffset;
    }
    this.outTotal = 0;
    for (let o = 0; o < m; o++) {
      const out = tx.outputs[o];
      this.values[o] = out.value;
      this.outTotal += out.value;
      // OP_RETURN: not indexed (flag 0), and never spendable
      const c = classify(out.script);
      if (writeOutputScripthash(out.script, c, this.hashes, 32 * (1 + o))) this.flags[o] = INDEXED;
      this.setOwn(o, p2pkScripthash(out.script, c));
    }
    this.fee = 0;
    /** in the snapshot: every input resolved, from the index or from an included transaction */
    this.included = false;
    /** still in the node's mempool (a removed entry stays referenced by children until they settle) */
    this.alive = true;
    /** its encoded part of the snapshot (encodeMempoolTx) while its resolution holds */
    this.record = null;
    /** its place in the snapshot (0: none; pool.js) */
    this.rank = 0;
    /** the part and place the store holds for it (null: none) */
    this.stored = null;
    this.storedRank = 0;
    /** what it takes in the follower's memory, estimated (the pool's --mempool-max-mb) */
    this.bytes = entryBytes(raw.length, n, m);
    /** not resolved yet since it arrived */
    this.arrived = true;
    /** while it waits: its parents' display txids (parentIds()) */
    this.parentIdList = null;
    // the pool's walk
    this.mark = 0;
    this.cursor = 0;
    /** its slot in the pool's TxidIndex */
    this.slot = -1;
    /** @type {MempoolEntry[]|null} held transactions that spend its outputs (spendParent) */
    this.kids = null;
  }

  /** @returns {Buffer} 32 bytes, internal order */
  get txid() {
    return this.hashes.subarray(0, 32);
  }

  /**
   * The display hex of the transaction input `i` spends (the pool's key of a held parent),
   * from the bytes: a mempool of 150,000 holds no string per input.
   * @param {number} i
   * @returns {string}
   */
  parentId(i) {
    const at = this.ins[this.n + i];
    return toDisplayHex(this.raw.subarray(at, at + 32));
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
   * Its part of the snapshot, encoded once while its resolution holds. Its bytes then hold the
   * only copy of the transaction (`raw` becomes a view into them): a held transaction is not
   * kept twice.
   * @returns {Buffer}
   */
  encoded() {
    if (this.record === null) {
      this.record = encodeMempoolTx(this.toMempoolTx());
      const at = mempoolTxRawAt(this.record);
      this.raw = this.record.subarray(at, at + this.raw.length);
    }
    return this.record;
  }

  /** @param {number} i @returns {number} */
  state(i) {
    return this.flags[this.m + this.n + i];
  }

  /** @param {number} i @param {number} s */
  setState(i, s) {
    this.flags[this.m + this.n + i] = s;
  }

  /**
   * The outpoint input `i` spends, copied into `dst` at `at` (36 bytes: txid internal, vout LE).
   * @param {number} i
   * @param {Buffer} dst
   * @param {number} at
   */
  copyOutpoint(i, dst, at) {
    const from = this.ins[this.n + i];
    this.raw.copy(dst, at, from, from + 36);
  }

  /**
   * Input `i` spends output `vout` of the held transaction `parent`.
   * @returns {boolean} whether that output exists and can be spent (not OP_RETURN)
   */
  spendParent(i, parent) {
    const vout = this.ins[i];
    if (this.refs[i] !== parent) {
      if (this.refs[i] !== null) this.refs[i].forgetKid(this);
      (parent.kids || (parent.kids = [])).push(this);
    }
    this.refs[i] = parent;
    if (vout >= parent.m || !(parent.flags[vout] & INDEXED)) {
      this.setState(i, UNSPENDABLE);
      return false;
    }
    this.setState(i, PARENT);
    this._spend(i, parent.values[vout], INDEXED | UNCONFIRMED, parent.hashes, 32 * (1 + vout));
    this.setOwn(this.m + i, parent.ownAt(vout));
    return true;
  }

  /** @param {MempoolEntry} kid no longer one that spends this one's outputs (every place it held) */
  forgetKid(kid) {
    if (!this.kids) return;
    const left = this.kids.filter((k) => k !== kid);
    this.kids = left.length ? left : null;
  }

  /**
   * Input `i` spends an output the index holds unspent (store.getPrevouts' answer), or,
   * `prevout` null, one it does not hold.
   * @param {number} i
   * @param {{value: number, scripthash: Buffer, p2pk?: Buffer|null}|null} prevout  a scripthash
   *   of zeros: not indexed
   */
  spendConfirmed(i, prevout) {
    this.refs[i] = null;
    if (!prevout) {
      this.setState(i, MISSING);
      return;
    }
    this.setState(i, CONFIRMED);
    const indexed = !isZero(prevout.scripthash);
    this._spend(i, prevout.value, indexed ? INDEXED : 0, prevout.scripthash, 0);
    this.setOwn(this.m + i, indexed && prevout.p2pk ? prevout.p2pk : null);
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
   * (docs/FORMAT.md, `M` rows, format 4), so a block leaves its children's parts as they are.
   */
  _spend(i, value, flags, hashes, at) {
    const m = this.m;
    const h = 32 * (1 + m + i);
    const was = this.flags[m + i];
    const same = this.values[m + i] === value && (was === flags || was === (flags | UNCONFIRMED)) &&
      (!(flags & INDEXED) || hashes.compare(this.hashes, h, h + 32, at, at + 32) === 0);
    if (same) {
      this.flags[m + i] = flags;
      return;
    }
    this.values[m + i] = value;
    this.flags[m + i] = flags;
    if (flags & INDEXED) hashes.copy(this.hashes, h, at, at + 32);
    this.record = null;
  }

  /**
   * Whether every input is resolved: from the index, or from an included, still-held parent
   * (parents are settled first). Sets the fee; false when it would be negative.
   * @returns {boolean}
   */
  settle() {
    const { n, m } = this;
    let total = 0;
    for (let i = 0; i < n; i++) {
      const s = this.flags[m + n + i];
      if (s === PARENT) {
        const p = this.refs[i];
        if (!p.alive || !p.included) return false;
      } else if (s !== CONFIRMED) {
        return false;
      }
      total += this.values[m + i];
    }
    const fee = total - this.outTotal;
    if (fee < 0) return false;
    if (fee !== this.fee) {
      this.fee = fee;
      this.record = null;
    }
    return true;
  }

  /**
   * The transaction as the snapshot codec takes it (lib/codec/mempool.js, MempoolTx): views
   * into this entry's buffers.
   * @returns {import('../codec/mempool').MempoolTx}
   */
  toMempoolTx() {
    const { n, m } = this;
    const inputs = new Array(n);
    for (let i = 0; i < n; i++) {
      const at = this.ins[n + i];
      const flags = this.flags[m + i];
      inputs[i] = {
        txid: this.raw.subarray(at, at + 32),
        vout: this.ins[i],
        value: this.values[m + i],
        scripthash: flags & INDEXED ? this.hashes.subarray(32 * (1 + m + i), 32 * (2 + m + i)) : null,
        p2pk: flags & INDEXED ? this.ownAt(m + i) : null,
        unconfirmed: (flags & UNCONFIRMED) !== 0,
      };
    }
    const outputs = new Array(m);
    for (let o = 0; o < m; o++) {
      const indexed = this.flags[o] & INDEXED;
      outputs[o] = { value: this.values[o], scripthash: indexed ? this.hashes.subarray(32 * (1 + o), 32 * (2 + o)) : null, p2pk: indexed ? this.ownAt(o) : null };
    }
    return { txid: this.txid, time: this.time, fee: this.fee, vsize: this.vsize, raw: this.raw, inputs, outputs };
  }
}

/**
 * What an entry counts toward --mempool-max-mb: about what Bitcoin Core's DynamicMemoryUsage
 * counts for the same transaction (its entry, the transaction's inputs, outputs and scripts,
 * its index nodes; some 1.8 KB for a typical 430-byte transaction), so that a follower at
 * Core's default of 300 holds what a Core node at its default holds, and evicts what Core
 * would. What the follower itself takes per transaction is measured by bench/mempool.js
 * (about 3 KB of V8 heap and buffers: lib/mempool/README.md); its memory is bounded at that
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
