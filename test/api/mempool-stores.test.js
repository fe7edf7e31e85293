'use strict';

const assert = require('node:assert/strict');
const { openStore } = require('../../lib/stores');
const { ClusterPrimary } = require('../../lib/cluster/primary');
const { syncInto } = require('../helpers/chains');
const { useMongo } = require('../helpers/mongo-server');
const { mempoolChains, mempoolOf, snapshot, regtestAddress } = require('../helpers/mempool');
const { tempDir } = require('../helpers/tmp');
const { startServer, request } = require('./helpers');

/**
 * The same snapshot on every store answers the same bytes: LevelDB read the way `serve --store
 * level` reads it (workers forwarding to the primary that owns the index), MongoDB (FerretDB)
 * read directly, each against LMDB in process (test/api/mempool.test.js checks LMDB's answers
 * against bitcore-lib).
 */
const SEED = 'api-mempool-stores';
const M = 14;
const B = 16;

describe('api: the mempool snapshot answers alike on LMDB, LevelDB (forwarded) and MongoDB', function () {
  this.timeout(180000);
  const mongo = useMongo();
  let chains;
  let pool;
  let paths;
  let lmdb;
  const closers = [];

  /** A store of `kind` holding the chain to M and the snapshot. */
  async function filled(store) {
    await store.putSourceInfo({ blocksDir: chains.part.dir });
    await syncInto(chains.part.dir, store);
    assert.equal(await store.putMempool(snapshot(chains.ref, 7, pool, M)), true);
    return store;
  }

  before(async () => {
    chains = await mempoolChains(SEED, M, B);
    pool = mempoolOf(chains.ref, M, B);
    const shs = [...new Set(pool.flatMap((p) => p.outs.map((o) => o.sh)).filter(Boolean))].slice(0, 12);
    const display = (hex) => Buffer.from(hex, 'hex').reverse().toString('hex');
    paths = ['/api/mempool', '/api/mempool/txids', '/api/mempool/recent', `/api/tx/${pool[0].tx.hash}`, `/api/tx/${pool[0].tx.hash}/outspends`];
    for (const sh of shs) {
      paths.push(`/api/scripthash/${sh}`, `/api/scripthash/${sh}/txs/mempool`, `/api/scripthash/${sh}/txs`, `/api/scripthash/${sh}/utxo`,
        `/api/v1/scripthash/${display(sh)}`, `/api/v1/scripthash/${display(sh)}/history?mempool=1`);
      const a = regtestAddress(chains.ref, sh);
      if (a) paths.push(`/insight-api/addr/${a}`, `/insight-api/addr/${a}/utxo`, `/insight-api/txs?address=${a}`);
    }
    const datadir = tempDir('mempool-lmdb');
    const store = await filled(await openStore({ store: 'lmdb', datadir, network: 'regtest' }));
    await store.close();
    lmdb = await startServer(datadir, { network: 'regtest' });
    closers.push(() => lmdb.close());
  });
  after(async () => {
    for (const c of closers.reverse()) await c();
  });

  async function sameAnswers(url, logs = []) {
    for (const p of paths) {
      const [a, b] = await Promise.all([request(url + p), request(lmdb.url + p)]);
      assert.equal(b.status, 200, `${p}: ${b.text}`);
      assert.equal(a.text, b.text, `${p} ${logs.join('\n')}`);
    }
  }

  it('LevelDB, as serve --store level reads it: the primary owns the index, a worker forwards', async () => {
    const datadir = tempDir('mempool-level');
    const store = await filled(await openStore({ store: 'level', datadir, network: 'regtest' }));
    closers.push(() => store.close());
    const primary = new ClusterPrimary({
      workers: 1, store,
      worker: { store: 'level', strategy: 'forward', network: 'regtest', host: '127.0.0.1', port: 0, graceMs: 2000, blocksDir: chains.part.dir },
    });
    const address = await primary.start();
    closers.push(() => primary.stop());
    await sameAnswers(`http://127.0.0.1:${address.port}`);
  });

  it('MongoDB (FerretDB), read directly', async () => {
    const store = await filled(await openStore({ store: 'mongo', url: mongo.mongo.url, dbName: mongo.dbName('mempool'), network: 'regtest' }));
    closers.push(() => store.close());
    const srv = await startServer(null, { network: 'regtest', store });
    closers.push(() => srv.close());
    await sameAnswers(srv.url, srv.logs);
  });
});
