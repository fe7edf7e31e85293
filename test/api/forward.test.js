'use strict';

const assert = require('node:assert/strict');
const { syncedFixture, startServer, request, HAL, SATOSHI } = require('./helpers');
const { ClusterPrimary } = require('../../lib/cluster/primary');
const { openReadStore, readStrategy } = require('../../lib/cluster/stores');

/**
 * The forwarding read strategy (the one LevelDB needs: one process owns the database, the
 * workers forward their reads to it over IPC), run here over an LMDB index so it is tested
 * against a real store before the LevelDB backend exists.
 */
describe('api cluster: reads forwarded to the primary over IPC', function () {
  this.timeout(30000);
  let fixture;
  let direct;
  let store;
  let primary;
  let url;

  before(async () => {
    fixture = await syncedFixture();
    direct = await startServer(fixture.datadir);
    store = await openReadStore({ store: 'lmdb', datadir: fixture.datadir, network: 'main' });
    primary = new ClusterPrimary({
      workers: 2,
      store,
      worker: { store: 'lmdb', strategy: 'forward', network: 'main', host: '127.0.0.1', port: 0, graceMs: 2000, blocksDir: fixture.blocksDir },
    });
    const address = await primary.start();
    url = `http://127.0.0.1:${address.port}`;
  });
  after(async () => {
    if (primary) await primary.stop();
    if (store) await store.close();
    if (direct) await direct.close();
    if (fixture) await fixture.cleanup();
  });

  it('answers byte for byte what a worker reading the store itself answers', async () => {
    const paths = [
      '/api/v1/status',
      `/api/v1/address/${SATOSHI}`,
      `/api/v1/address/${SATOSHI}/history?limit=2&order=desc`,
      `/api/v1/address/${SATOSHI}/utxos`,
      '/api/v1/tx/f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16',
      `/api/address/${SATOSHI}/txs/chain`,
      `/api/address/${HAL}/utxo`,
      `/insight-api/addr/${SATOSHI}`,
      '/api/blocks/tip/hash',
      // transactions and blocks: store reads forwarded, block files read by the worker
      '/api/tx/f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16',
      '/api/tx/f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16/outspends',
      '/insight-api/tx/f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16',
      '/api/blocks',
    ];
    for (const p of paths) {
      const [a, b] = await Promise.all([request(url + p), request(direct.url + p)]);
      assert.equal(a.status, 200, `${p}: ${a.text}`);
      assert.equal(a.text, b.text, p);
    }
    const body = { addresses: [HAL, SATOSHI], limit: 3 };
    const [a, b] = await Promise.all([
      request(`${url}/api/v1/addresses/history`, { method: 'POST', body }),
      request(`${direct.url}/api/v1/addresses/history`, { method: 'POST', body }),
    ]);
    assert.equal(a.text, b.text);
  });

  it('a store error crosses the channel typed: a bad cursor is still a 400', async () => {
    const r = await request(`${url}/api/v1/address/${SATOSHI}/history?cursor=AQAAAAAB`);
    const d = await request(`${direct.url}/api/v1/address/${SATOSHI}/history?cursor=AQAAAAAB`);
    assert.equal(r.status, d.status);
    const bad = await request(`${url}/api/v1/address/${SATOSHI}/history?cursor=AgAAAAABAAAAAA`);
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.code, 'ERR_BAD_CURSOR');
  });

  it('store strategies: lmdb and mongo read directly, level forwards; a missing backend is a clear UsageError', () => {
    assert.equal(readStrategy('lmdb'), 'direct');
    assert.throws(() => readStrategy('redis'), (e) => e.code === 'ERR_USAGE');
    assert.equal(readStrategy('mongo'), 'direct');
    assert.equal(readStrategy('level'), 'forward');
  });
});
