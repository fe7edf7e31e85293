'use strict';

const D = require('./documents');
const { decodeChange, encodeWhole, nextHead, CHANGE_VERSION } = require('../../codec/mempool');
const { StoreError } = require('../../errors');

const C = D.COLLECTIONS;

/** Bytes of a change per document (MongoDB's limit is 16 MB). */
const CHANGE_PART = 8 * 1024 * 1024;
/** Changes kept (as lib/stores/mempool-rows.js keeps them). */
const KEEP_CHANGES = 64;
/** How often a whole read that lost a race with the writer's pruning is tried again. */
const WHOLE_ATTEMPTS = 5;
/**
 * The head document's `format`: 6, the transactions' bytes in a field of their document beside
 * the part (`raw`, left out of whole reads). A head without it is of an older format, its
 * documents' parts holding the bytes: read for its seq only, and replaced by the next change.
 */
const FORMAT = 6;

/**
 * The mempool snapshot in MongoDB (docs/MONGO.md, `mempool` and `mempoolTxs`): the head and
 * the changes in `mempool`, a document per transaction in `mempoolTxs`. MongoDB commits
 * document by document, so a change is written in an order every reader can make whole:
 *
 *   1. the change itself, whole, under its seq (`'change:<seq>:<part>'`);
 *   2. the transaction documents it removes and (re)writes, by `_id` (point writes: FerretDB
 *      pushes nothing else down);
 *   3. the head, naming the new seq; then the changes no longer kept go.
 *
 * A reader reads the head (seq S), every transaction document, then the changes after S, and
 * applies them in order: whatever the documents' state was between S and the last change
 * written, every write it may have seen after S is in one of those changes, which replace
 * the documents' state transaction by transaction. A writer that died between 1 and 3 leaves a
 * change the head does not name yet: readers already apply it, and the next putMempool rolls
 * the documents forward from it before anything else (an incomplete change, died in 1, is
 * deleted: nothing after it was written).
 *
 * A transaction's bytes are a field of its document (`raw`), which whole reads leave out: a
 * reader reads them (getRaw) when an answer needs them, and a transaction that left has none.
 */

/** @param {number} seq @param {number} part */
const changeId = (seq, part) => `change:${String(seq).padStart(16, '0')}:${String(part).padStart(4, '0')}`;

/**
 * A stored change, its parts joined, or null when it is not there whole.
 * @param {import('./bulk').Database} db
 * @param {number} seq
 * @returns {Promise<Buffer|null>}
 */
async function readChange(db, seq) {
  const coll = db.coll(C.mempool);
  const first = await db.retry('read mempool change', () => coll.findOne({ _id: changeId(seq, 0) }));
  if (!first) return null;
  if (first.parts === 1) return Buffer.from(first.data.buffer);
  const ids = Array.from({ length: first.parts - 1 }, (_, i) => changeId(seq, i + 1));
  const rest = await db.findByIds(C.mempool, ids);
  if (rest.size !== ids.length) return null;
  return Buffer.concat([first.data.buffer, ...ids.map((id) => rest.get(id).data.buffer)]);
}

/** @param {object} d the head document (one of a format before 6 is legacy: read for its seq) */
function fromHeadDoc(d) {
  const legacy = isLegacy(d);
  const h = { seq: d.seq, tip: d.tip, count: d.count || 0, vsize: d.vsize || 0, fee: d.fee || 0, evicted: d.evicted || 0, from: legacy ? d.seq + 1 : d.from };
  if (legacy) h.legacy = true;
  return h;
}

/** @param {object} d a head document */
function isLegacy(d) {
  return d.from === undefined || d.format !== FORMAT;
}

/**
 * @param {import('./bulk').Database} db
 * @returns {Promise<object|null>} the head document
 */
function readHeadDoc(db) {
  return db.retry('read mempool head', () => db.coll(C.mempool).findOne({ _id: 'head' }));
}

/**
 * Writes a change's documents (step 2): idempotent, so a roll forward repeats it as it is.
 * FerretDB updates cost a scan each, so a changed document is deleted and inserted again.
 * @param {import('./bulk').Database} db
 * @param {import('../../codec/mempool').MempoolChange} c
 */
async function applyDocs(db, c) {
  if (c.reset) {
    const all = await db.retry('read mempool transactions', () => db.coll(C.mempoolTxs).find({}, { projection: { _id: 1 } }).toArray());
    await db.deleteIds(C.mempoolTxs, all.map((d) => d._id));
    // a snapshot of format 2 (schema 4): parts under '<seq>:<part>' ids, below 'change:' and 'head'
    await db.retry('drop the old mempool', () => db.coll(C.mempool).deleteMany({ _id: { $lt: 'change:' } }));
  }
  const gone = [...c.removed.map((t) => D.hashHex(t)), ...c.upserts.map((u) => D.hashHex(u.part.subarray(0, 32)))];
  await db.deleteIds(C.mempoolTxs, gone);
  await db.insert(C.mempoolTxs, c.upserts.map((u) => ({ _id: D.hashHex(u.part.subarray(0, 32)), r: u.rank, data: Buffer.from(u.part), raw: Buffer.from(u.raw) })));
}

/**
 * Stores a change (the writer's part of putMempool, run in its serial queue with the tip
 * already checked).
 * @param {import('./bulk').Database} db
 * @param {Buffer} change
 * @param {(step: string) => Promise<void>} [step] called after the change is stored
 *   ('mempool-change') and after its documents ('mempool-docs'): the crash tests stop there
 * @returns {Promise<void>}
 * @throws {StoreError} ERR_MEMPOOL_SEQ
 */
async function putChange(db, change, step = async () => {}) {
  let headDoc = await rollForward(db);
  const c = decodeChange(change);
  const have = headDoc ? headDoc.seq : 0;
  const legacy = headDoc && isLegacy(headDoc);
  if (c.version !== CHANGE_VERSION) throw new StoreError('ERR_MEMPOOL_SEQ', `mempool change ${c.seq} is of version ${c.version}, whose parts hold the transactions' bytes: this store keeps format ${FORMAT}`);
  if (c.seq <= have || (!c.reset && (legacy ? 0 : have) !== c.prev)) {
    throw new StoreError('ERR_MEMPOOL_SEQ', `mempool change ${c.seq} applies to snapshot ${c.prev}${c.reset ? ' (reset)' : ''}; the store holds ${have}`);
  }
  if (legacy) c.reset = true;
  const parts = [];
  for (let i = 0; i * CHANGE_PART < change.length || i === 0; i++) {
    parts.push({ _id: changeId(c.seq, i), seq: c.seq, parts: 0, data: change.subarray(i * CHANGE_PART, (i + 1) * CHANGE_PART) });
  }
  for (const p of parts) p.parts = parts.length;
  await db.insert(C.mempool, parts);
  await step('mempool-change');
  await finish(db, headDoc, c, step);
}

/** Steps 2 and 3 of a change whose document is stored. */
async function finish(db, headDoc, c, step = async () => {}) {
  await applyDocs(db, c);
  await step('mempool-docs');
  const old = headDoc && !isLegacy(headDoc) ? { ...fromHeadDoc(headDoc), legacy: false } : null;
  const h = nextHead(old, c, false, KEEP_CHANGES);
  await db.retry('write mempool head', () => db.coll(C.mempool).replaceOne({ _id: 'head' },
    { _id: 'head', format: FORMAT, seq: h.seq, tip: D.hashHex(h.tip), count: h.count, vsize: h.vsize, fee: h.fee, evicted: h.evicted, from: h.from }, { upsert: true }));
  await db.retry('drop old mempool changes', () => db.coll(C.mempool).deleteMany({ _id: { $gte: 'change:', $lt: changeId(c.seq - KEEP_CHANGES + 1, 0) } }));
}

/**
 * Finishes a change a writer that died left stored but not named by the head; drops one it
 * left incomplete. Returns the head document after.
 * @param {import('./bulk').Database} db
 */
async function rollForward(db) {
  const headDoc = await readHeadDoc(db);
  const next = headDoc ? headDoc.seq + 1 : 1;
  const raw = await readChange(db, next);
  // a change an older release left (its parts hold the bytes) is not finished: the head stays
  // of that format, and the next change replaces it all
  if (raw && decodeChange(raw, false).version === CHANGE_VERSION) {
    await finish(db, headDoc, decodeChange(raw));
    return readHeadDoc(db);
  }
  await db.retry('drop an incomplete mempool change', () => db.coll(C.mempool).deleteMany({ _id: { $gte: changeId(next, 0), $lt: changeId(next + 1, 0) } }));
  return headDoc;
}

/**
 * The stored head as the store contract answers it, or null.
 * @param {import('./bulk').Database} db
 */
async function getHead(db) {
  const d = await readHeadDoc(db);
  return d ? fromHeadDoc(d) : null;
}

/**
 * The changes after `after` (getMempoolChanges), or null.
 * @param {import('./bulk').Database} db
 * @param {number} after
 */
async function getChanges(db, after) {
  const head = await getHead(db);
  if (!head || head.legacy || after < head.from || after > head.seq) return null;
  const out = [];
  for (let s = after + 1; s <= head.seq; s++) {
    const raw = await readChange(db, s);
    if (!raw) return null;
    out.push(raw);
  }
  return out;
}

/**
 * The whole snapshot (getMempool), made whole as the module's comment says, or null.
 * @param {import('./bulk').Database} db
 * @param {boolean} [raws] with the transactions' bytes
 * @returns {Promise<Buffer|null>}
 */
async function getWhole(db, raws = false) {
  for (let attempt = 0; attempt < WHOLE_ATTEMPTS; attempt++) {
    const head = await getHead(db);
    if (!head || head.legacy) return null;
    const docs = await db.retry('read mempool transactions', () => db.coll(C.mempoolTxs).find({}, raws ? {} : { projection: { raw: 0 } }).toArray());
    /** @type {Map<string, {rank: number, part: Uint8Array, raw: Uint8Array|null}>} */
    const rows = new Map();
    for (const d of docs) rows.set(d._id, { rank: d.r, part: d.data.buffer, raw: raws ? d.raw.buffer : null });
    let seq = head.seq;
    let tip = head.tip;
    let evicted = head.evicted;
    let ok = true;
    for (;;) {
      const raw = await readChange(db, seq + 1);
      if (!raw) {
        // the last change, unless the writer pruned the next one meanwhile (then the documents
        // read may hold writes no change kept: read again)
        const now = await getHead(db);
        if (now && now.seq > seq && !(await readChange(db, seq + 1))) ok = false;
        if (!now || now.seq <= seq || !ok) break;
        continue;
      }
      const c = decodeChange(raw);
      if (c.reset) {
        // every document went: what was read is no base to apply it to
        ok = false;
        break;
      }
      for (const t of c.removed) rows.delete(D.hashHex(t));
      for (const u of c.upserts) rows.set(D.hashHex(u.part.subarray(0, 32)), { rank: u.rank, part: u.part, raw: u.raw });
      seq = c.seq;
      tip = D.hashHex(c.tip);
      evicted = c.evicted;
    }
    if (!ok) continue;
    const list = [...rows.values()].sort((a, b) => a.rank - b.rank);
    return encodeWhole({ seq, tip: D.hashFromHex(tip), evicted }, list, raws);
  }
  throw new StoreError('ERR_INDEX_MOVING', `the mempool snapshot was reset during each of ${WHOLE_ATTEMPTS} attempts to read it whole; retry`);
}

/**
 * The bytes of the transaction `txid` if its document is still at `place` (getMempoolRaw).
 * @param {import('./bulk').Database} db
 * @param {number} place
 * @param {Buffer} txid internal order
 * @returns {Promise<Buffer|null>}
 */
async function getRaw(db, place, txid) {
  const d = await db.retry('read a mempool transaction', () => db.coll(C.mempoolTxs).findOne({ _id: D.hashHex(txid) }, { projection: { r: 1, raw: 1 } }));
  return d && d.r === place && d.raw ? Buffer.from(d.raw.buffer) : null;
}

module.exports = { putChange, getHead, getChanges, getWhole, getRaw, KEEP_CHANGES };
