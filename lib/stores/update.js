'use strict';

const { fromDisplayHex } = require('../chain/hash');
const layout = require('./layout');
const {
  TXIDS_PER_ROW, TXIDS_AT, encodeTip, decodeBlock, encodeBlock, encodeBlockHeight, encodeLocator, encodeTxids, truncateTxids, txidsCount,
  encodeTxNums, decodeTxNums, writeOutputsHead, writeOutput, writeSpentHead, writeSpent, endOutputs, decodeOutputs, decodeUndo, encodeUndo, encodeTouched, encodeBody,
} = require('../codec/records');
const { applyEffect, revertEffect, touchedBy } = require('../core/effect');
const { undoMissing, corrupt } = require('../core/checks');
const { undoFloor } = require('../core/rules');
const { updateAccounts, decodeRow } = require('./accounts');
const { readTxids, eachValue } = require('./query');

const { TIP_KEY } = layout;

/**
 * Apply and revert, the twins, as key-value rows. The index core (lib/core/effect.js) says
 * what a batch or a revert does; this file reads what it needs for that from the rows and
 * persists its answer: tx, outputs and txids rows, blocks, undo, the tip, and the account
 * rows (accounts.js), all into one write batch that the caller commits.
 */

/**
 * Fills `batch` with everything applying `blocks` writes, tip included.
 * @param {import('./kvstore').KvStore} store for undoDepth and the prevout cache
 * @param {{snap: object, tip: object|null, tipRaw: Buffer|undefined, heights: import('./heights').HeightIndex}} v
 * @param {import('./abstract').BlockDelta[]} blocks already checked to extend v.tip
 * @param {import('./kvstore').WriteBatch} batch
 * @param {import('../codec/io').Writer} w
 * @param {number} [chainHeight] the source's best height (rules.js undoFloor)
 */
async function applyBlocks(store, v, blocks, batch, w, chainHeight) {
  const { snap } = v;
  const { sources, reused } = await readSources(store, v, blocks);
  const topHeight = blocks[blocks.length - 1].height;
  // undo (and the touched sets beside it) is written from here up, and built only for those blocks
  const undoFrom = undoFloor(topHeight, chainHeight, store.undoDepth);
  const e = applyEffect(blocks, reused, { keyBytes: layout.HASHX_LEN, undoFrom });
  const { first, end } = e;

  // tx rows: txid -> TxNum (txids a coinbase took leave their earlier TxNum's row)
  const txRows = new TxRows();
  let tx = 0;
  for (const { cols, firstTxNum } of blocks) {
    for (let t = 0; t < cols.txCount; t++, tx++) if (!e.replaced[tx]) txRows.add(cols.txids, 32 * t, firstTxNum + t);
  }
  for (const { txid, txNum } of e.txidsTaken) txRows.remove(txid, 0, txNum);
  await txRows.write(snap, batch, w);

  // the outputs rows: of the new transactions (what they left unspent, and who spent the
  // rest within the batch), and of the earlier ones spent from (their spent part grows)
  const cr = e.created;
  const news = [];
  for (const txNum of e.spends.keys()) if (txNum >= first) news.push(txNum);
  news.sort((a, b) => a - b);
  for (let a = 0, n = 0; a < cr.n || n < news.length;) {
    const txNum = a < cr.n && (n >= news.length || cr.txNums[a] <= news[n]) ? cr.txNums[a] : news[n];
    let b = a;
    while (b < cr.n && cr.txNums[b] === txNum) b++;
    writeOutputsHead(w, b - a);
    if (b > a) {
      const shs = blocks[cr.block[a]].cols.scripthashes;
      for (let k = a; k < b; k++) writeOutput(w, k === a ? -1 : cr.vouts[k - 1], cr.vouts[k], cr.values[k], shs, cr.at[k], cr.p2pk.get(k));
    }
    writeSpends(w, txNum, null, n < news.length && news[n] === txNum ? e.spends.get(news[n++]) : null);
    batch.put(layout.outputsKey(txNum), endOutputs(w));
    a = b;
  }
  for (const [txNum, s] of e.spends) {
    if (txNum >= first) continue;
    const rec = sources.get(txNum);
    if (!rec) throw corrupt(`a block spends from TxNum ${txNum}, which has no outputs row`);
    batch.put(layout.outputsKey(txNum), writeOutputsSpent(w, rec, s));
  }

  // txids rows
  const firstRowStart = first - (first % TXIDS_PER_ROW);
  let prior = null;
  if (first % TXIDS_PER_ROW !== 0) {
    const key = layout.txidsKey(firstRowStart);
    prior = await snap.get(key);
    if (!prior || decodeRow(txidsCount, prior, key) !== first % TXIDS_PER_ROW) {
      throw corrupt(`the txids row of TxNum ${firstRowStart} does not end at the tip`);
    }
  }
  const txids = Buffer.allocUnsafe(32 * (end - first));
  const offsets = new Uint32Array(end - first);
  let pos = 0;
  for (const b of blocks) {
    offsets.set(b.cols.txOffsets.subarray(0, b.cols.txCount), pos / 32);
    pos += b.cols.txids.copy(txids, pos, 0, 32 * b.cols.txCount);
  }
  for (let row = firstRowStart; row < end; row += TXIDS_PER_ROW) {
    const from = Math.max(row, first);
    const to = Math.min(row + TXIDS_PER_ROW, end);
    batch.put(layout.txidsKey(row), encodeTxids(w, row === firstRowStart ? prior : null, txids, 32 * (from - first), to - from, offsets, from - first));
  }

  // blocks, undo (written from undoFrom, kept for the last undoDepth blocks: heights > tip - undoDepth), tip
  const oldTop = v.tip ? v.tip.height : -1;
  for (let b = 0; b < blocks.length; b++) {
    const { height, cols, firstTxNum, locator } = blocks[b];
    const hash = fromDisplayHex(cols.hash);
    batch.put(layout.blockKey(height), encodeBlock(w, { hash, header: cols.header, firstTxNum, txCount: cols.txCount, size: cols.size, weight: cols.weight }));
    batch.put(layout.blockHashKey(hash), encodeBlockHeight(w, height));
    if (locator) batch.put(layout.locatorKey(height), encodeLocator(w, locator));
    if (store.keepsTransactions) {
      if (!blocks[b].raw) throw corrupt(`block ${height} came without its bytes, which this index keeps (--txstore)`);
      batch.put(layout.bodyKey(height), encodeBody(w, blocks[b].raw));
    }
    if (height >= undoFrom) {
      const u = e.undo[b];
      batch.put(layout.undoKey(height), encodeUndo(w, u.count, u.txNums, u.vouts, u.values, u.shs, 0, u.dups, u.p2pk));
      batch.put(layout.touchedKey(height), encodeTouched(w, touchedBy(blocks[b], u)));
    }
  }
  for (let h = Math.max(0, oldTop - store.undoDepth + 1); h <= Math.min(oldTop, topHeight - store.undoDepth); h++) {
    batch.del(layout.undoKey(h));
    batch.del(layout.touchedKey(h));
  }
  const last = blocks[blocks.length - 1];
  batch.put(TIP_KEY, encodeTip(w, { height: last.height, hash: fromDisplayHex(last.cols.hash), nextTxNum: end }));

  // accounts
  const ch = e.changes;
  const keys = accountKeys(ch);
  const rows = await snap.getMany(keys);
  await updateAccounts({ reader: snap, writer: w, batch, heights: v.heights }, ch, rows, keys);
}

/**
 * Fills `batch` with everything reverting the blocks above `height` writes, tip included;
 * StoreError ERR_UNDO_MISSING when the undo of one of them is no longer kept.
 * @param {import('./kvstore').KvStore} store
 * @param {{snap: object, tip: object, heights: import('./heights').HeightIndex}} v
 * @param {number} height -1 ..= tip height - 1
 * @param {import('./kvstore').WriteBatch} batch
 * @param {import('../codec/io').Writer} w
 */
async function revertBlocks(store, v, height, batch, w) {
  const { snap, tip, heights } = v;
  const top = tip.height;

  // undo rows of every block to revert: all must still be kept
  const undoKeys = [];
  for (let h = height + 1; h <= top; h++) undoKeys.push(layout.undoKey(h));
  const undoRows = await snap.getMany(undoKeys);
  const undos = undoRows.map((row, k) => {
    if (!row) throw undoMissing(store.describe(), { height, missing: height + 1 + k, tip: top, undoDepth: store.undoDepth });
    return decodeRow(decodeUndo, row, undoKeys[k]);
  });
  const cutoff = heights.firstTxNum(height + 1);
  const end = tip.nextTxNum;
  const txids = await readTxids(snap, cutoff, end);

  // the outputs the reverted transactions left unspent: their rows go
  const created = [];
  for await (const { key, value } of snap.range({ gte: layout.outputsKey(cutoff), lt: layout.outputsKey(end) })) {
    const txNum = layout.readU40(key, 1);
    const rec = decodeRow(decodeOutputs, value, key, txNum);
    created.push({ ...rec, txNum, height: heights.heightOf(txNum) });
    batch.del(key);
  }
  const firstTxNums = undos.map((_, k) => heights.firstTxNum(height + 1 + k));
  const r = revertEffect({ cutoff, end, fromHeight: height + 1, undos, firstTxNums, txids, created, keyBytes: layout.HASHX_LEN });

  const txRows = new TxRows();
  for (const at of r.txidsReleased) txRows.remove(txids, at, cutoff + at / 32);
  for (const { at, txNum } of r.txidsReturned) txRows.add(txids, at, txNum);
  await txRows.write(snap, batch, w);
  await restoreOutputs(snap, r.restore, cutoff, batch, w);

  // txids rows
  const firstRowStart = cutoff - (cutoff % TXIDS_PER_ROW);
  for (let row = firstRowStart; row < end; row += TXIDS_PER_ROW) {
    if (row === firstRowStart && cutoff % TXIDS_PER_ROW !== 0) {
      batch.put(layout.txidsKey(row), truncateTxids(w, txids.priorRow, cutoff % TXIDS_PER_ROW));
    } else {
      batch.del(layout.txidsKey(row));
    }
  }

  // blocks, undo, tip
  for await (const { key, value } of snap.range({ gte: layout.blockKey(height + 1), lt: layout.blockKey(top + 1) })) {
    batch.del(layout.blockHashKey(decodeRow(decodeBlock, value, key).hash));
  }
  for (let h = height + 1; h <= top; h++) {
    batch.del(layout.blockKey(h));
    batch.del(layout.locatorKey(h));
    batch.del(layout.bodyKey(h));
    batch.del(layout.undoKey(h));
    batch.del(layout.touchedKey(h));
  }
  if (height >= 0) {
    const key = layout.blockKey(height);
    const row = await snap.get(key);
    if (!row) throw corrupt(`the index has no block row for height ${height}`);
    batch.put(TIP_KEY, encodeTip(w, { height, hash: decodeRow(decodeBlock, row, key).hash, nextTxNum: cutoff }));
  } else {
    batch.del(TIP_KEY);
  }

  // accounts
  const ch = r.changes;
  const aKeys = accountKeys(ch);
  const aRows = await snap.getMany(aKeys);
  await updateAccounts({ reader: snap, writer: w, batch, heights }, ch, aRows, aKeys, cutoff);
}

/**
 * For apply: the outputs rows of every tx the batch spends from outside the batch, and the
 * earlier transaction of every coinbase txid the index already has (BIP30), with its outputs.
 */
async function readSources(store, v, blocks) {
  const first = blocks[0].firstTxNum;
  const cache = store.prevoutRecords(v.tipRaw);
  const sources = new Map(); // TxNum -> Outputs|null
  const want = [];
  const add = (txNum) => {
    if (sources.has(txNum)) return;
    const rec = cache.outputs.get(txNum);
    sources.set(txNum, rec || null);
    if (rec === undefined) want.push(txNum);
  };
  const cbTxNums = await findTxNums(v.snap, blocks.map((b) => b.cols.txids), blocks.map(() => 0));
  for (let b = 0; b < blocks.length; b++) if (cbTxNums[b] !== null) add(cbTxNums[b]);
  for (const { cols, spent } of blocks) {
    const I = cols.inStart[cols.txCount];
    for (let i = 0; i < I; i++) if (spent.txNums[i] < first) add(spent.txNums[i]);
  }
  const got = new Map();
  await readOutputs(v.snap, want, got);
  for (const txNum of want) sources.set(txNum, got.get(txNum));
  const reused = new Map(); // latin1 coinbase txid -> the earlier tx that has it
  for (let b = 0; b < blocks.length; b++) {
    const txNum = cbTxNums[b];
    if (txNum === null) continue;
    reused.set(blocks[b].cols.txids.latin1Slice(0, 32), { txNum, height: v.heights.heightOf(txNum), outputs: sources.get(txNum) });
  }
  return { sources, reused };
}

/**
 * Puts outputs back into the outputs rows of transactions below the revert point: unspent
 * again, and out of the spent part (where the reverted spends had put them).
 */
async function restoreOutputs(snap, restore, cutoff, batch, w) {
  const txNums = [...restore.keys()];
  const current = new Map();
  await readOutputs(snap, txNums, current);
  for (const txNum of txNums) {
    const rec = current.get(txNum);
    if (!rec) throw corrupt(`undo puts back outputs of TxNum ${txNum}, which has no outputs row`);
    const back = restore.get(txNum);
    const outs = [];
    for (let k = 0; k < rec.count; k++) outs.push({ vout: rec.vouts[k], value: rec.values[k], shs: rec.scripthashes, at: 32 * k, own: rec.p2pk && rec.p2pk.get(k) });
    for (const o of back) outs.push(o);
    outs.sort((a, b) => a.vout - b.vout);
    writeOutputsHead(w, outs.length);
    for (let k = 0; k < outs.length; k++) {
      if (k > 0 && outs[k].vout === outs[k - 1].vout) throw corrupt(`undo puts back output ${txNum}:${outs[k].vout}, which is unspent`);
      writeOutput(w, k === 0 ? -1 : outs[k - 1].vout, outs[k].vout, outs[k].value, outs[k].shs, outs[k].at, outs[k].own);
    }
    // the spends the revert takes back are exactly those by reverted transactions
    const sp = rec.spent;
    const kept = [];
    for (let i = 0; i < sp.count; i++) if (sp.txNums[i] < cutoff) kept.push(i);
    const undone = sp.vouts.filter((_, i) => sp.txNums[i] >= cutoff);
    if (undone.length !== back.length || back.some((o, i) => o.vout !== undone[i])) {
      throw corrupt(`TxNum ${txNum}: its spent outputs from TxNum ${cutoff} on are not the ones undo puts back`);
    }
    writeSpentHead(w, kept.length);
    let prev = -1;
    for (const i of kept) {
      writeSpent(w, prev, sp.vouts[i], txNum, sp.txNums[i], sp.vins[i]);
      prev = sp.vouts[i];
    }
    batch.put(layout.outputsKey(txNum), endOutputs(w));
  }
}

function accountKeys(ch) {
  const keys = new Array(ch.n);
  for (let j = 0; j < ch.n; j++) keys[j] = layout.accountKey(ch.shs, 32 * j);
  return keys;
}

/**
 * An earlier transaction's outputs row after a batch spent from it: the outputs `s` spends
 * leave the unspent part (each must be there) and join the spent part with their spender.
 * @param {import('../codec/io').Writer} w
 * @param {import('../codec/records').Outputs} rec
 * @param {import('../core/effect').Spends} s
 */
function writeOutputsSpent(w, rec, s) {
  const drop = new Set(s.vouts);
  let dropped = 0;
  for (let k = 0; k < rec.count; k++) if (drop.has(rec.vouts[k])) dropped++;
  if (dropped !== drop.size || drop.size !== s.vouts.length) {
    throw corrupt(`a block spends an output of TxNum ${rec.txNum} that the index does not hold unspent`);
  }
  writeOutputsHead(w, rec.count - dropped);
  let prev = -1;
  for (let k = 0; k < rec.count; k++) {
    if (drop.has(rec.vouts[k])) continue;
    writeOutput(w, prev, rec.vouts[k], rec.values[k], rec.scripthashes, 32 * k, rec.p2pk && rec.p2pk.get(k));
    prev = rec.vouts[k];
  }
  writeSpends(w, rec.txNum, rec.spent, s);
  return endOutputs(w);
}

/**
 * The spent part of an outputs row: the spends it had (`had`, or none) and those of `s` (or
 * none), in vout order.
 * @param {import('../codec/io').Writer} w
 * @param {number} txNum the row's
 * @param {{count: number, vouts: number[], txNums: number[], vins: number[]}|null} had
 * @param {import('../core/effect').Spends|null} s
 */
function writeSpends(w, txNum, had, s) {
  const h = had ? had.count : 0;
  const k = s ? s.vouts.length : 0;
  writeSpentHead(w, h + k);
  if (h + k === 0) return;
  // the row's spends are in vout order; the batch's, in spend order, are put in vout order
  // (usually few: an insertion sort into a scratch array, no allocation per row) and merged in
  const order = spendOrder(s, k);
  let prev = -1;
  let i = 0;
  let j = 0;
  while (i < h || j < k) {
    let vout;
    let by;
    let vin;
    if (j >= k || (i < h && had.vouts[i] < s.vouts[order[j]])) {
      vout = had.vouts[i];
      by = had.txNums[i];
      vin = had.vins[i++];
    } else {
      const x = order[j++];
      vout = s.vouts[x];
      by = s.by[x];
      vin = s.vins[x];
    }
    if (vout === prev) throw corrupt(`output ${txNum}:${prev} would be spent twice`);
    writeSpent(w, prev, vout, txNum, by, vin);
    prev = vout;
  }
}

/** Scratch for spendOrder: the indexes of a batch's spends of one transaction. */
let spendScratch = new Uint32Array(64);

/**
 * The indexes of `s`'s spends in vout order, in a scratch array valid until the next call.
 * @param {import('../core/effect').Spends|null} s
 * @param {number} k its spends
 */
function spendOrder(s, k) {
  if (spendScratch.length < k) spendScratch = new Uint32Array(2 * k);
  const order = spendScratch;
  if (k > 32) {
    // a transaction with many outputs spent in one batch: insertion would be quadratic
    for (let x = 0; x < k; x++) order[x] = x;
    order.subarray(0, k).sort((a, b) => s.vouts[a] - s.vouts[b]);
    return order;
  }
  for (let x = 0; x < k; x++) {
    const v = s.vouts[x];
    let y = x - 1;
    while (y >= 0 && s.vouts[order[y]] > v) {
      order[y + 1] = order[y];
      y--;
    }
    order[y + 1] = x;
  }
  return order;
}

/**
 * Reads and decodes outputs rows into `into` (TxNum -> Outputs, null when absent).
 * @param {object} snap
 * @param {number[]} txNums
 * @param {Map<number, object|null>} into
 */
async function readOutputs(snap, txNums, into) {
  const keys = txNums.map((t) => layout.outputsKey(t));
  const rows = await snap.getMany(keys);
  for (let k = 0; k < keys.length; k++) {
    into.set(txNums[k], rows[k] ? decodeRow(decodeOutputs, rows[k], keys[k], txNums[k]) : null);
  }
}

/**
 * The TxNums of txids: each txid's tx row (keyed by its first bytes) names candidates, and
 * the txids rows say which of them has the whole txid. When two TxNums have it (a txid
 * reused before BIP30, while both are indexed), the later one.
 *
 * With `indexed`, the caller knows every txid asked is in the index (the sync resolving the
 * inputs of valid blocks): a tx row names every TxNum whose txid has its prefix, so a row
 * naming one TxNum names that txid's, and the txids row is not read to check it. That read
 * is a random one per input, the most of any on a large index; a row naming several is
 * checked as always.
 * @param {object} snap
 * @param {Uint8Array|Uint8Array[]} bufs the txids (one buffer for all, or one per lookup)
 * @param {number[]} ats byte offset of each txid in its buffer
 * @param {{indexed?: boolean}} [opts]
 * @returns {Promise<Array<number|null>>} null where the index has no such txid
 */
async function findTxNums(snap, bufs, ats, { indexed = false } = {}) {
  const n = ats.length;
  const bufOf = Array.isArray(bufs) ? (i) => bufs[i] : () => bufs;
  const out = new Array(n).fill(null);
  const keys = new Array(n);
  for (let i = 0; i < n; i++) keys[i] = layout.txKey(bufOf(i), ats[i]);
  const rows = await snap.getMany(keys);
  // candidates grouped by txids row: flat (lookup, TxNum) pairs per row
  const rowOf = new Map();
  const rowKeys = [];
  const cands = [];
  for (let i = 0; i < n; i++) {
    if (!rows[i]) continue;
    const list = decodeRow(decodeTxNums, rows[i], keys[i]);
    if (indexed && list.length === 1) {
      out[i] = list[0];
      continue;
    }
    for (const t of list) {
      const row = t - (t % TXIDS_PER_ROW);
      let k = rowOf.get(row);
      if (k === undefined) {
        k = rowKeys.length;
        rowOf.set(row, k);
        rowKeys.push(layout.txidsKey(row));
        cands.push([]);
      }
      cands[k].push(i, t);
    }
  }
  await eachValue(snap, rowKeys, (k, value) => {
    const count = value ? decodeRow(txidsCount, value, rowKeys[k]) : 0;
    const c = cands[k];
    for (let m = 0; m < c.length; m += 2) {
      const i = c[m];
      const t = c[m + 1];
      const at = TXIDS_AT + 32 * (t % TXIDS_PER_ROW);
      if (t % TXIDS_PER_ROW < count && sameTxid(value, at, bufOf(i), ats[i]) && (out[i] === null || t > out[i])) out[i] = t;
    }
  });
  return out;
}

function sameTxid(a, i, b, j) {
  for (let k = 0; k < 32; k++) if (a[i + k] !== b[j + k]) return false;
  return true;
}

/**
 * Changes to tx rows, gathered by row and written after one read of the rows touched: a tx
 * row lists every TxNum whose txid shares its prefix, so adding one is a read-modify-write.
 */
class TxRows {
  constructor() {
    // prefix as a number -> {key, add, remove}, each list null until it has a TxNum: most rows
    // get one new TxNum and nothing else
    this.rows = new Map();
  }

  /** @private */
  at(txids, at) {
    const p = ((txids[at] << 24) >>> 0) + (txids[at + 1] << 16) + (txids[at + 2] << 8) + txids[at + 3];
    let r = this.rows.get(p);
    if (!r) this.rows.set(p, (r = { key: layout.txKey(txids, at), add: null, remove: null }));
    return r;
  }

  /** The txid at txids[at] gets TxNum txNum. */
  add(txids, at, txNum) {
    const r = this.at(txids, at);
    if (r.add) r.add.push(txNum);
    else r.add = [txNum];
  }

  /** The txid at txids[at] no longer has TxNum txNum. */
  remove(txids, at, txNum) {
    const r = this.at(txids, at);
    if (r.remove) r.remove.push(txNum);
    else r.remove = [txNum];
  }

  /**
   * @param {object} snap
   * @param {import('./kvstore').WriteBatch} batch
   * @param {import('../codec/io').Writer} w
   */
  async write(snap, batch, w) {
    const changes = [...this.rows.values()];
    const keys = changes.map((r) => r.key);
    const rows = await snap.getMany(keys);
    for (let k = 0; k < keys.length; k++) {
      const { add, remove } = changes[k];
      let list = rows[k] ? decodeRow(decodeTxNums, rows[k], keys[k]) : null;
      if (remove && list) {
        const gone = new Set(remove);
        list = list.filter((t) => !gone.has(t));
      }
      if (add) {
        if (list) for (const t of add) list.push(t);
        else list = add;
      }
      if (!list || list.length === 0) {
        if (rows[k]) batch.del(keys[k]);
        continue;
      }
      if (list.length > 1) list.sort((a, b) => a - b);
      for (let i = 1; i < list.length; i++) {
        if (list[i] === list[i - 1]) throw corrupt(`tx row ${keys[k].toString('hex')} would list TxNum ${list[i]} twice`);
      }
      batch.put(keys[k], encodeTxNums(w, list));
    }
  }
}

module.exports = { applyBlocks, revertBlocks, readOutputs, findTxNums };
