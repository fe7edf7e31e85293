'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { syncedFixture, startServer, request, writeBlocksDir, TX170, SATOSHI } = require('../api/helpers');
const { tempDir } = require('../helpers/tmp');
const { mainnet439Blocks } = require('../helpers/fixtures');
const { runCli, runJson, startCli } = require('../helpers/cli');
const { mainnetReference, outputAddress } = require('../helpers/reference');

describe('addrindex tx, and where serve finds the blocks', function () {
  this.timeout(60000);
  let fixture;

  before(async () => { fixture = await syncedFixture(); });
  after(async () => { if (fixture) await fixture.cleanup(); });

  it('tx TXID --json: the native whole transaction, as GET /api/v1/tx/:txid?full=1 answers it', async () => {
    const srv = await startServer(fixture.datadir);
    try {
      for (const txid of [TX170, mainnetReference().txids[9], mainnetReference().txids[0]]) {
        const got = await runJson(['tx', txid, '--datadir', fixture.datadir]);
        assert.deepEqual(got, (await request(`${srv.url}/api/v1/tx/${txid}?full=1`)).json);
      }
    } finally {
      await srv.close();
    }
    const hal = await runJson(['tx', TX170.toUpperCase(), '--datadir', fixture.datadir]);
    assert.equal(hal.txid, TX170);
    const change = mainnetReference().outputs.find((o) => o.txid === TX170 && o.vout === 1);
    assert.deepEqual(hal.outputs[1].spent, { txid: change.spentTxid, vin: change.spentVin, height: change.spentAt });
    assert.equal(hal.inputs[0].address, SATOSHI);
    assert.equal(hal.outputs[0].address, outputAddress(mainnetReference().blocks[170].transactions[1].outputs[0].script));
  });

  it('tx TXID: readable lines; an unknown txid exits 1 with ERR_TX_NOT_FOUND, a malformed one is a usage error', async () => {
    const r = await runCli(['tx', TX170, '--datadir', fixture.datadir]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^txid {6}f4184fc5/m);
    assert.match(r.stdout, /height 170, position 1, 269 confirmations/);
    assert.match(r.stdout, /0 {2}10\.00000000 BTC {2}1Q2TWHE3GMdB6BZKafqwxXtWAWgFt5Jvm3 p2pk {2}unspent/);
    assert.match(r.stdout, /spent by a16f3ce4dd5deb92…:0 at 181/);
    const missing = await runCli(['tx', '00'.repeat(32), '--datadir', fixture.datadir]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /is not in the index \(confirmed transactions of the best chain up to height 438\) \[ERR_TX_NOT_FOUND\]/);
    const bad = await runCli(['tx', 'f4184fc5', '--datadir', fixture.datadir]);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /a txid is 64 hex digits.*\[ERR_USAGE\]/);
  });

  it('sync --txstore: the index alone serves transactions and blocks, byte for byte, with its blocks dir gone', async () => {
    const blocksDir = tempDir('blocks');
    const datadir = tempDir('index');
    writeBlocksDir(blocksDir, 439);
    const synced = await runCli(['sync', '--txstore', '--blocks-dir', blocksDir, '--datadir', datadir, '--network', 'main', '--threads', '0']);
    assert.equal(synced.code, 0, synced.stderr);
    const want = await runJson(['tx', TX170, '--datadir', fixture.datadir]);
    fs.rmSync(blocksDir, { recursive: true, force: true });
    assert.deepEqual(await runJson(['tx', TX170, '--datadir', datadir]), want);
    const raws = mainnet439Blocks();
    const serve = startCli(['serve', '--datadir', datadir, '--workers', '1', '--port', '0']);
    try {
      const [, url] = await serve.waitFor(/listening on (http:\/\/\S+)/);
      await serve.waitFor(/transactions and blocks read from the index \(synced with --txstore\)/);
      const hash = (await request(`${url}/api/block-height/170`)).text;
      assert.deepEqual(Buffer.from(await (await fetch(`${url}/api/block/${hash}/raw`)).arrayBuffer()), raws[170]);
      assert.equal((await request(`${url}/api/tx/${TX170}/hex`)).text, mainnetReference().blocks[170].transactions[1].toString());
      assert.equal((await request(`${url}/api/tx/${TX170}`)).json.vout[0].value, 10e8);
    } finally {
      serve.kill('SIGTERM');
      await serve.exited;
    }
    // chosen when the index is created: the other way round is refused, in one line, either way
    const refused = await runCli(['sync', '--txstore', '--blocks-dir', fixture.blocksDir, '--datadir', fixture.datadir, '--network', 'main']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /was created without --txstore.*\[ERR_TXSTORE\]/);
  });

  it('blocks moved away: tx and serve say the block cannot be read (503), never guess; --blocks-dir points them at the new place', async () => {
    const moved = `${fixture.blocksDir}-moved`;
    fs.renameSync(fixture.blocksDir, moved);
    try {
      const gone = await runCli(['tx', TX170, '--datadir', fixture.datadir]);
      assert.equal(gone.code, 1);
      assert.match(gone.stderr, /\[ERR_BLOCK_UNAVAILABLE\]/);
      const back = await runJson(['tx', TX170, '--datadir', fixture.datadir, '--blocks-dir', moved]);
      assert.equal(back.outputs[0].value, 10e8);

      for (const [args, status, said] of [
        [[], 503, /the recorded blocks dir .* cannot be read \(ENOENT\): transaction and block routes will answer 503 until it can/],
        [['--blocks-dir', moved], 200, new RegExp(`transactions and blocks read from ${moved.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(--blocks-dir\\)`)],
      ]) {
        const serve = startCli(['serve', '--datadir', fixture.datadir, '--workers', '1', '--port', '0', ...args]);
        try {
          const [, url] = await serve.waitFor(/listening on (http:\/\/\S+)/);
          await serve.waitFor(said);
          const r = await request(`${url}/api/tx/${TX170}`);
          assert.equal(r.status, status, r.text);
          if (status === 503) assert.equal(r.json.error.code, 'ERR_BLOCK_UNAVAILABLE');
          else assert.equal(r.json.txid, TX170);
          // what needs no block bytes still answers
          assert.equal((await request(`${url}/api/tx/${TX170}/status`)).status, 200);
        } finally {
          serve.kill('SIGTERM');
          await serve.exited;
        }
      }
    } finally {
      fs.renameSync(moved, fixture.blocksDir);
    }
    assert.ok(fs.existsSync(path.join(fixture.blocksDir, 'blk00000.dat')));
  });
});
