'use strict';

const D = require('./documents');

const C = D.COLLECTIONS;
/** History entries checked against txs per `$in` round. */
const TXID_CHECK_CHUNK = 2000;
/** Up to this many txs, their txids are kept from the txs walk instead of read again per round. */
const TXIDS_IN_MEMORY = 2000000;

/**
 * A cursor read one group at a time: every document with the same `key(doc)`, in sort order.
 */
class Groups {
  constructor(cursor, key) {
    this.it = cursor[Symbol.asyncIterator]();
    this.key = key;
    this.head = undefined;
  }

  async peekKey() {
    if (this.head === undefined) {
      const r = await this.it.next();
      this.head = r.done ? null : r.value;
    }
    return this.head === null ? null : this.key(this.head);
  }

  /** The documents of the next group if its key is `k`, else []. */
  async take(k) {
    const out = [];
    while ((await this.peekKey()) === k && k !== null) {
      out.push(this.head);
      this.head = undefined;
    }
    return out;
  }
}

/**
 * Walks the whole index (for `addrindex verify`): the block chain of documents, TxNums dense
 * and matching their blocks, txid⇄TxNum both ways, and every summary recomputed from its
 * history and UTXO documents (merge-joined by script hash over sorted cursors, so memory
 * stays flat apart from one number per block).
 *
 * @param {import('../mongo').MongoStore} store
 * @param {{maxProblems: number}} opts
 * @returns {Promise<{ok: boolean, checked: object, problems: string[]}>}
 */
async function verifyIndex(store, { maxProblems }) {
  const problems = [];
  let total = 0;
  const problem = (p) => {
    total++;
    if (problems.length < maxProblems) problems.push(p);
  };
  const checked = { blocks: 0, txs: 0, history: 0, utxos: 0, summaries: 0 };
  const tip = await store._committedTip();
  const coll = (n) => store._coll(n);

  // blocks: heights 0..tip, linked by prev, TxNums consecutive
  const firstTxNums = [];
  await store._read('verify blocks', async () => {
    firstTxNums.length = 0;
    checked.blocks = 0;
    let next = 0;
    let prevHash = null;
    for await (const b of coll(C.blocks).find({}).sort({ _id: 1 })) {
      const h = checked.blocks++;
      if (b._id !== h) problem(`block document ${b._id} where height ${h} was expected`);
      if (prevHash !== null && b.prev !== prevHash) problem(`block ${b._id}: prev ${b.prev} is not block ${h - 1}'s hash ${prevHash}`);
      if (D.num(b.firstTxNum) !== next) problem(`block ${b._id}: firstTxNum ${D.num(b.firstTxNum)}, expected ${next}`);
      firstTxNums.push(D.num(b.firstTxNum));
      next = D.num(b.firstTxNum) + b.txCount;
      prevHash = b.hash;
    }
    if (!tip) {
      if (checked.blocks) problem(`${checked.blocks} block documents in an index without a tip`);
      return;
    }
    if (checked.blocks !== tip.height + 1) problem(`${checked.blocks} block documents for a tip at height ${tip.height}`);
    if (prevHash !== tip.hash) problem(`the tip hash ${tip.hash} is not the last block's ${prevHash}`);
    if (next !== tip.nextTxNum) problem(`the tip's nextTxNum ${tip.nextTxNum} is not ${next}, where the blocks end`);
  });
  const heightOf = (txNum) => {
    let lo = 0;
    let hi = firstTxNums.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (firstTxNums[mid] <= txNum) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const nextTxNum = tip ? tip.nextTxNum : 0;
  /** txids by TxNum, from the txs walk, when the chain is small enough to hold them (else checked by `$in` rounds) */
  let txids = null;

  // txs: one per TxNum 0..nextTxNum-1 (the unique txNum index and _id make both directions unique)
  await store._read('verify txs', async () => {
    checked.txs = 0;
    txids = nextTxNum <= TXIDS_IN_MEMORY ? [] : null;
    for await (const t of coll(C.txs).find({}).sort({ txNum: 1 })) {
      const n = D.num(t.txNum);
      if (txids) txids[n] = D.txidOf(t);
      if (n !== checked.txs) problem(`tx ${t._id} has TxNum ${n}, expected ${checked.txs}`);
      else if (t.height !== heightOf(n) || t.pos !== n - firstTxNums[t.height]) problem(`tx ${t._id} (TxNum ${n}) says block ${t.height} position ${t.pos}`);
      checked.txs++;
    }
    if (checked.txs !== nextTxNum) problem(`${checked.txs} tx documents for ${nextTxNum} TxNums`);
  });

  // accounts ⋈ history pages ⋈ utxos by script hash
  await store._read('verify accounts', async () => {
    checked.history = 0;
    checked.utxos = 0;
    checked.summaries = 0;
    const accounts = new Groups(coll(C.accounts).find({}).sort({ _id: 1 }), (d) => d._id);
    const pages = new Groups(coll(C.history).find({}).sort({ _id: 1 }), (d) => d.sh);
    const utxos = new Groups(coll(C.utxos).find({}).sort({ sh: 1, txNum: 1, vout: 1 }), (d) => d.sh);
    let txidChecks = [];
    const flushTxids = async () => {
      if (txidChecks.length === 0) return;
      if (txids) {
        for (const e of txidChecks) {
          if (txids[e.txNum] !== e.txid) problem(`history of ${e.sh}: TxNum ${e.txNum} has txid ${e.txid}, but the tx of TxNum ${e.txNum} is ${txids[e.txNum] || 'missing'}`);
        }
        txidChecks = [];
        return;
      }
      const want = new Map(txidChecks.map((e) => [e.txNum, e]));
      const docs = await coll(C.txs).find({ txNum: { $in: [...want.keys()].map(D.long) } }).toArray();
      const got = new Map(docs.map((d) => [D.num(d.txNum), D.txidOf(d)]));
      for (const [n, e] of want) {
        if (got.get(n) !== e.txid) problem(`history of ${e.sh}: TxNum ${n} has txid ${e.txid}, but the tx of TxNum ${n} is ${got.get(n) || 'missing'}`);
      }
      txidChecks = [];
    };
    for (;;) {
      const keys = [await accounts.peekKey(), await pages.peekKey(), await utxos.peekKey()].filter((k) => k !== null);
      if (keys.length === 0) break;
      const sh = keys.sort()[0];
      const [doc] = await accounts.take(sh);
      const ps = await pages.take(sh);
      const us = (await utxos.take(sh)).map(D.fromUtxoDoc);
      checked.utxos += us.length;
      if (!doc || doc.gone) {
        problem(`script hash ${sh} has ${ps.length} history pages and ${us.length} UTXOs but no account`);
        continue;
      }
      checked.summaries++;
      const a = D.fromAccountFields(doc, sh);
      const sealed = Math.floor(a.txCount / D.PAGE_SIZE);
      const entries = [];
      ps.forEach((p, i) => {
        if (p.page !== i || p._id !== D.pageId(sh, i)) problem(`account ${sh}: history page ${p._id} where page ${i} was expected`);
        entries.push(...D.fromPageDoc(p, sh, p.page));
      });
      if (ps.length !== sealed) problem(`account ${sh}: ${ps.length} sealed history pages for ${a.txCount} entries`);
      entries.push(...a.tail);
      checked.history += entries.length;
      let funded = 0;
      let spent = 0;
      const fundedAt = new Set();
      let last = -1;
      for (const e of entries) {
        if (e.txNum <= last) problem(`account ${sh}: history out of order at TxNum ${e.txNum}`);
        last = e.txNum;
        if (e.txNum >= nextTxNum) problem(`account ${sh}: history entry TxNum ${e.txNum} is above the tip`);
        else if (e.height !== heightOf(e.txNum)) problem(`account ${sh}: TxNum ${e.txNum} says height ${e.height}, its block is ${heightOf(e.txNum)}`);
        if (!e.funded && !e.spent) problem(`account ${sh}: TxNum ${e.txNum} neither funds nor spends`);
        if (e.funded) {
          funded++;
          fundedAt.add(e.txNum);
        }
        if (e.spent) spent++;
        txidChecks.push({ txNum: e.txNum, txid: e.txid, sh });
      }
      if (txidChecks.length >= TXID_CHECK_CHUNK) await flushTxids();
      let balance = 0;
      for (const u of us) {
        balance += u.value;
        if (!fundedAt.has(u.txNum)) problem(`UTXO ${u.id} of ${sh} has no funding history entry`);
      }
      const sum = D.summaryOf(a);
      const want = {
        txCount: entries.length,
        utxoCount: us.length,
        balance,
        firstHeight: entries.length ? entries[0].height : undefined,
        lastHeight: entries.length ? entries[entries.length - 1].height : undefined,
      };
      for (const [k, v] of Object.entries(want)) {
        if (sum[k] !== v) problem(`account ${sh}: ${k} ${sum[k]}, recomputed ${v}`);
      }
      if (D.num(doc.balance) !== sum.balance) problem(`account ${sh}: balance ${D.num(doc.balance)} is not received - sent = ${sum.balance}`);
      if (D.num(doc.utxoCount) !== sum.utxoCount) problem(`account ${sh}: utxoCount ${D.num(doc.utxoCount)} is not fundedCount - spentCount = ${sum.utxoCount}`);
      if (sum.fundedCount < funded || sum.spentCount < spent) problem(`account ${sh}: fewer funded/spent outputs than history entries`);
      if (us.length <= D.INLINE_UTXOS) {
        const inline = a.utxos === null ? null : a.utxos.map((o) => o.id).join(',');
        if (inline !== us.map((o) => o.id).join(',')) problem(`account ${sh}: its inline UTXOs differ from the utxos collection`);
      } else if (a.utxos !== null) problem(`account ${sh}: ${us.length} UTXOs listed inline`);
    }
    await flushTxids();
  });
  if (total > problems.length) problems.push(`… and ${total - problems.length} more`);
  return { ok: total === 0, checked, problems };
}

module.exports = { verifyIndex };
