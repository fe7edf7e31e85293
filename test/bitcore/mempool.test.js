'use strict';

const assert = require('node:assert/strict');
const path = require('node:path');
const bitcore = require('bitcore-lib');
const { createRequire } = require('node:module');
const { openIndex, syncInto, waitFor } = require('../helpers/chains');
const { addressAt } = require('../helpers/reference');
const { mempoolChains, mempoolOf, snapshot, unconfirmedOf, regtestAddress } = require('../helpers/mempool');
const { tempDir } = require('../helpers/tmp');
const { startServer, request } = require('../api/helpers');
const { startBitcore, bitcoreHost } = require('../helpers/bitcore-host');
const { assertSameTx } = require('./insight-compare');

/**
 * insight-api 0.4.3 and bitcore-node 3.1.3, unchanged, in their own process (`addrindex
 * bitcore`), on an index with a mempool snapshot the test writes with store.putMempool, as the
 * follower would (test/helpers/mempool.js: a generated chain indexed to M, the transactions of
 * blocks M+1..B as the mempool). Every unconfirmed answer is checked against bitcore-lib's
 * reading of those transactions and against addrindex's own insight routes over the same index
 * (with the differences insight-compare.js lists). The service's methods with their mempool
 * options are called through bitcore-node's socket.io RPC; its events through insight's `inv`
 * room and the bus. Then the blocks are mined: the snapshot names an old tip and every answer
 * is the confirmed one.
 */
const SEED = 'bitcore-mempool';
const M = 14;
const B = 16;
/** The snapshot the service starts with holds the pool's first FIRST transactions; the second all. */
const FIRST = 12;

describe('insight-api 0.4.3 on addrindex\'s bitcoind service: the mempool snapshot', function () {
  this.timeout(120000);
  let chains;
  let ref;
  let pool;
  let store;
  let own;
  let bc;
  let socket;
  let addresses; // base58 (all insight 0.4.3 takes) of the script hashes the pool touches, and a few it does not
  const heard = { tx: [], block: [], rawtransaction: [], addresstxid: [] };
  const order = [];
  // the same feed from `addrindex serve`'s own socket.io server (lib/api/live.js), heard by
  // socket.io 4's client
  let ourSocket;
  const ours = { tx: [], block: [], rawtransaction: [], addresstxid: [] };
  const ourOrder = [];
  let oldSocket;
  const oldHeard = [];
  let subscribed;
  /** "txid:vout" → the output's script, bitcore-lib's, for every output of the long chain */
  const scripts = new Map();
  const insight = (p, opts) => request(`${bc.url}/insight-api${p}`, opts);
  const mine = (p, opts) => request(`${own.url}/insight-api${p}`, opts);
  const call = (method, params) => new Promise((resolve) => socket.emit('message', { method, params }, resolve));
  const noWitness = (p) => p.tx.toBuffer(true).toString('hex');

  before(async () => {
    chains = await mempoolChains(SEED, M, B);
    ref = chains.ref;
    for (const block of ref.blocks) for (const tx of block.transactions) tx.outputs.forEach((o, n) => scripts.set(`${tx.hash}:${n}`, o.script));
    pool = mempoolOf(ref, M, B);
    assert.ok(pool.length > FIRST + 5, `${pool.length} mempool transactions`);
    const touched = new Set(pool.flatMap((p) => [...p.ins.map((i) => i.sh), ...p.outs.map((o) => o.sh)]).filter(Boolean));
    const quiet = [...ref.history.keys()].filter((sh) => !touched.has(sh) && addressAt(ref, sh, M).summary);
    const base58 = (sh) => { const a = regtestAddress(ref, sh); return a && /^[mn2]/.test(a) ? { sh, address: a } : null; };
    addresses = [...[...touched].map(base58).filter(Boolean), ...quiet.map(base58).filter(Boolean).slice(0, 4)];
    assert.ok(addresses.length > 15, `${addresses.length} addresses`);

    const datadir = path.join(tempDir('bitcore-mempool'), 'index');
    store = await openIndex(datadir);
    await store.putSourceInfo({ blocksDir: chains.full.dir });
    await syncInto(chains.part.dir, store);
    assert.equal(await store.putMempool(snapshot(ref, 1, pool.slice(0, FIRST), M)), true);
    // blocks M+1..B are appended to the same files after 0..M: one blocks dir serves both
    [bc, own] = await Promise.all([
      startBitcore({ network: 'regtest', bitcoind: { datadir, blocksDir: chains.full.dir, tipPollMs: 50 } }),
      startServer(datadir, { network: 'regtest', blocksDir: chains.full.dir, live: { pollMs: 50 } }),
    ]);
    const io = createRequire(path.join(await bitcoreHost(), 'noop.js'))('socket.io-client');
    socket = io(bc.url, { transports: ['websocket'], forceNew: true });
    await new Promise((resolve) => socket.once('connect', resolve));
    for (const name of ['tx', 'block']) socket.on(name, (m) => { heard[name].push(m); order.push(name); });
    for (const topic of ['rawtransaction', 'addresstxid']) socket.on(`bitcoind/${topic}`, (m) => heard[topic].push(m));
    // an address a transaction of the second snapshot pays with a P2PKH output
    const isP2pkh = (o) => bitcore.Script.fromBuffer(o.script).isPublicKeyHashOut();
    const out = pool.slice(FIRST).reverse().find((p) => p.outs.some(isP2pkh)).outs.find(isP2pkh);
    subscribed = { sh: out.sh, address: regtestAddress(ref, out.sh) };
    socket.emit('subscribe', 'inv');
    socket.emit('subscribe', 'bitcoind/rawtransaction');
    socket.emit('subscribe', 'bitcoind/addresstxid', [subscribed.address]);
    await call('getBestBlockHash', []); // a round trip: the subscriptions before it have reached the server
    ourSocket = require('socket.io-client')(own.url, { transports: ['websocket'], forceNew: true });
    await new Promise((resolve) => ourSocket.once('connect', resolve));
    for (const name of ['tx', 'block']) ourSocket.on(name, (m) => { ours[name].push(m); ourOrder.push(name); });
    for (const topic of ['rawtransaction', 'addresstxid']) ourSocket.on(`bitcoind/${topic}`, (m) => ours[topic].push(m));
    ourSocket.emit('subscribe', 'inv');
    ourSocket.emit('subscribe', 'bitcoind/rawtransaction');
    ourSocket.emit('subscribe', 'bitcoind/addresstxid', [subscribed.address]);
    // bitcore-node's own socket.io 1.7 client (engine.io protocol 3) on serve's feed too
    oldSocket = io(own.url, { transports: ['websocket'], forceNew: true });
    await new Promise((resolve) => oldSocket.once('connect', resolve));
    oldSocket.on('tx', (m) => oldHeard.push(m.txid));
    oldSocket.emit('subscribe', 'inv');
    // the server in this process has taken the subscriptions
    await waitFor(() => own.app.live.subscriptions.addresses.has(subscribed.address) && own.app.live.subscriptions.topics.rawtransaction.length === 1 &&
      own.app.live.io.sockets.adapter.rooms.get('inv') && own.app.live.io.sockets.adapter.rooms.get('inv').size === 2, 5000, 'serve\'s subscriptions');
  });

  /** serve's feed said what the service said: the same messages in the same order (its tx
   * messages may name more outputs: P2PK, one-key multisig, segwit, as its /tx does). */
  async function sameFeed() {
    await waitFor(() => ours.tx.length >= heard.tx.length && ours.block.length >= heard.block.length, 20000, 'serve\'s feed');
    assert.deepEqual(ourOrder, order);
    assert.deepEqual(ours.block, heard.block);
    assert.deepEqual(ours.rawtransaction, heard.rawtransaction);
    assert.deepEqual(ours.addresstxid, heard.addresstxid);
    ours.tx.forEach((t, k) => {
      const theirs = heard.tx[k];
      assert.deepEqual([t.txid, t.valueOut, t.isRBF], [theirs.txid, theirs.valueOut, theirs.isRBF]);
      const named = new Map(t.vout.map((o) => Object.entries(o)[0]));
      for (const o of theirs.vout) for (const [a, v] of Object.entries(o)) assert.equal(named.get(a), v, `${t.txid} pays ${a}`);
    });
  }
  after(async () => {
    if (socket) socket.close();
    if (ourSocket) ourSocket.close();
    if (oldSocket) oldSocket.close();
    if (bc) await bc.stop();
    if (own) await own.close();
    if (store) await store.close();
  });

  /** insight-compare.js's check, and the size of the non-witness bytes the service hands out. */
  function sameTx(theirs, ours, since) {
    assertSameTx(theirs, ours, { since, scriptOf: (txid, vout) => scripts.get(`${txid}:${vout}`).toBuffer() });
    const at = ref.txs[ref.txids.indexOf(theirs.txid)];
    assert.equal(theirs.size, ref.blocks[at.height].transactions[at.position].toBuffer(true).length, theirs.txid);
  }

  it('a new snapshot: each transaction it adds, in its order, as insight\'s tx message and bitcoind/rawtransaction; bitcoind/addresstxid for the subscribed address', async () => {
    const added = pool.slice(FIRST);
    assert.equal(await store.putMempool(snapshot(ref, 2, pool, M)), true);
    await waitFor(() => heard.tx.length >= added.length, 20000, 'the tx messages');
    await call('getBestBlockHash', []);
    assert.deepEqual(heard.tx.map((t) => t.txid), added.map((p) => p.tx.hash));
    assert.deepEqual(heard.rawtransaction, added.map(noWitness));
    heard.tx.forEach((t, k) => assert.equal(Math.round(t.valueOut * 1e8), added[k].outs.reduce((n, o) => n + o.value, 0)));
    // bitcore-node's rule: the addresses bitcore-lib reads off input scripts (a P2PKH spend
    // shows its key) and output scripts, and (addrindex's) a P2PK output its key's address
    const paysTo = (o) => { const s = bitcore.Script.fromBuffer(o.script); return s.isPublicKeyHashOut() || s.isPublicKeyOut(); };
    const names = (p) => p.outs.some((o) => o.sh === subscribed.sh && paysTo(o)) ||
      p.ins.some((i, k) => i.sh === subscribed.sh && p.tx.inputs[k].script.isPublicKeyHashIn());
    assert.deepEqual(heard.addresstxid, added.filter(names).map((p) => ({ address: subscribed.address, txid: p.tx.hash })));
    assert.ok(heard.addresstxid.length >= 1);
    assert.deepEqual(heard.block, []);
    await sameFeed();
    await waitFor(() => oldHeard.length >= heard.tx.length, 20000, 'the socket.io 1.7 client');
    assert.deepEqual(oldHeard, heard.tx.map((t) => t.txid));
  });

  it('/addr/:addr: unconfirmed balance and appearances, the mempool\'s txids first (newest first); as addrindex\'s own insight route', async () => {
    for (const { sh, address } of addresses) {
      const u = unconfirmedOf(ref, sh, pool, M);
      const [r, ours] = await Promise.all([insight(`/addr/${address}`), mine(`/addr/${address}`)]);
      assert.equal(r.status, 200, address);
      assert.deepEqual(r.json, ours.json, address);
      assert.equal(r.json.unconfirmedBalanceSat, u.balance, address);
      assert.equal(r.json.unconfirmedTxApperances, u.mine.length, address);
      assert.equal(r.json.balanceSat, u.at.summary ? u.at.summary.balance : 0, address);
      const newest = u.mine.slice().reverse().map((p) => p.tx.hash);
      assert.deepEqual(r.json.transactions, [...newest, ...u.at.history.map((e) => e.txid).reverse()], address);
      const brief = (await insight(`/addr/${address}?noTxList=1`)).json;
      assert.deepEqual([brief.unconfirmedBalanceSat, brief.unconfirmedTxApperances, 'transactions' in brief], [u.balance, u.mine.length, false]);
      assert.equal((await insight(`/addr/${address}/unconfirmedBalance`)).json, u.balance);
    }
    assert.ok(addresses.some(({ sh }) => unconfirmedOf(ref, sh, pool, M).balance < 0), 'an address the mempool spends from');
  });

  it('/addr/:addr/utxo and /addrs/:addrs/utxo: the mempool\'s outputs first (newest first, confirmations 0, ts), then the confirmed ones it does not spend', async () => {
    const key = (x) => `${x.txid}:${x.vout}`;
    let spentChecked = 0;
    for (const { sh, address } of addresses) {
      const u = unconfirmedOf(ref, sh, pool, M);
      const [r, ours] = await Promise.all([insight(`/addr/${address}/utxo`), mine(`/addr/${address}/utxo`)]);
      assert.equal(r.status, 200, address);
      assert.deepEqual(new Map(r.json.map((x) => [key(x), x])), new Map(ours.json.map((x) => [key(x), x])), address);
      const poolFirst = u.poolUtxos.slice().sort((x, y) => y.p.time - x.p.time || y.vout - x.vout);
      assert.deepEqual(r.json.map((x) => [x.txid, x.vout, x.satoshis, x.confirmations, x.ts]), [
        ...poolFirst.map((x) => [x.txid, x.vout, x.value, 0, x.p.time]),
        ...u.confirmedUtxos.slice().reverse().map((x) => [x.txid, x.vout, x.value, M - x.height + 1, undefined]),
      ], address);
      if (u.confirmedUtxos.length < u.at.utxos.length) spentChecked++;
    }
    assert.ok(spentChecked > 0, 'an address with a confirmed output the mempool spends');
    const some = addresses.slice(0, 8).map((a) => a.address).join(',');
    const [r, ours] = await Promise.all([insight(`/addrs/${some}/utxo`), mine(`/addrs/${some}/utxo`)]);
    assert.deepEqual(new Map(r.json.map((x) => [key(x), x])), new Map(ours.json.map((x) => [key(x), x])));
    const firstConfirmed = r.json.findIndex((x) => x.confirmations > 0);
    assert.ok(r.json.slice(firstConfirmed).every((x) => x.confirmations > 0), 'the mempool\'s outputs first');
    assert.deepEqual(r.json.slice(0, firstConfirmed).map((x) => x.ts), r.json.slice(0, firstConfirmed).map((x) => x.ts).sort((x, y) => y - x));
  });

  it('/tx/:txid and /rawtx/:txid of every mempool transaction: values, fee, prevouts (from the chain or a mempool parent) and spenders as bitcore-lib reads them', async () => {
    const since = Math.floor(Date.now() / 1000);
    const spentIn = new Map(pool.flatMap((p) => p.tx.inputs.map((i, vin) => [`${i.prevTxId.toString('hex')}:${i.outputIndex}`, { txid: p.tx.hash, vin }])));
    for (const p of pool) {
      const [r, ours] = await Promise.all([insight(`/tx/${p.tx.hash}`), mine(`/tx/${p.tx.hash}`)]);
      assert.equal(r.status, 200, r.text);
      sameTx(r.json, ours.json, since);
      assert.deepEqual([r.json.confirmations, r.json.blockheight, 'blockhash' in r.json, 'blocktime' in r.json], [0, -1, false, false]);
      assert.deepEqual(r.json.vin.map((i) => [i.txid, i.vout, i.valueSat]), p.ins.map((i) => [i.txid, i.vout, i.value]));
      assert.equal(Math.round(r.json.fees * 1e8), p.fee);
      assert.deepEqual(r.json.vout.map((o) => [o.spentTxId, o.spentIndex]), p.outs.map((o, n) => {
        const s = spentIn.get(`${p.tx.hash}:${n}`);
        return s ? [s.txid, s.vin] : [null, null];
      }));
      assert.deepEqual((await insight(`/rawtx/${p.tx.hash}`)).json, { rawtx: noWitness(p) });
    }
    // a confirmed output a mempool transaction spends: spent at height -1
    const p = pool.find((x) => x.ins.some((i) => !i.unconfirmed));
    const i = p.ins.findIndex((x) => !x.unconfirmed);
    const [r, ours] = await Promise.all([insight(`/tx/${p.ins[i].txid}`), mine(`/tx/${p.ins[i].txid}`)]);
    sameTx(r.json, ours.json, since);
    const o = r.json.vout[p.ins[i].vout];
    assert.deepEqual([o.spentTxId, o.spentIndex, o.spentHeight], [p.tx.hash, i, -1]);
    assert.equal((await insight(`/tx/${'ab'.repeat(32)}`)).status, 404);
  });

  it('/txs?address= and /addrs/txs: the mempool\'s transactions first, newest first, each as addrindex\'s own route gives it', async () => {
    const since = Math.floor(Date.now() / 1000);
    let checked = 0;
    for (const { sh, address } of addresses) {
      const u = unconfirmedOf(ref, sh, pool, M);
      if (u.mine.length === 0) continue;
      const [r, ours] = await Promise.all([insight(`/txs?address=${address}`), mine(`/txs?address=${address}`)]);
      const all = [...u.mine.slice().reverse().map((p) => p.tx.hash), ...u.at.history.map((e) => e.txid).reverse()];
      assert.equal(r.json.pagesTotal, Math.ceil(all.length / 10), address);
      assert.deepEqual(r.json.txs.map((t) => t.txid), all.slice(0, 10), address);
      r.json.txs.forEach((t, k) => sameTx(t, ours.json.txs[k], since));
      checked++;
    }
    assert.ok(checked > 10, `${checked} addresses`);
    const two = addresses.filter(({ sh }) => unconfirmedOf(ref, sh, pool, M).mine.length).slice(0, 2);
    const both = pool.filter((p) => two.some(({ sh }) => p.ins.some((i) => i.sh === sh) || p.outs.some((o) => o.sh === sh)));
    const body = { addrs: two.map((a) => a.address).join(','), from: 0, to: 50 };
    const [r, ours] = await Promise.all([insight('/addrs/txs', { method: 'POST', body }), mine('/addrs/txs', { method: 'POST', body })]);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json.items.slice(0, both.length).map((t) => t.txid), both.slice().reverse().map((p) => p.tx.hash));
    assert.ok(r.json.items.slice(0, both.length).every((t) => t.confirmations === 0 && t.blockheight === -1));
    assert.equal(r.json.totalItems, ours.json.totalItems);
    r.json.items.forEach((t, k) => sameTx(t, ours.json.items[k], since));
  });

  it('the service\'s methods with their mempool options (bitcore-node\'s socket.io RPC): queryMempool false leaves the mempool out, queryMempoolOnly, a height range; getSpentInfo at height -1', async () => {
    const { sh, address } = addresses.find((a) => {
      const u = unconfirmedOf(ref, a.sh, pool, M);
      return u.mine.length && u.confirmedUtxos.length < u.at.utxos.length;
    });
    const u = unconfirmedOf(ref, sh, pool, M);
    const newest = u.mine.slice().reverse().map((p) => p.tx.hash);
    const chain = u.at.history.map((e) => e.txid).reverse();
    // (the RPC passes getAddressSummary one parameter, as bitcore-node declares it: the mempool is asked)
    const summary = (await call('getAddressSummary', [address])).result;
    assert.deepEqual(Object.keys(summary), ['appearances', 'totalReceived', 'totalSpent', 'balance', 'unconfirmedAppearances', 'unconfirmedBalance', 'txids']);
    assert.deepEqual([summary.unconfirmedAppearances, summary.unconfirmedBalance, summary.txids], [newest.length, u.balance, [...newest, ...chain]]);
    assert.deepEqual((await call('getAddressTxids', [address, { queryMempoolOnly: true }])).result, newest);
    assert.deepEqual((await call('getAddressTxids', [address, { queryMempool: false }])).result, chain);
    // a height range asks the chain only, as bitcore-node's
    assert.deepEqual((await call('getAddressTxids', [address, { start: M, end: 1 }])).result, chain);
    const confirmedOnly = (await call('getAddressUnspentOutputs', [address, { queryMempool: false }])).result;
    assert.deepEqual(confirmedOnly.map((x) => `${x.txid}:${x.outputIndex}`), u.at.utxos.slice().reverse().map((x) => `${x.txid}:${x.vout}`));
    const history = (await call('getAddressHistory', [address, { from: 0, to: newest.length + 1 }])).result;
    assert.deepEqual(history.items.map((x) => [x.tx.hash, x.confirmations, x.tx.height]), [
      ...newest.map((t) => [t, 0, -1]), [chain[0], M - u.at.history[u.at.history.length - 1].height + 1, u.at.history[u.at.history.length - 1].height],
    ]);
    // who spent an output: a mempool transaction, at height -1 (the patched node's mempool spent index)
    const p = pool.find((x) => x.ins.some((i) => !i.unconfirmed) && x.ins.some((i) => i.unconfirmed));
    for (const [vin, input] of p.ins.entries()) {
      assert.deepEqual((await call('getSpentInfo', [{ txid: input.txid, index: input.vout }])).result, { txid: p.tx.hash, index: vin, height: -1 });
    }
    const detailed = (await call('getDetailedTransaction', [p.tx.hash])).result;
    assert.deepEqual([detailed.height, detailed.blockHash, detailed.blockTimestamp, detailed.feeSatoshis], [-1, undefined, undefined, p.fee]);
    assert.equal(detailed.hex, noWitness(p));
  });

  it('blocks M+1..B mined: the snapshot of M is ignored (unconfirmed figures 0, no mempool transaction), the blocks\' transactions not announced yet, then each block', async () => {
    const told = new Set(heard.tx.map((t) => t.txid));
    const before = heard.tx.length;
    await syncInto(chains.full.dir, store);
    await waitFor(() => heard.block.length >= B - M, 20000, 'the block messages');
    await call('getBestBlockHash', []);
    const expected = [];
    for (let h = M + 1; h <= B; h++) {
      for (const tx of ref.blocks[h].transactions) if (!told.has(tx.hash)) expected.push(['tx', tx.hash]);
      expected.push(['block', ref.blockHashes[h]]);
    }
    let t = before;
    let b = 0;
    const got = order.slice(order.length - expected.length).map((name) => [name, name === 'tx' ? heard.tx[t++].txid : heard.block[b++]]);
    assert.equal(order.length - expected.length, before);
    assert.deepEqual(got, expected);
    await sameFeed();
    for (const { sh, address } of addresses) {
      const at = addressAt(ref, sh, B);
      const r = (await insight(`/addr/${address}`)).json;
      assert.deepEqual([r.unconfirmedBalanceSat, r.unconfirmedTxApperances], [0, 0], address);
      assert.deepEqual(r.transactions, at.history.map((e) => e.txid).reverse(), address);
      assert.deepEqual((await insight(`/addr/${address}/utxo`)).json.map((x) => [x.txid, x.vout]), at.utxos.slice().reverse().map((x) => [x.txid, x.vout]));
    }
    for (const p of pool.slice(0, 5)) {
      const r = (await insight(`/tx/${p.tx.hash}`)).json;
      assert.deepEqual([r.blockheight, r.confirmations], [p.height, B - p.height + 1]);
    }
  });
});
