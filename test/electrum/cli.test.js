'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { syncedFixture, referenceIndex, SATOSHI } = require('../api/helpers');
const { MAINNET_439 } = require('../helpers/fixtures');
const { startCli, runCli } = require('../helpers/cli');
const { tempDir } = require('../helpers/tmp');
const { connectClient, toElectrum } = require('./helpers');

describe('electrum: addrindex serve --electrum-port with clustered workers', function () {
  this.timeout(60000);
  let fixture;
  let serve;
  let tcp;
  let tlsPort;
  let certDir;

  before(async () => {
    fixture = await syncedFixture(300);
    certDir = tempDir('electrum-cert');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', path.join(certDir, 'key.pem'), '-out', path.join(certDir, 'cert.pem'), '-days', '2', '-subj', '/CN=127.0.0.1'], { stdio: 'pipe' });
    serve = startCli(['serve', '--datadir', fixture.datadir, '--workers', '2', '--port', '0', '--electrum-port', '0',
      '--electrum-tls-port', '0', '--tls-cert', path.join(certDir, 'cert.pem'), '--tls-key', path.join(certDir, 'key.pem'),
      '--blocks-dir', fixture.blocksDir, '--electrum-poll-ms', '50', '--grace-ms', '2000']);
    const m = await serve.waitFor(/electrum tcp 127\.0\.0\.1:(\d+), tls 127\.0\.0\.1:(\d+)/);
    tcp = Number(m[1]);
    tlsPort = Number(m[2]);
  });
  after(async () => {
    if (serve && serve.exitCode === null) {
      serve.kill('SIGKILL');
      await serve.done;
    }
    if (fixture) await fixture.cleanup();
  });

  it('every worker answers and notifies its own connections when a sync process adds blocks', async () => {
    const ref = referenceIndex();
    // the height-9 coinbase's P2PK script (its key's address is SATOSHI)
    const own = referenceIndex('script').p2pkOf(SATOSHI);
    const sh = toElectrum(own);
    // connections are spread over both workers (round robin): each must hear the new tip
    const clients = [];
    for (let i = 0; i < 4; i++) clients.push(await connectClient(i % 2 ? tlsPort : tcp, i % 2 ? 'tls' : 'tcp'));
    const heard = clients.map((c) => new Promise((resolve) => {
      c.subscribe.on('blockchain.headers.subscribe', ([h]) => { if (h.height === 438) resolve(h); });
    }));
    for (const c of clients) {
      assert.equal((await c.server_version('cli-test', '1.4'))[1], '1.4');
      assert.equal((await c.blockchainHeaders_subscribe()).height, 299);
      assert.equal((await c.blockchainScripthash_getBalance(sh)).confirmed, referenceIndex('script').at(own, 299).summary.balance);
    }
    const blk = path.join(fixture.blocksDir, 'blk00000.dat');
    fs.appendFileSync(blk, fs.readFileSync(MAINNET_439).subarray(fs.statSync(blk).size));
    const r = await runCli(['sync', '--blocks-dir', fixture.blocksDir, '--datadir', fixture.datadir, '--threads', '0', '--quiet']);
    assert.equal(r.code, 0, r.stderr);
    for (const h of await Promise.all(heard)) assert.equal(h.hex, ref.blocks[438].header.toBuffer().toString('hex'));
    for (const c of clients) {
      assert.equal((await c.blockchainScripthash_getBalance(sh)).confirmed, referenceIndex('script').at(own).summary.balance);
      c.close();
    }
  });

  it('SIGTERM stops it with Electrum connections open: exit 0', async () => {
    const c = await connectClient(tcp);
    assert.equal((await c.server_version('cli-test', '1.4'))[1], '1.4');
    const closed = new Promise((resolve) => c.conn.once('close', resolve));
    serve.kill('SIGTERM');
    const r = await serve.done;
    assert.equal(r.code, 0, r.stderr);
    await closed;
    c.close();
  });

  it('refuses what it cannot run, with one clear error', async () => {
    const base = ['serve', '--datadir', fixture.datadir, '--port', '0', '--workers', '1'];
    const cases = [
      [['--electrum-tls-port', '0', '--blocks-dir', fixture.blocksDir], /--electrum-tls-port needs --tls-cert and --tls-key/],
      [['--tls-cert', 'x', '--tls-key', 'y', '--electrum-port', '0', '--blocks-dir', fixture.blocksDir], /--tls-cert and --tls-key go with --electrum-tls-port/],
      [['--electrum-max-history', '10'], /--electrum-max-history goes with --electrum-port/],
      [['--electrum-port', '0', '--blocks-dir', fixture.blocksDir, '--electrum-max-history', '0'], /--electrum-max-history must be an integer from 1/],
      [['--electrum-tls-port', '0', '--blocks-dir', fixture.blocksDir, '--tls-cert', path.join(certDir, 'key.pem'), '--tls-key', path.join(certDir, 'key.pem')],
        /do not load as a PEM certificate and its key.*\[ERR_TLS_FILES\]/],
      [['--electrum-port', '0', '--blocks-dir', certDir], /ERR_NO_BLOCK_FILES/],
    ];
    for (const [args, re] of cases) {
      const r = await runCli([...base, ...args]);
      assert.notEqual(r.code, 0, args.join(' '));
      assert.match(r.stderr, re, args.join(' '));
    }
  });
});

describe('electrum: addrindex serve --electrum-port without --blocks-dir', function () {
  this.timeout(60000);

  it('reads transactions from the blocks dir the sync recorded; when it is gone, transaction.get is error 2 and the rest is served', async () => {
    const fixture = await syncedFixture(200);
    const datadir = tempDir('electrum-recorded');
    const moved = `${fixture.blocksDir}-moved`;
    let serve = null;
    const start = async () => {
      serve = startCli(['serve', '--datadir', datadir, '--workers', '1', '--port', '0', '--electrum-port', '0', '--grace-ms', '2000']);
      const [, port, txs] = await serve.waitFor(/electrum tcp 127\.0\.0\.1:(\d+) \((.*)\)\n/);
      return { client: await connectClient(Number(port)), txs };
    };
    const stop = async (client) => {
      client.close();
      serve.kill('SIGTERM');
      assert.equal((await serve.done).code, 0);
      serve = null;
    };
    try {
      const sync = await runCli(['sync', '--blocks-dir', fixture.blocksDir, '--datadir', datadir, '--threads', '0', '--quiet']);
      assert.equal(sync.code, 0, sync.stderr);
      const ref = referenceIndex();
      const tx = ref.blocks[170].transactions[1];
      const sref = referenceIndex('script');
      const own = sref.p2pkOf(SATOSHI);
      const sh = toElectrum(own);

      let { client, txs } = await start();
      assert.equal(txs, `transactions from ${path.resolve(fixture.blocksDir)}`);
      assert.equal(await client.blockchainTransaction_get(tx.hash), tx.toBuffer().toString('hex'));
      await stop(client);

      fs.renameSync(fixture.blocksDir, moved);
      ({ client, txs } = await start());
      assert.match(txs, /^no raw confirmed transactions: the recorded blocks dir .* cannot be read \(ENOENT\)$/);
      await assert.rejects(client.blockchainTransaction_get(tx.hash),
        (e) => e.code === 2 && e.message === `transaction ${tx.hash} is confirmed but its bytes cannot be read: this server reads no blocks (no blocks dir, no node)`);
      // headers, histories, balances and merkle proofs come from the index alone
      assert.equal((await client.blockchainScripthash_getBalance(sh)).confirmed, sref.at(own, 199).summary.balance);
      assert.deepEqual(await client.blockchainScripthash_getHistory(sh), sref.at(own, 199).history.map((e) => ({ tx_hash: e.txid, height: e.height })));
      assert.deepEqual(await client.blockchainHeaders_subscribe(), { hex: ref.blocks[199].header.toBuffer().toString('hex'), height: 199 });
      assert.equal(await client.request('blockchain.block.header', [170]), ref.blocks[170].header.toBuffer().toString('hex'));
      const m = await client.blockchainTransaction_getMerkle(tx.hash, 170);
      assert.deepEqual([m.pos, m.merkle], [1, [ref.blocks[170].transactions[0].hash]]);
      assert.match(await client.server_banner(), /reads no blocks: raw confirmed transactions are unavailable/);
      await stop(client);
    } finally {
      if (serve) {
        serve.kill('SIGKILL');
        await serve.done;
      }
      if (fs.existsSync(moved)) fs.renameSync(moved, fixture.blocksDir);
      await fixture.cleanup();
    }
  });
});

describe('electrum: addrindex serve --store level --electrum-port (reads forwarded to the owning primary)', function () {
  this.timeout(60000);

  it('answers balances, histories, merkle branches and headers through the forwarded store', async () => {
    const fixture = await syncedFixture(200);
    const datadir = tempDir('electrum-level');
    let serve = null;
    try {
      const sync = await runCli(['sync', '--store', 'level', '--blocks-dir', fixture.blocksDir, '--datadir', datadir, '--threads', '0', '--quiet']);
      assert.equal(sync.code, 0, sync.stderr);
      serve = startCli(['serve', '--store', 'level', '--datadir', datadir, '--workers', '2', '--port', '0', '--electrum-port', '0',
        '--blocks-dir', fixture.blocksDir, '--grace-ms', '2000']);
      const [, port] = await serve.waitFor(/electrum tcp 127\.0\.0\.1:(\d+)/);
      const ref = referenceIndex();
      const c = await connectClient(Number(port));
      const sref = referenceIndex('script');
      const own = sref.p2pkOf(SATOSHI);
      const sh = toElectrum(own);
      assert.equal((await c.blockchainScripthash_getBalance(sh)).confirmed, sref.at(own, 199).summary.balance);
      assert.deepEqual(await c.blockchainScripthash_getHistory(sh), sref.at(own, 199).history.map((e) => ({ tx_hash: e.txid, height: e.height })));
      assert.deepEqual(await c.blockchainHeaders_subscribe(), { hex: ref.blocks[199].header.toBuffer().toString('hex'), height: 199 });
      const m = await c.blockchainTransaction_getMerkle(ref.blocks[170].transactions[1].hash, 170);
      assert.deepEqual([m.pos, m.merkle], [1, [ref.blocks[170].transactions[0].hash]]);
      c.close();
      serve.kill('SIGTERM');
      assert.equal((await serve.done).code, 0);
      serve = null;
    } finally {
      if (serve) {
        serve.kill('SIGKILL');
        await serve.done;
      }
      await fixture.cleanup();
    }
  });
});
