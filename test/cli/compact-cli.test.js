'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { makeChain, digestOf } = require('../helpers/chains');
const { runCli } = require('../helpers/cli');
const { tempDir } = require('../helpers/tmp');

/** Bytes the file occupies (the LMDB writer's file is sparse past its data). */
const onDisk = (file) => {
  const st = fs.statSync(file);
  return Math.min(st.size, st.blocks * 512);
};

describe('addrindex compact', function () {
  this.timeout(120000);
  let chain;
  before(async () => {
    chain = await makeChain({ seed: 'compact-1', blocks: 60, txsPerBlock: 60 });
  });

  it('rewrites an LMDB index smaller, with the same rows: same digest, verify passes, a writer opens it again', async () => {
    const datadir = path.join(tempDir('compact'), 'index');
    // many small commits: copy-on-write leaves free pages behind
    const sync = await runCli(['sync', '--blocks-dir', chain.dir, '--datadir', datadir, '--network', 'regtest', '--batch-blocks', '1', '--bulk-batches', '1']);
    assert.equal(sync.code, 0, sync.stderr);
    const digest = await digestOf(datadir);
    const file = path.join(datadir, 'data.mdb');
    const before = onDisk(file);
    const res = await runCli(['compact', '--datadir', datadir]);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^compacted .* -> .* on disk, \d+ rows/);
    assert.ok(onDisk(file) < 0.8 * before, `${onDisk(file)} bytes after, ${before} before`);
    assert.equal(await digestOf(datadir), digest);
    const verify = await runCli(['verify', '--datadir', datadir]);
    assert.equal(verify.code, 0, verify.stderr);
    assert.deepEqual(fs.readdirSync(datadir).sort(), ['data.mdb', 'lock.mdb']);
    const again = await runCli(['sync', '--blocks-dir', chain.dir, '--datadir', datadir, '--network', 'regtest']);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(await digestOf(datadir), digest);
  });

  it('refuses while another process reads the index, a missing index and other stores', async () => {
    const datadir = path.join(tempDir('compact-busy'), 'index');
    assert.equal((await runCli(['sync', '--blocks-dir', chain.dir, '--datadir', datadir, '--network', 'regtest'])).code, 0);
    const digest = await digestOf(datadir);
    // a reader holding a read transaction open until its stdin closes
    const reader = spawn(process.execPath, ['-e', `
      const { open } = require('lmdb');
      const db = open({ path: ${JSON.stringify(datadir)}, readOnly: true });
      db.useReadTransaction();
      process.stdout.write('reading\\n');
      process.stdin.resume();
      process.stdin.on('end', () => process.exit(0));
    `], { cwd: path.join(__dirname, '../..'), stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      await new Promise((resolve) => reader.stdout.once('data', resolve));
      const res = await runCli(['compact', '--datadir', datadir]);
      assert.notEqual(res.code, 0);
      assert.match(res.stderr, /being read by process \d+: stop it before compacting.*ERR_IN_USE/s);
    } finally {
      reader.stdin.end();
      await new Promise((resolve) => reader.on('exit', resolve));
    }
    assert.equal(await digestOf(datadir), digest);

    const missing = await runCli(['compact', '--datadir', path.join(tempDir('compact-none'), 'nothing')]);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /ERR_NO_INDEX/);
    const level = await runCli(['compact', '--store', 'level', '--datadir', datadir]);
    assert.notEqual(level.code, 0);
    assert.match(level.stderr, /LevelDB compacts itself.*ERR_USAGE/s);
  });
});
