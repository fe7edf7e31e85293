'use strict';

const { openValue } = require('./format');
const { pack } = require('./compress');
const { writePostings, readPostings } = require('./postings');
const { PAGE_ENTRIES, INLINE_UTXOS, MAX_TXNUM, sealedCount, utxosInline } = require('../core/rules');

/**
 * Schema 2 value encoders and decoders, one pair per record kind. docs/FORMAT.md describes
 * every byte. Encoders write into a Writer (lib/codec/io.js) and return a view; decoders take
 * the stored bytes and throw CodecError on anything they do not fully understand.
 */

/**
 * The format version each kind is written in (the low 7 bits of its format byte). A kind's
 * version changes when its value bytes change; decoders read exactly this version.
 */
const VERSION = Object.freeze({
  meta: 1, tip: 1, block: 1, txids: 1, tx: 2, outputs: 1, account: 1, page: 1, utxo: 1, undo: 1,
});

/** TxNums in one txids row. */
const TXIDS_PER_ROW = 64;

// ---------------------------------------------------------------------------------------
// meta and tip

/**
 * @param {import('./io').Writer} w
 * @param {{schemaVersion: number, network: string}} meta
 */
function encodeMeta(w, meta) {
  w.begin();
  w.u8(VERSION.meta);
  w.varint(meta.schemaVersion);
  const name = Buffer.from(meta.network, 'latin1');
  w.varint(name.length);
  w.bytes(name);
  return w.end();
}

/** @param {Uint8Array} buf */
function decodeMeta(buf) {
  const r = openValue(buf, 'meta', VERSION.meta);
  const schemaVersion = r.varint();
  const len = r.count(r.varint(), 1);
  const at = r.skip(len);
  const network = Buffer.from(buf.subarray(at, at + len)).toString('latin1');
  r.done();
  return { schemaVersion, network };
}

/**
 * @param {import('./io').Writer} w
 * @param {{height: number, hash: Uint8Array, nextTxNum: number}} tip hash in internal order
 */
function encodeTip(w, tip) {
  w.begin();
  w.u8(VERSION.tip);
  w.varint(tip.height);
  w.bytes(tip.hash);
  w.varint(tip.nextTxNum);
  return w.end();
}

/** @param {Uint8Array} buf */
function decodeTip(buf) {
  const r = openValue(buf, 'tip', VERSION.tip);
  const height = r.varint();
  const hash = r.copy(32);
  const nextTxNum = r.varint();
  r.done();
  return { height, hash, nextTxNum };
}

// ---------------------------------------------------------------------------------------
// blocks and txids

/**
 * @param {import('./io').Writer} w
 * @param {Uint8Array} hash internal order
 * @param {number} firstTxNum
 * @param {number} txCount
 * @param {number} time
 */
function encodeBlock(w, hash, firstTxNum, txCount, time) {
  w.begin();
  w.u8(VERSION.block);
  w.bytes(hash);
  w.varint(firstTxNum);
  w.varint(txCount);
  w.varint(time);
  return w.end();
}

/** @param {Uint8Array} buf */
function decodeBlock(buf) {
  const r = openValue(buf, 'block', VERSION.block);
  const hash = r.copy(32);
  const firstTxNum = r.varint();
  const txCount = r.varint();
  const time = r.varint();
  r.done();
  if (txCount === 0) throw r.error('ERR_BAD_VALUE', 'a block with no transactions');
  return { hash, firstTxNum, txCount, time };
}

/**
 * A txids row: the txids of TxNums [rowStart, rowStart + n), 32 bytes each, internal order.
 * @param {import('./io').Writer} w
 * @param {Uint8Array|null} prior an existing row whose txids come first (a row filled over
 *   several batches), or null
 * @param {Uint8Array} txids
 * @param {number} from byte offset of the first new txid
 * @param {number} count new txids
 */
function encodeTxids(w, prior, txids, from, count) {
  w.begin();
  w.u8(VERSION.txids);
  if (prior) w.bytes(prior, 1, prior.length);
  w.bytes(txids, from, from + 32 * count);
  return w.end();
}

/**
 * Checks a txids row and says how many txids it holds (txid i is at bytes 1 + 32 i).
 * @param {Uint8Array} buf
 * @returns {number}
 */
function txidsCount(buf) {
  const r = openValue(buf, 'txids', VERSION.txids);
  const n = r.left() / 32;
  if (n < 1 || n > TXIDS_PER_ROW || n !== Math.floor(n)) {
    throw r.error('ERR_BAD_VALUE', `${r.left()} bytes is not 1..${TXIDS_PER_ROW} txids`);
  }
  return n;
}

// ---------------------------------------------------------------------------------------
// transactions: txid prefix -> TxNums, and TxNum -> unspent indexed outputs

/**
 * A tx row: the TxNums of the transactions whose txid begins with the row's key prefix,
 * ascending — one, except when two txids share the prefix (the reader tells them apart by
 * the full txid in their txids rows).
 * @param {import('./io').Writer} w
 * @param {number[]} txNums ascending, at least one
 */
function encodeTxNums(w, txNums) {
  w.begin();
  w.u8(VERSION.tx);
  let prev = -1;
  for (let i = 0; i < txNums.length; i++) {
    w.varint(txNums[i] - prev - 1);
    prev = txNums[i];
  }
  return w.end();
}

/**
 * @param {Uint8Array} buf
 * @returns {number[]} ascending TxNums, at least one
 */
function decodeTxNums(buf) {
  const r = openValue(buf, 'tx', VERSION.tx);
  const out = [];
  let prev = -1;
  // each TxNum takes at least one byte: the loop ends with the value
  while (r.left() > 0) {
    prev += r.varint() + 1;
    if (prev > MAX_TXNUM) throw r.error('ERR_BAD_VALUE', `TxNum ${prev} out of range`);
    out.push(prev);
  }
  if (out.length === 0) throw r.error('ERR_BAD_COUNT', 'a tx row with no TxNum');
  return out;
}

/**
 * The outputs of one transaction that are unspent and indexed, in vout order.
 * @typedef {object} Outputs
 * @property {number} txNum
 * @property {number} count
 * @property {number[]} vouts
 * @property {number[]} values
 * @property {Buffer} scripthashes 32 bytes per output
 */

/**
 * Starts an outputs row of `count` outputs (at least one); add them with writeOutput, then w.end().
 * @param {import('./io').Writer} w
 * @param {number} count
 */
function writeOutputsHead(w, count) {
  w.begin();
  w.u8(VERSION.outputs);
  w.varint(count);
}

/**
 * @param {import('./io').Writer} w
 * @param {number} prevVout the previous output's vout, -1 for the first
 * @param {number} vout greater than prevVout
 * @param {number} value
 * @param {Uint8Array} shs
 * @param {number} at byte offset of the script hash in shs
 */
function writeOutput(w, prevVout, vout, value, shs, at) {
  w.varint(vout - prevVout - 1);
  w.varint(value);
  w.bytes(shs, at, at + 32);
}

/**
 * Ends an outputs row: its stored form (compressed when the policy says so).
 * @param {import('./io').Writer} w
 * @returns {Buffer}
 */
function endOutputs(w) {
  return pack(w, w.end(), 'outputs');
}

/**
 * @param {Uint8Array} buf
 * @param {number} txNum from the key
 * @returns {Outputs}
 */
function decodeOutputs(buf, txNum) {
  const r = openValue(buf, 'outputs', VERSION.outputs, true);
  const count = r.count(r.varint(), 34);
  if (count === 0) throw r.error('ERR_BAD_VALUE', 'an outputs row with no outputs');
  const vouts = new Array(count);
  const values = new Array(count);
  const scripthashes = Buffer.allocUnsafe(32 * count);
  let prev = -1;
  for (let i = 0; i < count; i++) {
    prev = prev + 1 + r.varint();
    if (prev > 0xffffffff) throw r.error('ERR_BAD_VALUE', 'vout out of range');
    vouts[i] = prev;
    values[i] = r.varint();
    const at = r.skip(32);
    scripthashes.set(r.buf.subarray(at, at + 32), 32 * i);
  }
  r.done();
  return { txNum, count, vouts, values, scripthashes };
}

// ---------------------------------------------------------------------------------------
// accounts: one row per script hash with its summary, last history page and small UTXO set

/**
 * A decoded account row, reused across rows (growable typed arrays, no per-entry objects).
 */
class Account {
  constructor() {
    this.clear();
    this.tail = new Float64Array(2 * PAGE_ENTRIES);
    this.utxoTx = new Float64Array(2 * INLINE_UTXOS);
    this.utxoVout = new Float64Array(2 * INLINE_UTXOS);
    this.utxoValue = new Float64Array(2 * INLINE_UTXOS);
  }

  /** An account never seen: all zero, no entries. */
  clear() {
    this.received = 0;
    this.sent = 0;
    this.txCount = 0;
    this.fundedCount = 0;
    this.spentCount = 0;
    this.firstHeight = 0;
    this.lastHeight = 0;
    this.tailLen = 0;
    this.utxoLen = 0;
    return this;
  }

  /** @returns {number} */
  get utxoCount() {
    return this.fundedCount - this.spentCount;
  }

  /** Entries sealed into history pages. */
  get sealedCount() {
    return sealedCount(this.txCount);
  }

  /** @param {number} n */
  reserveTail(n) {
    if (n > this.tail.length) this.tail = grow(this.tail, n);
  }

  /** @param {number} n */
  reserveUtxos(n) {
    if (n <= this.utxoTx.length) return;
    this.utxoTx = grow(this.utxoTx, n);
    this.utxoVout = grow(this.utxoVout, n);
    this.utxoValue = grow(this.utxoValue, n);
  }
}

function grow(a, n) {
  const b = new Float64Array(Math.max(n, 2 * a.length));
  b.set(a);
  return b;
}

/**
 * Writes an account row. The tail must hold txCount - sealedCount(txCount) entries and, when
 * the UTXOs are inline, utxoLen must equal utxoCount (sorted by TxNum, vout).
 * @param {import('./io').Writer} w
 * @param {Account} a
 */
function encodeAccount(w, a) {
  w.begin();
  w.u8(VERSION.account);
  w.varint(a.received);
  w.varint(a.sent);
  w.varint(a.txCount);
  w.varint(a.fundedCount);
  w.varint(a.spentCount);
  w.varint(a.firstHeight);
  w.varint(a.lastHeight - a.firstHeight);
  writePostings(w, a.tail, 0, a.tailLen, 0);
  if (utxosInline(a.utxoCount)) {
    let prev = 0;
    for (let i = 0; i < a.utxoLen; i++) {
      w.varint(a.utxoTx[i] - prev);
      prev = a.utxoTx[i];
      w.varint(a.utxoVout[i]);
      w.varint(a.utxoValue[i]);
    }
  }
  return w.end();
}

/**
 * @param {Uint8Array} buf
 * @param {Account} a filled in place
 * @returns {Account}
 */
function decodeAccount(buf, a) {
  const r = openValue(buf, 'account', VERSION.account);
  a.received = r.varint();
  a.sent = r.varint();
  a.txCount = r.varint();
  a.fundedCount = r.varint();
  a.spentCount = r.varint();
  a.firstHeight = r.varint();
  a.lastHeight = a.firstHeight + r.varint();
  if (a.txCount === 0) throw r.error('ERR_BAD_VALUE', 'an account with no history');
  if (a.spentCount > a.fundedCount || a.sent > a.received) {
    throw r.error('ERR_BAD_VALUE', 'spends exceed receipts');
  }
  const tailLen = r.count(a.txCount - sealedCount(a.txCount), 1);
  a.reserveTail(tailLen);
  readPostings(r, tailLen, 0, false, a.tail, 0);
  a.tailLen = tailLen;
  a.utxoLen = 0;
  const utxos = a.utxoCount;
  if (utxosInline(utxos)) {
    r.count(utxos, 3);
    a.reserveUtxos(utxos);
    let tx = 0;
    for (let i = 0; i < utxos; i++) {
      const d = r.varint();
      tx += d;
      const vout = r.varint();
      if (i > 0 && d === 0 && vout <= a.utxoVout[i - 1]) throw r.error('ERR_BAD_VALUE', 'unspent outputs out of order');
      a.utxoTx[i] = tx;
      a.utxoVout[i] = vout;
      a.utxoValue[i] = r.varint();
    }
    a.utxoLen = utxos;
  }
  r.done();
  return a;
}

/**
 * The public Summary of a decoded account.
 * @param {Account} a
 * @returns {import('../stores/abstract').Summary}
 */
function accountSummary(a) {
  return {
    balance: a.received - a.sent,
    received: a.received,
    sent: a.sent,
    txCount: a.txCount,
    fundedCount: a.fundedCount,
    spentCount: a.spentCount,
    utxoCount: a.fundedCount - a.spentCount,
    firstHeight: a.firstHeight,
    lastHeight: a.lastHeight,
  };
}

// ---------------------------------------------------------------------------------------
// sealed history pages and overflow UTXO rows

/**
 * A full page: postings[from .. from + PAGE_ENTRIES), keyed by the first entry's TxNum.
 * @param {import('./io').Writer} w
 * @param {Float64Array} postings
 * @param {number} from
 */
function encodePage(w, postings, from) {
  w.begin();
  w.u8(VERSION.page);
  writePostings(w, postings, from, from + PAGE_ENTRIES, Math.floor(postings[from] / 4));
  return w.end();
}

/**
 * @param {Uint8Array} buf
 * @param {number} firstTxNum from the key
 * @param {Float64Array} out receives PAGE_ENTRIES postings at `at`
 * @param {number} at
 */
function decodePage(buf, firstTxNum, out, at) {
  const r = openValue(buf, 'history page', VERSION.page);
  r.count(PAGE_ENTRIES, 1);
  readPostings(r, PAGE_ENTRIES, firstTxNum, true, out, at);
  r.done();
}

/**
 * @param {import('./io').Writer} w
 * @param {number} value
 */
function encodeUtxo(w, value) {
  w.begin();
  w.u8(VERSION.utxo);
  w.varint(value);
  return w.end();
}

/** @param {Uint8Array} buf */
function decodeUtxo(buf) {
  const r = openValue(buf, 'utxo', VERSION.utxo);
  const value = r.varint();
  r.done();
  return value;
}

// ---------------------------------------------------------------------------------------
// undo

/**
 * @param {import('./io').Writer} w
 * @param {number} count spent outputs
 * @param {ArrayLike<number>} txNums
 * @param {ArrayLike<number>} vouts
 * @param {ArrayLike<number>} values
 * @param {Uint8Array} shs
 * @param {number} shFrom byte offset of the first script hash; they follow at 32-byte strides
 * @param {Array<{position: number, oldTxNum: number}>} dups
 */
function encodeUndo(w, count, txNums, vouts, values, shs, shFrom, dups) {
  w.begin();
  w.u8(VERSION.undo);
  w.varint(count);
  for (let i = 0; i < count; i++) {
    w.varint(txNums[i]);
    w.varint(vouts[i]);
    w.varint(values[i]);
    w.bytes(shs, shFrom + 32 * i, shFrom + 32 * i + 32);
  }
  w.varint(dups.length);
  for (const d of dups) {
    w.varint(d.position);
    w.varint(d.oldTxNum);
  }
  return pack(w, w.end(), 'undo');
}

/**
 * @param {Uint8Array} buf
 * @returns {import('../core/effect').BlockUndo} without heights and txids
 */
function decodeUndo(buf) {
  const r = openValue(buf, 'undo', VERSION.undo, true);
  const n = r.count(r.varint(), 35);
  const txNums = new Array(n);
  const vouts = new Array(n);
  const values = new Array(n);
  const shs = Buffer.allocUnsafe(32 * n);
  for (let i = 0; i < n; i++) {
    txNums[i] = r.varint();
    vouts[i] = r.varint();
    values[i] = r.varint();
    const at = r.skip(32);
    shs.set(r.buf.subarray(at, at + 32), 32 * i);
  }
  const d = r.count(r.varint(), 2);
  const dups = new Array(d);
  for (let i = 0; i < d; i++) dups[i] = { position: r.varint(), oldTxNum: r.varint() };
  r.done();
  return { count: n, txNums, vouts, values, shs, dups };
}

module.exports = {
  VERSION, PAGE_ENTRIES, INLINE_UTXOS, TXIDS_PER_ROW, MAX_TXNUM,
  encodeMeta, decodeMeta, encodeTip, decodeTip,
  encodeBlock, decodeBlock, encodeTxids, txidsCount,
  encodeTxNums, decodeTxNums, writeOutputsHead, writeOutput, endOutputs, decodeOutputs,
  Account, sealedCount, utxosInline, encodeAccount, decodeAccount, accountSummary,
  encodePage, decodePage, encodeUtxo, decodeUtxo,
  encodeUndo, decodeUndo,
};
