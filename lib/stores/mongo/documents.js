'use strict';

const { Long } = require('mongodb');
const { toDisplayHex, fromDisplayHex } = require('../../chain/hash');
const { CodecError } = require('../../errors');
const { PAGE_ENTRIES, sealedCount } = require('../../core/rules');
const { decodeBody } = require('../../codec/records');

/**
 * The MongoDB document model, in one place (docs/MONGO.md explains the choices).
 *
 *   collection  _id                          fields                                          serves
 *   meta        'meta' | 'tip' | 'pending'   network, version | height, hash, nextTxNum, seq getTip, open checks, repair
 *   blocks      height (int32)               hash, prev, time (Date), firstTxNum, txCount,   getBlock, getBlockHash,
 *                                            header (hex), size, weight, locator; {hash}     getBlockByHash, headers
 *   txs         txid (display hex)           txNum, height, pos, off, len; {txNum} unique    getTx, getTxid
 *               '<txid>:<TxNum>' (BIP30)     txid, txNum, height, pos, off, len: a tx whose
 *                                            txid a later coinbase took
 *   bodies      height (int32)               data: the block's bytes past its header (the    getBlockBytes (--txstore)
 *                                            key-value schema's `w` value, LZ4 as there)
 *   spends      '<TxNum>:<vout>'             by (spending txid), txNum, vin (-1: BIP30),     getSpenders
 *                                            height (keyed by TxNum: BIP30's repeated txids
 *                                            keep their spends apart)
 *   accounts    sh (display hex)             summary counters, tail (the last 1..64 history  getSummary, short histories,
 *                                            entries), utxos (≤ 16, else null), seq, prev;   small UTXO sets: one read;
 *                                            parts, both (the P2PK scripts it counts)        the script view
 *   history     '<sh>:<page, 8 digits>'      sh, page, sealedBy, entries (64, sealed, never  long histories, page by page
 *                                            changed); {sealedBy} index
 *   utxos       '<txid>:<vout>'              sh, vout, value, height, txNum, p2pk (a P2PK    getPrevouts; UTXO sets
 *                                            output's own script hash); {sh, txNum, vout}    of more than 16
 *               '<txid>:<vout>:p2pk'         the same output in its P2PK script's own
 *                                            account (sh: that script's hash)
 *   undo        '<height, 10 digits>:<part>' height, part, parts, hash, firstTxNum, spent,   revert, crash repair
 *                                            dups, txs
 *   staging     sh                           the next version of an account                  the account swap
 *   mempool     'head' | 'change:<seq, 16>:<part, 4>'  seq, tip, count, vsize, fee,     the mempool snapshot (not chain
 *                                            evicted, from | seq, parts, data (≤ 8 MB)       data; lib/stores/mongo/mempool.js)
 *   mempoolTxs  txid (display hex)           r (its place), data (its part)
 *
 * `sh` is the Electrum script hash in Electrum's display order (byte-reversed hex): the string
 * an Electrum client or a mongo shell user types. Every per-address read is an `_id` lookup:
 * FerretDB pushes down nothing else, and on MongoDB it is the `_id` index.
 *
 * Numeric types never vary per field: heights, vouts, positions, page numbers and block tx
 * counts are int32 (a JS number in int32 range serializes so); txNums, satoshi amounts and
 * per-address counters are int64 (Long), exact and unbounded in practice. Reads promote Longs
 * back to JS numbers (all fit in 2^53).
 */
const COLLECTIONS = Object.freeze({
  meta: 'meta', blocks: 'blocks', bodies: 'bodies', txs: 'txs', accounts: 'accounts', history: 'history', utxos: 'utxos', spends: 'spends',
  undo: 'undo', staging: 'staging', mempool: 'mempool', mempoolTxs: 'mempoolTxs',
});

/**
 * Format of these documents; a database of another version refuses to open. Version 2: an
 * account keeps its last 1..64 entries as the key-value schema does (lib/core/rules.js), pages
 * say which entry sealed them, undo holds the index core's record (no per-account counters).
 * Version 3: blocks keep their header, size, weight and blocks-dir locator; txs their place in
 * the block; `spends` says who spent each output. Version 4: a P2PK script has an account of its
 * own (lib/core/p2pk.js), its unspent outputs a second document each; an address account
 * counting P2PK outputs says which (`parts`, `both`); undo says which outputs were P2PK.
 */
const SCHEMA_VERSION = 4;
const SCHEMA_NAME = 'addrindex-mongo';

/** Secondary indexes, by collection. Nothing here is `sparse` or partial: FerretDB v1 drops or rejects those. */
const INDEXES = Object.freeze({
  blocks: [{ key: { hash: 1 }, name: 'hash_1', unique: true }],
  txs: [{ key: { txNum: 1 }, name: 'txNum_1', unique: true }],
  utxos: [{ key: { sh: 1, txNum: 1, vout: 1 }, name: 'sh_1_txNum_1_vout_1' }],
  // the pages a revert (or a crashed apply) takes back: those an entry it reverts sealed
  history: [{ key: { sealedBy: 1 }, name: 'sealedBy_1' }],
});

const HEIGHT_DIGITS = 10;
const PART_DIGITS = 4;
const PAGE_DIGITS = 8;

const ZERO32 = Buffer.alloc(32);

/** @param {number} n */
const long = (n) => Long.fromNumber(n);

/**
 * Reads a number that may come back as a Long (a driver configured without promoteLongs).
 * @param {number|Long} v
 */
const num = (v) => (typeof v === 'number' ? v : v.toNumber());

/** @param {Buffer} buf 32 bytes, internal order  @returns {string} display hex */
const hashHex = (buf) => toDisplayHex(buf);

/** @param {string} hex display hex  @returns {Buffer} internal order */
const hashFromHex = (hex) => fromDisplayHex(hex);

/** @param {string} txid display hex  @param {number} vout */
const outpointId = (txid, vout) => `${txid}:${vout}`;

/** The document of an output in its P2PK script's own account. @param {string} outpoint outpointId */
const ownOutpointId = (outpoint) => `${outpoint}:p2pk`;

/** @param {string} sh  @param {number} page */
const pageId = (sh, page) => `${sh}:${String(page).padStart(PAGE_DIGITS, '0')}`;

/** @param {number} height  @param {number} part */
const undoId = (height, part) => `${String(height).padStart(HEIGHT_DIGITS, '0')}:${String(part).padStart(PART_DIGITS, '0')}`;

/**
 * @param {import('../../chain/columns').BlockColumns} cols
 * @param {number} height
 * @param {number} firstTxNum
 * @param {{file: number, offset: number}|null} locator
 */
function blockDoc(cols, height, firstTxNum, locator) {
  return {
    _id: height, hash: cols.hash, prev: cols.prev, time: new Date(cols.time * 1000), firstTxNum: long(firstTxNum), txCount: cols.txCount,
    header: cols.header.toString('hex'), size: cols.size, weight: cols.weight,
    locator: locator ? { file: locator.file, offset: long(locator.offset) } : null,
  };
}

function fromBlockDoc(d) {
  const header = Buffer.from(d.header, 'hex');
  if (header.length !== 80) throw bad(`block ${d._id}`, 'its header');
  return {
    height: d._id, hash: d.hash, time: Math.floor(d.time.getTime() / 1000), firstTxNum: num(d.firstTxNum), txCount: d.txCount,
    header, size: d.size, weight: d.weight, locator: d.locator ? { file: d.locator.file, offset: num(d.locator.offset), length: d.size } : null,
  };
}

/**
 * A block's bytes past its header, for an index that keeps transactions (the same value as the
 * key-value schema's `w` row: lib/codec/records.js encodeBody).
 * @param {number} height
 * @param {Buffer} value encodeBody's
 */
const bodyDoc = (height, value) => ({ _id: height, data: Buffer.from(value) });

/** @returns {Buffer} the whole block */
function fromBodyDoc(d, header) {
  return decodeBody(Buffer.from(d.data.buffer), header);
}

/**
 * @param {string} txid display hex
 * @param {number} txNum
 * @param {number} height
 * @param {number} pos
 * @param {number} off   its first byte within the block
 * @param {number} len   its bytes
 */
const txDoc = (txid, txNum, height, pos, off, len) => ({ _id: txid, txNum: long(txNum), height, pos, off, len });

/*
 * BIP30: a coinbase that repeats an earlier txid takes it (as in Bitcoin Core). Its document
 * keeps the one it replaced as `prev` (readers of an earlier tip still find the old one), and
 * the replaced transaction lives on under '<txid>:<TxNum>' with a `txid` field, so that its
 * TxNum still maps to its txid.
 */

/**
 * A txs document as written, whatever number types it was read back with (Longs come back as
 * numbers; a unique index on FerretDB compares them as JSON text, so the types must not vary).
 */
function canonicalTxDoc(d) {
  const doc = txDoc(d._id, num(d.txNum), d.height, d.pos, d.off, d.len);
  if (d.txid) doc.txid = d.txid;
  if (d.prev) doc.prev = prevOf(d.prev);
  return doc;
}

/** What a coinbase's document keeps of the one whose txid it took. */
const prevOf = (d) => ({ txNum: long(num(d.txNum)), height: d.height, pos: d.pos, off: d.off, len: d.len });

/** The document a replaced transaction moves to. */
const displacedTxDoc = (old) => ({ _id: `${old._id}:${num(old.txNum)}`, txid: old._id, ...prevOf(old) });

/** @returns {string} the txid a txs document is about (display hex) */
const txidOf = (d) => d.txid || d._id;

/** The version of a txs document a reader at `nextTxNum` sees, or null. */
function txAt(d, nextTxNum) {
  if (num(d.txNum) < nextTxNum) return d;
  return d.prev && num(d.prev.txNum) < nextTxNum ? { _id: d._id, ...d.prev } : null;
}

/**
 * An unspent output in memory: what the `utxos` collection and an account's inline list hold.
 * `p2pk`: a P2PK output's own script hash (display hex), whose account holds it too.
 * @typedef {{id: string, sh: string, txid: string, vout: number, value: number, height: number, txNum: number, p2pk?: string|null}} Out
 */

/** @param {number} txNum of the spent output's transaction  @param {number} vout */
const spendId = (txNum, vout) => `${txNum}:${vout}`;

/**
 * Who spent an output: `by` the spending transaction's txid, its TxNum and input (vin -1: a
 * coinbase's BIP30 replacement took the output), and its block's height.
 * @param {string} id spendId of the output
 */
const spendDoc = (id, by, txNum, vin, height) => ({ _id: id, by, txNum: long(txNum), vin, height });

/** @param {Out} o */
function utxoDoc(o) {
  const d = { _id: o.id, sh: o.sh, vout: o.vout, value: long(o.value), height: o.height, txNum: long(o.txNum) };
  if (o.p2pk) d.p2pk = o.p2pk;
  return d;
}

/**
 * The `utxos` documents of an output: its own, and for a P2PK output the one its P2PK script's
 * own account reads (same fields, `sh` that script's hash).
 * @param {Out} o
 * @returns {object[]}
 */
function utxoDocs(o) {
  const d = utxoDoc(o);
  if (!o.p2pk) return [d];
  return [d, { _id: ownOutpointId(o.id), sh: o.p2pk, vout: o.vout, value: d.value, height: o.height, txNum: d.txNum }];
}

/**
 * The `_id`s of utxoDocs(o).
 * @param {string} id outpointId
 * @param {string|Buffer|null|undefined} p2pk
 */
const utxoIds = (id, p2pk) => (p2pk ? [id, ownOutpointId(id)] : [id]);

/** @returns {Out} (`id` the outpoint's, for either document of it) */
function fromUtxoDoc(d) {
  const colon = d._id.indexOf(':');
  const end = d._id.indexOf(':', colon + 1);
  return {
    id: end < 0 ? d._id : d._id.slice(0, end), sh: d.sh, txid: d._id.slice(0, colon), vout: d.vout, value: num(d.value), height: d.height, txNum: num(d.txNum), p2pk: d.p2pk || null,
  };
}

/**
 * A history entry in memory: {txNum, txid (display hex), height, funded, spent}.
 * @typedef {{txNum: number, txid: string, height: number, funded: boolean, spent: boolean}} Entry
 */

/*
 * History entries and inline unspent outputs are stored as short strings in arrays, not as
 * sub-documents: FerretDB keeps a type schema per array element beside each document and
 * parses it on every `_id` lookup, which made an account with 20 sub-documents five times
 * slower to find than one with 20 strings (docs/MONGO.md, "Measured on FerretDB").
 *
 *   entry   '<txNum>:<txid>:<height>:<flags>'            flags: 1 funded, 2 spent, 3 both
 *   output  '<txid>:<vout>:<value>:<height>:<txNum>'
 */
const ENTRY_RE = /^(\d{1,16}):([0-9a-f]{64}):(\d{1,10}):([123])$/;
const OUT_RE = /^([0-9a-f]{64}):(\d{1,10}):(\d{1,16}):(\d{1,10}):(\d{1,16})$/;

/** @param {Entry} e */
const entryDoc = (e) => `${e.txNum}:${e.txid}:${e.height}:${(e.funded ? 1 : 0) + (e.spent ? 2 : 0)}`;

/** @returns {Entry} */
function fromEntryDoc(str, where) {
  const m = typeof str === 'string' ? ENTRY_RE.exec(str) : null;
  if (!m) throw bad(where, 'a history entry');
  const f = Number(m[4]);
  return { txNum: Number(m[1]), txid: m[2], height: Number(m[3]), funded: (f & 1) !== 0, spent: (f & 2) !== 0 };
}

/** @param {Out} o */
const outString = (o) => `${o.txid}:${o.vout}:${o.value}:${o.height}:${o.txNum}`;

/** @returns {Out} */
function fromOutString(str, sh, where) {
  const m = typeof str === 'string' ? OUT_RE.exec(str) : null;
  if (!m) throw bad(where, 'an unspent output');
  return { id: outpointId(m[1], Number(m[2])), sh, txid: m[1], vout: Number(m[2]), value: Number(m[3]), height: Number(m[4]), txNum: Number(m[5]) };
}

/**
 * A sealed page: entries [PAGE_ENTRIES * page, PAGE_ENTRIES * (page + 1)) of a history. A page
 * is sealed by the entry after it (an account keeps its last 1..PAGE_ENTRIES), whose TxNum it
 * keeps as `sealedBy`: a revert to below that TxNum takes the page back into the account.
 * @param {string} sh  @param {number} page  @param {Entry[]} entries exactly PAGE_ENTRIES  @param {number} sealedBy
 */
const pageDoc = (sh, page, entries, sealedBy) => ({
  _id: pageId(sh, page), sh, page, sealedBy: long(sealedBy), entries: entries.map(entryDoc),
});

/** @returns {Entry[]} */
function fromPageDoc(d, sh, page) {
  const where = `history page ${pageId(sh, page)}`;
  if (!d || !Array.isArray(d.entries) || d.entries.length !== PAGE_ENTRIES) throw bad(where, 'a sealed page');
  return d.entries.map((e) => fromEntryDoc(e, where));
}

/**
 * An account in memory: a script hash's summary counters, the tail of its history (entries
 * past the last sealed page) and, when it has at most INLINE_UTXOS, its unspent outputs.
 * @typedef {object} Account
 * @property {number} received
 * @property {number} sent
 * @property {number} txCount
 * @property {number} fundedCount
 * @property {number} spentCount
 * @property {number} firstHeight
 * @property {number} lastHeight
 * @property {Entry[]} tail      txCount - sealedCount(txCount) entries (1..PAGE_ENTRIES, none when empty)
 * @property {Out[]|null} utxos  in (txNum, vout) order; null when there are more than INLINE_UTXOS
 * @property {import('../../core/p2pk').Parts|null} parts  the P2PK scripts it counts (lib/core/p2pk.js)
 */

const COUNTERS = ['received', 'sent', 'txCount', 'fundedCount', 'spentCount'];

/*
 * An account's P2PK parts, as short strings too:
 *   parts   '<own script hash, display hex>:<TxNum of its first entry>'
 *   both    '<txNum>:<flags>'             flags of the account's other script in that transaction
 */
const PART_RE = /^([0-9a-f]{64}):(\d{1,16})$/;
const BOTH_RE = /^(\d{1,16}):([123])$/;

function partsFields(parts) {
  return {
    parts: parts.p2pk.map((p) => `${hashHex(p.sh)}:${p.first}`),
    both: parts.both.map((e) => `${Math.floor(e / 4)}:${e % 4}`),
  };
}

function fromPartsFields(f, where) {
  if (f.parts === undefined) return null;
  if (!Array.isArray(f.parts) || !Array.isArray(f.both) || f.parts.length === 0) throw bad(where, 'its P2PK parts');
  const p2pk = f.parts.map((str) => {
    const m = typeof str === 'string' ? PART_RE.exec(str) : null;
    if (!m) throw bad(where, 'a P2PK part');
    return { sh: hashFromHex(m[1]), first: Number(m[2]) };
  });
  const both = f.both.map((str) => {
    const m = typeof str === 'string' ? BOTH_RE.exec(str) : null;
    if (!m) throw bad(where, 'a "both" entry');
    return Number(m[1]) * 4 + Number(m[2]);
  });
  return { p2pk, both };
}

/** The stored fields of one version of an account (no _id, seq or prev). */
function accountFields(a) {
  return {
    balance: long(a.received - a.sent),
    received: long(a.received),
    sent: long(a.sent),
    txCount: long(a.txCount),
    fundedCount: long(a.fundedCount),
    spentCount: long(a.spentCount),
    utxoCount: long(a.fundedCount - a.spentCount),
    firstHeight: a.firstHeight,
    lastHeight: a.lastHeight,
    tail: a.tail.map(entryDoc),
    utxos: a.utxos === null ? null : a.utxos.map(outString),
    ...(a.parts ? partsFields(a.parts) : {}),
  };
}

/**
 * An account document: this version, tagged with the commit sequence number that wrote it, and
 * the version before it, so a reader holding the previous tip still reads what that tip says.
 * @param {string} sh
 * @param {Account|null} a  null: the account does not exist in this version
 * @param {number} seq
 * @param {object|null} prevFields  accountFields of the version before ({seq, ...}), or null
 */
function accountDoc(sh, a, seq, prevFields) {
  const cur = a === null ? { gone: true } : accountFields(a);
  return { _id: sh, seq, ...cur, prev: prevFields };
}

/** The version a reader at commit `seq` must see: the document's own, its prev, or null (not yet there). */
function versionAt(doc, seq) {
  if (doc.seq <= seq) return doc.gone ? null : doc;
  if (doc.prev && doc.prev.seq <= seq) return doc.prev.gone ? null : doc.prev;
  if (doc.prev === null) return null;
  return undefined;
}

/** The version fields of a document, to be kept as the next version's prev. */
function asPrev(doc) {
  if (!doc) return null;
  const { _id, prev, ...fields } = doc;
  return fields;
}

/**
 * Decodes one version of an account, checking every field's type: a document that does not
 * decode is a CodecError, never a wrong balance.
 * @returns {Account}
 */
function fromAccountFields(f, sh) {
  const where = `account ${sh}`;
  for (const k of [...COUNTERS, 'balance', 'utxoCount']) if (!isCount(f[k], k === 'balance')) throw bad(where, k);
  if (!Number.isInteger(f.firstHeight) || !Number.isInteger(f.lastHeight)) throw bad(where, 'heights');
  if (!Array.isArray(f.tail) || (f.utxos !== null && !Array.isArray(f.utxos))) throw bad(where, 'tail or utxos');
  const a = {
    received: num(f.received), sent: num(f.sent), txCount: num(f.txCount), fundedCount: num(f.fundedCount), spentCount: num(f.spentCount),
    firstHeight: f.firstHeight, lastHeight: f.lastHeight,
    tail: f.tail.map((e) => fromEntryDoc(e, where)),
    utxos: f.utxos === null ? null : f.utxos.map((u) => fromOutString(u, sh, where)),
    parts: fromPartsFields(f, where),
  };
  if (a.tail.length !== a.txCount - sealedCount(a.txCount)) throw bad(where, 'a tail of the wrong length');
  return a;
}

/** @param {Account} a  @returns {import('../abstract').Summary} */
function summaryOf(a) {
  return {
    balance: a.received - a.sent, received: a.received, sent: a.sent, txCount: a.txCount, fundedCount: a.fundedCount,
    spentCount: a.spentCount, utxoCount: a.fundedCount - a.spentCount, firstHeight: a.firstHeight, lastHeight: a.lastHeight,
  };
}

/** @param {{height: number, hash: string, nextTxNum: number, seq: number}} tip */
const tipDoc = (tip) => ({ _id: 'tip', height: tip.height, hash: tip.hash, nextTxNum: long(tip.nextTxNum), seq: tip.seq });

/** @returns {{height: number, hash: string, nextTxNum: number, seq: number}} */
const fromTipDoc = (d) => ({ height: d.height, hash: d.hash, nextTxNum: num(d.nextTxNum), seq: d.seq || 0 });

/**
 * The logical record of a document for digest(): its values in a fixed order, numbers as
 * numbers whatever their BSON type; bookkeeping that depends on how the index got where it is
 * (commit sequence numbers, previous versions) is left out.
 * @param {string} coll
 * @param {object} d
 * @returns {Array}
 */
function logicalRecord(coll, d) {
  switch (coll) {
    case 'meta': return [d._id, d.height, d.hash, num(d.nextTxNum)];
    // the locator says where one blocks dir holds the block: not chain data
    case 'blocks': return [d._id, d.hash, d.prev, d.time.getTime() / 1000, num(d.firstTxNum), d.txCount, d.header, d.size, d.weight];
    case 'txs': return [d._id, txidOf(d), num(d.txNum), d.height, d.pos, d.off, d.len, d.prev ? num(d.prev.txNum) : null];
    case 'spends': return [d._id, d.by, num(d.txNum), d.vin, d.height];
    case 'bodies': return [d._id, Buffer.from(d.data.buffer).toString('base64')];
    case 'history': return [d._id, d.sh, d.page, num(d.sealedBy), fromPageDoc(d, d.sh, d.page)];
    case 'undo': return [d._id, d.height, d.part, d.parts, d.hash, num(d.firstTxNum), d.spent.map((o) => logicalRecord('utxos', o)),
      d.dups.map((x) => [x.position, num(x.oldTxNum), logicalRecord('txs', x.old)]), d.txs, d.touched, d.touchedAddress];
    case 'utxos': return [d._id, d.sh, d.vout, num(d.value), d.height, num(d.txNum), d.p2pk || null];
    case 'accounts': {
      const a = fromAccountFields(d, d._id);
      return [d._id, summaryOf(a), a.tail, a.utxos && a.utxos.map((o) => [o.txid, o.vout, o.value, o.height, o.txNum]), a.parts ? partsFields(a.parts) : null];
    }
    default: throw new Error(`no logical record for collection ${coll}`);
  }
}

function isCount(v, signed = false) {
  const n = typeof v === 'number' ? v : Long.isLong(v) ? v.toNumber() : NaN;
  return Number.isSafeInteger(n) && (signed || n >= 0);
}

function bad(where, what) {
  return new CodecError('ERR_BAD_DOCUMENT', `${where}: ${what} does not decode; the MongoDB index is damaged (run "addrindex verify")`);
}

module.exports = {
  COLLECTIONS, SCHEMA_VERSION, SCHEMA_NAME, INDEXES, ZERO32,
  long, num, hashHex, hashFromHex, outpointId, ownOutpointId, pageId, undoId,
  blockDoc, fromBlockDoc, bodyDoc, fromBodyDoc, txDoc, canonicalTxDoc, prevOf, displacedTxDoc, txidOf, txAt, spendId, spendDoc,
  utxoDoc, utxoDocs, utxoIds, fromUtxoDoc, entryDoc, fromEntryDoc, pageDoc, fromPageDoc,
  accountFields, accountDoc, versionAt, asPrev, fromAccountFields, summaryOf, tipDoc, fromTipDoc, logicalRecord,
};
