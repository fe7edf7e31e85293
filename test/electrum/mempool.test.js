'use strict';

const assert = require('node:assert/strict');
const { makeChain, openIndex, syncInto, waitFor } = require('../helpers/chains');
const { addressAt } = require('../helpers/reference');
const { mempoolChains, mempoolOf, snapshot: snapshotAt, unconfirmedOf } = require('../helpers/mempool');
const { tempDir } = require('../helpers/tmp');
const { startElectrum, connectClient, expectedStatus } = require('./helpers');

/** Generated chain: the index holds heights 0..M, blocks M+1..B are the "mempool". */
const SEED = 'electrum-mempool';
const M = 14;
const B = 16;

const display = (hex) => Buffer.from(hex, 'hex').reverse().toString('hex');
const nullable = (v) => (v && typeof v === 'object' && 'result' in v ? v.result : v);
const snapshot = (ref, seq, txs) => snapshotAt(ref, seq, txs, M);

/**
 * What an Electrum server must answer for a script hash (internal hex) with the index at M and
 * `txs` unconfirmed, computed from the reference alone.
 */
function expected(ref, sh, txs) {
  const u = unconfirmedOf(ref, sh, txs, M);
  const mempool = u.mine
    .map((p) => ({ tx_hash: p.tx.hash, height: p.ins.some((i) => i.unconfirmed) ? -1 : 0, fee: p.fee }))
    .sort((a, b) => b.height - a.height || (a.tx_hash < b.tx_hash ? -1 : 1));
  const utxos = [
    ...u.confirmedUtxos.map((x) => ({ tx_hash: x.txid, tx_pos: x.vout, height: x.height, value: x.value })),
    ...u.poolUtxos.map((x) => ({ tx_hash: x.txid, tx_pos: x.vout, height: 0, value: x.value })),
  ];
  const history = u.at.history.map((e) => ({ tx_hash: e.txid, height: e.height }));
  return {
    balance: { confirmed: u.at.summary ? u.at.summary.balance : 0, unconfirmed: u.balance },
    history: [...history, ...mempool],
    mempool,
    utxos,
    status: expectedStatus([...history, ...mempool].map((e) => ({ txid: e.tx_hash, height: e.height }))),
  };
}

/** Counts a client's notifications per script hash (display hex) and keeps the last status. */
function listen(client) {
  const heard = { statuses: new Map(), headers: [] };
  client.subscribe.on('blockchain.scripthash.subscribe', ([sh, status]) => {
    const h = heard.statuses.get(sh) || { n: 0, last: undefined };
    heard.statuses.set(sh, { n: h.n + 1, last: status });
  });
  client.subscribe.on('blockchain.headers.subscribe', ([header]) => heard.headers.push(header));
  return heard;
}

describe('electrum: the mempool snapshot in answers and notifications', function () {
  this.timeout(60000);
  let ref;
  let pool;
  let store;
  let srv;
  let client;
  let heard;
  let shs; // internal hex: every script hash the mempool touches, and a few it does not
  let current; // internal hex → the status last told to the client

  before(async () => {
    // Electrum's script hashes: the script view
    const { part, ref: r } = await mempoolChains(SEED, M, B, { view: 'script' });
    ref = r;
    pool = mempoolOf(ref, M, B, 'script');
    // the cases a view must get right are all in it
    assert.ok(pool.length > 30, `${pool.length} mempool transactions`);
    assert.ok(pool.some((p) => p.ins.some((i) => i.unconfirmed)), 'a transaction spending a mempool output (height -1)');
    assert.ok(pool.some((p) => p.height === M + 1) && pool.some((p) => p.height === M + 2));

    const touched = new Set(pool.flatMap((p) => [...p.ins.map((i) => i.sh), ...p.outs.map((o) => o.sh)]).filter(Boolean));
    const quiet = [...ref.history.keys()].filter((sh) => !touched.has(sh) && addressAt(ref, sh, M).summary).slice(0, 5);
    shs = [...touched, ...quiet];

    const datadir = tempDir('electrum-mempool');
    store = await openIndex(datadir);
    await syncInto(part.dir, store);
    srv = await startElectrum(datadir, { network: 'regtest', limits: { pollMs: 20 } });
    client = await connectClient(srv.port);
    heard = listen(client);
    assert.equal((await client.blockchainHeaders_subscribe()).height, M);
    current = new Map();
    for (const sh of shs) {
      const status = nullable(await client.blockchainScripthash_subscribe(display(sh)));
      assert.equal(status, expected(ref, sh, []).status, sh);
      current.set(sh, status);
    }
  });
  after(async () => {
    if (client) client.close();
    if (srv) await srv.close();
    if (store) await store.close();
  });

  /** Notifications heard so far, per script hash (display hex): taken before a change. */
  const counts = () => new Map(shs.map((sh) => [display(sh), (heard.statuses.get(display(sh)) || { n: 0 }).n]));

  /**
   * Waits until every status that `want` changes has been notified, then a ping: what the same
   * change pushed was written before its answer. Since `seen` (counts() before the change), each
   * changed status is told (once, unless the change came in steps), the others not at all.
   */
  async function expectNotified(seen, want, { once = true } = {}) {
    const changed = shs.filter((sh) => want.get(sh) !== current.get(sh));
    await waitFor(() => changed.every((sh) => (heard.statuses.get(display(sh)) || {}).last === want.get(sh)), 30000, 'the notifications');
    await client.server_ping();
    for (const sh of shs) {
      const h = heard.statuses.get(display(sh)) || { n: 0 };
      const got = h.n - seen.get(display(sh));
      if (changed.includes(sh)) assert.ok(once ? got === 1 : got >= 1, `${sh} changed: notified ${got} times`);
      else assert.equal(got, 0, `${sh} did not change but was notified`);
      current.set(sh, want.get(sh));
    }
    return changed.length;
  }

  async function checkAnswers(txs) {
    for (const sh of shs) {
      const want = expected(ref, sh, txs);
      const d = display(sh);
      const [balance, history, mempool, utxos] = await Promise.all([client.blockchainScripthash_getBalance(d), client.blockchainScripthash_getHistory(d),
        client.blockchainScripthash_getMempool(d), client.blockchainScripthash_listunspent(d)]);
      assert.deepEqual(balance, want.balance, `balance ${sh}`);
      assert.deepEqual(history, want.history, `history ${sh}`);
      assert.deepEqual(mempool, want.mempool, `mempool ${sh}`);
      assert.deepEqual(utxos, want.utxos, `utxos ${sh}`);
    }
  }

  it('a first snapshot (the txs of block M+1): its script hashes are notified, every answer counts it', async () => {
    const txs = pool.filter((p) => p.height === M + 1);
    const seen = counts();
    assert.equal(await store.putMempool(snapshot(ref, 1, txs)), true);
    const changed = await expectNotified(seen, new Map(shs.map((sh) => [sh, expected(ref, sh, txs).status])));
    assert.ok(changed > 10, `${changed} statuses changed`);
    await checkAnswers(txs);
  });

  it('the next one (M+1 and M+2): only the statuses it changes are notified; fee histogram, raw transactions', async () => {
    const seen = counts();
    assert.equal(await store.putMempool(snapshot(ref, 2, pool)), true);
    const want = new Map(shs.map((sh) => [sh, expected(ref, sh, pool).status]));
    const changed = await expectNotified(seen, want);
    assert.ok(changed > 5 && changed < shs.length - 5, `${changed} of ${shs.length} statuses changed`);
    await checkAnswers(pool);
    // a confirmed output a mempool transaction spends is left out of listunspent, and one it pays is listed with height 0
    assert.ok(shs.some((sh) => expected(ref, sh, pool).utxos.length < addressAt(ref, sh, M).utxos.length));
    assert.ok(shs.some((sh) => expected(ref, sh, pool).history.some((e) => e.height === -1)));
    for (const sh of shs.slice(0, 20)) assert.equal(nullable(await client.blockchainScripthash_subscribe(display(sh))), want.get(sh));

    // electrs' bins of 50,000 vbytes, each at the lowest rate in it: all of these fit in one
    const vsize = pool.reduce((n, p) => n + p.vsize, 0);
    assert.ok(vsize < 50000);
    const lowest = Math.min(...pool.map((p) => p.fee / p.vsize));
    assert.deepEqual(await client.mempool_getFeeHistogram(), [[Math.floor(lowest * 1000) / 1000, vsize]]);

    for (const p of pool.slice(0, 10)) assert.equal(await client.blockchainTransaction_get(p.tx.hash), p.tx.toBuffer().toString('hex'));
    // the index was synced in process, so it records no blocks dir: a confirmed tx's bytes are unavailable
    await assert.rejects(client.blockchainTransaction_get(ref.blocks[M].transactions[0].hash),
      (e) => e.code === 2 && /confirmed but its bytes cannot be read: this server reads no blocks/.test(e.message));
    await assert.rejects(client.blockchainTransaction_get('00'.repeat(32)), (e) => e.code === 1 && /no transaction/.test(e.message));
  });

  it('blocks M+1..B mined: the snapshot of M is ignored (no duplicates), statuses are the confirmed ones', async () => {
    const full = await makeChain({ seed: SEED, blocks: B });
    const seen = counts();
    await syncInto(full.dir, store);
    await waitFor(() => heard.headers.some((h) => h.height === B), 30000, 'the header of B');
    assert.deepEqual(await store.getMempoolHead().then((h) => ({ seq: h.seq, tip: h.tip })), { seq: 2, tip: ref.blockHashes[M] }, 'the stale snapshot is still stored');
    // the sync may commit M+1 and M+2 apart: a status can change in two steps
    const changed = await expectNotified(seen, new Map(shs.map((sh) => [sh, expectedStatus(addressAt(ref, sh, B).history)])), { once: false });
    assert.ok(changed > 10, `${changed} statuses changed`);
    for (const sh of shs) {
      const at = addressAt(ref, sh, B);
      const d = display(sh);
      assert.deepEqual(await client.blockchainScripthash_getBalance(d), { confirmed: at.summary ? at.summary.balance : 0, unconfirmed: 0 });
      assert.deepEqual(await client.blockchainScripthash_getHistory(d), at.history.map((e) => ({ tx_hash: e.txid, height: e.height })));
      assert.deepEqual(await client.blockchainScripthash_getMempool(d), []);
      assert.deepEqual(await client.blockchainScripthash_listunspent(d),
        at.utxos.map((u) => ({ tx_hash: u.txid, tx_pos: u.vout, height: u.height, value: u.value })));
    }
    assert.deepEqual(await client.mempool_getFeeHistogram(), []);
  });
});
