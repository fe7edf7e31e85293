'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { syncedFixture, startServer, request, HAL, SATOSHI, COMPARE_ROUTES } = require('./helpers');
const { startCli: cli } = require('../helpers/cli');

/**
 * `addrindex serve --store level`: LevelDB allows one process, so the primary owns the index
 * and its two workers forward their reads to it. Checked over real HTTP against an LMDB index
 * of the same blocks served directly.
 */
describe('api: addrindex serve --store level (reads forwarded to the owning primary)', function () {
  this.timeout(90000);
  let fixture;
  let direct;
  let datadir;
  let serve;
  let url;

  before(async () => {
    fixture = await syncedFixture();
    direct = await startServer(fixture.datadir);
    datadir = path.join(fixture.blocksDir, '..', `${path.basename(fixture.datadir)}-level`);
    const sync = cli(['sync', '--store', 'level', '--blocks-dir', fixture.blocksDir, '--datadir', datadir, '--threads', '0', '--quiet']);
    assert.equal((await sync.exited).code, 0, sync.text());
    serve = cli(['serve', '--store', 'level', '--datadir', datadir, '--workers', '2', '--port', '0', '--grace-ms', '3000']);
    [, url] = await serve.waitFor(/listening on (http:\/\/\S+)/);
  });
  after(async () => {
    if (serve && serve.exitCode === null) {
      serve.kill('SIGKILL');
      await serve.exited;
    }
    if (direct) await direct.close();
    if (datadir) fs.rmSync(datadir, { recursive: true, force: true });
    if (fixture) await fixture.cleanup();
  });

  it('says how it serves: two workers, reads forwarded to the primary', () => {
    assert.match(serve.text(), /main index, tip 438 0000000025c6b644.*; 2 workers \(level, reads forwarded to this process\)/);
    assert.equal((serve.text().match(/worker \d+ listening/g) || []).length, 2);
  });

  it('answers every route byte for byte as an LMDB index of the same blocks does', async () => {
    // errors among them cross the IPC channel typed, so they map to the same statuses
    for (const p of COMPARE_ROUTES) {
      const [a, b] = await Promise.all([request(url + p), request(direct.url + p)]);
      assert.equal(a.status, b.status, `${p}: ${a.text}`);
      assert.equal(a.text, b.text, p);
    }
    const statuses = new Set();
    for (const [p, body] of [
      ['/api/v1/addresses/history', { addresses: [HAL, SATOSHI], limit: 3 }],
      ['/api/v1/addresses/history', { addresses: [HAL, SATOSHI, '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa'], order: 'desc' }],
      ['/api/v1/addresses/summary', { addresses: [HAL, SATOSHI] }],
      ['/api/v1/addresses/history', { addresses: 'nope' }],
    ]) {
      const [a, b] = await Promise.all([request(url + p, { method: 'POST', body }), request(direct.url + p, { method: 'POST', body })]);
      assert.equal(a.status, b.status, `${p}: ${a.text}`);
      assert.equal(a.text, b.text, p);
      statuses.add(a.status);
    }
    assert.deepEqual([...statuses].sort(), [200, 400]);
    const hal = await request(`${url}/api/v1/address/${HAL}`);
    assert.equal(hal.json.balance, 10e8);
  });

  it('status names the store', async () => {
    const s = await request(`${url}/api/v1/status`);
    assert.equal(s.status, 200);
    assert.equal(s.json.store, 'level');
    assert.deepEqual({ height: s.json.tip.height, hash: s.json.tip.hash },
      { height: 438, hash: '0000000025c6b644f8add734be7e666fa4afa43ca0204d623a0c0b1fd2104c7a' });
  });

  it('many requests at once over both workers: all answered, all the same', async () => {
    const body = { addresses: [HAL, SATOSHI], limit: 50 };
    const want = (await request(`${direct.url}/api/v1/addresses/history`, { method: 'POST', body })).text;
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2
      ? request(`${url}/api/v1/addresses/history`, { method: 'POST', body })
      : request(`${url}/api/v1/address/${HAL}`))));
    for (let i = 0; i < answers.length; i++) {
      assert.equal(answers[i].status, 200);
      if (i % 2) assert.equal(answers[i].text, want);
    }
  });

  it('a sync on the served datadir is refused: LevelDB allows one process at a time', async () => {
    const sync = cli(['sync', '--store', 'level', '--blocks-dir', fixture.blocksDir, '--datadir', datadir, '--quiet']);
    const r = await sync.exited;
    assert.notEqual(r.code, 0);
    assert.match(r.stdout + r.stderr, /LevelDB allows one process at a time.*\[ERR_LOCKED\]/);
    assert.match(r.stdout + r.stderr, new RegExp(`pid ${serve.pid}: addrindex\\.js serve --store level`));
  });

  it('a killed worker is replaced and forwards again', async () => {
    const pids = [...serve.text().matchAll(/worker (\d+) listening/g)].map((m) => Number(m[1]));
    process.kill(pids[0], 'SIGKILL');
    await serve.waitFor(new RegExp(`worker ${pids[0]} killed by SIGKILL; starting a replacement`), 10000);
    await serve.waitFor(/(worker \d+ listening[^]*){3}/, 10000);
    const answers = await Promise.all(Array.from({ length: 20 }, () => request(`${url}/api/v1/address/${HAL}`)));
    assert.deepEqual(answers.map((a) => a.status), new Array(20).fill(200));
  });

  it('SIGTERM: drains, exits 0 and releases the datadir', async () => {
    serve.kill('SIGTERM');
    const r = await serve.exited;
    assert.equal(r.code, 0, r.stderr);
    const status = cli(['status', '--store', 'level', '--datadir', datadir, '--json']);
    const s = await status.exited;
    assert.equal(s.code, 0, s.stderr);
    assert.equal(JSON.parse(s.stdout).tip.height, 438);
  });
});
