'use strict';

const D = require('./documents');
const P = require('./plan');
const { applyEffect, revertEffect } = require('../../core/effect');
const { checkExtends, undoMissing, corrupt } = require('../../core/checks');
const { utxosInline } = require('../../core/rules');
const { putChange } = require('./mempool');

const C = D.COLLECTIONS;

/** Account documents a writer that created its database keeps (past it, it reads them back). */
const WRITER_DOCS = 200000;
/** How long a verify's lease on the writer lasts without renewal (lib/stores/mongo/verify.js renews it). */
const LEASE_MS = 15000;

/**
 * The one writer of a MongoDB index: apply, revert and the repair of a write that did not
 * finish, as a sequence of idempotent steps behind a marker (docs/MONGO.md, "Crash safety"):
 *
 *   apply:   undo → marker 'data' → new blocks, txs, pages, outputs → staged accounts →
 *            marker 'swap' → spent outputs deleted, accounts swapped → tip → cleanup
 *   revert:  marker 'stage' → staged accounts → marker 'swap' → spent outputs restored,
 *            accounts swapped → tip → cleanup (pages, outputs, txs, blocks, undo removed)
 *   repair:  before 'swap' a crashed apply is rolled back (nothing it wrote is visible yet) and
 *            a crashed revert dropped; from 'swap' on, both are rolled forward from the staged
 *            accounts and the undo documents. Either way the index ends at a block boundary.
 *
 * What a block does to each address comes from the index core (lib/core/effect.js); which
 * documents carry it, from plan.js.
 */
class Writer {
  /**
   * @param {import('../mongo').MongoStore} store
   */
  constructor(store) {
    this.store = store;
    /** @type {import('./bulk').Database} */
    this.db = store.database;
    /** the committed tip ({height, hash, nextTxNum, seq}) */
    this.tip = null;
    /** 'swap' while accounts are being swapped (readers in this process read staged versions then) */
    this.phase = null;
    /** a write failed or a crash was found: repair before the next write */
    this.dirty = true;
    /** the committed account documents, complete while `allDocs` (see committedAccounts) */
    this.docs = new Map();
    this.allDocs = false;
    /** when this writer started waiting for a verify's lease (0: not waiting) */
    this.waitingSince = 0;
    /** serializes apply/revert/repair of this process */
    this.writing = Promise.resolve();
  }

  /** Creates the collections and indexes, repairs what a crashed writer left, and learns whether the database is new. */
  async open() {
    await this.db.createCollections();
    for (const [name, specs] of Object.entries(D.INDEXES)) {
      await this.db.retry(`create indexes on ${name}`, () => this.db.coll(name).createIndexes(specs));
    }
    await this.serial(() => this.repair());
    // a writer that died inside a reorg's group left its lease (MongoStore#beginBulk): it is gone
    await this.db.retry('clear a group lease', () => this.db.coll(C.meta).deleteOne({ _id: 'group' }));
    this.allDocs = !(await this.db.retry('open', () => this.db.coll(C.accounts).findOne({})));
  }

  /** Waits for the write under way, if any. */
  async idle() {
    await this.writing.catch(() => {});
  }

  /**
   * @param {import('../abstract').BlockDelta[]} blocks
   */
  apply(blocks) {
    return this.serial(async () => {
      await this.cleanIfDirty();
      await this.waitForVerifiers();
      const tip = this.tip;
      checkExtends(tip, blocks, this.store.describe());
      const reusedDocs = await this.store.reads.reusedTxids(blocks.filter((b) => b.height > 0).map((b) => D.hashHex(b.cols.txids.subarray(0, 32))));
      const reused = new Map();
      for (const [txid, { doc, outs }] of reusedDocs) {
        reused.set(D.hashFromHex(txid).latin1Slice(0, 32), { txNum: D.num(doc.txNum), height: doc.height, outputs: txOutputs(outs) });
      }
      const e = applyEffect(blocks, reused);
      const preDocs = await this.committedAccounts(scripthashesOf(e.changes));
      const pre = new Map();
      for (const [sh, d] of preDocs) if (!d.gone) pre.set(sh, D.fromAccountFields(d, sh));
      const plan = P.planApply(e, pre, new Map([...reusedDocs].map(([txid, r]) => [txid, r.doc])), this.store.undoDepth, this.store.keepsTransactions);
      P.finishUtxos(plan, e, await this.store.reads.rowsOf(plan.needRows));
      const seq = (tip ? tip.seq : 0) + 1;
      const staged = [...plan.accounts].map(([sh, a]) => D.accountDoc(sh, a, seq, D.asPrev(preDocs.get(sh))));
      const newTip = { ...plan.tip, seq };
      const marker = {
        op: 'apply', fromHeight: blocks[0].height, toHeight: newTip.height, prevTip: tip, newTip, utxoReplaces: plan.utxoReplaces,
      };
      await this.guarded(async () => {
        await this.step('undo');
        await this.db.insert(C.undo, plan.undo);
        await this.setPending({ ...marker, phase: 'data' });
        await this.step('data');
        // documents above the tip: no reader looks at them until the tip moves
        await this.db.insert(C.blocks, plan.blocks);
        await this.db.insert(C.bodies, plan.bodies);
        await this.db.insert(C.txs, plan.txs);
        // a replaced txid first, so that the TxNum its displaced document takes is free
        await this.db.replace(C.txs, plan.txReplaces);
        await this.db.insert(C.txs, plan.txDisplaced);
        await this.db.insert(C.history, plan.pages);
        await this.db.insert(C.utxos, plan.utxoInserts);
        // who spent what: readers skip a spend whose TxNum is past their tip
        await this.db.insert(C.spends, plan.spends);
        await this.step('stage');
        await this.db.insert(C.staging, staged);
        await this.enterSwap(marker);
        await this.db.deleteIds(C.utxos, plan.utxoDeletes);
        await this.db.insert(C.utxos, plan.utxoReplaces);
        await this.commitAccounts(staged, newTip);
        await this.db.clearStaging(staged.map((d) => d._id));
        await this.pruneUndo(newTip.height);
        await this.clearPending();
        await this.step('done');
      });
    });
  }

  /**
   * @param {number} height -1 empties the index
   */
  revert(height) {
    return this.serial(async () => {
      await this.cleanIfDirty();
      await this.waitForVerifiers();
      const tip = this.tip;
      if (!tip || height >= tip.height) return;
      const undoDocs = await this.undoAbove(height, tip.height);
      const missing = P.firstMissingUndo(undoDocs, height, tip.height);
      if (missing !== null) throw undoMissing(this.store.describe(), { height, missing, tip: tip.height, undoDepth: this.store.undoDepth });
      const undo = P.readUndo(undoDocs);
      const w = P.revertWrites(undo);
      const { cutoff } = w;
      const { txs, txids } = P.revertedTxs(undo, tip.nextTxNum);

      // what the reverted transactions left unspent
      const createdIds = txs.flatMap((t) => t.outs.map((vout) => D.outpointId(t.txid, vout)));
      const createdDocs = await this.db.findByIds(C.utxos, createdIds);
      const byTx = new Map();
      for (const d of createdDocs.values()) {
        const o = D.fromUtxoDoc(d);
        if (!byTx.has(o.txNum)) byTx.set(o.txNum, []);
        byTx.get(o.txNum).push(o);
      }
      const created = [...byTx].map(([txNum, outs]) => ({ txNum, height: outs[0].height, ...txOutputs(outs) }));
      const r = revertEffect({
        cutoff, end: tip.nextTxNum, fromHeight: height + 1, undos: undo.map((u) => u.record), firstTxNums: undo.map((u) => u.firstTxNum), txids, created,
      });

      // the touched accounts as they were before the reverted blocks
      const ch = r.changes;
      const shs = scripthashesOf(ch);
      const curDocs = await this.committedAccounts(shs);
      const restored = new Map();
      for (const [txNum, list] of r.restore) for (const x of list) restored.set(`${txNum}:${x.vout}`, undo[x.undo].spent[x.index]);
      const accounts = new Map();
      const needRows = [];
      for (let j = 0; j < ch.n; j++) {
        const sh = shs[j];
        const d = curDocs.get(sh);
        if (!d || d.gone) throw corrupt(`a revert touches account ${sh}, which the MongoDB index does not hold`);
        const cur = D.fromAccountFields(d, sh);
        const a = await P.revertAccount(cur, ch, j, cutoff, (page) => this.store.reads.page(sh, page));
        accounts.set(sh, a);
        if (!a || !utxosInline(a.fundedCount - a.spentCount)) continue;
        if (cur.utxos !== null) a.utxos = P.revertUtxos(cur.utxos, ch, j, restored);
        else needRows.push(j);
      }
      const rows = await this.store.reads.rowsOf(needRows.map((j) => shs[j]));
      for (const j of needRows) accounts.get(shs[j]).utxos = P.revertUtxos(rows.get(shs[j]) || [], ch, j, restored);

      const seq = tip.seq + 1;
      const staged = [...accounts].map(([sh, a]) => D.accountDoc(sh, a, seq, D.asPrev(curDocs.get(sh))));
      let newTip = null;
      if (height >= 0) {
        const b = await this.db.retry('revert', () => this.db.coll(C.blocks).findOne({ _id: height }));
        if (!b) throw corrupt(`no block document for height ${height} below the tip ${tip.height}`);
        newTip = { height, hash: b.hash, nextTxNum: cutoff, seq };
      }
      const marker = { op: 'revert', fromHeight: height + 1, toHeight: tip.height, prevTip: tip, newTip };
      await this.guarded(async () => {
        await this.setPending({ ...marker, phase: 'stage' });
        await this.step('stage');
        await this.db.insert(C.staging, staged);
        await this.enterSwap(marker);
        await this.restoreUtxos(w);
        await this.commitAccounts(staged, newTip);
        await this.revertCleanup(w, height, staged);
        await this.clearPending();
        await this.step('done');
      });
    });
  }

  /**
   * Stores a mempool change (lib/stores/mongo/mempool.js) while the tip is the one it names.
   * @param {Buffer} change
   * @param {string} tip the change's tip, display hex
   * @returns {Promise<boolean>} false when the tip is no longer the change's
   */
  putMempool(change, tip) {
    return this.serial(async () => {
      await this.cleanIfDirty();
      if (!this.tip || this.tip.hash !== tip) return false;
      await putChange(this.db, change, (at) => this.step(at));
      return true;
    });
  }

  /** From here on a crash is rolled forward: the staged accounts are complete. */
  async enterSwap(marker) {
    await this.setPending({ ...marker, phase: 'swap' });
    this.phase = 'swap';
    await this.step('swap');
  }

  /** The commit point of apply and revert: the staged accounts put in place, then the tip that shows them. */
  async commitAccounts(staged, newTip) {
    await this.db.swapAccounts(staged);
    await this.step('tip');
    await this.setTip(newTip);
    this.tip = newTip;
    this.phase = null;
    this.keepDocs(staged);
  }

  /**
   * What a revert removes once its tip is written (readers of the old tip may still be reading
   * these until then): pages, outputs, txs and blocks of the reverted heights, the accounts that
   * no longer exist, the staged versions and the undo.
   */
  async revertCleanup(w, target, staged) {
    await this.removeAbove(w, target);
    await this.db.deleteIds(C.accounts, staged.filter((d) => d.gone).map((d) => d._id));
    await this.db.clearStaging(staged.map((d) => d._id));
    await this.retry('drop undo', () => this.db.coll(C.undo).deleteMany({ _id: { $gte: D.undoId(target + 1, 0) } }));
  }

  /**
   * Removes what blocks above `target` added but the accounts and the spent outputs: the pages
   * their entries sealed, their outputs, txs (a txid they had taken goes back to its earlier
   * transaction) and blocks.
   * @param {ReturnType<typeof P.revertWrites>} w
   */
  async removeAbove(w, target) {
    await this.retry('revert pages', () => this.db.coll(C.history).deleteMany({ sealedBy: { $gte: D.long(w.cutoff) } }));
    await this.db.deleteIds(C.spends, w.spendIds);
    await this.db.deleteIds(C.utxos, w.utxoDeletes);
    await this.db.deleteIds(C.txs, w.txUndisplace);
    await this.db.replace(C.txs, w.txRestores);
    await this.db.deleteIds(C.txs, w.txDeletes);
    await this.retry('revert blocks', () => this.db.coll(C.blocks).deleteMany({ _id: { $gt: target } }));
    await this.retry('revert block bytes', () => this.db.coll(C.bodies).deleteMany({ _id: { $gt: target } }));
  }

  /** Puts back the outputs a revert restores; an outpoint a reverted output had taken (BIP30) is freed first. */
  async restoreUtxos(w) {
    await this.db.deleteIds(C.utxos, w.utxoShared);
    await this.db.insert(C.utxos, w.utxoRestores);
  }

  /**
   * Brings the database to a block boundary after a crashed or failed write (docs/MONGO.md,
   * "Repair"). Before its 'swap' marker an apply has written only documents above the tip and
   * staged accounts: they are deleted (the undo documents, complete before the marker, name
   * them). From 'swap' on, apply and revert are finished from the staged accounts and the undo.
   */
  async repair() {
    const meta = this.db.coll(C.meta);
    const pending = await this.retry('repair', () => meta.findOne({ _id: 'pending' }));
    let tip = await this.store.reads.readTip();
    if (pending) {
      // a writer that died mid-command may have left that command running on the server
      if (this.store.opts.repairSettleMs > 0) await sleep(this.store.opts.repairSettleMs);
      const newTip = pending.newTip ? D.fromTipDoc(pending.newTip) : null;
      const prevTip = pending.prevTip ? D.fromTipDoc(pending.prevTip) : null;
      const moved = sameTip(tip, newTip);
      const target = pending.op === 'apply' ? (prevTip ? prevTip.height : -1) : (newTip ? newTip.height : -1);
      const undoDocs = await this.undoAbove(target, pending.toHeight);
      const missing = P.firstMissingUndo(undoDocs, target, pending.toHeight);
      const writes = () => {
        if (missing !== null) throw corrupt(`an interrupted ${pending.op} of blocks ${pending.fromHeight}-${pending.toHeight} lacks the undo of block ${missing}`);
        return P.revertWrites(P.readUndo(undoDocs));
      };
      const stagedDocs = () => this.retry('repair', () => this.db.coll(C.staging).find({}).toArray());
      if (!moved && pending.phase !== 'swap') {
        // nothing visible was written: take back what was (an interrupted revert wrote only staged accounts)
        if (pending.op === 'apply') {
          if (!sameTip(tip, prevTip)) throw corrupt(`an interrupted apply left the tip at ${tipText(tip)}, expected ${tipText(prevTip)}`);
          await this.removeAbove(writes(), target);
        }
        await this.db.clearStaging();
      } else if (!moved) {
        // the swap had begun: finish the operation from the staged accounts and the undo
        const staged = await stagedDocs();
        const w = writes();
        if (pending.op === 'apply') {
          await this.db.deleteIds(C.utxos, w.spentIds);
          await this.db.insert(C.utxos, pending.utxoReplaces || []);
        } else await this.restoreUtxos(w);
        await this.db.swapAccounts(staged);
        await this.setTip(newTip);
        tip = newTip;
        if (pending.op === 'revert') await this.revertCleanup(w, target, staged);
        else await this.db.clearStaging(staged.map((d) => d._id));
      } else if (pending.op === 'revert' && missing === null && undoDocs.length > 0) {
        // the tip had moved: only the cleanup was left (undo goes last, so if it is gone, all else is)
        await this.revertCleanup(writes(), target, await stagedDocs());
      } else {
        await this.db.clearStaging();
      }
      if (tip && pending.op === 'apply') await this.pruneUndo(tip.height);
      await this.clearPending();
    }
    await this.retry('drop undo', () => this.db.coll(C.undo).deleteMany({ _id: { $gte: D.undoId((tip ? tip.height : -1) + 1, 0) } }));
    this.tip = tip;
    this.phase = null;
    this.dirty = false;
  }

  async setTip(tip) {
    const meta = this.db.coll(C.meta);
    if (tip) await this.retry('write tip', () => meta.replaceOne({ _id: 'tip' }, D.tipDoc(tip), { upsert: true }));
    else await this.retry('write tip', () => meta.deleteOne({ _id: 'tip' }));
  }

  async setPending(p) {
    const meta = this.db.coll(C.meta);
    const doc = {
      _id: 'pending', op: p.op, phase: p.phase, fromHeight: p.fromHeight, toHeight: p.toHeight,
      prevTip: p.prevTip ? D.tipDoc(p.prevTip) : null, newTip: p.newTip ? D.tipDoc(p.newTip) : null, utxoReplaces: p.utxoReplaces || [],
    };
    await this.retry('write pending marker', () => meta.replaceOne({ _id: 'pending' }, doc, { upsert: true }));
    if (this.waitingSince) {
      this.waitingSince = 0;
      await this.retry('writer wait', () => meta.deleteOne({ _id: 'writerwait' }));
    }
  }

  async clearPending() {
    await this.retry('clear pending marker', () => this.db.coll(C.meta).deleteOne({ _id: 'pending' }));
  }

  /** Keeps undo for the last undoDepth blocks up to `tipHeight`. */
  async pruneUndo(tipHeight) {
    const keepFrom = tipHeight - this.store.undoDepth + 1;
    if (keepFrom <= 0) return;
    await this.retry('prune undo', () => this.db.coll(C.undo).deleteMany({ _id: { $lt: D.undoId(keepFrom, 0) } }));
  }

  /** Undo documents of the heights (target, maxHeight]. */
  async undoAbove(target, maxHeight) {
    if (maxHeight <= target) return [];
    return this.retry('read undo', () => this.db.coll(C.undo)
      .find({ _id: { $gte: D.undoId(target + 1, 0), $lt: D.undoId(maxHeight + 1, 0) } }).toArray());
  }

  /**
   * Waits while a verify holds its lease (lib/stores/mongo/verify.js), saying so with a
   * `writerwait` document that keeps new verifies from starting meanwhile; it is removed once
   * this write's marker is set (setPending).
   */
  async waitForVerifiers() {
    const meta = this.db.coll(C.meta);
    for (;;) {
      if (!(await leaseHeld(this.db, 'readlock:'))) return;
      const now = Date.now();
      if (!this.waitingSince || now - this.waitingSince > LEASE_MS / 3) {
        this.waitingSince = now;
        await this.retry('writer wait', () => meta.replaceOne({ _id: 'writerwait' }, { _id: 'writerwait', until: new Date(now + LEASE_MS) }, { upsert: true }));
      }
      await sleep(25);
    }
  }

  async guarded(fn) {
    try {
      await fn();
    } catch (err) {
      this.dirty = true;
      this.phase = null;
      this.forgetDocs();
      throw err;
    }
  }

  /**
   * The committed account documents of script hashes. A writer that created the database has
   * written every account there is (one writer per database), so while it holds them all in
   * memory it need not read them back — on FerretDB that read is a scan of `accounts`.
   * @param {string[]} shs
   */
  async committedAccounts(shs) {
    if (!this.allDocs) return this.db.findByIds(C.accounts, shs);
    const out = new Map();
    for (const sh of shs) {
      const d = this.docs.get(sh);
      if (d) out.set(sh, d);
    }
    return out;
  }

  keepDocs(staged) {
    if (!this.allDocs) return;
    for (const d of staged) {
      if (d.gone) this.docs.delete(d._id);
      else this.docs.set(d._id, d);
    }
    if (this.docs.size > WRITER_DOCS) this.forgetDocs();
  }

  forgetDocs() {
    this.allDocs = false;
    this.docs.clear();
  }

  async cleanIfDirty() {
    if (this.dirty) await this.repair();
  }

  async step(name) {
    if (this.store.opts.onStep) await this.store.opts.onStep(name);
  }

  /** Runs write operations of this process one at a time. */
  serial(fn) {
    const run = this.writing.then(fn, fn);
    this.writing = run.catch(() => {});
    return run;
  }

  retry(what, fn) {
    return this.db.retry(what, fn);
  }
}

/** Whether a `meta` lease whose _id starts with `prefix` has not expired. */
async function leaseHeld(db, prefix) {
  const leases = await db.retry('read leases', () => db.coll(C.meta).find({ _id: { $regex: `^${prefix}` } }).toArray());
  const now = Date.now();
  return leases.some((l) => l.until instanceof Date && l.until.getTime() > now);
}

/** Outputs of one transaction (D.Out, any order; each output's first document) as the core takes them. */
function txOutputs(outs) {
  const sorted = [...outs].sort((a, b) => a.vout - b.vout);
  const scripthashes = Buffer.allocUnsafe(32 * sorted.length);
  const p2pk = new Map();
  sorted.forEach((o, i) => {
    D.hashFromHex(o.sh).copy(scripthashes, 32 * i);
    if (o.p2pk) p2pk.set(i, D.hashFromHex(o.p2pk));
  });
  return { count: sorted.length, vouts: sorted.map((o) => o.vout), values: sorted.map((o) => o.value), scripthashes, p2pk };
}

/** The script hashes of a Changes, by slot, as the documents key them. */
function scripthashesOf(ch) {
  const out = new Array(ch.n);
  for (let j = 0; j < ch.n; j++) out[j] = D.hashHex(ch.shs.subarray(32 * j, 32 * j + 32));
  return out;
}

function sameTip(a, b) {
  if (!a || !b) return a === b;
  return a.height === b.height && a.hash === b.hash;
}

function tipText(tip) {
  return tip ? `height ${tip.height} (${tip.hash})` : 'an empty index';
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

module.exports = { Writer, leaseHeld, LEASE_MS };
