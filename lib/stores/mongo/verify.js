'use strict';

const crypto = require('node:crypto');
const D = require('./documents');
const { Problems, BlockChainCheck, checkAccount, checkParts } = require('../../core/verify');
const { FUNDED, SPENT, PAGE_ENTRIES, sealedCount, utxosInline } = require('../../core/rules');
const { leaseHeld, LEASE_MS } = require('./writer');

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
 * Walks the whole index (for `addrindex verify`) through the checks every store shares
 * (lib/core/verify.js): the chain of blocks, and every account's summary recomputed from its
 * history pages and UTXO documents (merge-joined by script hash over sorted cursors, so memory
 * stays flat apart from one number per block). Then this schema's own: TxNums dense and
 * matching their blocks, txid⇄TxNum both ways, each history entry's height and txid (kept in
 * the entry) against its block and tx, and the copies an account keeps (balance, utxoCount,
 * its inline UTXOs) against what they copy.
 *
 * Without snapshot reads a walk beside a moving writer cannot be consistent, so it holds a
 * lease in `meta` that the writer waits for before its next batch (an expiring one: a
 * verifier that dies stops holding the writer after LEASE_MS), waits for a batch under way,
 * and walks again if one committed meanwhile.
 *
 * @param {import('../mongo').MongoStore} store
 * @param {{maxProblems?: number}} opts
 * @returns {Promise<import('../abstract').VerifyResult>}
 */
async function verifyIndex(store, opts) {
  const db = store.database;
  const meta = db.coll(C.meta);
  // a writer waiting for an earlier verify goes first, so verifies in a loop cannot starve it
  while (await leaseHeld(db, 'writerwait')) await sleep(25);
  const id = `readlock:${process.pid}:${crypto.randomBytes(6).toString('hex')}`;
  const renew = () => db.retry('verify lease', () => meta.replaceOne({ _id: id }, { _id: id, until: new Date(Date.now() + LEASE_MS) }, { upsert: true }));
  await renew();
  const timer = setInterval(() => renew().catch(() => {}), LEASE_MS / 3);
  try {
    let result;
    for (let attempt = 0; attempt < 5; attempt++) {
      while (await db.retry('verify', () => meta.findOne({ _id: 'pending' }))) await sleep(25);
      const before = await store.reads.readTip();
      result = await walk(store, before, opts);
      const after = await store.reads.readTip();
      const pending = await db.retry('verify', () => meta.findOne({ _id: 'pending' }));
      if (!pending && (before ? before.seq : 0) === (after ? after.seq : 0)) break;
    }
    return result;
  } finally {
    clearInterval(timer);
    await db.retry('verify lease', () => meta.deleteOne({ _id: id })).catch(() => {});
  }
}

/** One walk of everything, as of `tip`. */
async function walk(store, tip, opts) {
  const db = store.database;
  const problems = new Problems(opts.maxProblems);
  const problem = (p) => problems.add(p);
  const checked = { blocks: 0, txs: 0, history: 0, utxos: 0, summaries: 0, p2pkParts: 0 };
  /** address accounts with P2PK parts, checked once every account is walked */
  let withParts = [];
  const coll = (n) => db.coll(n);

  // blocks: heights 0..tip, linked by prev, TxNums consecutive
  const firstTxNums = [];
  await db.retry('verify blocks', async () => {
    firstTxNums.length = 0;
    const chain = new BlockChainCheck(problems);
    for await (const b of coll(C.blocks).find({}).sort({ _id: 1 })) {
      chain.block(b._id, { hash: b.hash, prev: b.prev, firstTxNum: D.num(b.firstTxNum), txCount: b.txCount });
      firstTxNums.push(D.num(b.firstTxNum));
    }
    chain.end(tip);
    checked.blocks = chain.count;
  });
  const nextTxNum = tip ? tip.nextTxNum : 0;
  const heightOf = (txNum) => {
    if (!(txNum >= 0 && txNum < nextTxNum)) return -1;
    let lo = 0;
    let hi = firstTxNums.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (firstTxNums[mid] <= txNum) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  /** txids by TxNum, from the txs walk, when the chain is small enough to hold them (else checked by `$in` rounds) */
  let txids = null;

  // txs: one per TxNum 0..nextTxNum-1 (the unique txNum index and _id make both directions unique)
  await db.retry('verify txs', async () => {
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
  await db.retry('verify accounts', async () => {
    checked.history = 0;
    checked.utxos = 0;
    checked.summaries = 0;
    withParts = [];
    const accounts = new Groups(coll(C.accounts).find({}).sort({ _id: 1 }), (d) => d._id);
    const pages = new Groups(coll(C.history).find({}).sort({ _id: 1 }), (d) => d.sh);
    const utxos = new Groups(coll(C.utxos).find({}).sort({ sh: 1, txNum: 1, vout: 1 }), (d) => d.sh);
    let txidChecks = [];
    const flushTxids = async () => {
      if (txidChecks.length === 0) return;
      let got;
      if (txids) {
        got = (n) => txids[n];
      } else {
        const docs = await coll(C.txs).find({ txNum: { $in: [...new Set(txidChecks.map((e) => e.txNum))].map(D.long) } }).toArray();
        const m = new Map(docs.map((d) => [D.num(d.txNum), D.txidOf(d)]));
        got = (n) => m.get(n);
      }
      for (const e of txidChecks) {
        if (got(e.txNum) !== e.txid) problem(`history of ${e.sh}: TxNum ${e.txNum} has txid ${e.txid}, but the tx of TxNum ${e.txNum} is ${got(e.txNum) || 'missing'}`);
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
      const name = `account ${sh}`;
      const a = D.fromAccountFields(doc, sh);
      const entries = [];
      ps.forEach((p, i) => {
        if (p.page !== i || p._id !== D.pageId(sh, i)) problem(`${name}: history page ${p._id} where page ${i} was expected`);
        const page = D.fromPageDoc(p, sh, p.page);
        const after = i + 1 < ps.length ? D.fromPageDoc(ps[i + 1], sh, ps[i + 1].page)[0] : a.tail[0];
        if (!after || D.num(p.sealedBy) !== after.txNum) problem(`${name}: page ${i} says entry ${D.num(p.sealedBy)} sealed it, the next is ${after ? after.txNum : 'none'}`);
        entries.push(...page);
      });
      if (ps.length !== sealedCount(a.txCount) / PAGE_ENTRIES) problem(`${name}: ${ps.length} sealed history pages for ${a.txCount} entries`);
      entries.push(...a.tail);
      checked.history += entries.length;
      for (const e of entries) {
        const h = heightOf(e.txNum);
        if (h >= 0 && e.height !== h) problem(`${name}: TxNum ${e.txNum} says height ${e.height}, its block is ${h}`);
        txidChecks.push({ txNum: e.txNum, txid: e.txid, sh });
      }
      if (txidChecks.length >= TXID_CHECK_CHUNK) await flushTxids();
      const hist = entries.map((e) => e.txNum * 4 + (e.funded ? FUNDED : 0) + (e.spent ? SPENT : 0));
      checkAccount(problems, name, a, hist, us.map((u) => [u.txNum, u.vout, u.value]), heightOf);
      if (a.parts) withParts.push({ name, a, hist });
      if (D.num(doc.balance) !== a.received - a.sent) problem(`${name}: balance ${D.num(doc.balance)} is not received - sent = ${a.received - a.sent}`);
      if (D.num(doc.utxoCount) !== a.fundedCount - a.spentCount) problem(`${name}: utxoCount ${D.num(doc.utxoCount)} is not fundedCount - spentCount`);
      if (utxosInline(us.length)) {
        const inline = a.utxos === null ? null : a.utxos.map((o) => o.id).join(',');
        if (inline !== us.map((o) => o.id).join(',')) problem(`${name}: its inline UTXOs differ from the utxos collection`);
      } else if (a.utxos !== null) problem(`${name}: ${us.length} UTXOs listed inline`);
    }
    await flushTxids();
  });

  // the P2PK parts of address accounts: their accounts, within them
  await db.retry('verify P2PK parts', async () => {
    checked.p2pkParts = 0;
    for (const { name, a, hist } of withParts) {
      const ids = a.parts.p2pk.map((p) => D.hashHex(p.sh));
      const docs = await db.findByIds(C.accounts, ids);
      const parts = [];
      for (const [k, id] of ids.entries()) {
        const doc = docs.get(id);
        if (!doc || doc.gone) {
          problem(`${name}: counts the P2PK script ${id}, which has no account`);
          continue;
        }
        const pa = D.fromAccountFields(doc, id);
        const entries = [];
        for (let page = 0; page < sealedCount(pa.txCount) / PAGE_ENTRIES; page++) entries.push(...(await store.reads.page(id, page)));
        entries.push(...pa.tail);
        parts.push({ sh: id, first: a.parts.p2pk[k].first, summary: D.summaryOf(pa), hist: entries.map((e) => e.txNum * 4 + (e.funded ? FUNDED : 0) + (e.spent ? SPENT : 0)) });
      }
      checked.p2pkParts += parts.length;
      checkParts(problems, name, a, hist, parts);
    }
  });
  return problems.result(checked);
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

module.exports = { verifyIndex };
