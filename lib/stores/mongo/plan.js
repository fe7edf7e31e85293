'use strict';

const D = require('./documents');
const { PAGE_ENTRIES, sealedCount, utxosInline, countersHold } = require('../../core/rules');
const { batchTx, touchedBy } = require('../../core/effect');
const { addParts, cutParts } = require('../../core/p2pk');
const { corrupt } = require('../../core/checks');
const { encodeBody } = require('../../codec/records');
const { Writer } = require('../../codec/io');

/**
 * The documents an apply or a revert writes, from the index core's effect (lib/core/effect.js)
 * and the committed documents it touches. Only persistence is decided here: which documents,
 * with which _ids; what a block does to an address is the core's answer. Every document is a
 * pure function of its inputs, so a write cut off part-way converges when it is sent again.
 */

/** Undo entries per undo document, so that no block's undo can outgrow MongoDB's 16 MB. */
const UNDO_ENTRIES_PER_PART = 20000;

/**
 * @typedef {object} ApplyPlan
 * @property {object[]} blocks       block documents
 * @property {object[]} bodies       the blocks' bytes (--txstore)
 * @property {object[]} txs          tx documents to insert
 * @property {object[]} txReplaces   tx documents of coinbases that take an earlier txid (BIP30): replaced whole
 * @property {object[]} txDisplaced  the transactions they replace, under their new _ids
 * @property {object[]} pages        history pages sealed by the batch
 * @property {object[]} utxoInserts  outputs created and still unspent at the batch's end
 * @property {string[]} utxoDeletes  outpoints of earlier batches spent by this one
 * @property {object[]} utxoReplaces outputs whose outpoint an output of an earlier batch had (BIP30): inserted
 *                                   after the deletes
 * @property {object[]} spends       who spent each output the batch spends
 * @property {Map<string, D.Account>} accounts  every touched account as of the batch's end
 * @property {string[]} needRows     accounts whose inline UTXO list needs their `utxos` rows (see finishUtxos)
 * @property {object[]} undo         undo documents, one or more per block
 * @property {{height: number, hash: string, nextTxNum: number}} tip
 */

/**
 * The documents of an apply.
 * @param {import('../../core/effect').ApplyEffect} e
 * @param {Map<string, D.Account>} pre  committed accounts of the touched script hashes (absent: never seen)
 * @param {Map<string, object>} reusedDocs committed txs documents of the batch's coinbase txids (BIP30), by txid
 * @param {number} undoDepth blocks whose touched script hashes undo keeps (the ones a revert can reach)
 * @param {boolean} [keepsTransactions] the index keeps its blocks' bytes (--txstore)
 * @returns {ApplyPlan}
 */
function planApply(e, pre, reusedDocs, undoDepth, keepsTransactions = false) {
  const plan = {
    blocks: [], bodies: [], txs: [], txReplaces: [], txDisplaced: [], pages: [], utxoInserts: [], utxoDeletes: [], utxoReplaces: [], spends: [],
    accounts: new Map(), needRows: [], undo: [], tip: null,
  };
  const { blocks } = e;

  // blocks and txs; BIP30's displaced documents
  const txDocs = new Map(); // txid -> the batch's document for it (a later coinbase may take it)
  const oldDocs = blocks.map(() => null); // per block: the txs document its coinbase displaced
  for (let b = 0; b < blocks.length; b++) {
    const { height, firstTxNum, cols } = blocks[b];
    plan.blocks.push(D.blockDoc(cols, height, firstTxNum, blocks[b].locator));
    if (keepsTransactions) {
      if (!blocks[b].raw) throw corrupt(`block ${height} came without its bytes, which this index keeps (--txstore)`);
      plan.bodies.push(D.bodyDoc(height, encodeBody(new Writer(blocks[b].raw.length + 64), blocks[b].raw)));
    }
    for (let t = 0; t < cols.txCount; t++) {
      const txid = D.hashHex(cols.txids.subarray(32 * t, 32 * t + 32));
      const doc = D.txDoc(txid, firstTxNum + t, height, t, cols.txOffsets[t], cols.txOffsets[t + 1] - cols.txOffsets[t]);
      const old = e.undo[b].dups.length && t === 0 ? txDocs.get(txid) || reusedDocs.get(txid) : null;
      if (old) {
        doc.prev = D.prevOf(old);
        plan.txDisplaced.push(D.displacedTxDoc(old));
        oldDocs[b] = D.canonicalTxDoc(old);
      }
      txDocs.set(txid, doc);
    }
  }
  for (const d of txDocs.values()) (d.prev ? plan.txReplaces : plan.txs).push(d);

  // outputs: earlier ones spent, new ones left unspent (an outpoint in both: BIP30); a P2PK
  // output's second document goes and comes with its first
  const deleted = new Set();
  for (const u of e.undo) {
    for (let i = 0; i < u.count; i++) {
      if (u.txNums[i] >= e.first) continue;
      for (const id of D.utxoIds(D.outpointId(D.hashHex(u.txidOf(i)), u.vouts[i]), u.p2pk.get(i))) {
        plan.utxoDeletes.push(id);
        deleted.add(id);
      }
    }
  }
  const cr = e.created;
  for (let k = 0; k < cr.n; k++) {
    const sh = blocks[cr.block[k]].cols.scripthashes.subarray(cr.at[k], cr.at[k] + 32);
    const out = newOut(e, cr.txNums[k], cr.vouts[k], cr.values[k], D.hashHex(sh));
    if (cr.p2pk.has(k)) out.p2pk = D.hashHex(cr.p2pk.get(k));
    for (const doc of D.utxoDocs(out)) (deleted.has(doc._id) ? plan.utxoReplaces : plan.utxoInserts).push(doc);
  }

  // who spent what
  for (const [fund, sp] of e.spends) {
    sp.vouts.forEach((vout, i) => {
      const { height, txid: by } = batchTx(e, sp.by[i]);
      plan.spends.push(D.spendDoc(D.spendId(fund, vout), D.hashHex(by), sp.by[i], sp.vins[i], height));
    });
  }

  // accounts and the pages they seal
  const ch = e.changes;
  const ent = ch.entries;
  for (let j = 0; j < ch.n; j++) {
    const sh = D.hashHex(ch.shs.subarray(32 * j, 32 * j + 32));
    const p = pre.get(sh);
    const a = p ? { ...p, tail: [...p.tail], utxos: p.utxos && [...p.utxos] } : newAccount(ch.firstHeight[j]);
    a.received += ch.received[j];
    a.sent += ch.sent[j];
    a.fundedCount += ch.funded[j];
    a.spentCount += ch.spent[j];
    if (!countersHold(a)) throw corrupt(`account ${sh}: its spends would exceed its receipts`);
    const oldSealed = sealedCount(a.txCount);
    for (let i = ch.entryHead[j]; i >= 0; i = ent.next[i]) {
      const txNum = Math.floor(ent.num[i] / 4);
      const f = ent.num[i] % 4;
      const { height, txid } = batchTx(e, txNum);
      a.tail.push({ txNum, txid: D.hashHex(txid), height, funded: (f & 1) !== 0, spent: (f & 2) !== 0 });
    }
    a.txCount += ch.entryCount[j];
    a.lastHeight = ch.lastHeight[j];
    // addParts changes the parts it is given: the account read before (pre) keeps its own, so
    // they are copied, and only for a batch that adds to them
    const added = ch.parts.get(j);
    if (added) a.parts = addParts(a.parts && { p2pk: [...a.parts.p2pk], both: [...a.parts.both] }, added, ch.keyBytes);
    const newSealed = sealedCount(a.txCount);
    for (let s = oldSealed; s < newSealed; s += PAGE_ENTRIES) {
      const from = s - oldSealed;
      plan.pages.push(D.pageDoc(sh, s / PAGE_ENTRIES, a.tail.slice(from, from + PAGE_ENTRIES), a.tail[from + PAGE_ENTRIES].txNum));
    }
    a.tail = a.tail.slice(newSealed - oldSealed);
    plan.accounts.set(sh, a);
  }
  for (let j = 0; j < ch.n; j++) {
    const sh = D.hashHex(ch.shs.subarray(32 * j, 32 * j + 32));
    const a = plan.accounts.get(sh);
    if (!utxosInline(a.fundedCount - a.spentCount)) a.utxos = null;
    else if (a.utxos === null && pre.has(sh)) plan.needRows.push(sh);
    else a.utxos = inlineUtxos(a.utxos || [], e.changes, j, (txNum, vout, value) => newOut(e, txNum, vout, value, sh));
  }

  // undo, one or more documents per block
  for (let b = 0; b < blocks.length; b++) {
    const { height, firstTxNum, cols } = blocks[b];
    const u = e.undo[b];
    const spent = [];
    for (let i = 0; i < u.count; i++) {
      const own = u.p2pk.get(i);
      spent.push(D.utxoDoc({
        id: D.outpointId(D.hashHex(u.txidOf(i)), u.vouts[i]),
        sh: D.hashHex(u.shs.subarray(32 * i, 32 * i + 32)),
        vout: u.vouts[i],
        value: u.values[i],
        height: u.heights[i],
        txNum: u.txNums[i],
        p2pk: own ? D.hashHex(own) : null,
      }));
    }
    const dups = u.dups.map((d) => ({ position: d.position, oldTxNum: D.long(d.oldTxNum), old: oldDocs[b] }));
    const txs = [];
    for (let t = 0, pk = 0; t < cols.txCount; t++) {
      // each tx's indexed vouts, and (`p2pk`) which of them are P2PK outputs
      const outs = [];
      const p2pk = [];
      for (let o = cols.outStart[t]; o < cols.outStart[t + 1]; o++) {
        const isP2pk = pk < cols.p2pkOuts.length && cols.p2pkOuts[pk] === o;
        if (isP2pk) pk++;
        if (height === 0 || cols.idType[o] === 0) continue;
        outs.push(o - cols.outStart[t]);
        if (isP2pk) p2pk.push(o - cols.outStart[t]);
      }
      txs.push(p2pk.length ? { txid: D.hashHex(cols.txids.subarray(32 * t, 32 * t + 32)), outs, p2pk } : { txid: D.hashHex(cols.txids.subarray(32 * t, 32 * t + 32)), outs });
    }
    const t = height > e.blocks[e.blocks.length - 1].height - undoDepth ? touchedBy(blocks[b], u) : null;
    const touched = t ? { both: shHexes(t.both), addressOnly: shHexes(t.addressOnly) } : { both: [], addressOnly: [] };
    plan.undo.push(...undoParts(height, cols.hash, firstTxNum, spent, dups, txs, touched));
  }
  plan.tip = { height: blocks[blocks.length - 1].height, hash: blocks[blocks.length - 1].cols.hash, nextTxNum: e.end };
  return plan;
}

/**
 * Completes the inline UTXO lists a plan could not finish without the accounts' rows: those
 * that kept their outputs in `utxos` and keep them inline again.
 * @param {ApplyPlan} plan
 * @param {import('../../core/effect').ApplyEffect} e
 * @param {Map<string, D.Out[]>} rows the committed outputs of every account in plan.needRows
 */
function finishUtxos(plan, e, rows) {
  const need = new Set(plan.needRows);
  const ch = e.changes;
  for (let j = 0; j < ch.n; j++) {
    const sh = D.hashHex(ch.shs.subarray(32 * j, 32 * j + 32));
    if (!need.has(sh)) continue;
    plan.accounts.get(sh).utxos = inlineUtxos(rows.get(sh) || [], ch, j, (txNum, vout, value) => newOut(e, txNum, vout, value, sh));
  }
}

/**
 * An account's unspent outputs after a change: `base` less the change's deletions, plus its
 * additions (made into outputs by `outOf`), in (TxNum, vout) order.
 * @param {D.Out[]} base
 * @param {import('../../core/changes').Changes} ch
 * @param {number} j
 * @param {(txNum: number, vout: number, value: number) => D.Out} outOf
 */
function inlineUtxos(base, ch, j, outOf) {
  const gone = new Set();
  for (let i = ch.delHead[j]; i >= 0; i = ch.dels.next[i]) gone.add(`${ch.dels.num[i]}:${ch.dels.num2[i]}`);
  const list = base.filter((o) => !gone.delete(`${o.txNum}:${o.vout}`));
  if (gone.size) throw corrupt(`an account's change spends ${[...gone][0]}, which it does not hold unspent`);
  for (let i = ch.addHead[j]; i >= 0; i = ch.adds.next[i]) {
    if (!ch.adds.dead[i]) list.push(outOf(ch.adds.num[i], ch.adds.num2[i], ch.adds.num3[i]));
  }
  return list.sort((x, y) => x.txNum - y.txNum || x.vout - y.vout);
}

/** An output of a transaction of the batch. */
function newOut(e, txNum, vout, value, sh) {
  const { height, txid } = batchTx(e, txNum);
  const hex = D.hashHex(txid);
  return { id: D.outpointId(hex, vout), sh, txid: hex, vout, value, height, txNum };
}

function newAccount(height) {
  return { received: 0, sent: 0, txCount: 0, fundedCount: 0, spentCount: 0, firstHeight: height, lastHeight: height, tail: [], utxos: [], parts: null };
}

/**
 * Splits one block's undo into documents of at most UNDO_ENTRIES_PER_PART entries each; every
 * part says how many parts the block has, so a reader can tell a complete undo from a torn one.
 */
function undoParts(height, hash, firstTxNum, spent, dups, txs, touched) {
  const parts = [];
  let cur = null;
  let size = 0;
  const part = () => ({ spent: [], dups: [], txs: [], touched: [], touchedAddress: [] });
  const room = (n) => {
    if (cur === null || size + n > UNDO_ENTRIES_PER_PART) {
      cur = part();
      parts.push(cur);
      size = 0;
    }
    size += n;
    return cur;
  };
  for (const s of spent) room(1).spent.push(s);
  for (const d of dups) room(1).dups.push(d);
  for (const tx of txs) room(1 + tx.outs.length).txs.push(tx);
  for (const sh of touched.both) room(1).touched.push(sh);
  for (const sh of touched.addressOnly) room(1).touchedAddress.push(sh);
  if (parts.length === 0) parts.push(part());
  return parts.map((p, i) => ({
    _id: D.undoId(height, i), height, part: i, parts: parts.length, hash, firstTxNum: D.long(firstTxNum), ...p,
  }));
}

/** Script hashes (32 bytes each, internal order) as the documents write them. */
function shHexes(buf) {
  const out = new Array(buf.length / 32);
  for (let i = 0; i < out.length; i++) out[i] = D.hashHex(buf.subarray(32 * i, 32 * i + 32));
  return out;
}

/**
 * The first height in (toHeight, tipHeight] whose undo is missing or torn, or null when complete.
 */
function firstMissingUndo(undoDocs, toHeight, tipHeight) {
  const parts = new Map();
  for (const u of undoDocs) {
    const p = parts.get(u.height) || { want: u.parts, have: new Set() };
    p.have.add(u.part);
    parts.set(u.height, p);
  }
  for (let h = toHeight + 1; h <= tipHeight; h++) {
    const p = parts.get(h);
    if (!p || p.have.size !== p.want) return h;
  }
  return null;
}

/**
 * The undo of each block, from its documents: the core's record (lib/core/effect.js
 * BlockUndo), and what this store keeps beside it: the spent outputs whole, the txs documents
 * a coinbase displaced, and each transaction's txid and indexed vouts.
 * @param {object[]} undoDocs every part of consecutive heights
 */
function readUndo(undoDocs) {
  const byHeight = new Map();
  for (const d of [...undoDocs].sort((a, b) => a.height - b.height || a.part - b.part)) {
    let u = byHeight.get(d.height);
    if (!u) byHeight.set(d.height, (u = { height: d.height, hash: d.hash, firstTxNum: D.num(d.firstTxNum), spent: [], dups: [], txs: [], touched: [] }));
    for (const s of d.spent) u.spent.push(D.fromUtxoDoc(s));
    for (const x of d.dups) u.dups.push({ position: x.position, oldTxNum: D.num(x.oldTxNum), old: x.old });
    u.txs.push(...d.txs);
    u.touched.push(...(d.touched || []));
  }
  return [...byHeight.values()].map((u) => {
    const n = u.spent.length;
    const record = {
      count: n, txNums: new Float64Array(n), vouts: new Float64Array(n), values: new Float64Array(n), shs: Buffer.alloc(32 * n), p2pk: new Map(),
      dups: u.dups.map(({ position, oldTxNum }) => ({ position, oldTxNum })),
    };
    u.spent.forEach((o, i) => {
      record.txNums[i] = o.txNum;
      record.vouts[i] = o.vout;
      record.values[i] = o.value;
      D.hashFromHex(o.sh).copy(record.shs, 32 * i);
      if (o.p2pk) record.p2pk.set(i, D.hashFromHex(o.p2pk));
    });
    return { ...u, record };
  });
}

/**
 * What a revert of the blocks read by readUndo removes and puts back, but the accounts:
 * also what a crashed apply's rollback takes back.
 *
 * BIP30 leaves two kinds of _ids that belonged to a transaction before the range and to one
 * inside it: outpoints (`utxoShared`: the range's output is deleted before the earlier one is
 * restored; a rollback, which runs before the earlier one was deleted, leaves them alone) and
 * txids (`txRestores`: put back whole, after the `txUndisplace` documents are gone).
 * @param {ReturnType<typeof readUndo>} undo
 */
function revertWrites(undo) {
  const cutoff = undo[0].firstTxNum;
  const w = {
    cutoff, utxoRestores: [], utxoDeletes: [], utxoShared: [], txDeletes: [], txRestores: [], txUndisplace: [], spentIds: [], spendIds: [],
  };
  const restoredTxids = new Set();
  for (const u of undo) {
    for (const { oldTxNum, old } of u.dups) {
      w.txUndisplace.push(D.displacedTxDoc(old)._id);
      if (oldTxNum < cutoff && !restoredTxids.has(old._id)) {
        restoredTxids.add(old._id);
        w.txRestores.push(D.canonicalTxDoc(old));
      }
    }
  }
  const createdIds = [];
  for (const u of undo) {
    for (const { txid, outs, p2pk } of u.txs) {
      if (!restoredTxids.has(txid)) w.txDeletes.push(txid);
      for (const vout of outs) createdIds.push(...D.utxoIds(D.outpointId(txid, vout), p2pk && p2pk.includes(vout)));
    }
    for (const o of u.spent) {
      w.spentIds.push(...D.utxoIds(o.id, o.p2pk));
      w.spendIds.push(D.spendId(o.txNum, o.vout));
      // outputs created inside the reverted range are deleted, not restored
      if (o.txNum < cutoff) w.utxoRestores.push(...D.utxoDocs(o));
    }
  }
  const restored = new Set(w.utxoRestores.map((d) => d._id));
  for (const id of createdIds) (restored.has(id) ? w.utxoShared : w.utxoDeletes).push(id);
  return w;
}

/**
 * The txids of the reverted transactions in TxNum order (32 bytes each, internal order), as the
 * core's revert takes them, and the created outputs to look up.
 * @param {ReturnType<typeof readUndo>} undo
 * @param {number} end the next TxNum before the revert
 */
function revertedTxs(undo, end) {
  const txs = undo.flatMap((u) => u.txs);
  if (txs.length !== end - undo[0].firstTxNum) {
    throw corrupt(`the undo of blocks ${undo[0].height}-${undo[undo.length - 1].height} lists ${txs.length} transactions, the tip says ${end - undo[0].firstTxNum}`);
  }
  const txids = Buffer.allocUnsafe(32 * txs.length);
  txs.forEach((t, i) => D.hashFromHex(t.txid).copy(txids, 32 * i));
  return { txs, txids };
}

/**
 * One account as it was before the reverted blocks: the core's change applied to its counters,
 * its history cut back to TxNums below the cutoff (pages read backwards, newest first, when
 * the tail holds none), its inline UTXOs finished later (revertUtxos). null when nothing is left.
 * @param {D.Account} cur  the committed account
 * @param {import('../../core/changes').Changes} ch
 * @param {number} j
 * @param {number} cutoff
 * @param {(page: number) => Promise<D.Entry[]>} loadPage
 * @returns {Promise<D.Account|null>}
 */
async function revertAccount(cur, ch, j, cutoff, loadPage) {
  const sh = D.hashHex(ch.shs.subarray(32 * j, 32 * j + 32));
  const a = { ...cur, tail: cur.tail.filter((x) => x.txNum < cutoff), utxos: null, parts: cutParts(cur.parts, cutoff) };
  a.received += ch.received[j];
  a.sent += ch.sent[j];
  a.fundedCount += ch.funded[j];
  a.spentCount += ch.spent[j];
  if (!countersHold(a)) throw corrupt(`account ${sh}: a revert leaves it more spent than received`);
  let sealed = sealedCount(cur.txCount);
  while (a.tail.length === 0 && sealed > 0) {
    sealed -= PAGE_ENTRIES;
    a.tail = (await loadPage(sealed / PAGE_ENTRIES)).filter((x) => x.txNum < cutoff);
  }
  a.txCount = sealed + a.tail.length;
  if (a.txCount === 0) {
    if (a.received !== 0 || a.fundedCount !== 0 || a.spentCount !== 0) throw corrupt(`account ${sh}: its history is empty but its counters are not`);
    return null;
  }
  a.lastHeight = a.tail[a.tail.length - 1].height;
  return a;
}

/**
 * The inline UTXO list of a reverted account: its outputs now, less those the reverted blocks
 * created, plus those they spent.
 * @param {D.Out[]} now   the committed list (inline, or its rows)
 * @param {import('../../core/changes').Changes} ch
 * @param {number} j
 * @param {Map<string, D.Out>} restored by '<txNum>:<vout>': the outputs the revert puts back
 */
function revertUtxos(now, ch, j, restored) {
  return inlineUtxos(now, ch, j, (txNum, vout) => {
    const o = restored.get(`${txNum}:${vout}`);
    if (!o) throw corrupt(`a revert puts back ${txNum}:${vout}, which its undo does not hold`);
    return o;
  });
}

module.exports = {
  planApply, finishUtxos, readUndo, revertWrites, revertedTxs, revertAccount, revertUtxos, firstMissingUndo, UNDO_ENTRIES_PER_PART,
};
