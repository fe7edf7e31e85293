'use strict';

const assert = require('node:assert/strict');
const { openIndex, syncInto } = require('../helpers/chains');
const { mempoolChains, mempoolOf, snapshot, snapshotOf, changeWriter } = require('../helpers/mempool');
const { prng } = require('../helpers/prng');
const { tempDir } = require('../helpers/tmp');
const { MempoolCache } = require('../../lib/mempool/cache');
const { toDisplayHex } = require('../../lib/chain/hash');
const { MempoolView, ViewTx, KEEP_GONE_MS } = require('../../lib/core/mempool');
const { toHttpError } = require('../../lib/api/errors');

const SEED = 'mempool-cache';
const M = 14;
const B = 17;

/**
 * Everything a reader can ask of a view, as plain data: what a view derived from the last one
 * must answer exactly as a view built from its snapshot alone.
 * @param {import('../../lib/core/mempool').MempoolView} v
 * @param {Buffer[]} shs
 */
async function describeView(v, shs) {
  const hex = (t) => toDisplayHex(t.txid);
  const outpoints = v.txs.flatMap((t) => t.inputs.map((i) => [i.txid, i.vout]));
  return {
    seq: v.seq, tip: v.tip, count: v.txs.length, vsize: v.vsize, fee: v.fee,
    order: v.txs.map(hex),
    recent: v.recent(v.txs.length).map(hex),
    histogram: v.feeHistogram(),
    scripthashes: [...v.scripthashKeys()].sort(),
    scriptView: [...v.scripthashKeys('script')].sort().map((k) => [k, v.entriesOfKey(k, 'script').map((e) => [hex(e.tx), e.received, e.sent])]),
    spent: outpoints.map(([txid, vout]) => {
      const s = v.spender(txid, vout);
      return s && [hex(s.tx), s.vin];
    }),
    got: v.txs.map((t) => hex(v.get(t.txid))),
    perScripthash: await Promise.all(shs.map(async (sh) => ({
      entries: v.entries(sh).map((e) => [hex(e.tx), e.funded, e.spent, e.received, e.sent, e.fundedCount, e.spentCount]),
      newest: v.newest(sh).map((e) => hex(e.tx)),
      summary: v.summary(sh),
      utxos: v.utxos(sh).map((u) => [hex(u.tx), u.vout, u.value]),
      scriptUtxos: v.utxos(sh, 'script').map((u) => [hex(u.tx), u.vout, u.value]),
      parsed: await Promise.all(v.entries(sh).map(async (e) => (await v.parsed(e.tx)).hash)),
    }))),
    newestOf: v.newestOf(shs.slice(0, 8)).map(hex),
    unconfirmedInputs: v.txs.map((t) => v.hasUnconfirmedInputs(t)),
  };
}

describe('mempool: a reader derives each new snapshot\'s view from the last (lib/mempool/cache.js)', function () {
  this.timeout(120000);
  let ref;
  let pool;
  let store;
  let shs;

  before(async () => {
    const chains = await mempoolChains(SEED, M, B);
    ref = chains.ref;
    pool = mempoolOf(ref, M, B);
    assert.ok(pool.length >= 40, `${pool.length} mempool transactions`);
    shs = [...new Set(pool.flatMap((p) => [...p.ins.map((i) => i.sh), ...p.outs.map((o) => o.sh)]).filter(Boolean))].map((h) => Buffer.from(h, 'hex'));
    store = await openIndex(tempDir('mempool-cache'));
    await syncInto(chains.part.dir, store);
  });
  after(async () => {
    if (store) await store.close();
  });

  it('arrivals, departures, changed parts and reorderings: every view answers as one built from its snapshot alone, and the views before it stay as they were', async () => {
    const random = prng(12);
    const cache = new MempoolCache(store);
    const write = changeWriter();
    // a follower's run: the pool's transactions arrive in order; some leave; a kept one's part
    // changes in place (its resolution changed); now and then the order changes (a reorg)
    let held = pool.slice(0, Math.floor(pool.length / 2));
    let next = held.length;
    const seen = [];
    let derivedSteps = 0;
    for (let seq = 1; seq <= 30; seq++) {
      if (seq > 1) {
        held = held.filter(() => random() > 0.15);
        const arrive = 1 + Math.floor(random() * 4);
        for (let k = 0; k < arrive && next < pool.length; k++) held.push(pool[next++]);
        if (random() < 0.3 && held.length) {
          const k = Math.floor(random() * held.length);
          held[k] = { ...held[k], time: held[k].time + 1 };
        }
        if (seq % 10 === 0) held = held.slice().reverse();
      }
      // the first is a reset (the store holds the other tests' snapshots)
      assert.equal(await store.putMempool(seq === 1 ? snapshot(ref, 1000 + seq, held, M) : write(ref, 1000 + seq, held, M)), true);
      if (seq === 1) write(ref, 1000 + seq, held, M);
      const before = cache.stats.derived;
      const view = await cache.view(1000 + seq);
      const alone = await new MempoolCache(store).view(1000 + seq);
      assert.equal(view.seq, 1000 + seq);
      assert.deepEqual(await describeView(view, shs), await describeView(alone, shs), `seq ${seq}`);
      if (cache.stats.derived > before) derivedSteps++;
      // the seq-10 reversals give the kept transactions new places: derived all the same
      if (seq > 1) assert.equal(cache.stats.derived, before + 1, `seq ${seq} derived from the change`);
      seen.push({ view, described: await describeView(view, shs) });
    }
    for (const { view, described } of seen) assert.deepEqual(await describeView(view, shs), described, `view ${view.seq} unchanged by the views after it`);
    assert.equal(derivedSteps, 29, `${derivedSteps} views derived`);
  });

  it('Electrum statuses kept per script hash and extended by arrivals equal those made anew from each view, through departures and changed parts', async () => {
    const { mempoolStatusText, mempoolStatusPart, VIEW } = require('../../lib/electrum/reader');
    const random = prng(31);
    const cache = new MempoolCache(store);
    const write = changeWriter();
    let held = pool.slice(0, 10);
    let next = held.length;
    /** latin1 key -> the part kept at the last view */
    const kept = new Map();
    let last = null;
    let extended = 0;
    for (let seq = 1; seq <= 40 && next < pool.length; seq++) {
      if (seq > 1) {
        // mostly arrivals only; now and then a departure or a changed part
        if (random() < 0.25) held = held.filter(() => random() > 0.2);
        if (random() < 0.15 && held.length) {
          const k = Math.floor(random() * held.length);
          held[k] = { ...held[k], time: held[k].time + 1 };
        }
        const arrive = 1 + Math.floor(random() * 3);
        for (let k = 0; k < arrive && next < pool.length; k++) held.push(pool[next++]);
      }
      assert.equal(await store.putMempool(seq === 1 ? snapshot(ref, 1500 + seq, held, M) : write(ref, 1500 + seq, held, M)), true);
      if (seq === 1) write(ref, 1500 + seq, held, M);
      const view = await cache.view(1500 + seq);
      const changes = last ? view.changesSince(last, VIEW) : null;
      for (const sh of shs) {
        const key = sh.latin1Slice(0, 32);
        const got = mempoolStatusPart(view, sh, { key, kept: kept.get(key) || null, changes, keepFrom: 1 });
        const want = mempoolStatusText(view, sh);
        assert.deepEqual([got.count, got.text && got.text.toString('latin1')], [want.count, want.text && want.text.toString('latin1')], `seq ${seq}`);
        if (got.extended) extended++;
        if (got.part) kept.set(key, got.part);
        else kept.delete(key);
      }
      last = 1500 + seq;
    }
    assert.ok(extended > 50, `${extended} statuses extended from a kept part`);
  });

  it('Electrum subscriptions keeping every part (from one transaction on): each status after each poll equals one computed anew', async () => {
    const { StoreReader } = require('../../lib/electrum/reader');
    const { MempoolReader } = require('../../lib/mempool/reader');
    const { Subscriptions } = require('../../lib/electrum/subscriptions');
    const random = prng(37);
    const write = changeWriter();
    const reader = new StoreReader({ store, mempoolReader: new MempoolReader(store) });
    const opts = { reader, maxHistory: 100000, seenTip: () => null, log: () => {} };
    const subs = new Subscriptions({ ...opts, keepMempoolFrom: 1 });
    const session = { subs: new Set(), closed: false, notify() {} };
    const tip = await store.getTip();
    let held = pool.slice(0, 10);
    let next = held.length;
    for (let seq = 1; seq <= 30 && next < pool.length; seq++) {
      if (seq > 1) {
        if (random() < 0.25) held = held.filter(() => random() > 0.2);
        const arrive = 1 + Math.floor(random() * 3);
        for (let k = 0; k < arrive && next < pool.length; k++) held.push(pool[next++]);
      }
      assert.equal(await store.putMempool(seq === 1 ? snapshot(ref, 1600 + seq, held, M) : write(ref, 1600 + seq, held, M)), true);
      if (seq === 1) write(ref, 1600 + seq, held, M);
      const view = await reader.mempoolReader.at(tip);
      if (seq === 1) {
        for (const sh of shs) await subs.subscribe(session, Buffer.from(sh).reverse().toString('hex'), sh);
      }
      await subs.onChange({ previous: tip, tip, forkHeight: tip.height, moved: false, mempool: async () => view });
      const anew = new Subscriptions(opts);
      for (const e of subs.entries.values()) assert.equal(e.status, (await anew.compute(e.sh)).status, `seq ${seq}, ${e.hex}`);
    }
    assert.ok(subs.stats.extended > 10, `${subs.stats.extended} statuses extended from a kept part`);
  });

  it('a snapshot that changed nothing but its seq is derived without decoding a transaction; one read behind the kept changes is read whole', async () => {
    const cache = new MempoolCache(store);
    const write = changeWriter();
    const held = pool.slice(0, 20);
    assert.equal(await store.putMempool(snapshot(ref, 2000, held, M)), true);
    write(ref, 2000, held, M);
    await cache.view(2000);
    const decoded = cache.stats.decoded;
    assert.equal(await store.putMempool(write(ref, 2001, held, M)), true);
    const view = await cache.view(2001);
    assert.equal(cache.stats.decoded, decoded);
    assert.equal(cache.stats.derived, 1);
    assert.equal(view.seq, 2001);
    assert.equal(view.txs.length, 20);
    // a reader at 2001 while 70 more polls (each one arrival) go by: past the 64 changes kept
    const late = new MempoolCache(store);
    await late.view(2001);
    for (let k = 0; k < 70; k++) assert.equal(await store.putMempool(write(ref, 2002 + k, pool.slice(0, 21 + (k % 5)), M)), true);
    const head = await store.getMempoolHead();
    assert.equal(head.seq, 2071);
    assert.equal(await store.getMempoolChanges(2001), null, 'not kept any more');
    assert.equal((await store.getMempoolChanges(2071 - 64)).length, 64);
    const full = late.stats.full;
    const v = await late.view(2071);
    assert.equal(late.stats.full, full + 1);
    assert.deepEqual(await describeView(v, shs), await describeView(await new MempoolCache(store).view(2071), shs));
  });

  it('what left is kept for the views that held it for KEEP_GONE_MS, then forgotten; a view read later refuses to answer', () => {
    const decoded = (seq, n) => {
      const s = snapshotOf(ref, seq, pool.slice(0, n), M);
      return { ...s, txs: s.txs.map((t) => ViewTx.of(t)) };
    };
    const a = decoded(1, 10);
    const first = new MempoolView(a);
    // the second snapshot keeps transactions 2..9 (the same objects) and adds the 10th
    const c = decoded(2, 11);
    const rank = () => 10;
    const second = first.next({ seq: 2, tip: c.tip }, [c.txs[10]], a.txs.slice(0, 2), rank, 1000);
    assert.ok(second);
    assert.deepEqual(second.txs, [...a.txs.slice(2), c.txs[10]]);
    assert.equal(first.get(a.txs[0].txid), a.txs[0], 'the first view still holds what left');
    assert.equal(second.get(a.txs[0].txid), null);
    assert.equal(first.get(c.txs[10].txid), null, 'and not what came after it');
    const third = second.next({ seq: 3, tip: c.tip }, [], [], rank, 1000 + KEEP_GONE_MS + 1);
    assert.equal(third.txs.length, 9);
    assert.equal(third.get(a.txs[0].txid), null);
    assert.equal(second.get(a.txs[2].txid), a.txs[2]);
    let gone = null;
    assert.throws(() => first.get(a.txs[0].txid), (err) => { gone = err; return err.code === 'ERR_MEMPOOL_VIEW_GONE'; });
    // the API answers it as a 503 to retry, not as an internal error
    assert.deepEqual(toHttpError(gone), { status: 503, code: 'ERR_MEMPOOL_VIEW_GONE', message: 'the request outlived the mempool snapshot it began with; retry', internal: false });
    assert.equal(first.next({ seq: 4, tip: c.tip }, [], first.txs, rank), null, 'only the newest view of a line derives the next');
  });

  it('a view reads its transactions\' bytes from the store: those that left, while the store keeps the change that removed them; then ERR_MEMPOOL_VIEW_GONE', async () => {
    const cache = new MempoolCache(store);
    const write = changeWriter();
    assert.equal(await store.putMempool(snapshot(ref, 3000, pool.slice(0, 3), M)), true);
    write(ref, 3000, pool.slice(0, 3), M);
    const old = await cache.view(3000);
    assert.equal(old.txs[0].rawBytes, null, 'a view built from the store holds no bytes');
    const gone = old.txs[2];
    assert.equal(await store.putMempool(write(ref, 3001, pool.slice(0, 2), M)), true);
    // the bytes of what left, read by the view that still holds it: they hash to its txid
    assert.equal((await old.parsed(gone)).hash, toDisplayHex(gone.txid));
    assert.equal((await old.raw(gone)).toString('hex'), pool[2].tx.toString());
    for (let k = 0; k < 64; k++) assert.equal(await store.putMempool(write(ref, 3002 + k, pool.slice(0, 2), M)), true);
    await assert.rejects(old.raw(gone), (err) => err.code === 'ERR_MEMPOOL_VIEW_GONE');
    assert.equal((await old.raw(old.txs[0])).toString('hex'), pool[0].tx.toString(), 'what stays is read as ever');
  });
});
