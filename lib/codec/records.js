'use strict';

const { openValue } = require('./format');
const { pack } = require('./compress');
const { writePostings, readPostings } = require('./postings');
const { PAGE_ENTRIES, INLINE_UTXOS, MAX_TXNUM, sealedCount, utxosInline } = require('../core/rules');
const { HASHX_LEN } = require('../stores/layout');

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
  meta: 2, source: 1, tip: 1, block: 2, body: 1, blockHash: 1, locator: 1, txids: 2, tx: 2, outputs: 3, account: 1, page: 1, utxo: 1, undo: 2, touched: 2,
});

/**
 * An account that counts P2PK outputs (an address account with P2PK parts, lib/core/p2pk.js)
 * is written in this version: version 1's bytes, then its parts. Both versions are read.
 */
const ACCOUNT_WITH_PARTS = 2;

/**
 * TxNums in one txids row. 56 keeps a full row (56 txids and their offsets: at most 2,018
 * bytes, offsets of blocks up to 4 MB) inside an LMDB leaf node of a 4 KiB page (at most
 * 2,040 bytes with its key), two to a page; 64 made every row an overflow page of its own,
 * 1.9 KB of every 4 KB unused (schema 5).
 */
const TXIDS_PER_ROW = 56;

// ---------------------------------------------------------------------------------------
// meta and tip

/**
 * @param {import('./io').Writer} w
 * @param {{schemaVersion: number, network: string, txstore: boolean}} meta
 */
function encodeMeta(w, meta) {
  w.begin();
  w.u8(VERSION.meta);
  w.varint(meta.schemaVersion);
  const name = Buffer.from(meta.network, 'latin1');
  w.varint(name.length);
  w.bytes(name);
  w.u8(meta.txstore ? 1 : 0);
  return w.end();
}

/**
 * Reads version 1 too (no flags: no --txstore), so that an index of an older schema still
 * names its schema and gets ERR_SCHEMA rather than an unreadable meta record.
 * @param {Uint8Array} buf
 */
function decodeMeta(buf) {
  const v1 = buf.length > 0 && buf[0] === 1;
  const r = v1 ? openValue(buf, 'meta', 1) : openValue(buf, 'meta', VERSION.meta);
  const schemaVersion = r.varint();
  const len = r.count(r.varint(), 1);
  const at = r.skip(len);
  const network = Buffer.from(buf.subarray(at, at + len)).toString('latin1');
  const flags = v1 ? 0 : r.u8();
  if (flags > 1) throw r.error('ERR_BAD_VALUE', `meta flags ${flags}`);
  r.done();
  return { schemaVersion, network, txstore: flags === 1 };
}

/**
 * Where the sync reads its blocks, as a small JSON object (a blocks dir's path): so a server
 * started later finds them.
 * @param {import('./io').Writer} w
 * @param {object} info
 */
function encodeSource(w, info) {
  w.begin();
  w.u8(VERSION.source);
  w.bytes(Buffer.from(JSON.stringify(info), 'utf8'));
  return w.end();
}

/** @param {Uint8Array} buf */
function decodeSource(buf) {
  const r = openValue(buf, 'source', VERSION.source);
  const text = Buffer.from(r.copy(r.left())).toString('utf8');
  let info;
  try {
    info = JSON.parse(text);
  } catch {
    throw r.error('ERR_BAD_VALUE', 'source info is not JSON');
  }
  if (!info || typeof info !== 'object' || Array.isArray(info)) throw r.error('ERR_BAD_VALUE', 'source info is not an object');
  return info;
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
 * A block row (format 2): its hash, its 80 header bytes, its TxNums, size and weight.
 * @typedef {object} BlockRow
 * @property {Buffer} hash       32 bytes, internal order
 * @property {Buffer} header     80 bytes (a view into the row)
 * @property {number} firstTxNum
 * @property {number} txCount
 * @property {number} time       from the header
 * @property {number} size       serialized bytes
 * @property {number} weight     BIP141
 */

/**
 * @param {import('./io').Writer} w
 * @param {{hash: Uint8Array, header: Uint8Array, firstTxNum: number, txCount: number, size: number, weight: number}} b
 */
function encodeBlock(w, b) {
  w.begin();
  w.u8(VERSION.block);
  w.bytes(b.hash);
  w.bytes(b.header);
  w.varint(b.firstTxNum);
  w.varint(b.txCount);
  w.varint(b.size);
  w.varint(b.weight);
  return w.end();
}

/**
 * @param {Uint8Array} buf
 * @returns {BlockRow}
 */
function decodeBlock(buf) {
  const r = openValue(buf, 'block', VERSION.block);
  const hash = r.copy(32);
  const at = r.skip(80);
  const header = r.buf.subarray(at, at + 80);
  const firstTxNum = r.varint();
  const txCount = r.varint();
  const size = r.varint();
  const weight = r.varint();
  r.done();
  if (txCount === 0) throw r.error('ERR_BAD_VALUE', 'a block with no transactions');
  if (size < 80 + txCount * 10) throw r.error('ERR_BAD_VALUE', `${txCount} transactions cannot fit ${size} bytes`);
  return { hash, header, firstTxNum, txCount, time: header.readUInt32LE(68), size, weight };
}

/**
 * A locator row: where the blocks dir the sync read holds a block's bytes (blk file number
 * and the offset of the block itself; its length is the block row's size).
 * @param {import('./io').Writer} w
 * @param {{file: number, offset: number}} l
 */
function encodeLocator(w, l) {
  w.begin();
  w.u8(VERSION.locator);
  w.varint(l.file);
  w.varint(l.offset);
  return w.end();
}

/**
 * @param {Uint8Array} buf
 * @returns {{file: number, offset: number}}
 */
function decodeLocator(buf) {
  const r = openValue(buf, 'locator', VERSION.locator);
  const file = r.varint();
  const offset = r.varint();
  r.done();
  if (file > 99999) throw r.error('ERR_BAD_VALUE', `blk file number ${file}`);
  return { file, offset };
}

/**
 * A block-hash row: the height of the block with that hash (the key holds the hash).
 * @param {import('./io').Writer} w
 * @param {number} height
 */
function encodeBlockHeight(w, height) {
  w.begin();
  w.u8(VERSION.blockHash);
  w.varint(height);
  return w.end();
}

/** @param {Uint8Array} buf */
function decodeBlockHeight(buf) {
  const r = openValue(buf, 'block hash', VERSION.blockHash);
  const h = r.varint();
  r.done();
  if (h > 0xffffffff) throw r.error('ERR_BAD_VALUE', `height ${h}`);
  return h;
}

/**
 * A txids row (format 2): the txids of TxNums [rowStart, rowStart + n), 32 bytes each,
 * internal order, then each one's byte offset within its block (a varint each), so a
 * transaction can be read alone from its block's bytes.
 * @param {import('./io').Writer} w
 * @param {Uint8Array|null} prior an existing row whose entries come first (a row filled over
 *   several batches), or null
 * @param {Uint8Array} txids
 * @param {number} from byte offset of the first new txid
 * @param {number} count new txids
 * @param {ArrayLike<number>} offsets the new transactions' offsets, `count` of them from `offsetsFrom`
 * @param {number} offsetsFrom
 */
function encodeTxids(w, prior, txids, from, count, offsets, offsetsFrom) {
  const old = prior ? readTxidsRow(prior) : null;
  w.begin();
  w.u8(VERSION.txids);
  w.u8((old ? old.count : 0) + count);
  if (old) w.bytes(prior, 2, 2 + 32 * old.count);
  w.bytes(txids, from, from + 32 * count);
  if (old) for (let i = 0; i < old.count; i++) w.varint(old.offsets[i]);
  for (let i = 0; i < count; i++) w.varint(offsets[offsetsFrom + i]);
  return w.end();
}

/**
 * A txids row's count, txids (txid i at bytes 2 + 32 i of the row) and offsets.
 * @param {Uint8Array} buf
 * @returns {{count: number, offsets: number[]}}
 */
function readTxidsRow(buf) {
  const r = openValue(buf, 'txids', VERSION.txids);
  const n = r.u8();
  if (n < 1 || n > TXIDS_PER_ROW) throw r.error('ERR_BAD_VALUE', `${n} is not 1..${TXIDS_PER_ROW} txids`);
  r.skip(32 * n);
  const offsets = new Array(n);
  for (let i = 0; i < n; i++) {
    offsets[i] = r.varint();
    if (offsets[i] < 81) throw r.error('ERR_BAD_VALUE', `a transaction at byte ${offsets[i]} of its block, inside the header`);
  }
  r.done();
  return { count: n, offsets };
}

/**
 * Checks a txids row's count byte and says how many txids it holds (txid i is at bytes
 * 2 + 32 i): the cheap check of the hot paths; readTxidsRow reads the offsets too.
 * @param {Uint8Array} buf
 * @returns {number}
 */
function txidsCount(buf) {
  const r = openValue(buf, 'txids', VERSION.txids);
  const n = r.u8();
  if (n < 1 || n > TXIDS_PER_ROW || r.left() < 32 * n + n) {
    throw r.error('ERR_BAD_VALUE', `${r.left()} bytes is not ${n} txids and their offsets`);
  }
  return n;
}

/**
 * A txids row cut to its first `keep` entries (a revert into the middle of a row).
 * @param {import('./io').Writer} w
 * @param {Uint8Array} row
 * @param {number} keep 1..its count
 */
function truncateTxids(w, row, keep) {
  const { offsets } = readTxidsRow(row);
  w.begin();
  w.u8(VERSION.txids);
  w.u8(keep);
  w.bytes(row, TXIDS_AT, TXIDS_AT + 32 * keep);
  for (let i = 0; i < keep; i++) w.varint(offsets[i]);
  return w.end();
}

/** Byte offset of the first txid in a txids row (txid i at TXIDS_AT + 32 i). */
const TXIDS_AT = 2;

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
 * The indexed outputs of one transaction: those unspent (vout, value, script hash) and those
 * spent (vout, the spending TxNum and input), each in vout order.
 * @typedef {object} Outputs
 * @property {number} txNum
 * @property {number} count          unspent
 * @property {number[]} vouts
 * @property {number[]} values
 * @property {Buffer} scripthashes   32 bytes per unspent output
 * @property {Map<number, Buffer>|null} p2pk  unspent output k's own script hash when it is a
 *   P2PK output (null: none is)
 * @property {{count: number, vouts: number[], txNums: number[], vins: number[]}} spent
 *   vin -1: taken by a coinbase that reused the txid (BIP30), no input spent it
 */

/**
 * Starts an outputs row with `count` unspent outputs; add them with writeOutput, then the
 * spent ones with writeSpentHead/writeSpent, then endOutputs.
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
 * @param {Uint8Array|null} [own] a P2PK output's own script hash (32 bytes)
 */
function writeOutput(w, prevVout, vout, value, shs, at, own = null) {
  w.varint((vout - prevVout - 1) * 2 + (own ? 1 : 0));
  w.varint(value);
  w.bytes(shs, at, at + 32);
  if (own) w.bytes(own, 0, 32);
}

/**
 * @param {import('./io').Writer} w
 * @param {number} count spent outputs that follow
 */
function writeSpentHead(w, count) {
  w.varint(count);
}

/**
 * @param {import('./io').Writer} w
 * @param {number} prevVout
 * @param {number} vout
 * @param {number} txNum the row's TxNum
 * @param {number} spender the spending TxNum, above txNum
 * @param {number} vin its input, -1 for none (BIP30)
 */
function writeSpent(w, prevVout, vout, txNum, spender, vin) {
  w.varint(vout - prevVout - 1);
  w.varint(spender - txNum - 1);
  w.varint(vin + 1);
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
  const vouts = new Array(count);
  const values = new Array(count);
  const scripthashes = Buffer.allocUnsafe(32 * count);
  let p2pk = null;
  let prev = -1;
  for (let i = 0; i < count; i++) {
    const d = r.varint();
    prev = prev + 1 + Math.floor(d / 2);
    if (prev > 0xffffffff) throw r.error('ERR_BAD_VALUE', 'vout out of range');
    vouts[i] = prev;
    values[i] = r.varint();
    const at = r.skip(32);
    scripthashes.set(r.buf.subarray(at, at + 32), 32 * i);
    if (d % 2 === 1) {
      if (!p2pk) p2pk = new Map();
      p2pk.set(i, r.copy(32));
    }
  }
  const n = r.count(r.varint(), 3);
  if (count + n === 0) throw r.error('ERR_BAD_VALUE', 'an outputs row with no outputs');
  const spent = { count: n, vouts: new Array(n), txNums: new Array(n), vins: new Array(n) };
  prev = -1;
  for (let i = 0; i < n; i++) {
    prev = prev + 1 + r.varint();
    if (prev > 0xffffffff) throw r.error('ERR_BAD_VALUE', 'vout out of range');
    spent.vouts[i] = prev;
    spent.txNums[i] = txNum + 1 + r.varint();
    spent.vins[i] = r.varint() - 1;
    if (spent.txNums[i] > MAX_TXNUM || spent.vins[i] > 0xffffffff) throw r.error('ERR_BAD_VALUE', 'spender out of range');
  }
  r.done();
  return { txNum, count, vouts, values, scripthashes, p2pk, spent };
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
    /** @type {import('../core/p2pk').Parts|null} the P2PK scripts it counts (lib/core/p2pk.js) */
    this.parts = null;
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
  w.u8(a.parts ? ACCOUNT_WITH_PARTS : VERSION.account);
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
  if (a.parts) {
    // each part by its hashX: the key of its account, all a reader needs of it
    w.varint(a.parts.p2pk.length);
    for (const p of a.parts.p2pk) {
      w.bytes(p.sh, 0, HASHX_LEN);
      w.varint(p.first);
    }
    w.varint(a.parts.both.length);
    writePostings(w, a.parts.both, 0, a.parts.both.length, 0);
  }
  return w.end();
}

/**
 * @param {Uint8Array} buf
 * @param {Account} a filled in place
 * @returns {Account}
 */
function decodeAccount(buf, a) {
  const withParts = buf.length > 0 && buf[0] === ACCOUNT_WITH_PARTS;
  const r = openValue(buf, 'account', withParts ? ACCOUNT_WITH_PARTS : VERSION.account);
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
  a.parts = withParts ? readParts(r) : null;
  r.done();
  return a;
}

/** An account's P2PK parts, after its version 1 bytes (each part's script hash: its hashX). */
function readParts(r) {
  const k = r.count(r.varint(), HASHX_LEN + 1);
  if (k === 0) throw r.error('ERR_BAD_VALUE', 'an account of version 2 with no P2PK part');
  const p2pk = new Array(k);
  for (let i = 0; i < k; i++) {
    p2pk[i] = { sh: r.copy(HASHX_LEN), first: r.varint() };
    if (i > 0 && Buffer.compare(p2pk[i - 1].sh, p2pk[i].sh) >= 0) throw r.error('ERR_BAD_VALUE', 'P2PK parts out of order');
    if (p2pk[i].first > MAX_TXNUM) throw r.error('ERR_BAD_VALUE', 'a P2PK part from a TxNum out of range');
  }
  const m = r.count(r.varint(), 1);
  const both = new Array(m);
  readPostings(r, m, 0, false, both, 0);
  return { p2pk, both };
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

const NO_P2PK = new Map();

/**
 * @param {import('./io').Writer} w
 * @param {number} count spent outputs
 * @param {ArrayLike<number>} txNums
 * @param {ArrayLike<number>} vouts
 * @param {ArrayLike<number>} values
 * @param {Uint8Array} shs
 * @param {number} shFrom byte offset of the first script hash; they follow at 32-byte strides
 * @param {Array<{position: number, oldTxNum: number}>} dups
 * @param {Map<number, Uint8Array>} [p2pk] spent output i's own script hash when it was P2PK
 */
function encodeUndo(w, count, txNums, vouts, values, shs, shFrom, dups, p2pk = NO_P2PK) {
  w.begin();
  w.u8(VERSION.undo);
  w.varint(count);
  for (let i = 0; i < count; i++) {
    const own = p2pk.size > 0 ? p2pk.get(i) : undefined;
    w.varint(txNums[i]);
    w.varint(vouts[i] * 2 + (own ? 1 : 0));
    w.varint(values[i]);
    w.bytes(shs, shFrom + 32 * i, shFrom + 32 * i + 32);
    if (own) w.bytes(own, 0, 32);
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
  const p2pk = new Map();
  for (let i = 0; i < n; i++) {
    txNums[i] = r.varint();
    const v = r.varint();
    vouts[i] = Math.floor(v / 2);
    values[i] = r.varint();
    const at = r.skip(32);
    shs.set(r.buf.subarray(at, at + 32), 32 * i);
    if (v % 2 === 1) p2pk.set(i, r.copy(32));
  }
  const d = r.count(r.varint(), 2);
  const dups = new Array(d);
  for (let i = 0; i < d; i++) dups[i] = { position: r.varint(), oldTxNum: r.varint() };
  r.done();
  return { count: n, txNums, vouts, values, shs, p2pk, dups };
}

// ---------------------------------------------------------------------------------------
// body: a block's bytes after its header, kept by an index synced with --txstore

/**
 * @param {import('./io').Writer} w
 * @param {Uint8Array} raw the whole block
 */
function encodeBody(w, raw) {
  w.begin();
  w.u8(VERSION.body);
  w.bytes(raw, 80, raw.length);
  return pack(w, w.end(), 'body');
}

/**
 * @param {Uint8Array} buf
 * @param {Uint8Array} header the block's 80 header bytes (from its block row)
 * @returns {Buffer} the whole block
 */
function decodeBody(buf, header) {
  const r = openValue(buf, 'body', VERSION.body, true);
  if (r.left() < 1) throw r.error('ERR_TRUNCATED', 'a block body holds at least its transaction count');
  const out = Buffer.allocUnsafe(80 + r.left());
  out.set(header, 0);
  out.set(r.buf.subarray(r.pos, r.pos + r.left()), 80);
  return out;
}

// ---------------------------------------------------------------------------------------
// touched: the script hashes a block changed, for subscribers

/**
 * @param {import('./io').Writer} w
 * @param {{both: Buffer, addressOnly: Buffer}} t 32 bytes each: touched in both views, and in
 *   the address view only (lib/core/effect.js touchedBy)
 */
function encodeTouched(w, t) {
  w.begin();
  w.u8(VERSION.touched);
  // random hashes: nothing for LZ4 to find
  for (const shs of [t.both, t.addressOnly]) {
    w.varint(shs.length / 32);
    w.bytes(shs);
  }
  return w.end();
}

/**
 * @param {Uint8Array} buf
 * @returns {{both: Buffer, addressOnly: Buffer}} 32 bytes each
 */
function decodeTouched(buf) {
  const r = openValue(buf, 'touched', VERSION.touched);
  const both = r.copy(32 * r.count(r.varint(), 32));
  const addressOnly = r.copy(32 * r.count(r.varint(), 32));
  r.done();
  return { both, addressOnly };
}

module.exports = {
  VERSION, ACCOUNT_WITH_PARTS, PAGE_ENTRIES, INLINE_UTXOS, TXIDS_PER_ROW, MAX_TXNUM,
  encodeMeta, decodeMeta, encodeSource, decodeSource, encodeTip, decodeTip,
  encodeBlock, decodeBlock, encodeBlockHeight, decodeBlockHeight, encodeLocator, decodeLocator, encodeTxids, truncateTxids, readTxidsRow, txidsCount, TXIDS_AT,
  encodeTxNums, decodeTxNums, writeOutputsHead, writeOutput, writeSpentHead, writeSpent, endOutputs, decodeOutputs,
  Account, sealedCount, utxosInline, encodeAccount, decodeAccount, accountSummary,
  encodePage, decodePage, encodeUtxo, decodeUtxo,
  encodeUndo, decodeUndo, encodeTouched, decodeTouched, encodeBody, decodeBody,
};
