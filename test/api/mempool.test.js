'use strict';

const assert = require('node:assert/strict');
const mempoolJS = require('@mempool/mempool.js');
const { openIndex, syncInto } = require('../helpers/chains');
const { addressAt } = require('../helpers/reference');
const { mempoolChains, mempoolOf, snapshot, unconfirmedOf, regtestAddress } = require('../helpers/mempool');
const { tempDir } = require('../helpers/tmp');
const { startServer, request } = require('./helpers');
const { check } = require('./schema-check');

const DOC = JSON.parse(require('node:fs').readFileSync(require('node:path').join(__dirname, '..', '..', 'docs', 'openapi.json'), 'utf8'));

/**
 * The REST API's unconfirmed answers (Esplora, insight, native, @mempool/mempool.js) from a
 * mempool snapshot the test writes with store.putMempool, as the follower would: a generated
 * chain whose index holds heights 0..M, the transactions of blocks M+1..B as the mempool.
 * Every answer is checked against bitcore-lib's reading of those transactions
 * (test/helpers/mempool.js), never against addrindex's own parse. Then the blocks are mined:
 * the stored snapshot names an old tip and every answer is the confirmed one.
 */
const SEED = 'api-mempool';
const M = 14;
const B = 16;

const display = (hex) => Buffer.from(hex, 'hex').reverse().toString('hex');
const ZERO = { funded_txo_count: 0, funded_txo_sum: 0, spent_txo_count: 0, spent_txo_sum: 0, tx_count: 0 };

/** Esplora's JSON of a mempool transaction, field by field against bitcore-lib's reading. */
function checkEsploraTx(j, p) {
  assert.equal(j.txid, p.tx.hash);
  assert.equal(j.version, p.tx.version);
  assert.equal(j.locktime, p.tx.nLockTime);
  assert.deepEqual(j.vin.map((i) => [i.txid, i.vout, i.prevout.value, i.prevout.scriptpubkey, i.is_coinbase]),
    p.ins.map((i) => [i.txid, i.vout, i.value, i.script.toString('hex'), false]), `vin of ${p.tx.hash}`);
  assert.deepEqual(j.vout.map((o) => [o.value, o.scriptpubkey]), p.outs.map((o) => [o.value, o.script.toString('hex')]));
  assert.equal(j.size, p.tx.toBuffer().length);
  assert.equal(Math.ceil(j.weight / 4), p.vsize);
  assert.equal(j.fee, p.fee);
  assert.deepEqual(j.status, { confirmed: false });
}

describe('api: the mempool snapshot in every REST answer', function () {
  this.timeout(120000);
  let chains;
  let ref;
  let pool;
  let store;
  let srv;
  let shs; // internal hex: every script hash the pool touches, and a few it does not
  let datadir;
  const get = (path) => request(srv.url + path);
  const addressOf = (sh) => regtestAddress(ref, sh);

  before(async () => {
    chains = await mempoolChains(SEED, M, B);
    ref = chains.ref;
    pool = mempoolOf(ref, M, B);
    assert.ok(pool.length > 20, `${pool.length} mempool transactions`);
    assert.ok(pool.some((p) => p.ins.some((i) => i.unconfirmed)), 'a transaction spending a mempool output');
    const touched = new Set(pool.flatMap((p) => [...p.ins.map((i) => i.sh), ...p.outs.map((o) => o.sh)]).filter(Boolean));
    const quiet = [...ref.history.keys()].filter((sh) => !touched.has(sh) && addressAt(ref, sh, M).summary).slice(0, 5);
    shs = [...touched, ...quiet];

    datadir = tempDir('api-mempool');
    store = await openIndex(datadir);
    await store.putSourceInfo({ blocksDir: chains.part.dir });
    await syncInto(chains.part.dir, store);
    assert.equal(await store.putMempool(snapshot(ref, 1, pool, M)), true);
    srv = await startServer(datadir, { network: 'regtest' });
  });
  after(async () => {
    if (srv) await srv.close();
    if (store) await store.close();
  });

  it('Esplora address and scripthash: mempool_stats, /txs/mempool newest first, /txs mempool first, /utxo', async () => {
    for (const sh of shs) {
      const u = unconfirmedOf(ref, sh, pool, M);
      const a = await get(`/api/scripthash/${sh}`);
      assert.deepEqual(a.json.mempool_stats, u.stats, `mempool_stats ${sh}`);
      const s = u.at.summary;
      assert.equal(a.json.chain_stats.tx_count, s ? s.txCount : 0);
      const newest = u.mine.slice().reverse();
      const m = await get(`/api/scripthash/${sh}/txs/mempool`);
      assert.deepEqual(m.json.map((t) => t.txid), newest.slice(0, 50).map((p) => p.tx.hash), `txs/mempool ${sh}`);
      m.json.forEach((j, i) => checkEsploraTx(j, newest[i]));
      const txs = await get(`/api/scripthash/${sh}/txs`);
      const chain = u.at.history.map((e) => e.txid).reverse().slice(0, 25);
      assert.deepEqual(txs.json.map((t) => t.txid), [...newest.slice(0, 50).map((p) => p.tx.hash), ...chain], `txs ${sh}`);
      const utxo = await get(`/api/scripthash/${sh}/utxo`);
      assert.deepEqual(utxo.json.map((x) => [x.txid, x.vout, x.value, x.status.confirmed]), [
        ...u.confirmedUtxos.map((x) => [x.txid, x.vout, x.value, true]),
        ...u.poolUtxos.map((x) => [x.txid, x.vout, x.value, false]),
      ], `utxo ${sh}`);
      const address = addressOf(sh);
      if (address) assert.deepEqual((await get(`/api/address/${address}`)).json.mempool_stats, u.stats);
    }
    assert.ok(shs.some((sh) => unconfirmedOf(ref, sh, pool, M).confirmedUtxos.length < addressAt(ref, sh, M).utxos.length),
      'a confirmed output a mempool transaction spends is left out');
  });

  it('Esplora /txs with after_txid inside the mempool: the rest of the mempool, then the first confirmed page', async () => {
    const sh = shs.find((x) => unconfirmedOf(ref, x, pool, M).mine.length >= 2 && addressAt(ref, x, M).history.length > 0);
    const u = unconfirmedOf(ref, sh, pool, M);
    const newest = u.mine.slice().reverse().map((p) => p.tx.hash);
    const r = await get(`/api/scripthash/${sh}/txs?after_txid=${newest[0]}`);
    assert.deepEqual(r.json.map((t) => t.txid), [...newest.slice(1), ...u.at.history.map((e) => e.txid).reverse().slice(0, 25)]);
    // after a confirmed one: confirmed only
    const chain = u.at.history.map((e) => e.txid).reverse();
    assert.deepEqual((await get(`/api/scripthash/${sh}/txs?after_txid=${chain[0]}`)).json.map((t) => t.txid), chain.slice(1, 26));
  });

  it('Esplora /mempool, /mempool/txids, /mempool/recent; a mempool tx, its hex, status and outspends', async () => {
    const vsize = pool.reduce((n, p) => n + p.vsize, 0);
    const fee = pool.reduce((n, p) => n + p.fee, 0);
    const lowest = Math.min(...pool.map((p) => p.fee / p.vsize));
    assert.deepEqual((await get('/api/mempool')).json, { count: pool.length, vsize, total_fee: fee, fee_histogram: [[Math.floor(lowest * 1000) / 1000, vsize]] });
    assert.deepEqual((await get('/api/mempool/txids')).json.sort(), pool.map((p) => p.tx.hash).sort());
    assert.deepEqual((await get('/api/mempool/recent')).json, pool.slice().reverse().slice(0, 10).map((p) => ({
      txid: p.tx.hash, fee: p.fee, vsize: p.vsize, value: p.outs.reduce((n, o) => n + o.value, 0),
    })));
    const spentIn = new Map(pool.flatMap((p) => p.tx.inputs.map((i, vin) => [`${i.prevTxId.toString('hex')}:${i.outputIndex}`, { txid: p.tx.hash, vin }])));
    for (const p of pool) {
      checkEsploraTx((await get(`/api/tx/${p.tx.hash}`)).json, p);
      assert.equal((await get(`/api/tx/${p.tx.hash}/hex`)).text, p.tx.toBuffer().toString('hex'));
      assert.deepEqual((await get(`/api/tx/${p.tx.hash}/status`)).json, { confirmed: false });
      const outspends = (await get(`/api/tx/${p.tx.hash}/outspends`)).json;
      assert.deepEqual(outspends, p.outs.map((o, vout) => {
        const s = spentIn.get(`${p.tx.hash}:${vout}`);
        return s ? { spent: true, txid: s.txid, vin: s.vin, status: { confirmed: false } } : { spent: false };
      }));
    }
    // a confirmed output a mempool transaction spends: the unconfirmed spender
    const p = pool.find((x) => x.ins.some((i) => !i.unconfirmed));
    const i = p.ins.findIndex((x) => !x.unconfirmed);
    assert.deepEqual((await get(`/api/tx/${p.ins[i].txid}/outspend/${p.ins[i].vout}`)).json,
      { spent: true, txid: p.tx.hash, vin: i, status: { confirmed: false } });
    assert.equal((await get(`/api/tx/${p.tx.hash}/merkle-proof`)).status, 404);
  });

  it('the @mempool/mempool.js client: getAddressTxsMempool, getAddressTxs, getMempool, getMempoolTxids, getMempoolRecent, getTxStatus', async () => {
    const { port } = srv.server.address();
    const { bitcoin } = mempoolJS({ hostname: `127.0.0.1:${port}`, network: 'mainnet', protocol: 'http' });
    const sh = shs.find((x) => addressOf(x) && unconfirmedOf(ref, x, pool, M).mine.length >= 2);
    const address = addressOf(sh);
    const u = unconfirmedOf(ref, sh, pool, M);
    const newest = u.mine.slice().reverse();
    const mem = await bitcoin.addresses.getAddressTxsMempool({ address });
    mem.forEach((j, k) => checkEsploraTx(j, newest[k]));
    assert.equal(mem.length, newest.length);
    const txs = await bitcoin.addresses.getAddressTxs({ address });
    assert.deepEqual(txs.slice(0, newest.length), mem);
    assert.equal((await bitcoin.addresses.getAddress({ address })).mempool_stats.tx_count, newest.length);
    const summary = await bitcoin.mempool.getMempool();
    assert.equal(summary.count, pool.length);
    assert.deepEqual((await bitcoin.mempool.getMempoolTxids()).sort(), pool.map((p) => p.tx.hash).sort());
    assert.equal((await bitcoin.mempool.getMempoolRecent())[0].txid, pool[pool.length - 1].tx.hash);
    assert.deepEqual(await bitcoin.transactions.getTxStatus({ txid: pool[0].tx.hash }), { confirmed: false });
    assert.deepEqual(await bitcoin.transactions.getTx({ txid: pool[0].tx.hash }), (await get(`/api/tx/${pool[0].tx.hash}`)).json);
  });

  it('insight: unconfirmed balance and appearances, the mempool first in txids, /txs, /addrs/txs and /utxo; a mempool tx', async () => {
    let checked = 0;
    for (const sh of shs) {
      const address = addressOf(sh);
      if (!address) continue;
      const u = unconfirmedOf(ref, sh, pool, M);
      const s = u.at.summary;
      const a = (await get(`/insight-api/addr/${address}`)).json;
      assert.equal(a.unconfirmedBalanceSat, u.balance, address);
      assert.equal(a.unconfirmedBalance, u.balance / 1e8);
      assert.equal(a.unconfirmedTxApperances, u.mine.length);
      assert.equal(a.balanceSat, s ? s.balance : 0);
      const newest = u.mine.slice().reverse().map((p) => p.tx.hash);
      const chain = u.at.history.map((e) => e.txid).reverse();
      assert.deepEqual(a.transactions, [...newest, ...chain]);
      assert.equal((await get(`/insight-api/addr/${address}/unconfirmedBalance`)).json, u.balance);
      const utxo = (await get(`/insight-api/addr/${address}/utxo`)).json;
      const poolFirst = u.poolUtxos.slice().sort((x, y) => y.p.time - x.p.time);
      assert.deepEqual(utxo.map((x) => [x.txid, x.vout, x.satoshis, x.confirmations]), [
        ...poolFirst.map((x) => [x.txid, x.vout, x.value, 0]),
        ...u.confirmedUtxos.map((x) => [x.txid, x.vout, x.value, M - x.height + 1]),
      ], `utxo ${address}`);
      const page = (await get(`/insight-api/txs?address=${address}`)).json;
      assert.equal(page.pagesTotal, Math.ceil((newest.length + chain.length) / 10));
      assert.deepEqual(page.txs.map((t) => t.txid), [...newest, ...chain].slice(0, 10));
      checked++;
    }
    assert.ok(checked > 10, `${checked} addresses`);

    const two = shs.filter((sh) => addressOf(sh) && unconfirmedOf(ref, sh, pool, M).mine.length).slice(0, 2);
    const both = pool.filter((p) => two.some((sh) => p.ins.some((i) => i.sh === sh) || p.outs.some((o) => o.sh === sh)));
    const r = (await request(`${srv.url}/insight-api/addrs/txs`, { method: 'POST', body: { addrs: two.map((sh) => addressOf(sh)).join(','), from: 0, to: 50 } })).json;
    assert.deepEqual(r.items.slice(0, both.length).map((t) => t.txid), both.slice().reverse().map((p) => p.tx.hash));
    assert.ok(r.items.slice(0, both.length).every((t) => t.confirmations === 0 && t.blockheight === -1));

    const p = pool.find((x) => x.ins.length > 1) || pool[0];
    const t = (await get(`/insight-api/tx/${p.tx.hash}`)).json;
    assert.deepEqual([t.txid, t.confirmations, t.blockheight, t.time, t.blockhash], [p.tx.hash, 0, -1, p.time, undefined]);
    assert.deepEqual(t.vin.map((i) => i.valueSat), p.ins.map((i) => i.value));
    assert.equal(Math.round(t.fees * 1e8), p.fee);
    assert.deepEqual((await get(`/insight-api/rawtx/${p.tx.hash}`)).json, { rawtx: p.tx.toBuffer().toString('hex') });
  });

  it('native: `unconfirmed` in summaries (one and batch), mempool entries in histories on request, status', async () => {
    const want = (sh) => {
      const u = unconfirmedOf(ref, sh, pool, M);
      return {
        balance: u.balance, received: u.stats.funded_txo_sum, sent: u.stats.spent_txo_sum, txCount: u.mine.length,
        fundedCount: u.stats.funded_txo_count, spentCount: u.stats.spent_txo_count,
      };
    };
    for (const sh of shs) {
      const r = (await get(`/api/v1/scripthash/${display(sh)}`)).json;
      assert.deepEqual(r.unconfirmed, want(sh), sh);
      const h = (await get(`/api/v1/scripthash/${display(sh)}/history?mempool=1`)).json;
      const u = unconfirmedOf(ref, sh, pool, M);
      assert.deepEqual(h.mempool.map((e) => [e.txid, e.fee, e.funded, e.spent]), u.mine.slice().reverse().map((p) => [
        p.tx.hash, p.fee, p.outs.some((o) => o.sh === sh), p.ins.some((i) => i.sh === sh),
      ]));
      assert.equal((await get(`/api/v1/scripthash/${display(sh)}/history`)).json.mempool, undefined);
    }
    const batch = shs.slice(0, 30);
    const s = await request(`${srv.url}/api/v1/scripthashes/summary`, { method: 'POST', body: { scripthashes: batch.map(display) } });
    assert.deepEqual(s.json.summaries.map((x) => x.unconfirmed), batch.map(want));
    const h = await request(`${srv.url}/api/v1/scripthashes/history`, { method: 'POST', body: { scripthashes: batch.map(display), mempool: true } });
    const union = pool.filter((p) => batch.some((sh) => p.ins.some((i) => i.sh === sh) || p.outs.some((o) => o.sh === sh)));
    assert.deepEqual(h.json.mempool.map((e) => e.txid), union.slice().reverse().map((p) => p.tx.hash));
    assert.ok(h.json.mempool.every((e) => e.scripthashes.length >= 1 && e.scripthashes.every((x) => batch.map(display).includes(x))));
    const status = (await get('/api/v1/status')).json;
    assert.deepEqual(status.mempool, { seq: 1, count: pool.length, vsize: pool.reduce((n, p) => n + p.vsize, 0), fee: pool.reduce((n, p) => n + p.fee, 0), evicted: 0 });
  });

  it('native: a mempool transaction (plain and full=1), and unspent outputs with the mempool\'s as Esplora\'s /utxo', async () => {
    const spender = new Map(pool.flatMap((p) => p.ins.map((i, vin) => [i.key, { txid: p.tx.hash, vin }])));
    for (const p of pool) {
      const plain = (await get(`/api/v1/tx/${p.tx.hash}`)).json;
      assert.deepEqual({ ...plain, tip: undefined }, {
        txid: p.tx.hash, height: null, blockHash: null, position: null, time: p.time, confirmations: 0,
        mempool: { fee: p.fee, vsize: p.vsize, parentsUnconfirmed: p.ins.some((i) => i.unconfirmed) }, tip: undefined,
      });
      const full = (await get(`/api/v1/tx/${p.tx.hash}?full=1`)).json;
      assert.deepEqual([full.txid, full.height, full.confirmations, full.time, full.fee, full.vsize], [p.tx.hash, null, 0, p.time, p.fee, p.vsize]);
      assert.deepEqual(full.inputs.map((i) => [i.txid, i.vout, i.value, i.scripthash && display(i.scripthash)]), p.ins.map((i) => [i.txid, i.vout, i.value, i.sh]));
      assert.deepEqual(full.outputs.map((o) => [o.value, o.spent]), p.outs.map((o, vout) => {
        const s = spender.get(`${p.tx.hash}:${vout}`);
        return [o.value, s ? { txid: s.txid, vin: s.vin, height: null } : null];
      }));
    }
    const confirmedTx = ref.blocks[M].transactions[0].hash;
    assert.equal((await get(`/api/v1/tx/${confirmedTx}`)).json.height, M, 'a confirmed one as before');
    assert.equal((await get(`/api/v1/tx/${'ab'.repeat(32)}`)).status, 404);
    for (const sh of shs) {
      const u = unconfirmedOf(ref, sh, pool, M);
      const r = (await get(`/api/v1/scripthash/${display(sh)}/utxos?limit=1000`)).json;
      assert.deepEqual(r.utxos, [
        ...u.poolUtxos.map((x) => ({ txid: x.txid, vout: x.vout, value: x.value, height: null })),
        ...u.confirmedUtxos.map((x) => ({ txid: x.txid, vout: x.vout, value: x.value, height: x.height })),
      ], sh);
    }
    // paged: the mempool's outputs on the first page only, spent confirmed ones on none
    const sh = shs.find((x) => unconfirmedOf(ref, x, pool, M).poolUtxos.length && addressAt(ref, x, M).utxos.length > 2);
    if (sh) {
      const u = unconfirmedOf(ref, sh, pool, M);
      const seen = [];
      let cursor = null;
      do {
        const r = (await get(`/api/v1/scripthash/${display(sh)}/utxos?limit=1${cursor ? `&cursor=${cursor}` : ''}`)).json;
        seen.push(...r.utxos);
        cursor = r.next;
      } while (cursor);
      assert.deepEqual(seen.map((x) => `${x.txid}:${x.vout}:${x.height}`), [
        ...u.poolUtxos.map((x) => `${x.txid}:${x.vout}:null`), ...u.confirmedUtxos.map((x) => `${x.txid}:${x.vout}:${x.height}`),
      ]);
    }
  });

  it('the unconfirmed answers are the ones docs/openapi.json documents', async () => {
    const schemaOf = (path, method = 'get') => {
      const media = DOC.paths[path][method].responses['200'].content;
      return (media['application/json'] || media['text/plain']).schema;
    };
    const sh = shs.find((x) => addressOf(x) && unconfirmedOf(ref, x, pool, M).poolUtxos.length);
    const address = addressOf(sh);
    const cases = [
      ['/api/scripthash/{hash}/txs/mempool', `/api/scripthash/${sh}/txs/mempool`],
      ['/api/scripthash/{hash}/utxo', `/api/scripthash/${sh}/utxo`],
      ['/api/scripthash/{hash}', `/api/scripthash/${sh}`],
      ['/api/mempool', '/api/mempool'],
      ['/api/mempool/txids', '/api/mempool/txids'],
      ['/api/mempool/recent', '/api/mempool/recent'],
      ['/api/tx/{txid}', `/api/tx/${pool[0].tx.hash}`],
      ['/api/v1/scripthash/{hash}', `/api/v1/scripthash/${display(sh)}`],
      ['/api/v1/scripthash/{hash}/history', `/api/v1/scripthash/${display(sh)}/history?mempool=1`],
      ['/api/v1/status', '/api/v1/status'],
      ['/api/v1/tx/{txid}', `/api/v1/tx/${pool[0].tx.hash}`],
      ['/api/v1/tx/{txid}', `/api/v1/tx/${pool.find((p) => p.ins.some((i) => i.unconfirmed)).tx.hash}?full=1`],
      ['/api/v1/scripthash/{hash}/utxos', `/api/v1/scripthash/${display(sh)}/utxos`],
      ['/insight-api/addr/{addr}', `/insight-api/addr/${address}`],
      ['/insight-api/addr/{addr}/utxo', `/insight-api/addr/${address}/utxo`],
      ['/insight-api/tx/{txid}', `/insight-api/tx/${pool[0].tx.hash}`],
    ];
    for (const [path, url] of cases) {
      const r = await get(url);
      assert.equal(r.status, 200, url);
      assert.deepEqual(check(r.json, schemaOf(path), DOC), [], url);
    }
    const h = await request(`${srv.url}/api/v1/scripthashes/history`, { method: 'POST', body: { scripthashes: [display(sh)], mempool: true } });
    assert.ok(h.json.mempool.length > 0);
    assert.deepEqual(check(h.json, schemaOf('/api/v1/scripthashes/history', 'post'), DOC), []);
  });

  it('hostile input and no node: 4xx JSON, 503 for what needs a node', async () => {
    const post = (path, body, headers) => request(srv.url + path, { method: 'POST', body, headers });
    const plain = { 'content-type': 'text/plain' };
    for (const [res, status, code] of [
      [await post('/api/tx', 'zz', plain), 400, 'ERR_BAD_TX'],
      [await post('/api/tx', 'abc', plain), 400, 'ERR_BAD_TX'],
      [await post('/api/tx', '', plain), 400, 'ERR_BAD_TX'],
      [await post('/api/tx', '0100000000', plain), 400, 'ERR_BAD_TX'],
      [await post('/api/tx', `${pool[0].tx.toBuffer().toString('hex')}00`, plain), 400, 'ERR_BAD_TX'],
      [await post('/api/tx', pool[0].tx.toBuffer().toString('hex'), plain), 503, 'ERR_NO_NODE'],
      [await post('/insight-api/tx/send', { rawtx: 12 }), 400, 'ERR_BAD_BODY'],
      [await post('/insight-api/tx/send', { rawtx: 'nothex' }), 400, 'ERR_BAD_TX'],
      [await post('/insight-api/tx/send', { rawtx: pool[0].tx.toBuffer().toString('hex') }), 503, 'ERR_NO_NODE'],
      [await get('/api/fee-estimates'), 503, 'ERR_NO_NODE'],
      [await get(`/api/v1/scripthash/${display(shs[0])}/history?mempool=2`), 400, 'ERR_BAD_PARAM'],
      [await post('/api/v1/scripthashes/history', { scripthashes: [display(shs[0])], mempool: 'yes' }), 400, 'ERR_BAD_BODY'],
      [await get(`/api/tx/${'00'.repeat(32)}`), 404, 'ERR_TX_NOT_FOUND'],
      [await get(`/api/scripthash/${shs[0]}/txs?after_txid=${'00'.repeat(32)}`), 422, 'ERR_AFTER_TXID_NOT_FOUND'],
    ]) {
      assert.equal(res.status, status, res.text);
      assert.equal(res.json.error.code, code, res.text);
    }
    const big = await post('/api/tx', 'a'.repeat((1 << 20) + 2), plain);
    assert.equal(big.status, 413);
  });

  it('blocks M+1..B mined: the snapshot of M is ignored everywhere, every answer is the confirmed one', async () => {
    await syncInto(chains.full.dir, store);
    assert.deepEqual(await store.getMempoolHead().then((h) => ({ seq: h.seq, tip: h.tip })), { seq: 1, tip: ref.blockHashes[M] }, 'the stale snapshot is still stored');
    // the recorded blocks dir holds only 0..M: read the mined blocks where they are
    await srv.close();
    srv = await startServer(datadir, { network: 'regtest', blocksDir: chains.full.dir });
    assert.deepEqual((await get('/api/mempool')).json, { count: 0, vsize: 0, total_fee: 0, fee_histogram: [] });
    assert.deepEqual((await get('/api/mempool/txids')).json, []);
    assert.deepEqual((await get('/api/mempool/recent')).json, []);
    assert.equal((await get('/api/v1/status')).json.mempool, null);
    for (const sh of shs) {
      const at = addressAt(ref, sh, B);
      const a = (await get(`/api/scripthash/${sh}`)).json;
      assert.deepEqual(a.mempool_stats, ZERO, sh);
      assert.equal(a.chain_stats.tx_count, at.summary ? at.summary.txCount : 0);
      assert.deepEqual((await get(`/api/scripthash/${sh}/txs/mempool`)).json, []);
      assert.deepEqual((await get(`/api/scripthash/${sh}/utxo`)).json.map((x) => [x.txid, x.vout, x.status.confirmed]),
        at.utxos.map((x) => [x.txid, x.vout, true]));
      assert.equal((await get(`/api/v1/scripthash/${display(sh)}`)).json.unconfirmed.txCount, 0);
    }
    for (const p of pool.slice(0, 5)) {
      const st = (await get(`/api/tx/${p.tx.hash}/status`)).json;
      assert.deepEqual([st.confirmed, st.block_height], [true, p.height]);
    }
  });
});
