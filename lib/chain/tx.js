'use strict';

const crypto = require('node:crypto');
const { ParseError } = require('../errors');
const { toDisplayHex } = require('./hash');

// Consensus bounds, so hostile bytes fail fast instead of producing absurd objects.
const MAX_COMPACT_SIZE = 0x02000000; // Bitcoin Core's MAX_SIZE: no serialized length or count is larger
const MAX_MONEY = 21e6 * 1e8;
const MIN_INPUT_SIZE = 41; // outpoint 36 + empty script length 1 + sequence 4
const MIN_OUTPUT_SIZE = 9; // value 8 + empty script length 1

const hashOnce = typeof crypto.hash === 'function'
  ? (data) => crypto.hash('sha256', data, 'buffer')
  : (data) => crypto.createHash('sha256').update(data).digest();

/** One spent outpoint, as a view into the block's bytes. */
class TxInput {
  /**
   * @param {Buffer} txid   32 bytes, internal order (view)
   * @param {number} vout
   */
  constructor(txid, vout) {
    this.txid = txid;
    this.vout = vout;
  }
}

/** One output; `script` is a view into the block's bytes, never a copy. */
class TxOutput {
  /**
   * @param {number} value  satoshis
   * @param {Buffer} script scriptPubKey (view)
   */
  constructor(value, script) {
    this.value = value;
    this.script = script;
  }
}

/**
 * Everything about one input, as a served transaction shows it (detail mode only; the sync
 * never needs it). Buffers are views into the transaction's bytes.
 */
class TxInputDetail {
  /**
   * @param {Buffer} txid 32 bytes, internal order (all zero for a coinbase)
   * @param {number} vout 0xffffffff for a coinbase
   * @param {Buffer} script scriptSig (a coinbase's script for a coinbase)
   * @param {number} sequence
   */
  constructor(txid, vout, script, sequence) {
    this.txid = txid;
    this.vout = vout;
    this.script = script;
    this.sequence = sequence;
    /** @type {Buffer[]} witness stack items, empty when the input has none */
    this.witness = EMPTY_WITNESS;
  }
}

const EMPTY_WITNESS = Object.freeze([]);

/** A parsed transaction. Hex forms and the wtxid are computed only when asked for. */
class Tx {
  constructor(buf, offset, size, txid, hasWitness, coinbase, inputs, outputs, witnessSize) {
    /** @type {Buffer} the buffer the tx lives in */
    this.buf = buf;
    /** @type {number} byte offset of the tx within `buf` */
    this.offset = offset;
    /** @type {number} serialized size including witness data */
    this.size = size;
    /** @type {Buffer} 32-byte txid, internal byte order */
    this.txid = txid;
    /** @type {boolean} */
    this.hasWitness = hasWitness;
    /** @type {boolean} */
    this.coinbase = coinbase;
    /** @type {TxInput[]} empty for a coinbase */
    this.inputs = inputs;
    /** @type {TxOutput[]} */
    this.outputs = outputs;
    /** @type {number} bytes of segwit marker, flag and witness data (0 without witness) */
    this.witnessSize = witnessSize;
    /** @type {TxInputDetail[]|null} every input, the coinbase's included: parseTxDetail() only */
    this.details = null;
  }

  /** @returns {number} nVersion as the 4 bytes say it, unsigned */
  get version() {
    return this.buf.readUInt32LE(this.offset);
  }

  /** @returns {number} nLockTime */
  get locktime() {
    return this.buf.readUInt32LE(this.offset + this.size - 4);
  }

  /** @returns {number} size without witness data (what the txid hashes) */
  get baseSize() {
    return this.size - this.witnessSize;
  }

  /** @returns {number} BIP141 weight: base size × 3 + total size */
  get weight() {
    return this.baseSize * 3 + this.size;
  }

  /** @returns {number} virtual size: weight / 4, rounded up */
  get vsize() {
    return Math.ceil(this.weight / 4);
  }

  /** @returns {string} txid in display hex */
  get hash() {
    return toDisplayHex(this.txid);
  }

  /** @returns {Buffer|null} wtxid (internal order) when the tx carries witness data, else null */
  get wtxid() {
    if (!this.hasWitness) return null;
    return hashOnce(hashOnce(this.raw));
  }

  /** @returns {Buffer} the full serialized tx (a view) */
  get raw() {
    return this.buf.subarray(this.offset, this.offset + this.size);
  }
}

/**
 * Scratch space for the non-witness serialization of segwit txs: copied together,
 * then hashed in one call (one native call beats several incremental updates).
 */
let scratch = Buffer.allocUnsafe(1 << 16);

function truncated(what, pos, n, end) {
  return new ParseError('ERR_TRUNCATED',
    `truncated: ${what} needs ${n} bytes at offset ${pos}, only ${Math.max(0, end - pos)} left`, { offset: pos, need: n });
}

/**
 * Reads a canonical CompactSize at state.pos. Kept as a plain function over a tiny state
 * object: this runs several times per input and output, so it avoids all allocation.
 */
function readVarint(buf, st, end, what) {
  const at = st.pos;
  if (at >= end) throw truncated(what, at, 1, end);
  const first = buf[at];
  if (first < 0xfd) {
    st.pos = at + 1;
    return first;
  }
  let v;
  if (first === 0xfd) {
    if (at + 3 > end) throw truncated(what, at, 3, end);
    v = buf[at + 1] | (buf[at + 2] << 8);
    st.pos = at + 3;
    if (v < 0xfd) throw nonCanonical(what, at);
  } else if (first === 0xfe) {
    if (at + 5 > end) throw truncated(what, at, 5, end);
    v = buf.readUInt32LE(at + 1);
    st.pos = at + 5;
    if (v < 0x10000) throw nonCanonical(what, at);
  } else {
    throw new ParseError('ERR_BAD_VARINT', `${what} at offset ${at} uses a 64-bit length: larger than any valid block`, { offset: at });
  }
  if (v > MAX_COMPACT_SIZE) {
    throw new ParseError('ERR_BAD_VARINT', `${what} ${v} at offset ${at} exceeds the maximum ${MAX_COMPACT_SIZE}`, { offset: at });
  }
  return v;
}

function nonCanonical(what, at) {
  return new ParseError('ERR_BAD_VARINT', `non-canonical ${what} at offset ${at}`, { offset: at });
}

function isNullOutpoint(buf, off) {
  if (buf.readUInt32LE(off + 32) !== 0xffffffff) return false;
  for (let i = 0; i < 32; i += 4) if (buf.readUInt32LE(off + i) !== 0) return false;
  return true;
}

const state = { pos: 0 };

/**
 * Parses one transaction (legacy or BIP144 segwit serialization) at `offset`.
 * The txid is the double SHA-256 of the non-witness serialization.
 *
 * @param {Buffer} buf
 * @param {number} offset
 * @param {number} end      parsing never reads at or past this offset
 * @param {boolean} coinbase whether this is a block's first tx (must then spend the null outpoint)
 * @param {boolean} [detail=false] also record every input's script, sequence and witness
 *   (tx.details): what serving a transaction needs and indexing does not
 * @param {Buffer} [knownTxid] the txid, when these bytes were parsed before: not hashed again
 * @returns {Tx}
 */
function parseTx(buf, offset, end, coinbase, detail = false, knownTxid = undefined) {
  const st = state;
  let pos = offset;
  if (pos + 10 > end) throw truncated('transaction', pos, 10, end);
  pos += 4; // version
  let hasWitness = false;
  if (buf[pos] === 0) {
    if (buf[pos + 1] !== 1) {
      throw new ParseError('ERR_BAD_TX', `transaction at offset ${offset} has segwit marker 0 with flag ${buf[pos + 1]} (expected 1)`, { offset });
    }
    hasWitness = true;
    pos += 2;
  }
  const ioStart = pos;
  st.pos = pos;
  const nIn = readVarint(buf, st, end, 'input count');
  if (nIn === 0) throw new ParseError('ERR_BAD_TX', `transaction at offset ${offset} has no inputs`, { offset });
  if (nIn * MIN_INPUT_SIZE > end - st.pos) throw truncated('inputs', st.pos, nIn * MIN_INPUT_SIZE, end);
  pos = st.pos;

  let inputs;
  const details = detail ? new Array(nIn) : null;
  if (coinbase) {
    if (nIn !== 1 || !isNullOutpoint(buf, pos)) {
      throw new ParseError('ERR_BAD_COINBASE', `first transaction at offset ${offset} is not a coinbase`, { offset });
    }
    inputs = [];
    const at = pos;
    st.pos = pos + 36;
    const len = readVarint(buf, st, end, 'coinbase script length');
    if (len < 2 || len > 100) {
      throw new ParseError('ERR_BAD_COINBASE', `coinbase script at offset ${offset} is ${len} bytes (must be 2-100)`, { offset });
    }
    pos = st.pos + len + 4;
    if (pos > end) throw truncated('coinbase input', st.pos, len + 4, end);
    if (detail) details[0] = inputDetail(buf, at, st.pos, len);
  } else {
    inputs = new Array(nIn);
    for (let i = 0; i < nIn; i++) {
      if (pos + MIN_INPUT_SIZE > end) throw truncated('input', pos, MIN_INPUT_SIZE, end);
      const vout = buf.readUInt32LE(pos + 32);
      if (vout === 0xffffffff && isNullOutpoint(buf, pos)) {
        throw new ParseError('ERR_BAD_TX', `transaction at offset ${offset} spends the null outpoint but is not a block's coinbase`, { offset });
      }
      inputs[i] = new TxInput(buf.subarray(pos, pos + 32), vout);
      const at = pos;
      st.pos = pos + 36;
      const len = readVarint(buf, st, end, 'script length');
      pos = st.pos + len + 4;
      if (pos > end) throw truncated('input script', st.pos, len + 4, end);
      if (detail) details[i] = inputDetail(buf, at, st.pos, len);
    }
  }

  st.pos = pos;
  const nOut = readVarint(buf, st, end, 'output count');
  if (nOut === 0) throw new ParseError('ERR_BAD_TX', `transaction at offset ${offset} has no outputs`, { offset });
  if (nOut * MIN_OUTPUT_SIZE > end - st.pos) throw truncated('outputs', st.pos, nOut * MIN_OUTPUT_SIZE, end);
  pos = st.pos;
  const outputs = new Array(nOut);
  for (let i = 0; i < nOut; i++) {
    if (pos + MIN_OUTPUT_SIZE > end) throw truncated('output', pos, MIN_OUTPUT_SIZE, end);
    const lo = buf.readUInt32LE(pos);
    const hi = buf.readUInt32LE(pos + 4);
    const value = hi * 0x100000000 + lo;
    if (value > MAX_MONEY) {
      throw new ParseError('ERR_BAD_VALUE', `output value ${value} at offset ${pos} exceeds 21 million BTC`, { offset: pos });
    }
    st.pos = pos + 8;
    const len = readVarint(buf, st, end, 'script length');
    pos = st.pos + len;
    if (pos > end) throw truncated('output script', st.pos, len, end);
    outputs[i] = new TxOutput(value, buf.subarray(st.pos, pos));
  }
  const ioEnd = pos;

  if (hasWitness) {
    let anyItem = false;
    for (let i = 0; i < nIn; i++) {
      st.pos = pos;
      const items = readVarint(buf, st, end, 'witness item count');
      if (items > end - st.pos) throw truncated('witness items', st.pos, items, end);
      const stack = detail && items ? new Array(items) : null;
      for (let k = 0; k < items; k++) {
        const len = readVarint(buf, st, end, 'witness item length');
        if (st.pos + len > end) throw truncated('witness item', st.pos, len, end);
        if (stack) stack[k] = buf.subarray(st.pos, st.pos + len);
        st.pos += len;
      }
      if (stack) details[i].witness = stack;
      if (items) anyItem = true;
      pos = st.pos;
    }
    if (!anyItem) {
      throw new ParseError('ERR_BAD_TX', `transaction at offset ${offset} has a witness flag but no witness data`, { offset });
    }
  }
  if (pos + 4 > end) throw truncated('locktime', pos, 4, end);
  pos += 4;

  // marker and flag, plus everything between the outputs and the locktime
  const witnessSize = hasWitness ? pos - 4 - ioEnd + 2 : 0;
  let txid;
  if (knownTxid !== undefined) {
    txid = knownTxid;
  } else if (hasWitness) {
    const len = 4 + (ioEnd - ioStart) + 4;
    if (scratch.length < len) scratch = Buffer.allocUnsafe(Math.max(len, scratch.length * 2));
    buf.copy(scratch, 0, offset, offset + 4);
    buf.copy(scratch, 4, ioStart, ioEnd);
    buf.copy(scratch, 4 + ioEnd - ioStart, pos - 4, pos);
    txid = hashOnce(hashOnce(scratch.subarray(0, len)));
  } else {
    txid = hashOnce(hashOnce(buf.subarray(offset, pos)));
  }
  const tx = new Tx(buf, offset, pos - offset, txid, hasWitness, coinbase, inputs, outputs, witnessSize);
  if (detail) tx.details = details;
  return tx;
}

function inputDetail(buf, at, scriptAt, scriptLen) {
  return new TxInputDetail(buf.subarray(at, at + 32), buf.readUInt32LE(at + 32),
    buf.subarray(scriptAt, scriptAt + scriptLen), buf.readUInt32LE(scriptAt + scriptLen));
}

/**
 * The same transaction parsed again in detail mode: every input with its script, sequence and
 * witness (tx.details). For serving one transaction; the sync never pays for it.
 * @param {Tx} tx
 * @returns {Tx} a new Tx over the same bytes, with `details` set
 */
function parseTxDetail(tx) {
  if (tx.details) return tx;
  return parseTx(tx.buf, tx.offset, tx.offset + tx.size, tx.coinbase, true, tx.txid);
}

/**
 * Parses a buffer that holds exactly one transaction (a node's getrawtransaction, say). A
 * coinbase is recognised by its single input spending the null outpoint.
 * @param {Buffer} buf
 * @param {{detail?: boolean}} [opts] detail: as parseTx
 * @returns {Tx}
 */
function parseTransaction(buf, opts = {}) {
  const at = buf.length > 6 && buf[4] === 0 && buf[5] === 1 ? 6 : 4;
  const coinbase = buf.length >= at + 37 && buf[at] === 1 && isNullOutpoint(buf, at + 1);
  const tx = parseTx(buf, 0, buf.length, coinbase, Boolean(opts.detail));
  if (tx.size !== buf.length) {
    throw new ParseError('ERR_TRAILING_BYTES', `${buf.length - tx.size} bytes follow the transaction`, { offset: tx.size });
  }
  return tx;
}

module.exports = { parseTx, parseTxDetail, parseTransaction, readVarint, Tx, TxInput, TxInputDetail, TxOutput, MAX_MONEY };
