'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { MAINNET_439 } = require('../helpers/fixtures');
const { waitFor } = require('../helpers/chains');
const { runCli, runJson, startCli } = require('../helpers/cli');
const { tempDir } = require('../helpers/tmp');
const { useMongo, freePort, buildFerretDB, FerretServer } = require('../helpers/mongo-server');
const { startServer, request, COMPARE_ROUTES, HAL, SATOSHI, TX170 } = require('../api/helpers');

const TIP = '0000000025c6b644f8add734be7e666fa4afa43ca0204d623a0c0b1fd2104c7a';

/**
 * The commands with --store mongo --mongodb-url, no --datadir: the 439 bundled mainnet blocks
 * synced through the CLI into the MongoDB-wire server, then answered by `query`, `status`,
 * `verify` and a clustered `serve` exactly as an LMDB index of the same blocks answers.
 */
describe('addrindex sync / status / verify / query / serve --store mongo (CLI)', function () {
  this.timeout(90000);
  const env = useMongo();
  let blocksDir;
  let lmdb;
  let mongoArgs;

  before(async function () {
    if (!env.mongo) return;
    blocksDir = tempDir('mongo-cli-blocks');
    fs.copyFileSync(MAINNET_439, path.join(blocksDir, 'blk00000.dat'));
    lmdb = path.join(tempDir('mongo-cli-lmdb'), 'index');
    const url = `${env.mongo.url.replace(/\/$/, '')}/${env.dbName('cli')}`;
    mongoArgs = ['--store', 'mongo', '--mongodb-url', url];
    const [a, b] = await Promise.all([
      runCli(['sync', '--blocks-dir', blocksDir, '--datadir', lmdb, '--threads', '0']),
      runCli(['sync', ...mongoArgs, '--blocks-dir', blocksDir, '--batch-blocks', '100', '--threads', '0']),
    ]);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(b.code, 0, b.stderr);
    assert.match(b.stderr, new RegExp(`synced 439 blocks, 446 txs .* tip height 438 ${TIP}\\n$`));
  });

  it('status and verify: the same tip and tx count as LMDB, every summary recomputed', async () => {
    const [a, b] = await Promise.all([runJson(['status', '--datadir', lmdb]), runJson(['status', ...mongoArgs])]);
    assert.deepEqual(b.tip, { height: 438, hash: TIP });
    assert.equal(b.network, 'main');
    assert.equal(b.txs, a.txs);
    assert.equal(b.tables.blocks.rows, 439);
    assert.equal(b.tables.txs.rows, 446);
    assert.ok(b.diskBytes > 0);
    const v = await runJson(['verify', ...mongoArgs]);
    assert.equal(v.ok, true, v.problems.join('\n'));
    assert.equal(v.checked.blocks, 439);
    assert.equal(v.checked.txs, 446);
  });

  it('query: the same answers as LMDB, pages and cursors included', async () => {
    for (const [address, limit] of [[HAL, '50'], [SATOSHI, '1'], [SATOSHI, '1000']]) {
      const [a, b] = await Promise.all([
        runJson(['query', address, '--datadir', lmdb, '--limit', limit]),
        runJson(['query', address, ...mongoArgs, '--limit', limit]),
      ]);
      assert.deepEqual(b, a, `${address} --limit ${limit}`);
      if (b.next) {
        const [a2, b2] = await Promise.all([
          runJson(['query', address, '--datadir', lmdb, '--limit', limit, '--cursor', b.next]),
          runJson(['query', address, ...mongoArgs, '--limit', limit, '--cursor', b.next]),
        ]);
        assert.deepEqual(b2, a2);
        assert.ok(b2.history.length > 0);
      }
    }
    const hal = await runJson(['query', HAL, ...mongoArgs]);
    assert.equal(hal.balance, 10e8);
    assert.equal(hal.history[0].txid, TX170);
  });

  it('serve: two workers, each with its own connection pool, answer every route as LMDB does', async () => {
    const direct = await startServer(lmdb);
    const serve = startCli(['serve', ...mongoArgs, '--workers', '2', '--port', '0', '--grace-ms', '3000']);
    try {
      const [, url] = await waitFor(() => /listening on (http:\/\/\S+)/.exec(serve.output.stderr + serve.output.stdout), 30000, 'serve to listen');
      const out = () => serve.output.stderr + serve.output.stdout;
      await waitFor(() => (out().match(/worker \d+ listening/g) || []).length === 2, 30000, 'two workers');
      assert.match(out(), /main index, tip 438 0000000025c6b644.*; 2 workers \(mongo, read-only\)/);
      for (const p of COMPARE_ROUTES) {
        const [a, b] = await Promise.all([request(url + p), request(direct.url + p)]);
        assert.equal(a.status, b.status, `${p}: ${a.text}`);
        assert.equal(a.text, b.text, p);
      }
      const body = { addresses: [HAL, SATOSHI, '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa'], limit: 3 };
      const want = await request(`${direct.url}/api/v1/addresses/history`, { method: 'POST', body });
      // many at once, over both workers
      const answers = await Promise.all(Array.from({ length: 40 }, () => request(`${url}/api/v1/addresses/history`, { method: 'POST', body })));
      for (const a of answers) assert.equal(a.text, want.text);
      const s = await request(`${url}/api/v1/status`);
      assert.equal(s.json.store, 'mongo');
      assert.equal(s.json.tip.height, 438);
    } finally {
      serve.kill('SIGTERM');
      const r = await serve.done;
      await direct.close();
      assert.equal(r.code, 0, r.stderr);
    }
  });

  it('a server killed mid-sync and restarted: the sync waits, resumes and loses nothing', async function () {
    if (env.mongo.external) this.skip();
    const dir = tempDir('mongo-cli-ferret');
    const server = new FerretServer(await buildFerretDB(), await freePort(), dir);
    try {
      const url = `${(await server.start()).replace(/\/$/, '')}/loss`;
      // small batches, so the sync is still writing when the server goes
      const sync = startCli(['sync', '--store', 'mongo', '--mongodb-url', url, '--blocks-dir', blocksDir, '--batch-blocks', '5', '--threads', '0']);
      await waitFor(() => /height \d+ \/ 438/.test(sync.output.stderr), 30000, 'the sync to commit');
      await server.stop({ signal: 'SIGKILL' });
      await new Promise((resolve) => setTimeout(resolve, 1500));
      assert.equal(sync.exitCode, null, 'the sync waits for the server');
      await server.start();
      const r = await sync.done;
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, new RegExp(`tip height 438 ${TIP}\\n$`));
      const v = await runJson(['verify', '--store', 'mongo', '--mongodb-url', url]);
      assert.equal(v.ok, true, v.problems.join('\n'));
      const [a, b] = await Promise.all([runJson(['query', SATOSHI, '--datadir', lmdb]), runJson(['query', SATOSHI, '--store', 'mongo', '--mongodb-url', url])]);
      assert.deepEqual(b, a);
    } finally {
      await server.stop();
    }
  });

  it('a server that stays away: the command stops with ERR_DB_UNAVAILABLE, naming it without credentials', async () => {
    const port = await freePort();
    const t0 = Date.now();
    const r = await runCli(['sync', '--store', 'mongo', '--mongodb-url', `mongodb://bob:pw@127.0.0.1:${port}/idx`, '--mongodb-retry-s', '1',
      '--blocks-dir', blocksDir, '--quiet']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, new RegExp(`^addrindex: MongoDB at mongodb://127\\.0\\.0\\.1:${port}/idx is unavailable: .*\\[ERR_DB_UNAVAILABLE\\]\\n$`));
    assert.ok(!r.stderr.includes('pw'));
    // it gave up after --mongodb-retry-s 1, not the default 30 s
    assert.ok(Date.now() - t0 < 25000);
    const usage = await runCli(['status', '--mongodb-url', 'mongodb://127.0.0.1/x']);
    assert.match(usage.stderr, /--mongodb-url goes with --store mongo.*\[ERR_USAGE\]/);
  });
});
