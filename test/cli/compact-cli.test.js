'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnOwned: spawn } = require('../helpers/procs');
const { makeChain, digestOf } = require('../helpers/chains');
const { runCli } = require('../helpers/cli');
const { tempDir } = require('../helpers/tmp');

/** Bytes the file occupies (the LMDB writer's file is sparse past its data). */
const onDisk = (file) => {
  const st = fs.statSync(file);
  return Math.min(st.size, st.blocks * 512);
};

/**
 * Another process holding the index open until its stdin closes, in a read transaction or
 * (`idle`) without one; resolves once it holds it.
 * @param {string} datadir
 */
async function holdReader(datadir, { idle = false } = {}) {
  const reader = spawn(process.execPath, ['-e', `
    const { open } = require('lmdb');
    const db = open({ path: ${JSON.stringify(datadir)}, readOnly: true });
    if (!${idle}) db.useReadTransaction();
    process.stdout.write('reading\\n');
    process.stdin.resume();
    process.stdin.on('end', () => process.exit(0));
  `], { cwd: path.join(__dirname, '../..'), stdio: ['pipe', 'pipe', 'inherit'] });
  await new Promise((resolve) => reader.stdout.once('data', resolve));
  return reader;
}

describe('addrindex compact', function () {
  this.timeout(120000);
  let chain;
  before(async () => {
    chain = await makeChain({ seed: 'compact-1', blocks: 60, txsPerBlock: 60 });
  });

  it('rewrites an LMDB index smaller, with the same rows: same digest, verify passes, a writer opens it again', async () => {
    const datadir = path.join(tempDir('compact'), 'index');
    // many small commits: copy-on-write leaves free pages behind (and no rewrite of its own)
    const sync = await runCli(['sync', '--blocks-dir', chain.dir, '--datadir', datadir, '--network', 'regtest', '--batch-blocks', '1', '--bulk-batches', '1', '--no-compact']);
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

  it('sync rewrites the index itself when it first catches up after an initial sync: the file compact would give', async () => {
    const args = (datadir) => ['sync', '--blocks-dir', chain.dir, '--datadir', datadir, '--network', 'regtest', '--batch-blocks', '1', '--bulk-batches', '1'];
    const by = path.join(tempDir('compact-auto'), 'index');
    const sync = await runCli(args(by));
    assert.equal(sync.code, 0, sync.stderr);
    assert.match(sync.stderr, /compacting the index after its initial sync .*\n.*compacted the index: \d+ MB -> \d+ MB on disk/s);
    const hand = path.join(tempDir('compact-hand'), 'index');
    assert.equal((await runCli([...args(hand), '--no-compact'])).code, 0);
    assert.equal((await runCli(['compact', '--datadir', hand])).code, 0);
    assert.equal(onDisk(path.join(by, 'data.mdb')), onDisk(path.join(hand, 'data.mdb')));
    assert.equal(await digestOf(by), await digestOf(hand));
    assert.deepEqual(fs.readdirSync(by).sort(), ['data.mdb', 'lock.mdb']);
    // a run that indexes little of an index (a restart, a follow) leaves it as it is
    const more = await makeChain({ seed: 'compact-1', blocks: 64, txsPerBlock: 60 });
    const again = await runCli(['sync', '--blocks-dir', more.dir, '--datadir', by, '--network', 'regtest']);
    assert.equal(again.code, 0, again.stderr);
    assert.doesNotMatch(again.stderr, /compact/);
  });

  it('not while another process reads the index: sync says so and goes on; a reader opening meanwhile waits for a compaction', async () => {
    const prefix = await makeChain({ seed: 'compact-1', blocks: 10, txsPerBlock: 60 });
    const datadir = path.join(tempDir('compact-reader'), 'index');
    assert.equal((await runCli(['sync', '--blocks-dir', prefix.dir, '--datadir', datadir, '--network', 'regtest', '--no-compact'])).code, 0);
    const reader = await holdReader(datadir);
    try {
      const res = await runCli(['sync', '--blocks-dir', chain.dir, '--datadir', datadir, '--network', 'regtest']);
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stderr, /not compacted: datadir .* is open in process \d+: stop it before compacting \(run "addrindex compact" when nothing reads it\)/);
    } finally {
      reader.stdin.end();
      await new Promise((resolve) => reader.on('exit', resolve));
    }
    assert.deepEqual(fs.readdirSync(datadir).sort(), ['data.mdb', 'lock.mdb']);
    const verify = await runCli(['verify', '--datadir', datadir]);
    assert.equal(verify.code, 0, verify.stderr);

    // the marker a compaction leaves while it runs: a reader waits for it to go (a live
    // owner), and ignores one whose process is gone
    const { openStore } = require('../../lib/stores');
    const marker = path.join(datadir, 'compacting');
    fs.mkdirSync(marker);
    const owner = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    try {
      fs.writeFileSync(path.join(marker, 'owner'), String(owner.pid));
      let waitedFor = null;
      const opening = openStore({ store: 'lmdb', datadir, network: 'regtest', readOnly: true, onCompactionWait: (pid) => { waitedFor = pid; } });
      let opened = false;
      opening.then(() => { opened = true; });
      await new Promise((resolve) => setTimeout(resolve, 1200));
      assert.equal(opened, false, 'a reader does not open while a compaction runs');
      assert.equal(waitedFor, owner.pid);
      fs.rmSync(marker, { recursive: true });
      const store = await opening;
      assert.ok((await store.getTip()).height > 0);
      await store.close();
    } finally {
      owner.kill();
    }
    await new Promise((resolve) => owner.on('exit', resolve));
    fs.mkdirSync(marker);
    fs.writeFileSync(path.join(marker, 'owner'), String(owner.pid)); // gone now
    const store = await openStore({ store: 'lmdb', datadir, network: 'regtest', readOnly: true });
    await store.close();
    fs.rmSync(marker, { recursive: true });
  });

  it('refuses while another process reads the index, a missing index and other stores', async () => {
    const datadir = path.join(tempDir('compact-busy'), 'index');
    assert.equal((await runCli(['sync', '--blocks-dir', chain.dir, '--datadir', datadir, '--network', 'regtest'])).code, 0);
    const digest = await digestOf(datadir);
    // one in a read transaction, and one that only has the environment open (LMDB's reader
    // table does not name it; its lock on lock.mdb does, on Linux)
    for (const idle of [false, true]) {
      const reader = await holdReader(datadir, { idle });
      try {
        const res = await runCli(['compact', '--datadir', datadir]);
        assert.notEqual(res.code, 0);
        assert.match(res.stderr, new RegExp(`is open in process ${reader.pid}: stop it before compacting.*ERR_IN_USE`, 's'));
      } finally {
        reader.stdin.end();
        await new Promise((resolve) => reader.on('exit', resolve));
      }
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
