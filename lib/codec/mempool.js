'use strict';

const { openValue } = require('./format');
const { Reader, Writer } = require('./io');
const { CodecError } = require('../errors');

/**
 * The mempool snapshot: every unconfirmed transaction the follower knows, with what its inputs
 * spend (docs/FORMAT.md, `M` rows). Readers decode it when its sequence number changes and
 * index it in memory (lib/core/mempool.js); nothing in it is ever mixed into the confirmed rows.
 *
 * A transaction's part (format 6):
 *     32 B txid (internal), varint time (s, first seen), varint fee (sat), varint vsize,
 *     varint size (its bytes as the node serializes them, witness included)
 *     varint inputs; per input: 32 B spent txid, varint vout, varint value,
 *       1 B flags (1: indexed — a 32 B script hash follows; 2: from a mempool transaction;
 *       4: a P2PK output — its own 32 B script hash follows the script hash),
 *       [32 B script hash] [32 B own script hash]
 *     varint outputs; per output: varint value, 1 B flags (1: indexed; 2: P2PK, its own script
 *       hash follows), [32 B script hash] [32 B own script hash]
 * The transaction's bytes are not in its part: a store keeps them in a row of their own
 * (decodeMempoolRaw), which a reader reads when an answer needs them, so a reader holding
 * 150,000 parts does not hold (nor read at start) the 60 MB of bytes beside them.
 *
 * The script hash is the index key (a P2PK output's: its key's P2PKH script's, the address
 * view); a P2PK output's own script hash is what Electrum asks for (the script view).
 *
 * Format 2's whole snapshot (`4d 01`, one value: format byte 2, varint seq, tip, varint count,
 * the parts) and the rows of formats 3 to 5 held parts with the transaction's bytes inside
 * (`varint raw length, raw` after vsize): decodeMempool reads format 2's, for dumps.
 */

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
 * @property {boolean} unconfirmed  it spent an output of another mempool transaction when the part was written (whether that one is still in a snapshot is the snapshot's to say: MempoolView#hasUnconfirmedInputs)
 */

/**
 * @typedef {object} MempoolTx
 * @property {Buffer} txid
 * @property {number} time   first seen, seconds
 * @property {number} fee    satoshis
 * @property {number} vsize
 * @property {number} size   of the transaction's bytes
 * @property {Buffer} [raw]  the transaction's bytes (not in a part: encodeMempoolTx reads
 *   `size` from them when given; decodeMempoolTx leaves them out)
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
 * One transaction's part (format 6: without its bytes, which `t.raw` or `t.size` measures).
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

function writeTx(w, t) {
  w.bytes(t.txid);
  w.varint(t.time);
  w.varint(t.fee);
  w.varint(t.vsize);
  w.varint(t.raw ? t.raw.length : t.size);
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
 * Format 2's whole snapshot (`4d 01`), for dumps of an index that still holds one.
 * @param {Uint8Array} buf
 * @returns {MempoolSnapshot} views into buf
 */
function decodeMempool(buf) {
  const r = openValue(buf, 'mempool', 2);
  const seq = r.varint();
  const tip = hash(r);
  const n = r.count(r.varint(), 40);
  const txs = new Array(n);
  for (let k = 0; k < n; k++) txs[k] = readTx(r, true);
  r.done();
  return { seq, tip, txs };
}

/**
 * One transaction's part (as encodeMempoolTx gives it, or a slice of a change or a whole).
 * @param {Uint8Array} part
 * @returns {MempoolTx} views into part, without `raw`
 */
function decodeMempoolTx(part) {
  const r = new Reader(part, 'mempool transaction');
  const tx = readTx(r, false);
  r.done();
  return tx;
}

function readTx(r, withRaw) {
  const txid = hash(r);
  const time = r.varint();
  const fee = r.varint();
  const vsize = r.varint();
  const size = r.varint();
  const raw = withRaw ? bytes(r, size) : undefined;
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
  const tx = { txid, time, fee, vsize, size, inputs, outputs };
  if (withRaw) tx.raw = raw;
  return tx;
}

/**
 * A transaction's bytes as a store keeps them beside its part (`4d 06 place`): its txid first,
 * so that a reader asking for the bytes of the transaction it holds at a place knows whether
 * the place still holds it. Laid out by the change that carries them (encodeChange), which a
 * store writes as it is.
 * @param {Uint8Array} buf `txid (32) raw`
 * @returns {{txid: Buffer, raw: Buffer}} views into buf
 */
function decodeMempoolRaw(buf) {
  if (buf.length < 33) throw new CodecError('ERR_BAD_VALUE', `mempool transaction bytes: a row of ${buf.length} bytes`, { what: 'mempool transaction bytes', offset: 0 });
  const b = Buffer.from(buf.buffer, buf.byteOffset, buf.length);
  return { txid: b.subarray(0, 32), raw: b.subarray(32) };
}

/** Version of the whole snapshot a store assembles from its rows (getMempool): 4 since format 6. */
const WHOLE_VERSION = 4;
/** Whole flags: 1 each part is followed by its transaction's bytes (getMempool({raws: true})). */
const WHOLE_RAWS = 1;
/**
 * Version of a change record (putMempool, getMempoolChanges): 3 (format 6) carries each
 * entering transaction's bytes after its part; 2 named each leaving transaction's place beside
 * its txid (a key-value store keys rows by place); 1, without the places, was a MongoDB store's
 * format 4. Versions 1 and 2 are still decoded (dumps, and a store's check that a change
 * applies), their parts of the older layout: a reader never applies them (MempoolCache reads
 * the whole instead).
 */
const CHANGE_VERSION = 3;
/**
 * Version of the head (`M 00`): 5 names a snapshot of format 6 (parts without the
 * transactions' bytes, which rows of their own hold); 4 named format 5 (rows keyed by place,
 * the bytes in the parts), 3 and 2 (formats 4 and 3) rows keyed by txid, and 1 (seq, tip) a
 * whole snapshot of format 2: those are read for their seq only (`legacy`), and the
 * follower's next change replaces them. MongoDB's head is a document: `format: 6` says the same.
 */
const HEAD_VERSION = 5;
/** Change flags: 1 every row held before goes first; 2 a stub, kept without its lists. */
const CHANGE_RESET = 1;
const CHANGE_STUB = 2;

/**
 * @typedef {object} MempoolChange  what one poll changed (docs/FORMAT.md, `M` rows, format 6)
 * @property {number} seq       the snapshot it makes
 * @property {number} prev      the snapshot it applies to (0: none)
 * @property {Buffer} tip       32 bytes, internal order: the tip the new snapshot was resolved against
 * @property {number} count     transactions in the new snapshot
 * @property {number} vsize     of them
 * @property {number} fee       of them
 * @property {number} evicted   transactions the follower evicted so far (--mempool-max-mb)
 * @property {boolean} reset    every transaction held before goes first (the first write of a follower that found no whole state)
 * @property {boolean} stub     stored without its lists: a reader at `prev` reads the whole
 * @property {Buffer[]} removed txids (internal order) that leave, each from its row at
 *   `removedRanks[i]`: a transaction whose place changed leaves its old place and enters anew
 * @property {number[]|null} removedRanks their places (null in a change of version 1, which a
 *   key-value store cannot apply)
 * @property {Array<{rank: number, part: Buffer, raw: Buffer|null, rawRow?: Buffer|null}>} upserts
 *   transactions that enter or whose part or place changed: their place (ranks increase parents
 *   before children), part (encodeMempoolTx) and bytes (null only in a change of version 1 or
 *   2); decoded, `rawRow` is the bytes with the txid before them (decodeMempoolRaw's row)
 * @property {number} [version] of the encoding decoded
 */

/**
 * @param {MempoolChange} c (`stub` ignored: a stub is made by stubChange); `removed[i]` leaves
 *   its row at `removedRanks[i]`
 * @returns {Buffer}
 */
function encodeChange(c) {
  const ranks = c.removedRanks;
  if (!ranks || ranks.length !== c.removed.length) throw new TypeError('encodeChange: every removed transaction needs its place (removedRanks)');
  let size = 128 + 41 * c.removed.length;
  for (const u of c.upserts) size += 16 + u.part.length + 32 + u.raw.length;
  const w = new Writer(size);
  w.begin();
  writeChangeHead(w, c, c.reset ? CHANGE_RESET : 0);
  w.varint(c.removed.length);
  for (let k = 0; k < ranks.length; k++) {
    w.bytes(c.removed[k]);
    w.varint(ranks[k]);
  }
  w.varint(c.upserts.length);
  const head = Buffer.from(w.end());
  const parts = [head];
  for (const u of c.upserts) {
    const p = new Writer(16);
    p.begin();
    p.varint(u.rank);
    p.varint(u.part.length);
    parts.push(Buffer.from(p.end()), u.part);
    // the bytes as their row holds them (decodeMempoolRaw: the txid first), so that a store
    // writes a view of the change and copies nothing
    p.begin();
    p.varint(32 + u.raw.length);
    parts.push(Buffer.from(p.end()), u.part.subarray(0, 32), u.raw);
  }
  return Buffer.concat(parts);
}

function writeChangeHead(w, c, flags, version = CHANGE_VERSION) {
  w.u8(version);
  w.varint(c.seq);
  w.varint(c.prev);
  w.bytes(c.tip);
  w.varint(c.count);
  w.varint(c.vsize);
  w.varint(c.fee);
  w.varint(c.evicted);
  w.u8(flags);
}

/**
 * @param {Uint8Array} buf an encoded change
 * @param {boolean} [lists=true] false: the head alone (removed and upserts left empty)
 * @returns {MempoolChange} views into buf
 */
function decodeChange(buf, lists = true) {
  const version = buf.length && (buf[0] === 1 || buf[0] === 2) ? buf[0] : CHANGE_VERSION;
  const r = openValue(buf, 'mempool change', version);
  const seq = r.varint();
  const prev = r.varint();
  const tip = hash(r);
  const count = r.varint();
  const vsize = r.varint();
  const fee = r.varint();
  const evicted = r.varint();
  const flags = r.u8();
  if (flags & ~(CHANGE_RESET | CHANGE_STUB)) throw r.error('ERR_BAD_VALUE', `change flags ${flags}`);
  const c = {
    version, seq, prev, tip, count, vsize, fee, evicted, reset: (flags & CHANGE_RESET) !== 0, stub: (flags & CHANGE_STUB) !== 0,
    removed: [], removedRanks: version === 1 ? null : [], upserts: [],
  };
  if (c.stub || !lists) {
    if (c.stub) r.done();
    return c;
  }
  const nr = r.count(r.varint(), version === 1 ? 32 : 33);
  for (let k = 0; k < nr; k++) {
    c.removed.push(hash(r));
    if (c.removedRanks) c.removedRanks.push(r.varint());
  }
  const nu = r.count(r.varint(), 2);
  for (let k = 0; k < nu; k++) {
    const rank = r.varint();
    const part = bytes(r, r.varint());
    if (part.length < 32) throw r.error('ERR_BAD_VALUE', `a part of ${part.length} bytes`);
    if (version !== CHANGE_VERSION) {
      c.upserts.push({ rank, part, raw: null, rawRow: null });
      continue;
    }
    const rawRow = bytes(r, r.varint());
    if (rawRow.length < 33 || Buffer.compare(rawRow.subarray(0, 32), part.subarray(0, 32)) !== 0) throw r.error('ERR_BAD_VALUE', 'the bytes of a transaction under another txid');
    c.upserts.push({ rank, part, raw: rawRow.subarray(32), rawRow });
  }
  r.done();
  return c;
}

/**
 * A change that replaces whatever the store holds with a whole snapshot (places 1, 2, … in its
 * order): what a writer without a follower's state (a test, a tool) stores.
 * @param {MempoolSnapshot} snap
 * @returns {Buffer}
 */
function encodeReplacement(snap) {
  let vsize = 0;
  let fee = 0;
  for (const t of snap.txs) {
    vsize += t.vsize;
    fee += t.fee;
  }
  return encodeChange({
    seq: snap.seq, prev: 0, tip: snap.tip, count: snap.txs.length, vsize, fee, evicted: 0, reset: true, removed: [], removedRanks: [],
    upserts: snap.txs.map((t, k) => ({ rank: k + 1, part: encodeMempoolTx(t), raw: t.raw })),
  });
}

/**
 * The change as a store keeps it when it will not keep its lists (too large to be worth a
 * reader's catching up by it): the head alone, flagged.
 * @param {Uint8Array} buf an encoded change
 * @returns {Buffer}
 */
function stubChange(buf) {
  const c = decodeChange(buf, false);
  const w = new Writer(128);
  w.begin();
  writeChangeHead(w, c, CHANGE_STUB | (c.reset ? CHANGE_RESET : 0), c.version);
  return Buffer.from(w.end());
}

/**
 * A transaction's row of formats 3 and 4 (`M 02 txid`: `01 varint rank part`), which a store of
 * format 5 deletes at its first change; decoded for dumps (lib/stores/walk.js decodeRecord).
 * A row of format 6 (`M 04 place`) is the part itself (decodeMempoolTx).
 * @param {Uint8Array} buf
 * @returns {{rank: number, part: Uint8Array}} part: a view into buf
 */
function decodeTxidKeyedRow(buf) {
  const r = openValue(buf, 'mempool row of format 4', 1);
  const rank = r.varint();
  if (r.left() < 32) throw r.error('ERR_BAD_VALUE', `a part of ${r.left()} bytes`);
  return { rank, part: buf.subarray(r.pos) };
}

/**
 * The whole snapshot as a store assembles it from its rows (getMempool): what a reader that
 * holds nothing yet, or fell behind the kept changes, reads; with the transactions' bytes
 * (`raw` in every row) what a follower starting again reads.
 * @param {{seq: number, tip: Buffer, evicted?: number}} head
 * @param {Array<{rank: number, part: Uint8Array, raw?: Uint8Array}>} rows in rank order
 * @param {boolean} [raws] the rows carry their bytes
 * @returns {Buffer}
 */
function encodeWhole(head, rows, raws = false) {
  const h = new Writer(64);
  h.begin();
  h.u8(WHOLE_VERSION);
  h.varint(head.seq);
  h.bytes(head.tip);
  h.varint(head.evicted || 0);
  h.u8(raws ? WHOLE_RAWS : 0);
  h.varint(rows.length);
  const out = [Buffer.from(h.end())];
  const w = new Writer(64);
  for (const row of rows) {
    w.begin();
    w.varint(row.rank);
    w.varint(row.part.length);
    out.push(Buffer.from(w.end()), row.part);
    if (!raws) continue;
    w.begin();
    w.varint(row.raw.length);
    out.push(Buffer.from(w.end()), row.raw);
  }
  return Buffer.concat(out);
}

/**
 * @param {Uint8Array} buf a whole snapshot (encodeWhole)
 * @returns {{seq: number, tip: Buffer, evicted: number, rows: Array<{rank: number, part: Uint8Array, raw: Uint8Array|null}>}} views into buf
 */
function decodeWhole(buf) {
  const r = openValue(buf, 'mempool', WHOLE_VERSION);
  const seq = r.varint();
  const tip = hash(r);
  const evicted = r.varint();
  const flags = r.u8();
  if (flags & ~WHOLE_RAWS) throw r.error('ERR_BAD_VALUE', `whole flags ${flags}`);
  const n = r.count(r.varint(), 34);
  const rows = new Array(n);
  for (let k = 0; k < n; k++) {
    const rank = r.varint();
    const part = bytes(r, r.varint());
    rows[k] = { rank, part, raw: flags & WHOLE_RAWS ? bytes(r, r.varint()) : null };
  }
  r.done();
  return { seq, tip, evicted, rows };
}

/**
 * @typedef {object} MempoolHead
 * @property {number} seq
 * @property {Buffer} tip 32 bytes, internal order
 * @property {number} count
 * @property {number} vsize
 * @property {number} fee
 * @property {number} evicted  transactions the follower evicted so far
 * @property {number} from     the lowest seq a reader may hold and catch up from by changes
 * @property {boolean} [legacy] a head of a format before 6 (parts with the bytes inside, rows
 *   keyed by txid, or a whole snapshot of format 2): read for its seq, its snapshot not read
 *   any more
 */

/**
 * @param {MempoolHead} head
 * @returns {Buffer}
 */
function encodeMempoolHead(head) {
  const w = new Writer(96);
  w.begin();
  w.u8(HEAD_VERSION);
  w.varint(head.seq);
  w.bytes(head.tip);
  w.varint(head.count);
  w.varint(head.vsize);
  w.varint(head.fee);
  w.varint(head.evicted);
  w.varint(head.from);
  return Buffer.from(w.end());
}

/**
 * @param {Uint8Array} buf
 * @returns {MempoolHead}
 */
function decodeMempoolHead(buf) {
  if (buf.length && buf[0] === 1) {
    // version 1: the head of a format 2 snapshot; its seq goes on, its snapshot is not read
    const r = openValue(buf, 'mempool head', 1);
    const seq = r.varint();
    const tip = Buffer.from(hash(r));
    r.done();
    return { seq, tip, count: 0, vsize: 0, fee: 0, evicted: 0, from: seq + 1, legacy: true };
  }
  // versions 2 to 4 (formats 3 to 5): the same fields, naming rows of an older layout
  const legacy = buf.length > 0 && buf[0] >= 2 && buf[0] <= 4;
  const r = openValue(buf, 'mempool head', legacy ? buf[0] : HEAD_VERSION);
  const seq = r.varint();
  const tip = Buffer.from(hash(r));
  const head = { seq, tip, count: r.varint(), vsize: r.varint(), fee: r.varint(), evicted: r.varint(), from: r.varint() };
  r.done();
  if (legacy) {
    head.legacy = true;
    head.from = seq + 1;
  }
  return head;
}

/**
 * The head after a change is stored. `from` moves up to the change's own seq when a reader
 * cannot catch up across it (a stub, a reset), and past the changes no longer kept.
 * @param {MempoolHead|null} old
 * @param {MempoolChange} c
 * @param {boolean} stub the change is kept as a stub
 * @param {number} keep how many changes are kept
 * @returns {MempoolHead}
 */
function nextHead(old, c, stub, keep) {
  const gap = !old || old.legacy || stub || c.reset;
  const from = gap ? c.seq : Math.max(old.from, c.seq - keep);
  return { seq: c.seq, tip: Buffer.from(c.tip), count: c.count, vsize: c.vsize, fee: c.fee, evicted: c.evicted, from };
}

function hash(r) {
  return bytes(r, 32);
}

function bytes(r, n) {
  const at = r.skip(n);
  return r.buf.subarray(at, at + n);
}

module.exports = {
  encodeMempoolTx, decodeMempool, decodeMempoolTx, decodeMempoolRaw, encodeMempoolHead, decodeMempoolHead,
  encodeChange, encodeReplacement, decodeChange, stubChange, decodeTxidKeyedRow, encodeWhole, decodeWhole, nextHead, WHOLE_VERSION, CHANGE_VERSION,
};
