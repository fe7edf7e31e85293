'use strict';

const D = require('./documents');

/**
 * What one apply or one revert writes, computed in memory before anything is written.
 * Both are pure functions of their inputs, so the same blocks over the same state always
 * yield the same documents with the same _ids: a write cut off part-way (a lost connection,
 * a crash) converges when it is sent again.
 *
 * planApply and planRevert are twins: every document apply writes, revert removes or puts
 * back, from the undo records apply wrote first.
 */

/** Undo entries per undo document, so that no block's undo can outgrow MongoDB's 16 MB. */
const UNDO_ENTRIES_PER_PART = 20000;

/**
 * @typedef {object} ApplyPlan
 * @property {object[]} blocks       block documents
 * @property {object[]} txs          tx documents to insert
 * @property {object[]} txReplaces   tx documents of coinbases that take an earlier txid (BIP30): replaced whole
 * @property {object[]} txDisplaced  the transactions they replace, under their new _ids
 * @property {object[]} pages        history pages sealed by the batch
 * @property {object[]} utxoInserts  outputs created and still unspent at the batch's end
 * @property {string[]} utxoDeletes  outpoints of earlier batches spent by this one
 * @property {object[]} utxoReplaces outputs whose outpoint an output of an earlier batch had (BIP30): inserted
 *                                   after the deletes
 * @property {Map<string, D.Account>} accounts  every touched account as of the batch's end
 * @property {string[]} needRows     accounts past INLINE_UTXOS before the batch and within it after:
 *                                   their unspent outputs must be read to list them inline
 * @property {Map<string, {added: Map<string, D.Out>, removed: Set<string>}>} utxoChanges
 * @property {object[]} undo         undo documents, one or more per block
 * @property {{height: number, hash: string, nextTxNum: number}} tip
 */

/**
 * The script hashes (display hex) a batch touches: whose accounts must be read first.
 * @param {import('../abstract').BlockDelta[]} blocks
 * @returns {string[]}
 */
function touchedScripthashes(blocks) {
  const seen = new Set();
  for (const { height, cols, spent } of blocks) {
    const I = cols.inStart[cols.txCount];
    for (let i = 0; i < I; i++) {
      const sh = spent.scripthashes.subarray(32 * i, 32 * i + 32);
      if (!sh.equals(D.ZERO32)) seen.add(D.hashHex(sh));
    }
    if (height === 0) continue;
    const O = cols.outStart[cols.txCount];
    for (let o = 0; o < O; o++) {
      if (cols.idType[o] !== 0) seen.add(D.hashHex(cols.scripthashes.subarray(32 * o, 32 * o + 32)));
    }
  }
  return [...seen];
}

/**
 * The coinbase txids of a batch: the only transactions that can repeat an earlier txid (BIP30).
 * @param {import('../abstract').BlockDelta[]} blocks
 * @returns {string[]}
 */
function coinbaseTxids(blocks) {
  return blocks.filter((b) => b.height > 0).map((b) => D.hashHex(b.cols.txids.subarray(0, 32)));
}

/**
 * @param {import('../abstract').BlockDelta[]} blocks  consecutive, already checked to extend the tip
 * @param {Map<string, D.Account>} pre  accounts before the batch (absent: never seen)
 * @param {Map<string, {doc: object, outs: D.Out[]}>} [reused] committed txs documents of coinbase
 *   txids the index already holds (BIP30), each with its unspent outputs
 * @returns {ApplyPlan}
 */
function planApply(blocks, pre, reused = new Map()) {
  /** @type {Map<string, D.Account>} running state, copied from `pre` on first touch */
  const state = new Map();
  const changes = new Map();
  const plan = {
    blocks: [], txs: [], txReplaces: [], txDisplaced: [], pages: [], utxoInserts: [], utxoDeletes: [], utxoReplaces: [],
    accounts: state, needRows: [], utxoChanges: changes, undo: [], tip: null,
  };
  // outputs created in this batch, by outpoint: spent later in the batch → never written
  const created = new Map();
  const deleted = new Set();
  // the batch's tx documents by txid: a later coinbase of the batch may take an earlier txid
  const txDocs = new Map();

  for (const { height, firstTxNum, cols, spent } of blocks) {
    plan.blocks.push(D.blockDoc(cols, height, firstTxNum));
    /** @type {Map<string, {prev: object|null, n: number}>} */
    const sums = new Map();
    const undoTxs = [];
    const undoSpent = [];
    const undoReused = [];
    const touch = (sh) => {
      let a = state.get(sh);
      if (a === undefined) {
        const p = pre.get(sh);
        a = p ? { ...p, tail: [...p.tail], utxos: p.utxos && [...p.utxos] } : null;
        if (a) state.set(sh, a);
        changes.set(sh, { added: new Map(), removed: new Set() });
      }
      if (!sums.has(sh)) {
        sums.set(sh, { prev: a ? counters(a) : null, n: 0 });
        if (!a) state.set(sh, newAccount(height));
      }
      return state.get(sh);
    };

    for (let t = 0; t < cols.txCount; t++) {
      const txNum = firstTxNum + t;
      const txid = D.hashHex(cols.txids.subarray(32 * t, 32 * t + 32));
      const doc = D.txDoc(txid, txNum, height, t);
      /** @type {Map<string, {funded: boolean, spent: boolean}>} */
      const flags = new Map();
      const flag = (sh) => {
        let f = flags.get(sh);
        if (f === undefined) flags.set(sh, (f = { funded: false, spent: false }));
        return f;
      };
      const spend = (o) => {
        undoSpent.push(D.utxoDoc(o));
        if (created.has(o.id)) created.delete(o.id);
        else {
          plan.utxoDeletes.push(o.id);
          deleted.add(o.id);
        }
        const a = touch(o.sh);
        a.sent += o.value;
        a.spentCount++;
        const ch = changes.get(o.sh);
        if (ch.added.has(o.id)) ch.added.delete(o.id);
        else ch.removed.add(o.id);
        flag(o.sh).spent = true;
      };

      const old = t === 0 && height > 0 ? txDocs.get(txid) || (reused.has(txid) ? reused.get(txid).doc : null) : null;
      if (old) {
        // BIP30, as Bitcoin Core: this coinbase takes the txid, and the outputs of the earlier
        // transaction still unspent leave the UTXO set, spent by this one
        const oldTxNum = D.num(old.txNum);
        doc.prev = { txNum: D.long(oldTxNum), height: old.height, pos: old.pos };
        plan.txDisplaced.push(D.displacedTxDoc(old));
        undoReused.push({ txid, old: D.canonicalTxDoc(old) });
        const left = [];
        const r = reused.get(txid);
        if (r && D.num(r.doc.txNum) === oldTxNum) left.push(...r.outs.filter((o) => !deleted.has(o.id)));
        for (const o of created.values()) if (o.txNum === oldTxNum) left.push(o);
        for (const o of left.sort((x, y) => x.vout - y.vout)) spend(o);
      }
      txDocs.set(txid, doc);

      for (let i = cols.inStart[t]; i < cols.inStart[t + 1]; i++) {
        const shBuf = spent.scripthashes.subarray(32 * i, 32 * i + 32);
        if (shBuf.equals(D.ZERO32)) continue;
        const sh = D.hashHex(shBuf);
        const vout = cols.prevouts.readUInt32LE(36 * i + 32);
        const ptxid = D.hashHex(cols.prevouts.subarray(36 * i, 36 * i + 32));
        spend({
          id: D.outpointId(ptxid, vout), sh, txid: ptxid, vout, value: spent.values[i], height: spent.heights[i], txNum: spent.txNums[i],
        });
      }

      const outs = [];
      // the genesis coinbase is never spendable: none of its outputs is filed
      if (height !== 0) {
        for (let o = cols.outStart[t]; o < cols.outStart[t + 1]; o++) {
          if (cols.idType[o] === 0) continue;
          const sh = D.hashHex(cols.scripthashes.subarray(32 * o, 32 * o + 32));
          const vout = o - cols.outStart[t];
          const out = { id: D.outpointId(txid, vout), sh, txid, vout, value: cols.values[o], height, txNum };
          created.set(out.id, out);
          outs.push(vout);
          const a = touch(sh);
          a.received += out.value;
          a.fundedCount++;
          changes.get(sh).added.set(out.id, out);
          flag(sh).funded = true;
        }
      }
      undoTxs.push({ txid, outs });

      for (const [sh, f] of flags) {
        const a = state.get(sh);
        a.tail.push({ txNum, txid, height, funded: f.funded, spent: f.spent });
        a.txCount++;
        a.lastHeight = height;
        sums.get(sh).n++;
        if (a.tail.length === D.PAGE_SIZE) {
          plan.pages.push(D.pageDoc(sh, a.txCount / D.PAGE_SIZE - 1, a.tail));
          a.tail = [];
        }
      }
    }

    const undoSums = [];
    for (const [sh, u] of sums) undoSums.push({ sh, prev: u.prev, n: u.n });
    plan.undo.push(...undoParts(height, cols.hash, firstTxNum, undoTxs, undoSpent, undoSums, undoReused));
  }

  for (const d of txDocs.values()) (d.prev ? plan.txReplaces : plan.txs).push(d);
  for (const out of created.values()) (deleted.has(out.id) ? plan.utxoReplaces : plan.utxoInserts).push(D.utxoDoc(out));
  for (const [sh, a] of state) {
    const count = a.fundedCount - a.spentCount;
    const p = pre.get(sh);
    if (count > D.INLINE_UTXOS) a.utxos = null;
    else if (!p) a.utxos = [];
    else if (p.utxos === null) plan.needRows.push(sh);
    // inline lists are finished in finishAccounts, once needRows are read
  }
  const last = blocks[blocks.length - 1];
  plan.tip = { height: last.height, hash: last.cols.hash, nextTxNum: last.firstTxNum + last.cols.txCount };
  return plan;
}

/**
 * Completes the inline UTXO lists of the accounts a plan leaves at INLINE_UTXOS or fewer.
 * @param {ApplyPlan} plan
 * @param {Map<string, D.Out[]>} rows  unspent outputs before the batch of every account in plan.needRows
 * @param {Map<string, D.Account>} pre
 */
function finishAccounts(plan, rows, pre) {
  for (const [sh, a] of plan.accounts) {
    if (a.fundedCount - a.spentCount > D.INLINE_UTXOS) continue;
    const p = pre.get(sh);
    const base = !p ? [] : p.utxos !== null ? p.utxos : rows.get(sh) || [];
    const { added, removed } = plan.utxoChanges.get(sh);
    a.utxos = sortOuts([...base.filter((o) => !removed.has(o.id)), ...added.values()]);
  }
}

function newAccount(height) {
  return { received: 0, sent: 0, txCount: 0, fundedCount: 0, spentCount: 0, firstHeight: height, lastHeight: height, tail: [], utxos: [] };
}

/** The counters of an account as kept in undo: enough to restore its summary and find its history's cut. */
function counters(a) {
  return {
    received: D.long(a.received), sent: D.long(a.sent), txCount: D.long(a.txCount), fundedCount: D.long(a.fundedCount),
    spentCount: D.long(a.spentCount), firstHeight: a.firstHeight, lastHeight: a.lastHeight,
  };
}

function sortOuts(list) {
  return list.sort((x, y) => x.txNum - y.txNum || x.vout - y.vout);
}

/**
 * Splits one block's undo into documents of at most UNDO_ENTRIES_PER_PART entries each; every
 * part says how many parts the block has, so a reader can tell a complete undo from a torn one.
 */
function undoParts(height, hash, firstTxNum, txs, spent, sums, reused) {
  const parts = [];
  let cur = null;
  let size = 0;
  const room = (n) => {
    if (cur === null || size + n > UNDO_ENTRIES_PER_PART) {
      cur = { txs: [], spent: [], sums: [], reused: [] };
      parts.push(cur);
      size = 0;
    }
    size += n;
    return cur;
  };
  for (const tx of txs) room(1 + tx.outs.length).txs.push(tx);
  for (const s of spent) room(1).spent.push(s);
  for (const s of sums) room(1).sums.push(s);
  for (const r of reused) room(1).reused.push(r);
  if (parts.length === 0) parts.push({ txs: [], spent: [], sums: [], reused: [] });
  return parts.map((p, i) => ({
    _id: D.undoId(height, i), height, part: i, parts: parts.length, hash, firstTxNum: D.long(firstTxNum), ...p,
  }));
}

/**
 * What a revert of the heights covered by `undoDocs` needs to read before planning: for every
 * touched script hash, its counters before the lowest reverted block and its history length
 * after the highest.
 * @param {object[]} undoDocs every undo document of the reverted heights
 */
function revertScope(undoDocs) {
  const byHeight = [...undoDocs].sort((a, b) => a.height - b.height || a.part - b.part);
  const firstTxNum = D.num(byHeight[0].firstTxNum);
  /** @type {Map<string, {prev: object|null, added: number}>} */
  const shs = new Map();
  for (const u of byHeight) {
    for (const { sh, prev, n } of u.sums) {
      const s = shs.get(sh);
      if (s) s.added += n;
      else shs.set(sh, { prev, added: n });
    }
  }
  const pages = [];
  for (const [sh, s] of shs) {
    const before = s.prev ? D.num(s.prev.txCount) : 0;
    const after = before + s.added;
    s.before = before;
    s.after = after;
    // the page that holds the restored tail, if the reverted blocks sealed it
    if (Math.floor(before / D.PAGE_SIZE) < Math.floor(after / D.PAGE_SIZE)) pages.push(D.pageId(sh, Math.floor(before / D.PAGE_SIZE)));
  }
  return { byHeight, fromHeight: byHeight[0].height, firstTxNum, shs, pages };
}

/**
 * The documents a revert of `scope` removes and puts back (everything but the accounts),
 * straight from the undo records: also what a crashed apply's rollback deletes.
 *
 * BIP30 leaves two kinds of _ids that belonged to a transaction before the range and to one
 * inside it: outpoints (`utxoShared`: the range's output is deleted before the earlier one is
 * restored; a rollback, which runs before the earlier one was deleted, leaves them alone) and
 * txids (`txRestores`: put back whole, after the `txUndisplace` documents are gone).
 * @param {ReturnType<typeof revertScope>} scope
 */
function revertWrites(scope) {
  const w = {
    utxoRestores: [], utxoDeletes: [], utxoShared: [], pageDeletes: [], txDeletes: [], txRestores: [], txUndisplace: [], spentIds: [],
  };
  const createdIds = [];
  const restoredTxids = new Set();
  for (const u of scope.byHeight) {
    for (const { txid, old } of u.reused || []) {
      w.txUndisplace.push(D.displacedTxDoc(old)._id);
      if (D.num(old.txNum) < scope.firstTxNum && !restoredTxids.has(txid)) {
        restoredTxids.add(txid);
        w.txRestores.push(D.canonicalTxDoc(old));
      }
    }
  }
  for (const u of scope.byHeight) {
    for (const { txid, outs } of u.txs) {
      if (!restoredTxids.has(txid)) w.txDeletes.push(txid);
      for (const vout of outs) createdIds.push(D.outpointId(txid, vout));
    }
    for (const s of u.spent) {
      w.spentIds.push(s._id);
      // outputs created inside the reverted range are deleted, not restored
      if (D.num(s.txNum) < scope.firstTxNum) w.utxoRestores.push(D.utxoDoc(D.fromUtxoDoc(s)));
    }
  }
  const restored = new Set(w.utxoRestores.map((d) => d._id));
  for (const id of createdIds) (restored.has(id) ? w.utxoShared : w.utxoDeletes).push(id);
  for (const [sh, s] of scope.shs) {
    for (let p = Math.floor(s.before / D.PAGE_SIZE); p < Math.floor(s.after / D.PAGE_SIZE); p++) w.pageDeletes.push(D.pageId(sh, p));
  }
  return w;
}

/**
 * The touched accounts as they were before the lowest reverted block: counters from undo, the
 * history tail cut back out of the current tail or the page the reverted blocks sealed, and
 * the inline unspent outputs rebuilt from today's minus those created plus those spent.
 * @param {ReturnType<typeof revertScope>} scope
 * @param {Map<string, D.Account>} current  the touched accounts now (after the highest reverted block)
 * @param {Map<string, D.Entry[]>} pages    the pages named in scope.pages
 * @param {Map<string, D.Out[]>} rows       unspent outputs now of touched accounts that keep them in rows
 * @returns {Map<string, D.Account|null>}
 */
function revertAccounts(scope, current, pages, rows) {
  const restoredBySh = new Map();
  for (const u of scope.byHeight) {
    for (const s of u.spent) {
      if (D.num(s.txNum) >= scope.firstTxNum) continue;
      const out = D.fromUtxoDoc(s);
      if (!restoredBySh.has(out.sh)) restoredBySh.set(out.sh, []);
      restoredBySh.get(out.sh).push(out);
    }
  }
  const accounts = new Map();
  for (const [sh, s] of scope.shs) {
    if (s.prev === null) {
      accounts.set(sh, null);
      continue;
    }
    const cur = current.get(sh);
    const sealedBefore = Math.floor(s.before / D.PAGE_SIZE);
    const from = sealedBefore < Math.floor(s.after / D.PAGE_SIZE) ? pages.get(D.pageId(sh, sealedBefore)) : cur.tail;
    const a = {
      received: D.num(s.prev.received), sent: D.num(s.prev.sent), txCount: s.before, fundedCount: D.num(s.prev.fundedCount),
      spentCount: D.num(s.prev.spentCount), firstHeight: s.prev.firstHeight, lastHeight: s.prev.lastHeight,
      tail: from.slice(0, s.before % D.PAGE_SIZE), utxos: null,
    };
    if (a.fundedCount - a.spentCount <= D.INLINE_UTXOS) {
      const now = cur.utxos !== null ? cur.utxos : rows.get(sh) || [];
      a.utxos = sortOuts([...now.filter((o) => o.txNum < scope.firstTxNum), ...(restoredBySh.get(sh) || [])]);
    }
    accounts.set(sh, a);
  }
  return accounts;
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

module.exports = {
  touchedScripthashes, coinbaseTxids, planApply, finishAccounts, revertScope, revertWrites, revertAccounts, firstMissingUndo, UNDO_ENTRIES_PER_PART,
};
