'use strict';

const { openValue } = require('./format');
const { Writer } = require('./io');

/**
 * The mempool snapshot: every unconfirmed transaction the follower knows, with what its inputs
 * spend, as one value the writer replaces whole (docs/FORMAT.md, "Mempool"). Readers decode it
 * when its sequence number changes and index it in memory (lib/core/mempool.js); nothing in it
 * is ever mixed into the confirmed rows.
 *
 *   format byte (version 2)
 *   varint seq                     strictly increasing per index
 *   32 B   tip hash (internal)     the confirmed tip the snapshot was resolved against
 *   varint count
 *   per tx:
 *     32 B txid (internal), varint time (s, first seen), varint fee (sat), varint vsize
 *     varint raw length, raw transaction bytes (as the node serializes it, witness included)
 *     varint inputs; per input: 32 B spent txid, varint vout, varint value,
 *       1 B flags (1: indexed — a 32 B script hash follows; 2: from a mempool transaction;
 *       4: a P2PK output — its own 32 B script hash follows the script hash),
 *       [32 B script hash] [32 B own script hash]
 *     varint outputs; per output: varint value, 1 B flags (1: indexed; 2: P2PK, its own script
 *       hash follows), [32 B script hash] [32 B own script hash]
 *
 * The script hash is the index key (a P2PK output's: its key's P2PKH script's, the address
 * view); a P2PK output's own script hash is what Electrum asks for (the script view). Version 2
 * added the own script hashes.
 */

const VERSION = 2;
const HEAD_VERSION = 1;
const IN_INDEXED = 1;
const IN_UNCONFIRMED = 2;
const IN_P2PK = 4;
const OUT_INDEXED = 1;
const OUT_P2PK = 2;

/**
 * @typedef {object} MempoolInput
 * @property {Buffer} txid          spent transaction (internal order)
 * @property {number} vout
 * @property {number} value
 * @property {Buffer|null} scripthash  the spent output's index key, null when not indexed
 * @property {Buffer|null} [p2pk]   the spent output's own script hash when it is a P2PK output
 *   (getPrevouts' `p2pk`, or lib/chain/script.js p2pkScripthash of a mempool parent's output)
 * @property {boolean} unconfirmed  it spends an output of another mempool transaction
 */

/**
 * @typedef {object} MempoolTx
 * @property {Buffer} txid
 * @property {number} time   first seen, seconds
 * @property {number} fee    satoshis
 * @property {number} vsize
 * @property {Buffer} raw
 * @property {MempoolInput[]} inputs
 * @property {Array<{value: number, scripthash: Buffer|null, p2pk?: Buffer|null}>} outputs
 *   `p2pk`: a P2PK output's own script hash (lib/chain/script.js p2pkScripthash)
 */

/**
 * @typedef {object} MempoolSnapshot
 * @property {number} seq
 * @property {Buffer} tip   32 bytes, internal order
 * @property {MempoolTx[]} txs
 */

/**
 * @param {MempoolSnapshot} snap
 * @returns {Buffer} a copy the caller owns
 */
function encodeMempool(snap) {
  let size = 64;
  for (const t of snap.txs) size += 64 + t.raw.length + 82 * t.inputs.length + 74 * t.outputs.length;
  const w = new Writer(size);
  w.begin();
  writeHead(w, snap.seq, snap.tip, snap.txs.length);
  for (const t of snap.txs) writeTx(w, t);
  return Buffer.from(w.end());
}

/**
 * One transaction's part of a snapshot, on its own: a writer that keeps a large mempool
 * encodes each transaction once and joins the parts (joinMempool) into the same bytes
 * encodeMempool gives.
 * @param {MempoolTx} t
 * @returns {Buffer} a copy the caller owns
 */
function encodeMempoolTx(t) {
  const w = scratch;
  w.begin();
  writeTx(w, t);
  // a copy of its own size: a part lives as long as its transaction stays in the mempool, and
  // must not keep a larger buffer alive with it
  return Buffer.from(w.end());
}

/** Where encodeMempoolTx writes before it copies (its filled arenas are left to the GC). */
const scratch = new Writer(1 << 20);

/**
 * A snapshot from transactions already encoded by encodeMempoolTx, in snapshot order:
 * byte for byte encodeMempool({seq, tip, txs}).
 * @param {number} seq
 * @param {Buffer} tip 32 bytes, internal order
 * @param {Buffer[]} parts
 * @returns {Buffer}
 */
function joinMempool(seq, tip, parts) {
  const w = new Writer(64);
  w.begin();
  writeHead(w, seq, tip, parts.length);
  return Buffer.concat([w.end(), ...parts]);
}

function writeHead(w, seq, tip, count) {
  w.u8(VERSION);
  w.varint(seq);
  w.bytes(tip);
  w.varint(count);
}

function writeTx(w, t) {
  w.bytes(t.txid);
  w.varint(t.time);
  w.varint(t.fee);
  w.varint(t.vsize);
  w.varint(t.raw.length);
  w.bytes(t.raw);
  w.varint(t.inputs.length);
  for (const i of t.inputs) {
    w.bytes(i.txid);
    w.varint(i.vout);
    w.varint(i.value);
    const p2pk = i.scripthash && i.p2pk;
    w.u8((i.scripthash ? IN_INDEXED : 0) | (i.unconfirmed ? IN_UNCONFIRMED : 0) | (p2pk ? IN_P2PK : 0));
    if (i.scripthash) w.bytes(i.scripthash);
    if (p2pk) w.bytes(p2pk);
  }
  w.varint(t.outputs.length);
  for (const o of t.outputs) {
    const p2pk = o.scripthash && o.p2pk;
    w.varint(o.value);
    w.u8((o.scripthash ? OUT_INDEXED : 0) | (p2pk ? OUT_P2PK : 0));
    if (o.scripthash) w.bytes(o.scripthash);
    if (p2pk) w.bytes(p2pk);
  }
}

/**
 * @param {Uint8Array} buf
 * @returns {MempoolSnapshot} views into buf (copy what outlives it)
 */
function decodeMempool(buf) {
  const r = openValue(buf, 'mempool', VERSION);
  const seq = r.varint();
  const tip = hash(r);
  const n = r.count(r.varint(), 40);
  const txs = new Array(n);
  for (let k = 0; k < n; k++) {
    const txid = hash(r);
    const time = r.varint();
    const fee = r.varint();
    const vsize = r.varint();
    const raw = bytes(r, r.varint());
    const ni = r.count(r.varint(), 35);
    const inputs = new Array(ni);
    for (let i = 0; i < ni; i++) {
      const itxid = hash(r);
      const vout = r.varint();
      const value = r.varint();
      const flags = r.u8();
      if (flags & ~(IN_INDEXED | IN_UNCONFIRMED | IN_P2PK) || (flags & IN_P2PK && !(flags & IN_INDEXED))) throw r.error('ERR_BAD_VALUE', `input flags ${flags}`);
      const scripthash = flags & IN_INDEXED ? hash(r) : null;
      inputs[i] = { txid: itxid, vout, value, scripthash, p2pk: flags & IN_P2PK ? hash(r) : null, unconfirmed: (flags & IN_UNCONFIRMED) !== 0 };
    }
    const no = r.count(r.varint(), 2);
    const outputs = new Array(no);
    for (let o = 0; o < no; o++) {
      const value = r.varint();
      const flags = r.u8();
      if (flags & ~(OUT_INDEXED | OUT_P2PK) || (flags & OUT_P2PK && !(flags & OUT_INDEXED))) throw r.error('ERR_BAD_VALUE', `output flags ${flags}`);
      const scripthash = flags & OUT_INDEXED ? hash(r) : null;
      outputs[o] = { value, scripthash, p2pk: flags & OUT_P2PK ? hash(r) : null };
    }
    txs[k] = { txid, time, fee, vsize, raw, inputs, outputs };
  }
  r.done();
  return { seq, tip, txs };
}

/**
 * The head of a stored snapshot — its seq and tip — read without decoding the transactions.
 * @param {Uint8Array} buf an encoded snapshot
 * @returns {{seq: number, tip: Buffer}}
 */
function mempoolHead(buf) {
  const r = openValue(buf, 'mempool', VERSION);
  const seq = r.varint();
  return { seq, tip: Buffer.from(hash(r)) };
}

/**
 * The head as a value of its own (a reader checks it on every request; the snapshot it reads
 * only when the seq changed).
 * @param {{seq: number, tip: Buffer}} head
 * @returns {Buffer}
 */
function encodeMempoolHead(head) {
  const w = new Writer(64);
  w.begin();
  w.u8(HEAD_VERSION);
  w.varint(head.seq);
  w.bytes(head.tip);
  return Buffer.from(w.end());
}

/**
 * @param {Uint8Array} buf
 * @returns {{seq: number, tip: Buffer}}
 */
function decodeMempoolHead(buf) {
  const r = openValue(buf, 'mempool head', HEAD_VERSION);
  const seq = r.varint();
  const tip = Buffer.from(hash(r));
  r.done();
  return { seq, tip };
}

function hash(r) {
  return bytes(r, 32);
}

function bytes(r, n) {
  const at = r.skip(n);
  return r.buf.subarray(at, at + n);
}

module.exports = {
  encodeMempool, encodeMempoolTx, joinMempool, decodeMempool, mempoolHead, encodeMempoolHead, decodeMempoolHead, VERSION,
};
