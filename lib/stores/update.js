'use strict';

const { StoreError } = require('../errors');
const { toDisplayHex, fromDisplayHex } = require('../chain/hash');
const layout = require('./layout');
const {
  TXIDS_PER_ROW, MAX_TXNUM, encodeTip, decodeBlock, encodeBlock, encodeTxids, txidsCount,
  encodeTxNums, decodeTxNums, writeOutputsHead, writeOutput, endOutputs, decodeOutputs, decodeUndo, encodeUndo,
} = require('../codec/records');
const { SPENT, FUNDED } = require('../codec/postings');
const { Changes } = require('./changes');
const { updateAccounts, decodeRow } = require('./accounts');
const { readTxids, eachValue } = require('./query');

const { TIP_KEY } = layout;

/**
 * Apply and revert, the twins: each gathers its whole effect per script hash (Changes) from
 * the blocks (apply) or from undo and the outputs rows (revert), reads the account rows once,
 * hands them to updateAccounts, and fills one write batch with the tip. The caller commits it.
 */

/**
 * Fills `batch` with everything applying `blocks` writes, tip included.
 * @param {import('./kvstore').KvStore} store for undoDepth and the prevout cache
 * @param {{snap: object, tip: object|null, tipRaw: Buffer|undefined, heights: import('./heights').HeightIndex}} v
 * @param {import('./abstract').BlockDelta[]} blocks already checked to extend v.tip
 * @param {import('./kvstore').WriteBatch} batch
 * @param {import('../codec/io').Writer} w
 */
async function applyBlocks(store, v, blocks, batch, w) {
  const { snap } = v;
  const first = blocks[0].firstTxNum;
  let T = 0;
  let O = 0;
  for (const b of blocks) {
    T += b.cols.txCount;
    O += b.cols.outStart[b.cols.txCount];
  }
  const end = first + T;
  if (end - 1 > MAX_TXNUM) throw new StoreError('ERR_TXNUM_RANGE', `TxNum ${end - 1} does not fit the 40-bit keys`);
  const topHeight = blocks[blocks.length - 1].height;

  // the outputs rows the batch spends from, and the TxNum of any txid a coinbase reuses (BIP30)
  const { sources, reused } = await readSources(store, v, blocks, first);

  // gather, per script hash
  const ch = new Changes(Math.max(1024, O));
  const outBase = new Uint32Array(T + 1); // batch tx -> index of its first output in the batch
  const txBlock = new Uint32Array(T);
  const addAt = new Int32Array(O).fill(-1); // batch output -> its UTXO add, to cancel it
  const gone = new Uint8Array(O); // batch outputs spent (or replaced) within the batch
  const replaced = new Uint8Array(T); // batch txs whose txid a later coinbase of the batch reused
  const coinbases = new Map(); // latin1 txid -> batch tx, for BIP30 within the batch
  const undoExtra = new Array(blocks.length).fill(null);
  let tx = 0;
  let out = 0;
  for (let b = 0; b < blocks.length; b++) {
    const { height, cols, spent, firstTxNum } = blocks[b];
    const { inStart, outStart, idType, values, prevouts } = cols;
    for (let t = 0; t < cols.txCount; t++, tx++) {
      const txNum = firstTxNum + t;
      outBase[tx] = out + outStart[t];
      txBlock[tx] = b;
      if (t === 0 && height !== 0) {
        const extra = reuseTxid(blocks, b, tx, ch, sources, reused, coinbases, { outBase, txBlock, addAt, gone, replaced });
        if (extra) undoExtra[b] = extra;
      }
      for (let i = inStart[t]; i < inStart[t + 1]; i++) {
        const prev = spent.txNums[i];
        const vout = prevouts.readUInt32LE(36 * i + 32);
        const j = ch.touch(spent.scripthashes, 32 * i, height);
        ch.sent[j] += spent.values[i];
        ch.spent[j]++;
        ch.entry(j, txNum, SPENT);
        if (prev >= first) {
          const o = outBase[prev - first] + vout;
          gone[o] = 1;
          if (addAt[o] >= 0) ch.cancelUtxo(addAt[o]);
        } else {
          ch.delUtxo(j, prev, vout);
          sources.get(prev).spent.push(vout);
        }
      }
      if (height === 0) continue; // the genesis outputs are not spendable: filed nowhere
      for (let o = outStart[t]; o < outStart[t + 1]; o++) {
        if (idType[o] === 0) continue;
        const j = ch.touch(cols.scripthashes, 32 * o, height);
        ch.received[j] += values[o];
        ch.funded[j]++;
        ch.entry(j, txNum, FUNDED);
        addAt[out + o] = ch.addUtxo(j, txNum, o - outStart[t], values[o]);
      }
    }
    out += outStart[cols.txCount];
  }
  outBase[T] = out;

  // tx rows: txid -> TxNum (txids a coinbase reused leave their earlier TxNum's row)
  const txRows = new TxRows();
  tx = 0;
  for (const { cols, firstTxNum } of blocks) {
    for (let t = 0; t < cols.txCount; t++, tx++) if (!replaced[tx]) txRows.add(cols.txids, 32 * t, firstTxNum + t);
  }
  for (const [name, oldTxNum] of reused) txRows.remove(Buffer.from(name, 'latin1'), 0, oldTxNum);
  await txRows.write(snap, batch, w);

  // the surviving outputs of each new tx; the rows spent from
  tx = 0;
  for (let b = 0; b < blocks.length; b++) {
    const { height, cols, firstTxNum } = blocks[b];
    const { outStart, idType, values } = cols;
    for (let t = 0; t < cols.txCount; t++, tx++) {
      if (replaced[tx] || height === 0) continue;
      const base = outBase[tx] - outStart[t];
      let left = 0;
      for (let o = outStart[t]; o < outStart[t + 1]; o++) if (idType[o] !== 0 && !gone[base + o]) left++;
      if (left === 0) continue;
      writeOutputsHead(w, left);
      let prev = -1;
      for (let o = outStart[t]; o < outStart[t + 1]; o++) {
        if (idType[o] === 0 || gone[base + o]) continue;
        writeOutput(w, prev, o - outStart[t], values[o], cols.scripthashes, 32 * o);
        prev = o - outStart[t];
      }
      batch.put(layout.outputsKey(firstTxNum + t), endOutputs(w));
    }
  }
  for (const [txNum, src] of sources) {
    if (src.spent.length === 0 && (!src.replaced || !src.rec)) continue;
    if (!src.rec) throw new StoreError('ERR_CORRUPT', `a block spends from TxNum ${txNum}, which has no unspent outputs`);
    const row = writeOutputsWithout(w, src.rec, src.spent, src.replaced);
    if (row) batch.put(layout.outputsKey(txNum), row);
    else batch.del(layout.outputsKey(txNum));
  }

  // txids rows
  const firstRowStart = first - (first % TXIDS_PER_ROW);
  let prior = null;
  if (first % TXIDS_PER_ROW !== 0) {
    const key = layout.txidsKey(firstRowStart);
    prior = await snap.get(key);
    if (!prior || decodeRow(txidsCount, prior, key) !== first % TXIDS_PER_ROW) {
      throw new StoreError('ERR_CORRUPT', `the txids row of TxNum ${firstRowStart} does not end at the tip`);
    }
  }
  const txids = Buffer.allocUnsafe(32 * T);
  let pos = 0;
  for (const b of blocks) pos += b.cols.txids.copy(txids, pos, 0, 32 * b.cols.txCount);
  for (let row = firstRowStart; row < end; row += TXIDS_PER_ROW) {
    const from = Math.max(row, first);
    const to = Math.min(row + TXIDS_PER_ROW, end);
    batch.put(layout.txidsKey(row), encodeTxids(w, row === firstRowStart ? prior : null, txids, 32 * (from - first), to - from));
  }

  // blocks, undo (kept for the last undoDepth blocks: heights > tip - undoDepth), tip
  const oldTop = v.tip ? v.tip.height : -1;
  for (let b = 0; b < blocks.length; b++) {
    const { height, cols, firstTxNum, spent } = blocks[b];
    batch.put(layout.blockKey(height), encodeBlock(w, fromDisplayHex(cols.hash), firstTxNum, cols.txCount, cols.time));
    if (height > topHeight - store.undoDepth) batch.put(layout.undoKey(height), encodeBlockUndo(w, cols, spent, undoExtra[b]));
  }
  for (let h = Math.max(0, oldTop - store.undoDepth + 1); h <= Math.min(oldTop, topHeight - store.undoDepth); h++) {
    batch.del(layout.undoKey(h));
  }
  const last = blocks[blocks.length - 1];
  batch.put(TIP_KEY, encodeTip(w, { height: last.height, hash: fromDisplayHex(last.cols.hash), nextTxNum: end }));

  // accounts
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
    if (!row) throw undoMissing(store, height, height + 1 + k, top);
    return decodeRow(decodeUndo, row, undoKeys[k]);
  });
  const cutoff = heights.firstTxNum(height + 1);
  const end = tip.nextTxNum;

  // txids of the reverted transactions: their tx rows go
  const txids = await readTxids(snap, cutoff, end);

  // txids a reverted coinbase had reused map to their earlier TxNum again (BIP30)
  const reborn = new Map(); // latin1 txid -> old TxNum
  for (let k = 0; k < undos.length; k++) {
    for (const d of undos[k].dups) {
      const at = 32 * (heights.firstTxNum(height + 1 + k) + d.position - cutoff);
      if (d.oldTxNum < cutoff) reborn.set(txids.latin1Slice(at, at + 32), d.oldTxNum);
    }
  }
  const txRows = new TxRows();
  for (let t = 0; t < end - cutoff; t++) {
    txRows.remove(txids, 32 * t, cutoff + t);
    const old = reborn.get(txids.latin1Slice(32 * t, 32 * t + 32));
    if (old !== undefined) txRows.add(txids, 32 * t, old);
  }
  await txRows.write(snap, batch, w);

  // gather, per script hash: outputs the reverted txs created (still unspent, or spent
  // within the reverted blocks), and outputs they spent
  const ch = new Changes();
  for await (const { key, value } of snap.range({ gte: layout.outputsKey(cutoff), lt: layout.outputsKey(end) })) {
    const t = layout.readU40(key, 1);
    const rec = decodeRow(decodeOutputs, value, key, t);
    const h = heights.heightOf(t);
    for (let o = 0; o < rec.count; o++) {
      const j = ch.touch(rec.scripthashes, 32 * o, h);
      ch.received[j] -= rec.values[o];
      ch.funded[j]--;
      ch.delUtxo(j, t, rec.vouts[o]);
    }
    batch.del(key);
  }
  const restore = new Map(); // TxNum below cutoff -> outputs its row gets back
  for (let k = 0; k < undos.length; k++) {
    const u = undos[k];
    for (let i = 0; i < u.spentCount; i++) {
      const prev = u.txNums[i];
      const j = ch.touch(u.scripthashes, 32 * i, height + 1 + k);
      ch.sent[j] -= u.values[i];
      ch.spent[j]--;
      if (prev >= cutoff) {
        ch.received[j] -= u.values[i]; // created and spent within the reverted blocks
        ch.funded[j]--;
      } else {
        ch.addUtxo(j, prev, u.vouts[i], u.values[i]);
        let list = restore.get(prev);
        if (!list) restore.set(prev, (list = []));
        list.push({ vout: u.vouts[i], value: u.values[i], shs: u.scripthashes, at: 32 * i });
      }
    }
  }
  await restoreOutputs(snap, restore, batch, w);

  // txids rows
  const firstRowStart = cutoff - (cutoff % TXIDS_PER_ROW);
  for (let row = firstRowStart; row < end; row += TXIDS_PER_ROW) {
    if (row === firstRowStart && cutoff % TXIDS_PER_ROW !== 0) {
      batch.put(layout.txidsKey(row), encodeTxids(w, null, txids.priorRow, 1, cutoff % TXIDS_PER_ROW));
    } else {
      batch.del(layout.txidsKey(row));
    }
  }

  // blocks, undo, tip
  for (let h = height + 1; h <= top; h++) {
    batch.del(layout.blockKey(h));
    batch.del(layout.undoKey(h));
  }
  if (height >= 0) {
    const key = layout.blockKey(height);
    const row = await snap.get(key);
    if (!row) throw new StoreError('ERR_CORRUPT', `the index has no block row for height ${height}`);
    batch.put(TIP_KEY, encodeTip(w, { height, hash: decodeRow(decodeBlock, row, key).hash, nextTxNum: cutoff }));
  } else {
    batch.del(TIP_KEY);
  }

  // accounts
  const aKeys = accountKeys(ch);
  const aRows = await snap.getMany(aKeys);
  await updateAccounts({ reader: snap, writer: w, batch, heights }, ch, aRows, aKeys, cutoff);
}

/**
 * For apply: the outputs rows of every tx the batch spends from outside the batch, and the
 * TxNum of every coinbase txid the index already has (BIP30) with its outputs row.
 */
async function readSources(store, v, blocks, first) {
  const cache = store.prevoutRecords(v.tipRaw);
  const sources = new Map(); // TxNum -> {rec, spent: vouts, replaced}
  const want = [];
  const add = (txNum) => {
    if (sources.has(txNum)) return;
    const rec = cache.outputs.get(txNum);
    sources.set(txNum, { rec: rec || null, spent: [], replaced: false });
    if (rec === undefined) want.push(txNum);
  };
  const cbTxNums = await findTxNums(v.snap, blocks.map((b) => b.cols.txids), blocks.map(() => 0));
  const reused = new Map(); // latin1 coinbase txid -> TxNum it already has
  for (let b = 0; b < blocks.length; b++) {
    if (cbTxNums[b] === null) continue;
    reused.set(blocks[b].cols.txids.latin1Slice(0, 32), cbTxNums[b]);
    add(cbTxNums[b]);
  }
  for (const { cols, spent } of blocks) {
    const I = cols.inStart[cols.txCount];
    for (let i = 0; i < I; i++) if (spent.txNums[i] < first) add(spent.txNums[i]);
  }
  const got = new Map();
  await readOutputs(v.snap, want, got);
  for (const txNum of want) sources.get(txNum).rec = got.get(txNum);
  return { sources, reused };
}

/**
 * BIP30: a coinbase whose txid an earlier transaction already has (mainnet 91842 and
 * 91880). As in Bitcoin Core, the new tx takes the txid and the earlier outputs still
 * unspent leave the UTXO set: here they count as spent by the new coinbase, and the txid
 * maps to the new TxNum. Undo records the earlier TxNum and the outputs, so revert restores both.
 * @returns {{spent: object[], dups: object[]}|null} extra undo for the block
 */
function reuseTxid(blocks, b, tx, ch, sources, reused, coinbases, arrays) {
  const { height, cols, firstTxNum } = blocks[b];
  const name = cols.txids.latin1Slice(0, 32);
  const earlier = coinbases.get(name);
  coinbases.set(name, tx);
  const extra = { spent: [], dups: [] };
  if (earlier !== undefined) {
    const e = blocks[arrays.txBlock[earlier]];
    const ec = e.cols;
    for (let o = ec.outStart[0]; o < ec.outStart[1]; o++) {
      const g = arrays.outBase[earlier] + o;
      if (ec.idType[o] === 0 || arrays.gone[g] || e.height === 0) continue;
      arrays.gone[g] = 1;
      ch.cancelUtxo(arrays.addAt[g]);
      const j = ch.touch(ec.scripthashes, 32 * o, height);
      ch.sent[j] += ec.values[o];
      ch.spent[j]++;
      ch.entry(j, firstTxNum, SPENT);
      extra.spent.push({ txNum: e.firstTxNum, vout: o, value: ec.values[o], shs: ec.scripthashes, at: 32 * o });
    }
    arrays.replaced[earlier] = 1;
    extra.dups.push({ position: 0, oldTxNum: e.firstTxNum });
    return extra;
  }
  const oldTxNum = reused.get(name);
  if (oldTxNum === undefined) return null;
  const src = sources.get(oldTxNum);
  const rec = src.rec;
  for (let k = 0; rec && k < rec.count; k++) {
    if (src.spent.includes(rec.vouts[k])) continue;
    const j = ch.touch(rec.scripthashes, 32 * k, height);
    ch.sent[j] += rec.values[k];
    ch.spent[j]++;
    ch.entry(j, firstTxNum, SPENT);
    ch.delUtxo(j, oldTxNum, rec.vouts[k]);
    extra.spent.push({ txNum: oldTxNum, vout: rec.vouts[k], value: rec.values[k], shs: rec.scripthashes, at: 32 * k });
  }
  src.replaced = true;
  extra.dups.push({ position: 0, oldTxNum });
  return extra;
}

/**
 * Puts outputs back into the outputs rows of transactions below the revert point.
 */
async function restoreOutputs(snap, restore, batch, w) {
  const txNums = [...restore.keys()];
  const current = new Map();
  await readOutputs(snap, txNums, current);
  for (const txNum of txNums) {
    const rec = current.get(txNum);
    const outs = [];
    for (let k = 0; rec && k < rec.count; k++) outs.push({ vout: rec.vouts[k], value: rec.values[k], shs: rec.scripthashes, at: 32 * k });
    for (const o of restore.get(txNum)) outs.push(o);
    outs.sort((a, b) => a.vout - b.vout);
    writeOutputsHead(w, outs.length);
    for (let k = 0; k < outs.length; k++) {
      if (k > 0 && outs[k].vout === outs[k - 1].vout) {
        throw new StoreError('ERR_CORRUPT', `undo puts back output ${txNum}:${outs[k].vout}, which is unspent`);
      }
      writeOutput(w, k === 0 ? -1 : outs[k - 1].vout, outs[k].vout, outs[k].value, outs[k].shs, outs[k].at);
    }
    batch.put(layout.outputsKey(txNum), endOutputs(w));
  }
}

function checkExtends(tip, blocks, where) {
  let height = tip ? tip.height + 1 : 0;
  let prev = tip ? toDisplayHex(tip.hash) : null;
  let txNum = tip ? tip.nextTxNum : 0;
  for (const b of blocks) {
    const why = b.height !== height ? `its height is ${b.height}, the next is ${height}`
      : prev !== null && b.cols.prev !== prev ? `its parent is ${b.cols.prev}, the tip is ${prev}`
        : b.firstTxNum !== txNum ? `its first TxNum is ${b.firstTxNum}, the next is ${txNum}` : null;
    if (why) {
      throw new StoreError('ERR_NOT_EXTENDING', `block ${b.cols.hash} does not extend ${where}: ${why}; nothing was written`,
        { height: b.height, hash: b.cols.hash });
    }
    height++;
    prev = b.cols.hash;
    txNum += b.cols.txCount;
  }
}

function undoMissing(store, height, missing, top) {
  return new StoreError('ERR_UNDO_MISSING', `cannot revert ${store.describe()} to height ${height}: undo data for ` +
    `block ${missing} is no longer kept (undo is kept for the last ${store.undoDepth} blocks below the tip, ${top}). ` +
    'Re-sync into a new --datadir, or sync with a larger --undo-depth to follow reorgs this deep',
  { height, missing, tip: top, undoDepth: store.undoDepth });
}

function accountKeys(ch) {
  const keys = new Array(ch.n);
  for (let j = 0; j < ch.n; j++) keys[j] = layout.accountKey(ch.shs, 32 * j);
  return keys;
}

/**
 * An outputs row without the spent vouts (each must be present), or null when none is left.
 * `replaced`: the txid was reused (BIP30) and every output left goes too.
 */
function writeOutputsWithout(w, rec, spent, replaced) {
  const drop = new Set(spent);
  let dropped = 0;
  for (let k = 0; k < rec.count; k++) if (drop.has(rec.vouts[k])) dropped++;
  if (dropped !== drop.size || drop.size !== spent.length) {
    throw new StoreError('ERR_CORRUPT', `a block spends an output of TxNum ${rec.txNum} that the index does not hold unspent`);
  }
  const left = replaced ? 0 : rec.count - dropped;
  if (left === 0) return null;
  writeOutputsHead(w, left);
  let prev = -1;
  for (let k = 0; k < rec.count; k++) {
    if (drop.has(rec.vouts[k])) continue;
    writeOutput(w, prev, rec.vouts[k], rec.values[k], rec.scripthashes, 32 * k);
    prev = rec.vouts[k];
  }
  return endOutputs(w);
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

function encodeBlockUndo(w, cols, spent, extra) {
  const I = cols.inStart[cols.txCount];
  const x = extra ? extra.spent.length : 0;
  const n = x + I;
  const txNums = new Float64Array(n);
  const vouts = new Float64Array(n);
  const values = new Float64Array(n);
  const shs = Buffer.allocUnsafe(32 * n);
  for (let k = 0; k < x; k++) {
    const e = extra.spent[k];
    txNums[k] = e.txNum;
    vouts[k] = e.vout;
    values[k] = e.value;
    e.shs.copy(shs, 32 * k, e.at, e.at + 32);
  }
  for (let i = 0; i < I; i++) {
    txNums[x + i] = spent.txNums[i];
    vouts[x + i] = cols.prevouts.readUInt32LE(36 * i + 32);
    values[x + i] = spent.values[i];
  }
  spent.scripthashes.copy(shs, 32 * x, 0, 32 * I);
  return encodeUndo(w, n, txNums, vouts, values, shs, 0, extra ? extra.dups : []);
}

/**
 * The TxNums of txids: each txid's tx row (keyed by its first bytes) names candidates, and
 * the txids rows say which of them has the whole txid. When two TxNums have it (a txid
 * reused before BIP30, while both are indexed), the later one.
 * @param {object} snap
 * @param {Uint8Array|Uint8Array[]} bufs the txids (one buffer for all, or one per lookup)
 * @param {number[]} ats byte offset of each txid in its buffer
 * @returns {Promise<Array<number|null>>} null where the index has no such txid
 */
async function findTxNums(snap, bufs, ats) {
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
    for (const t of decodeRow(decodeTxNums, rows[i], keys[i])) {
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
      const at = 1 + 32 * (t % TXIDS_PER_ROW);
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
    this.rows = new Map(); // prefix as a number -> {key, add: [], remove: []}
  }

  /** @private */
  at(txids, at) {
    const p = ((txids[at] << 24) >>> 0) + (txids[at + 1] << 16) + (txids[at + 2] << 8) + txids[at + 3];
    let r = this.rows.get(p);
    if (!r) this.rows.set(p, (r = { key: layout.txKey(txids, at), add: [], remove: [] }));
    return r;
  }

  /** The txid at txids[at] gets TxNum txNum. */
  add(txids, at, txNum) {
    this.at(txids, at).add.push(txNum);
  }

  /** The txid at txids[at] no longer has TxNum txNum. */
  remove(txids, at, txNum) {
    this.at(txids, at).remove.push(txNum);
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
      let list = rows[k] ? decodeRow(decodeTxNums, rows[k], keys[k]) : [];
      if (remove.length) {
        const gone = new Set(remove);
        list = list.filter((t) => !gone.has(t));
      }
      for (const t of add) list.push(t);
      if (list.length === 0) {
        if (rows[k]) batch.del(keys[k]);
        continue;
      }
      if (list.length > 1) list.sort((a, b) => a - b);
      for (let i = 1; i < list.length; i++) {
        if (list[i] === list[i - 1]) throw new StoreError('ERR_CORRUPT', `tx row ${keys[k].toString('hex')} would list TxNum ${list[i]} twice`);
      }
      batch.put(keys[k], encodeTxNums(w, list));
    }
  }
}

module.exports = { applyBlocks, revertBlocks, checkExtends, readOutputs, findTxNums };
