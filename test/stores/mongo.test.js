'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { MongoStore } = require('../../lib/stores/mongo');
const { redactUrl } = require('../../lib/stores/mongo/retry');
const { StoreError } = require('../../lib/errors');
const { buildDeltas } = require('../../lib/sync/delta');
const { toDisplayHex } = require('../../lib/chain/hash');
const { useMongo, FerretServer, buildFerretDB, freePort } = require('../helpers/mongo-server');
const { mainnetChain, p2pkChain, syncBlocks } = require('./data');
const { Wallet } = require('../helpers/wallet');
const { addressScripthash } = require('../helpers/reference');
const { storeConformance } = require('./conformance');
const { MongoClient, Long } = require('mongodb');
const { tempDir } = require('../helpers/tmp');

describe('MongoDB store (lib/stores/mongo.js)', function () {
  this.timeout(120000);
  const env = useMongo();
  const opened = [];
  const track = async (p) => {
    const s = await p;
    opened.push(s);
    return s;
  };
  afterEach(async () => {
    while (opened.length) await opened.pop().close();
  });

  /** digests of a store synced without interruption, by height: what the repaired ones must equal */
  const digests = new Map();

  before(async function () {
    if (!env.mongo) return;
    const full = await MongoStore.open({ url: env.mongo.url, dbName: env.dbName('full'), network: 'main' });
    const t0 = Date.now();
    await syncBlocks(full, mainnetChain().blocks, 0, 299, [150]);
    digests.set(299, await full.digest());
    await syncBlocks(full, mainnetChain().blocks, 300, 438, [139]);
    console.log(`      (applied 439 mainnet blocks in 3 batches in ${Date.now() - t0} ms on ${full.serverVersion})`);
    digests.set(438, await full.digest());
    await full.close();
  });

  it('refuses a database of another network; a reader sees only committed blocks', async () => {
    const dbName = env.dbName('network');
    const s = await track(MongoStore.open({ url: env.mongo.url, dbName, network: 'main', repairSettleMs: 0 }));
    await syncBlocks(s, mainnetChain().blocks, 0, 20, [21]);
    await assert.rejects(MongoStore.open({ url: env.mongo.url, dbName, network: 'testnet' }), { code: 'ERR_WRONG_NETWORK' });
    await assert.rejects(MongoStore.open({ url: env.mongo.url, dbName: env.dbName('empty'), network: 'main', readOnly: true }), { code: 'ERR_NO_INDEX' });
    const reader = await track(MongoStore.open({ url: env.mongo.url, dbName, network: 'main', readOnly: true }));
    assert.equal((await reader.getTip()).height, 20);
    await assert.rejects(reader.apply([]), { code: 'ERR_READ_ONLY' });
    // while the writer is between its data and its tip, the reader's answers are those of tip 20
    const { blocks } = mainnetChain();
    const deltas = await buildDeltas(blocks.slice(21, 40), s, (await s.getTip()).nextTxNum);
    const sh = Buffer.from(blocks[30].cols.scripthashes.subarray(0, 32));
    let seen = null;
    s.opts.onStep = async (step) => {
      if (step !== 'tip') return;
      seen = {
        tip: await reader.getTip(), history: await reader.getHistory(sh), block: await reader.getBlock(30),
        tx: await reader.getTxid(35), utxos: await reader.getUtxos(sh),
      };
    };
    await s.apply(deltas);
    assert.deepEqual(seen, { tip: { height: 20, hash: blocks[20].cols.hash, nextTxNum: 21 },
      history: { entries: [], next: null }, block: null, tx: null, utxos: { utxos: [], next: null } });
    assert.equal((await reader.getHistory(sh)).entries.length, 1);
  });

  it('a reader\'s script view reads an address\'s P2PK parts at the tip it read the address at', async () => {
    // the P2PKH script hashes of keys paid both ways (test/stores/data.js): in block 5 the miner
    // is paid a P2PK coinbase and spends a P2PKH output, k1 spends its P2PK and P2PKH outputs
    const { blocks } = p2pkChain();
    const w = new Wallet('addrindex-p2pk-chain');
    const [miner, k1, k2] = ['miner', 'k1', 'k2'].map((label) => addressScripthash(w.output('p2pkh', label).address));
    const dbName = env.dbName('script_view');
    const s = await track(MongoStore.open({ url: env.mongo.url, dbName, network: 'regtest', repairSettleMs: 0 }));
    await syncBlocks(s, blocks, 0, 4, [2, 3]);
    const reader = await track(MongoStore.open({ url: env.mongo.url, dbName, network: 'regtest', readOnly: true }));
    const apply5 = async () => s.apply(await buildDeltas(blocks.slice(5, 6), s, (await s.getTip()).nextTxNum));
    // the writer commits `commit` whole right after the reader's first read of `target`'s
    // account: the reader must still answer what the tip it read says
    const midRead = async (target, commit, read, what) => {
      const want = await read(s);
      const findByIds = reader.database.findByIds;
      let armed = true;
      reader.database.findByIds = async (name, ids) => {
        const found = await findByIds.call(reader.database, name, ids);
        if (armed && name === 'accounts' && ids.includes(toDisplayHex(target))) {
          armed = false;
          await commit();
        }
        return found;
      };
      try {
        assert.deepEqual(await read(reader), want, what);
      } finally {
        reader.database.findByIds = findByIds;
      }
      assert.equal(armed, false, `${what}: the commit landed between the reader's reads`);
      assert.notDeepEqual(await read(s), want, `${what}: the commit changes the answer`);
    };
    const script = { view: 'script' };
    await midRead(miner, apply5, (st) => st.getSummaries([miner, k1, k2], script), 'summaries');
    await s.revert(4);
    await midRead(k1, apply5, (st) => st.getUtxos(k1, script), 'utxos');
    await midRead(miner, () => s.revert(4), (st) => st.getHistory(miner, script), 'history');
  });

  it('every collection exists from the open; applies and reverts neither create nor drop one', async () => {
    // FerretDB v1 makes and drops a collection's table and its catalogue row in two statements:
    // a server killed between them wedges every later create of that name
    const dbName = env.dbName('collections');
    const s = await track(MongoStore.open({ url: env.mongo.url, dbName, network: 'main', repairSettleMs: 0 }));
    // a collection made again has a new uuid
    const collections = async () => Object.fromEntries((await s.client.db(dbName).listCollections().toArray()).map((c) => [c.name, c.info.uuid.toHexString(false)]));
    const before = await collections();
    assert.ok(Object.values(before).every((u) => /^[0-9a-f]{32}$/.test(u)), JSON.stringify(before));
    assert.deepEqual(Object.keys(before).sort(), ['accounts', 'blocks', 'bodies', 'history', 'mempool', 'mempoolTxs', 'meta', 'spends', 'staging', 'txs', 'undo', 'utxos']);
    await syncBlocks(s, mainnetChain().blocks, 0, 120, [40]);
    await s.revert(60);
    assert.equal((await s.getTip()).height, 60);
    assert.deepEqual(await collections(), before);
    assert.equal(await s.client.db(dbName).collection('staging').countDocuments(), 0);
  });

  it('an apply cut off before its swap is rolled back on reopen, one cut off after it is finished', async () => {
    const { blocks } = mainnetChain();
    for (const [step, height] of [['data', 299], ['stage', 299], ['swap', 438], ['tip', 438]]) {
      const dbName = env.dbName(`cut_${step}`);
      const s = await track(MongoStore.open({ url: env.mongo.url, dbName, network: 'main', repairSettleMs: 0 }));
      await syncBlocks(s, mainnetChain().blocks, 0, 299, [300]);
      const deltas = await buildDeltas(blocks.slice(300), s, (await s.getTip()).nextTxNum);
      // a failure at a step: everything before it written, nothing after (what a crash leaves)
      s.opts.onStep = (at) => {
        if (at === step) throw new Error(`simulated crash at ${step}`);
      };
      await assert.rejects(s.apply(deltas), /simulated crash/);
      const again = await track(MongoStore.open({ url: env.mongo.url, dbName, network: 'main', repairSettleMs: 0 }));
      assert.equal((await again.getTip()).height, height, `cut at ${step}`);
      assert.equal(await again.digest(), digests.get(height), `cut at ${step}`);
      assert.equal((await again.verify()).ok, true);
      assert.equal(await again.client.db(dbName).collection('staging').countDocuments(), 0, `cut at ${step}`);
      if (step === 'stage') {
        // and the same writer, after its failure, repairs before its next apply
        s.opts.onStep = undefined;
        await s.apply(deltas);
        assert.equal(await s.digest(), digests.get(438));
      }
    }
  });

  it('a mempool change cut off after it is stored, or after its documents: readers see it whole, the next write rolls it forward', async () => {
    const { encodeChange, encodeMempoolTx, decodeWhole, decodeMempoolTx } = require('../../lib/codec/mempool');
    const { fromDisplayHex } = require('../../lib/chain/hash');
    const tx = (n) => ({
      txid: Buffer.alloc(32, n), time: n, fee: n, vsize: 100, raw: Buffer.alloc(60, n),
      inputs: [{ txid: Buffer.alloc(32, 200 + n), vout: 0, value: 1000, scripthash: Buffer.alloc(32, 9), unconfirmed: false }], outputs: [{ value: 1000 - n, scripthash: null }],
    });
    for (const cut of ['mempool-change', 'mempool-docs']) {
      const dbName = env.dbName(`mempool_${cut.replace('-', '_')}`);
      const s = await track(MongoStore.open({ url: env.mongo.url, dbName, network: 'main', repairSettleMs: 0 }));
      await syncBlocks(s, mainnetChain().blocks, 0, 10, [11]);
      const tip = fromDisplayHex((await s.getTip()).hash);
      const change = (seq, prev, removed, upserts) => encodeChange({
        seq, prev, tip, count: 0, vsize: 0, fee: 0, evicted: 0, reset: false,
        removed: removed.map((n) => Buffer.alloc(32, n)), removedRanks: removed, upserts: upserts.map((n) => ({ rank: n, part: encodeMempoolTx(tx(n)), raw: tx(n).raw })),
      });
      const reader = await track(MongoStore.open({ url: env.mongo.url, dbName, network: 'main', readOnly: true }));
      const held = async () => decodeWhole(await reader.getMempool()).rows.map((r) => decodeMempoolTx(r.part).txid[0]);
      assert.equal(await s.putMempool(change(1, 0, [], [1, 2, 3])), true);
      s.opts.onStep = (at) => {
        if (at === cut) throw new Error(`simulated crash at ${at}`);
      };
      await assert.rejects(s.putMempool(change(2, 1, [2], [4])), /simulated crash/);
      s.opts.onStep = undefined;
      // the head still names 1; a reader applies change 2 to what it reads
      assert.equal((await reader.getMempoolHead()).seq, 1);
      assert.deepEqual(await held(), [1, 3, 4], cut);
      assert.deepEqual(decodeWhole(await reader.getMempool()).seq, 2);
      // the next write rolls 2 forward first, then applies 3
      assert.equal(await s.putMempool(change(3, 2, [1], [5])), true);
      assert.equal((await reader.getMempoolHead()).seq, 3);
      assert.deepEqual(await held(), [3, 4, 5], cut);
      assert.deepEqual((await reader.getMempoolChanges(1)).length, 2);
    }
  });

  it('a revert cut off before its swap is rolled back on reopen, one cut off after it is finished; staging left empty', async () => {
    const ref = await track(MongoStore.open({ url: env.mongo.url, dbName: env.dbName('revert_ref'), network: 'main', repairSettleMs: 0 }));
    await syncBlocks(ref, mainnetChain().blocks, 0, 60, [61]);
    // undo aside: a store synced past 100 blocks has pruned the undo of the first ones
    const at60 = await ref.digest({ undo: false });
    for (const [step, height] of [['stage', 120], ['swap', 60], ['tip', 60], ['done', 60]]) {
      const dbName = env.dbName(`revert_cut_${step}`);
      const s = await track(MongoStore.open({ url: env.mongo.url, dbName, network: 'main', repairSettleMs: 0 }));
      await syncBlocks(s, mainnetChain().blocks, 0, 120, [121]);
      const at120 = await s.digest({ undo: false });
      s.opts.onStep = (at) => {
        if (at === step) throw new Error(`simulated crash at ${step}`);
      };
      await assert.rejects(s.revert(60), /simulated crash/);
      const again = await track(MongoStore.open({ url: env.mongo.url, dbName, network: 'main', repairSettleMs: 0 }));
      assert.equal((await again.getTip()).height, height, `cut at ${step}`);
      assert.equal(await again.digest({ undo: false }), height === 60 ? at60 : at120, `cut at ${step}`);
      assert.equal((await again.verify()).ok, true, `cut at ${step}`);
      assert.equal(await again.client.db(dbName).collection('staging').countDocuments(), 0, `cut at ${step}`);
    }
  });

  describe('connection loss', function () {
    let bin;
    before(async function () {
      if (!env.mongo || env.mongo.external) this.skip();
      bin = await buildFerretDB();
    });

    /** Runs `fn` with a FerretDB process of its own (the test stops and starts it) and a store on it. */
    async function withOwnServer(tag, storeOpts, fn) {
      const dir = tempDir(`ferret-${tag}`);
      const server = new FerretServer(bin, await freePort(), dir);
      try {
        const url = await server.start();
        const s = await track(MongoStore.open({ url, dbName: tag, network: 'main', repairSettleMs: 0, ...storeOpts }));
        await fn(server, s, url);
      } finally {
        await server.stop();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }

    it('waits for a server that comes back mid-apply, and loses nothing', () => withOwnServer('loss', { retryTimeoutMs: 30000 }, async (server, s) => {
      await syncBlocks(s, mainnetChain().blocks, 0, 199, [200]);
      let retries = 0;
      let restarted = null;
      s.opts.onStep = async (step) => {
        if (step !== 'data' || restarted) return;
        await server.stop({ signal: 'SIGKILL' });
        restarted = new Promise((resolve, reject) => setTimeout(() => server.start().then(resolve, reject), 1500));
      };
      const { blocks } = mainnetChain();
      const deltas = await buildDeltas(blocks.slice(200), s, (await s.getTip()).nextTxNum);
      const t0 = Date.now();
      await s.apply(deltas);
      await restarted;
      retries = Date.now() - t0;
      assert.ok(retries >= 1500, 'the apply waited for the server');
      assert.equal((await s.getTip()).height, 438);
      assert.equal(await s.digest(), digests.get(438));
      assert.equal((await s.verify()).ok, true);
    }));

    it('fails with ERR_DB_UNAVAILABLE within the configured time when the server stays away', () => withOwnServer('gone', { retryTimeoutMs: 2000 }, async (server, s, url) => {
      await syncBlocks(s, mainnetChain().blocks, 0, 49, [50]);
      const { blocks } = mainnetChain();
      const deltas = await buildDeltas(blocks.slice(50, 100), s, (await s.getTip()).nextTxNum);
      await server.stop({ signal: 'SIGKILL' });
      const t0 = Date.now();
      await assert.rejects(s.apply(deltas), (e) => e instanceof StoreError && e.code === 'ERR_DB_UNAVAILABLE' && e.message.includes(url.replace(/\/$/, '')));
      const took = Date.now() - t0;
      assert.ok(took < 2000 + 3000, `gave up after ${took} ms`);
      // with the server back, the same store repairs and goes on
      await server.start();
      assert.equal((await s.getTip()).height, 49);
      await s.apply(deltas);
      assert.equal((await s.getTip()).height, 99);
      assert.equal((await s.verify()).ok, true);
    }));

    it('names the server without credentials when it cannot connect at all', async () => {
      const port = await freePort();
      const url = `mongodb://alice:s3cret@127.0.0.1:${port}/idx?authSource=admin`;
      const t0 = Date.now();
      await assert.rejects(MongoStore.open({ url, network: 'main', retryTimeoutMs: 1000 }), (e) => {
        assert.equal(e.code, 'ERR_DB_UNAVAILABLE');
        assert.ok(!e.message.includes('s3cret') && !e.message.includes('alice'), e.message);
        assert.ok(e.message.includes(`mongodb://127.0.0.1:${port}/idx`), e.message);
        return true;
      });
      // it gave up after its own 1 s, not the default 30 s (a bound far from both: the machine may be loaded)
      assert.ok(Date.now() - t0 < 15000);
      assert.equal(redactUrl('mongodb+srv://u:p@h.example/db?tls=true'), 'mongodb+srv://h.example/db');
    });
  });

  describe('the shared conformance suite', function () {
    let admin;
    before(async function () {
      if (!env.mongo) this.skip();
      // child processes of the suite open the store through mongo-open.js with this URL
      process.env.ADDRINDEX_TEST_MONGODB_URL = env.mongo.url;
      admin = new MongoClient(env.mongo.url);
      await admin.connect();
    });
    after(async () => {
      if (admin) await admin.close();
    });
    storeConformance('MongoDB', {
      kind: 'mongo',
      create: () => env.dbName('conf'),
      // a killed writer's last command has long finished on this lightly used server
      open: (dbName, opts) => MongoStore.open({ url: env.mongo.url, dbName, repairSettleMs: 300, ...opts }),
      openerModule: path.join(__dirname, 'mongo-open.js'),
      readersInOtherProcesses: true,
      // FerretDB spends about a millisecond per document written: chains of a sixth of the
      // default size, still with sealed history pages and UTXO sets past the inline limit
      chains: process.env.MONGODB_URL ? {} : {
        generated: { seed: 11, blocks: 30, txsPerBlock: 20 },
        writer: { seed: 23, blocks: 40, txsPerBlock: 10 },
      },
      async setSchemaVersion(dbName, version) {
        await admin.db(dbName).collection('meta').updateOne({ _id: 'meta' }, { $set: { version } });
      },
      async corruptSummary(dbName, scripthash) {
        await admin.db(dbName).collection('accounts').updateOne({ _id: toDisplayHex(scripthash) }, { $set: { received: 'not a number' } });
      },
      async tamperSummary(dbName, scripthash) {
        const accounts = admin.db(dbName).collection('accounts');
        const d = await accounts.findOne({ _id: toDisplayHex(scripthash) });
        await accounts.updateOne({ _id: d._id }, { $set: { received: Long.fromNumber(d.received + 1) } });
      },
      async dropAccount(dbName, scripthash) {
        await admin.db(dbName).collection('accounts').deleteOne({ _id: toDisplayHex(scripthash) });
      },
    });
  });
});
