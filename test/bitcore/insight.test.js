'use strict';

const assert = require('node:assert/strict');
const bitcore = require('bitcore-lib');
const fs = require('node:fs');
const { syncedFixture, writeBlocksDir, startServer, request, referenceIndex, HAL, SATOSHI, TX170 } = require('../api/helpers');
const path = require('node:path');
const { runCli } = require('../helpers/cli');
const { waitFor } = require('../helpers/chains');
const { tempDir } = require('../helpers/tmp');
const { chainOutputs, outputAddress } = require('../helpers/reference');
const { startBitcore } = require('../helpers/bitcore-host');
const { parseBlock } = require('../../lib/chain/block');
const { insightTx, insightBlock } = require('../../lib/api/insight-format');
const { blockFacts } = require('../../lib/api/esplora-format');
const { blockProof } = require('../../lib/sources/header-index');

const TIP = 438;
// a valid mainnet address never paid in the first 439 blocks, and addresses insight 0.4.3 cannot take
const UNUSED = '1BoatSLRHtKNngkdXEeobR76b53LETtpyT';
const SEGWIT = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';
const TESTNET = 'mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn';

/**
 * insight-api 0.4.3 and bitcore-node 3.1.3, unchanged, in their own process (`addrindex bitcore`,
 * bitcore-lib 0.13), with addrindex as the bitcoind service over the 439 mainnet blocks: every
 * answer is checked against addrindex's own routes over the same index and against bitcore-lib
 * 11 decoding the same blocks in this process (the reference index).
 */
describe('insight-api 0.4.3 on addrindex\'s bitcoind service (bitcore-node 3.1.3, 439 mainnet blocks)', function () {
  this.timeout(120000);
  let fixture;
  let bc;
  let native;
  let ref;
  /** "txid:vout" → who spent it, from bitcore-lib's decoding */
  const spenders = new Map();
  const insight = (p, opts) => request(`${bc.url}/insight-api${p}`, opts);
  const own = (p, opts) => request(`${native.url}${p}`, opts);

  before(async () => {
    fixture = await syncedFixture();
    [bc, native] = await Promise.all([
      startBitcore({ bitcoind: { datadir: fixture.datadir, blocksDir: fixture.blocksDir } }),
      startServer(fixture.datadir),
    ]);
    ref = referenceIndex();
    ref.blocks.forEach((b, height) => b.transactions.forEach((tx) => {
      if (tx.isCoinbase()) return;
      tx.inputs.forEach((input, vin) => spenders.set(`${input.prevTxId.toString('hex')}:${input.outputIndex}`, { txid: tx.hash, vin, height }));
    }));
  });
  after(async () => {
    if (bc) await bc.stop();
    if (native) await native.close();
    if (fixture) await fixture.cleanup();
  });

  /**
   * What /insight-api/tx/:txid answers for a transaction of the fixture: the project's insight
   * formatter (checked against a real insight answer and bitcore-lib) over bitcore-lib's
   * prevouts and spenders; each input's address is the one bitcore-lib reads off the output it
   * spends (a P2PK output: its key's P2PKH address, which the patched node's spent index did
   * not give, and which addrindex counts that output for).
   */
  function expectedTx(txid) {
    const loc = ref.txs[ref.txids.indexOf(txid)];
    const raw = ref.blocks[loc.height].transactions[loc.position].toBuffer();
    const block = parseBlock(mainnetRaw(loc.height));
    const tx = block.txs[loc.position];
    const outputs = chainOutputs();
    const prevouts = tx.inputs.map((i) => outputs.get(`${Buffer.from(i.txid).reverse().toString('hex')}:${i.vout}`));
    const spends = tx.outputs.map((o, n) => spenders.get(`${txid}:${n}`) || null);
    const j = insightTx(tx, { prevouts, spends, block: { height: loc.height, hash: loc.blockHash, time: loc.time }, tipHeight: TIP, network: 'main' });
    if (!tx.coinbase) {
      j.vin.forEach((v, n) => { v.addr = outputAddress(bitcore.Script.fromBuffer(prevouts[n].script)); });
    }
    assert.equal(j.size, raw.length);
    return j;
  }

  const raws = require('../helpers/fixtures').mainnet439Blocks();
  const mainnetRaw = (h) => raws[h];

  describe('addresses', () => {
    it('/addr/:addr: the balances and txids (newest first) of addrindex\'s own insight route and the reference; no made-up unconfirmed figures', async () => {
      for (const a of [HAL, SATOSHI, UNUSED, ...ref.busiest(6)]) {
        const [r, mine] = await Promise.all([insight(`/addr/${a}`), own(`/insight-api/addr/${a}`)]);
        assert.equal(r.status, 200, a);
        const want = ref.at(a);
        const s = want.summary || { balance: 0, received: 0, sent: 0, txCount: 0 };
        assert.equal(r.json.addrStr, a);
        assert.equal(r.json.balanceSat, s.balance, a);
        assert.equal(r.json.totalReceivedSat, s.received, a);
        assert.equal(r.json.totalSentSat, s.sent, a);
        assert.equal(r.json.txApperances, s.txCount, a);
        assert.deepEqual(r.json.transactions, want.history.map((e) => e.txid).reverse(), a);
        for (const k of ['addrStr', 'balance', 'balanceSat', 'totalReceived', 'totalReceivedSat', 'totalSent', 'totalSentSat', 'txApperances', 'transactions']) {
          assert.deepEqual(r.json[k], mine.json[k], `${a} ${k}`);
        }
        // no mempool here: insight shows the unknown as null, not as 0
        assert.equal(r.json.unconfirmedBalance, null);
        assert.equal('unconfirmedTxApperances' in r.json, false);
      }
    });

    it('/addr/:addr?noTxList=1 leaves the txids out; from/to page them', async () => {
      const all = ref.at(SATOSHI).history.map((e) => e.txid).reverse();
      const r = await insight(`/addr/${SATOSHI}?noTxList=1`);
      assert.equal(r.status, 200);
      assert.equal('transactions' in r.json, false);
      assert.equal(r.json.txApperances, all.length);
      const page = await insight(`/addr/${SATOSHI}?from=2&to=5`);
      assert.deepEqual(page.json.transactions, all.slice(2, 5));
    });

    it('/addr/:addr/utxo and /addrs/:addrs/utxo: the unspent outputs of addrindex\'s own routes, newest first', async () => {
      const key = (u) => `${u.txid}:${u.vout}`;
      const byHeight = (list) => list.map((u) => u.height);
      for (const a of [HAL, SATOSHI, ...ref.busiest(4)]) {
        const [r, mine] = await Promise.all([insight(`/addr/${a}/utxo`), own(`/insight-api/addr/${a}/utxo`)]);
        assert.equal(r.status, 200, a);
        assert.deepEqual(new Map(r.json.map((u) => [key(u), u])), new Map(mine.json.map((u) => [key(u), u])), a);
        assert.deepEqual(r.json.map((u) => [key(u), u.satoshis]), ref.at(a).utxos.map((u) => [`${u.txid}:${u.vout}`, u.value]).reverse(), a);
        assert.deepEqual(byHeight(r.json), byHeight(r.json).slice().sort((x, y) => y - x));
      }
      const list = [HAL, SATOSHI, ...ref.busiest(3)].join(',');
      const [r, mine] = await Promise.all([insight(`/addrs/${list}/utxo`), own(`/insight-api/addrs/${list}/utxo`)]);
      assert.equal(r.status, 200);
      assert.equal(r.json.length, mine.json.length);
      assert.deepEqual(new Map(r.json.map((u) => [key(u), u])), new Map(mine.json.map((u) => [key(u), u])));
      assert.deepEqual(byHeight(r.json), byHeight(r.json).slice().sort((x, y) => y - x));
    });

    it('/addrs/:addrs/txs: the merged history newest first (ties by txid, as the patched node sorted), each transaction in full', async () => {
      const addrs = [HAL, SATOSHI, ...ref.busiest(4)];
      const seen = new Map();
      for (const a of addrs) for (const e of ref.at(a).history) seen.set(e.txid, e.height);
      const order = [...seen].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? 1 : -1)).map(([t]) => t);
      for (const [from, to] of [[0, 10], [3, 9], [order.length - 4, order.length]]) {
        const r = await insight(`/addrs/${addrs.join(',')}/txs?from=${from}&to=${to}`);
        assert.equal(r.status, 200);
        assert.equal(r.json.totalItems, order.length);
        assert.equal(r.json.from, from);
        assert.equal(r.json.to, Math.min(to, order.length));
        assert.deepEqual(r.json.items.map((t) => t.txid), order.slice(from, to));
        for (const t of r.json.items) assert.deepEqual(t, expectedTx(t.txid), t.txid);
        // addrindex's own route: the same window of the same transactions
        const mine = await own(`/insight-api/addrs/${addrs.join(',')}/txs?from=${from}&to=${to}`);
        assert.deepEqual(mine.json, r.json);
      }
    });
  });

  describe('transactions and blocks', () => {
    it('/tx/:txid for every transaction but the genesis coinbase: values, fees, prevouts, spenders as bitcore-lib decodes them', async () => {
      for (const txid of ref.txids.slice(1)) {
        const [r, mine] = await Promise.all([insight(`/tx/${txid}`), own(`/insight-api/tx/${txid}`)]);
        assert.equal(r.status, 200, txid);
        assert.deepEqual(r.json, expectedTx(txid), txid);
        assert.deepEqual(mine.json, r.json, `addrindex's /insight-api/tx/${txid}`);
      }
      const hal = await insight(`/tx/${TX170}`);
      assert.equal(hal.json.vout[0].scriptPubKey.addresses[0], HAL);
      assert.equal(hal.json.valueIn, 50);
      assert.equal(hal.json.fees, 0);
      // Core never indexed the genesis coinbase (insight-ui's genesis page waited forever for
      // it); the index holds it: answered as addrindex's own route answers it
      const genesis = await insight(`/tx/${ref.txids[0]}`);
      assert.equal(genesis.status, 200);
      assert.deepEqual(genesis.json, (await own(`/insight-api/tx/${ref.txids[0]}`)).json);
    });

    it('/rawtx/:txid: the transaction\'s bytes', async () => {
      for (const txid of [TX170, ref.txids[1], ref.txids[ref.txids.length - 1]]) {
        const loc = ref.txs[ref.txids.indexOf(txid)];
        const r = await insight(`/rawtx/${txid}`);
        assert.equal(r.status, 200);
        assert.equal(r.json.rawtx, ref.blocks[loc.height].transactions[loc.position].toString());
        assert.deepEqual((await own(`/insight-api/rawtx/${txid}`)).json, r.json);
      }
    });

    it('/block/:hash and /block-index/:height: the blocks bitcore-lib decodes, with height, chainwork and neighbours', async () => {
      let work = 0n;
      const works = ref.blocks.map((b) => { work += blockProof(b.header.bits); return work; });
      for (const h of [0, 1, 9, 170, 300, TIP]) {
        const hash = ref.blockHashes[h];
        const idx = await insight(`/block-index/${h}`);
        assert.deepEqual(idx.json, { blockHash: hash });
        const r = await insight(`/block/${hash}`);
        assert.equal(r.status, 200);
        const want = insightBlock(blockFacts(parseBlock(mainnetRaw(h))), {
          txids: ref.blocks[h].transactions.map((t) => t.hash), height: h, tipHeight: TIP, chainwork: works[h],
          nextHash: h < TIP ? ref.blockHashes[h + 1] : null,
        });
        assert.deepEqual(r.json, want, `height ${h}`);
        const rawBlock = await insight(`/rawblock/${hash}`);
        assert.equal(rawBlock.json.rawblock, mainnetRaw(h).toString('hex'));
        // addrindex's own routes answer as insight-api does
        assert.deepEqual((await own(`/insight-api/block/${hash}`)).json, r.json, `height ${h}`);
        assert.deepEqual((await own(`/insight-api/block-index/${h}`)).json, idx.json);
        assert.deepEqual((await own(`/insight-api/rawblock/${hash}`)).json, rawBlock.json);
      }
    });

    it('/txs?block= and /txs?address=: insight\'s pages of 10 full transactions; /blocks?blockDate=: a day\'s blocks, newest first', async () => {
      const h = 300;
      const byBlock = await insight(`/txs?block=${ref.blockHashes[h]}`);
      assert.equal(byBlock.status, 200);
      assert.deepEqual(byBlock.json.txs, ref.blocks[h].transactions.map((t) => expectedTx(t.hash)));
      assert.deepEqual((await own(`/insight-api/txs?block=${ref.blockHashes[h]}`)).json, byBlock.json);
      const history = ref.at(SATOSHI).history.map((e) => e.txid).reverse();
      for (const pageNum of [0, 1]) {
        const r = await insight(`/txs?address=${SATOSHI}&pageNum=${pageNum}`);
        assert.equal(r.json.pagesTotal, Math.ceil(history.length / 10));
        assert.deepEqual(r.json.txs.map((t) => t.txid), history.slice(pageNum * 10, pageNum * 10 + 10));
        for (const t of r.json.txs) assert.deepEqual(t, expectedTx(t.txid));
        const mine = await own(`/insight-api/txs?address=${SATOSHI}&pageNum=${pageNum}`);
        assert.deepEqual(mine.json, r.json);
      }
      // 2009-01-09 (UTC): the first blocks after genesis
      const gte = Date.UTC(2009, 0, 9) / 1000;
      const day = ref.blocks.map((b, height) => ({ height, hash: b.hash, time: b.header.time })).filter((b) => b.time >= gte && b.time < gte + 86400);
      assert.ok(day.length > 5);
      const blocks = await insight('/blocks?blockDate=2009-01-09&limit=500');
      assert.equal(blocks.status, 200);
      assert.deepEqual(blocks.json.blocks.map((b) => [b.height, b.hash, b.time, b.txlength]),
        day.reverse().map((b) => [b.height, b.hash, b.time, ref.blocks[b.height].transactions.length]));
      assert.equal(blocks.json.pagination.more, false);
    });

    it('/status and /sync: the index\'s tip, caught up with its blocks dir; fee estimates as a node without fee data', async () => {
      const s = await insight('/status');
      assert.equal(s.status, 200);
      assert.equal(s.json.info.blocks, TIP);
      assert.equal(s.json.info.network, 'livenet');
      assert.equal(s.json.info.testnet, false);
      assert.equal(s.json.info.difficulty, 1);
      assert.equal(s.json.info.connections, null); // no node: not made up
      assert.deepEqual((await insight('/status?q=getBestBlockHash')).json, { bestblockhash: ref.blockHashes[TIP] });
      assert.deepEqual((await insight('/status?q=getLastBlockHash')).json, { syncTipHash: ref.blockHashes[TIP], lastblockhash: ref.blockHashes[TIP] });
      const sync = await insight('/sync');
      assert.deepEqual(sync.json, { status: 'finished', blockChainHeight: TIP, syncPercentage: 100, height: TIP, error: null, type: 'bitcore node' });
      assert.deepEqual((await insight('/utils/estimatefee?nbBlocks=2,6')).json, { 2: -1, 6: -1 });
    });
  });

  describe('the routes insight-ui asks besides: addrindex serve answers as insight-api does', () => {
    it('/status (every q), /sync, /peer, /version, /utils/estimatefee, the genesis block\'s /txs, /blocks of a given day', async () => {
      const routes = ['/status', '/status?q=getInfo', '/status?q=getDifficulty', '/status?q=getBestBlockHash', '/status?q=getLastBlockHash',
        '/sync', '/peer', '/version', '/utils/estimatefee?nbBlocks=2,6', `/txs?block=${ref.blockHashes[0]}`,
        '/blocks?blockDate=2009-01-09&limit=500', '/blocks?blockDate=2009-01-12', '/blocks?blockDate=2008-12-31'];
      for (const p of routes) {
        const [r, mine] = await Promise.all([insight(p), own(`/insight-api${p}`)]);
        assert.equal(r.status, 200, p);
        assert.deepEqual(mine.json, r.json, p);
      }
      // the genesis block's list holds its coinbase (insight-ui's genesis page waited for it)
      const genesis = await own(`/insight-api/txs?block=${ref.blockHashes[0]}`);
      assert.deepEqual(genesis.json.txs.map((t) => t.txid), [ref.txids[0]]);
      // a page shorter than the day: insight-api's moreTs repeats the page's end; addrindex's is
      // the oldest block listed, where the next page starts
      const [r, mine] = await Promise.all([insight('/blocks?blockDate=2009-01-12&limit=3'), own('/insight-api/blocks?blockDate=2009-01-12&limit=3')]);
      assert.equal(r.json.pagination.more, true);
      assert.deepEqual({ ...mine.json, pagination: { ...mine.json.pagination, moreTs: undefined } }, { ...r.json, pagination: { ...r.json.pagination, moreTs: undefined } });
      assert.equal(mine.json.pagination.moreTs, mine.json.blocks[2].time);
    });

    it('/blocks without a date: insight-api lists today\'s (none on a 2009 chain), addrindex the newest block\'s day', async () => {
      const day = new Date(ref.blocks[TIP].header.time * 1000).toISOString().slice(0, 10);
      const [r, mine, ofDay] = await Promise.all([insight('/blocks?limit=5'), own('/insight-api/blocks?limit=5'), insight(`/blocks?blockDate=${day}&limit=5`)]);
      assert.deepEqual(r.json.blocks, []);
      assert.deepEqual(mine.json.blocks, ofDay.json.blocks);
      assert.deepEqual(mine.json.blocks.map((b) => b.height), [TIP, TIP - 1, TIP - 2, TIP - 3, TIP - 4]);
      assert.equal(mine.json.pagination.current, day);
    });

    it('/messages/verify: signatures made by bitcore-lib, verified by insight-api (bitcore-message) and by addrindex alike', async () => {
      const key = new bitcore.PrivateKey(bitcore.crypto.Hash.sha256(Buffer.from('insight-ui messages')).toString('hex'), 'livenet');
      const address = key.toAddress('livenet').toString();
      const message = 'addrindex: one answer, two servers';
      const signature = new bitcore.Message(message).sign(key);
      const cases = [
        { address, signature, message },
        { address, signature, message: `${message}.` },
        { address: HAL, signature, message },
      ];
      for (const body of cases) {
        const [r, mine] = await Promise.all([
          insight('/messages/verify', { method: 'POST', body }), own('/insight-api/messages/verify', { method: 'POST', body }),
        ]);
        assert.equal(r.status, 200, r.text);
        assert.deepEqual(mine.json, r.json);
      }
      assert.deepEqual((await own('/insight-api/messages/verify', { method: 'POST', body: cases[0] })).json, { result: true });
      const q = new URLSearchParams(cases[0]).toString();
      assert.deepEqual((await own(`/insight-api/messages/verify?${q}`)).json, (await insight(`/messages/verify?${q}`)).json);
      // no signature: both refuse it (insight-api as text, addrindex as JSON)
      const [r, mine] = await Promise.all([
        insight('/messages/verify', { method: 'POST', body: { address, message } }), own('/insight-api/messages/verify', { method: 'POST', body: { address, message } }),
      ]);
      assert.equal(r.status, 400);
      assert.equal(mine.status, 400);
    });
  });

  describe('addrindex\'s own REST API through bitcore-node\'s web service', () => {
    it('under /addrindex: every route answers as addrindex serve does, POST bodies included (parsed by the web service first)', async () => {
      const paths = [
        '/api/v1/status', `/api/v1/address/${HAL}`, `/api/v1/address/${SATOSHI}/history?limit=2&order=desc`, `/api/v1/tx/${TX170}?full=1`,
        `/api/address/${SATOSHI}/txs`, `/api/tx/${TX170}`, `/api/tx/${TX170}/outspends`, '/api/blocks/tip/height', `/insight-api/addr/${HAL}`,
      ];
      for (const p of paths) {
        const [want, got] = await Promise.all([own(p), request(`${bc.url}/addrindex${p}`)]);
        assert.equal(got.status, 200, `${p}: ${got.text.slice(0, 200)}`);
        assert.equal(got.text, want.text, p);
        assert.ok(got.headers.get('x-request-id'), p);
      }
      const body = { addresses: [HAL, SATOSHI], limit: 5 };
      const post = (base) => request(`${base}/api/v1/addresses/history`, { method: 'POST', body });
      const [want, got] = await Promise.all([post(native.url), post(`${bc.url}/addrindex`)]);
      assert.equal(got.status, 200, got.text.slice(0, 200));
      assert.deepEqual(got.json, want.json);
      // its own errors, as JSON
      const bad = await request(`${bc.url}/addrindex/api/v1/address/notanaddress`);
      assert.equal(bad.status, 400);
      assert.equal(bad.json.error.code, (await own('/api/v1/address/notanaddress')).json.error.code);
    });
  });

  describe('errors and stopping', () => {
  it('bad input gets insight\'s usual 4xx (its own checks, or the node\'s -5/-8 errors), and the service keeps serving', async () => {
    const unknown = 'ab'.repeat(32);
    const cases = [
      ['/addr/notanaddress', 400],
      [`/addr/${SEGWIT}`, 400], // bitcore-lib 0.13 knows no bech32
      [`/addr/${TESTNET}`, 400], // the node's -5 "Invalid address"
      [`/addrs/${HAL},nope/utxo`, 400],
      [`/addrs/${HAL},nope/txs`, 400],
      [`/addrs/${TESTNET}/utxo`, 200, []], // insight turns the node's -5 into an empty list here
      ['/tx/zz', 400], // -8: not hex
      [`/tx/${unknown}`, 404],
      [`/rawtx/${unknown}`, 404],
      [`/block/${unknown}`, 404],
      ['/block/abc', 404],
      ['/block-index/100000', 400], // -8: height out of range
      ['/block-index/abc', 400],
    ];
    for (const [p, status, body] of cases) {
      const r = await insight(p);
      assert.equal(r.status, status, `${p}: ${r.text.slice(0, 200)}`);
      if (body) assert.deepEqual(r.json, body, p);
    }
    assert.equal((await insight('/status')).status, 200);
    assert.equal(bc.cli.exitCode, null);
  });

  it('SIGTERM stops every service and exits 0', async () => {
    const done = await bc.stop();
    assert.equal(done.code, 0, done.stderr);
    assert.match(done.stderr, /SIGTERM: stopping the services/);
    assert.match(done.stderr, /addrindex bitcore: stopped/);
  });
  });
});

/**
 * Where the service finds blocks without `blocksDir` in its config, as `addrindex serve` does:
 * the blocks dir the sync recorded in the index, or the index itself after `sync --txstore`
 * (its blocks dir gone). Every answer that reads a block equals the one read from the blocks
 * dir named in the config.
 */
describe('insight-api on addrindex\'s bitcoind service: blocks found through the index (no blocksDir configured)', function () {
  this.timeout(120000);
  const HEIGHT = 200;
  const started = [];
  let fixture;
  let kept;

  before(async () => {
    fixture = await syncedFixture(HEIGHT + 1);
    kept = { blocksDir: tempDir('blocks'), datadir: tempDir('index') };
    writeBlocksDir(kept.blocksDir, HEIGHT + 1);
    const r = await runCli(['sync', '--txstore', '--blocks-dir', kept.blocksDir, '--datadir', kept.datadir, '--network', 'main', '--threads', '0']);
    assert.equal(r.code, 0, r.stderr);
    fs.rmSync(kept.blocksDir, { recursive: true, force: true });
    started.push(...await Promise.all([
      startBitcore({ bitcoind: { datadir: fixture.datadir, blocksDir: fixture.blocksDir } }),
      startBitcore({ bitcoind: { datadir: fixture.datadir } }),
      startBitcore({ bitcoind: { datadir: kept.datadir } }),
    ]));
  });
  after(async () => {
    for (const bc of started) await bc.stop();
    if (fixture) await fixture.cleanup();
  });

  it('the recorded blocks dir, and the blocks the index keeps, answer as the configured blocks dir: transactions, spenders, blocks, raw bytes, status', async () => {
    const [configured, recorded, index] = started;
    const block170 = '00000000d1145790a8694403d4063f323d499e655c83426834d4ce2f8dd4a2ee';
    const paths = [
      `/tx/${TX170}`, `/rawtx/${TX170}`, `/block/${block170}`, `/rawblock/${block170}`, '/block-index/170',
      `/txs?block=${block170}`, `/txs?address=${SATOSHI}`, `/addrs/${HAL},${SATOSHI}/txs`, `/addr/${HAL}`, '/sync',
    ];
    for (const p of paths) {
      const want = await request(`${configured.url}/insight-api${p}`);
      assert.equal(want.status, 200, `${p}: ${want.text.slice(0, 200)}`);
      for (const [name, bc] of [['recorded', recorded], ['index', index]]) {
        const got = await request(`${bc.url}/insight-api${p}`);
        assert.equal(got.status, 200, `${name} ${p}: ${got.text.slice(0, 200)}`);
        assert.deepEqual(got.json, want.json, `${name} ${p}`);
      }
    }
    // the height-170 payment's change, spent at 181: its spender from the index's spender rows
    assert.equal((await request(`${index.url}/insight-api/tx/${TX170}`)).json.vout[1].spentTxId,
      'a16f3ce4dd5deb92d98ef5cf8afeaf0775ebca408f708b2146c4fb42b41e14be');
    assert.match(index.cli.text(), /blocks from the index \(--txstore\)/);
    assert.match(recorded.cli.text(), /blocks from \S+ \(recorded by the sync\)/);
  });
});

describe('addrindex\'s bitcoind service with follow: true (no separate sync)', function () {
  this.timeout(120000);
  let bc;
  after(async () => {
    if (bc) await bc.stop();
  });

  it('indexes a blocks dir from nothing, follows the blocks appended to it, and stops cleanly', async () => {
    const blocksDir = tempDir('follow-blocks');
    const datadir = path.join(tempDir('follow-index'), 'index');
    const { file, rest } = writeBlocksDir(blocksDir, 150);
    bc = await startBitcore({ bitcoind: { datadir, blocksDir, follow: true, followPollMs: 50, tipPollMs: 50, threads: 0 } });
    const height = async () => (await request(`${bc.url}/insight-api/sync`)).json.height;
    await waitFor(async () => (await height()) === 149, 30000, 'the service\'s own index at 149');
    assert.equal((await request(`${bc.url}/insight-api/addr/${HAL}?noTxList=1`)).json.balanceSat, 0);
    fs.appendFileSync(file, rest); // the node writes the rest of the chain
    await waitFor(async () => (await height()) === TIP, 30000, `the service's own index at ${TIP}`);
    assert.equal((await request(`${bc.url}/insight-api/addr/${HAL}?noTxList=1`)).json.balanceSat, 10e8);
    const tx = (await request(`${bc.url}/insight-api/tx/${TX170}`)).json;
    assert.equal(tx.vout[1].spentTxId, 'a16f3ce4dd5deb92d98ef5cf8afeaf0775ebca408f708b2146c4fb42b41e14be');
    assert.equal((await request(`${bc.url}/addrindex/api/v1/status`)).json.tip.height, TIP);
    const done = await bc.stop();
    bc = null;
    assert.equal(done.code, 0, done.stderr);
    // what it wrote is an index like any other: the CLI reads it, and verify passes
    const v = await runCli(['verify', '--datadir', datadir]);
    assert.equal(v.code, 0, v.stderr);
    assert.match(v.stdout + v.stderr, /\bok\b/);
  });
});

