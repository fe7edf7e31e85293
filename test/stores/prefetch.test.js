'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { openStore } = require('../../lib/stores');
const { prefetchPlan, INPUT_BYTES } = require('../../lib/stores/prefetch-plan');
const { Prefetcher, memoryLimit, poolForPrefetch } = require('../../lib/stores/prefetcher');
const { parseColumns } = require('../../lib/chain/columns');
const { makeChain, syncInto, freshDigest } = require('../helpers/chains');
const { tempDir } = require('../helpers/tmp');
const { readFixture } = require('../helpers/fixtures');

describe('LMDB reads ahead of the writer (prefetcher)', function () {
  this.timeout(120000);

  it('plans from a block\'s bytes alone: each input\'s spent txid prefix and vout, each txid\'s prefix, each paid script\'s hashX', () => {
    const cols = parseColumns(readFixture('mainnet/block300025.raw'));
    const plan = prefetchPlan([{ cols }]);
    const inputs = cols.inStart[cols.txCount];
    assert.equal(plan.inputs.length, INPUT_BYTES * inputs);
    assert.equal(plan.txids.length, 4 * cols.txCount);
    let indexed = 0;
    for (let o = 0; o < cols.outStart[cols.txCount]; o++) if (cols.idType[o] !== 0) indexed++;
    assert.equal(plan.accounts.length, 12 * (indexed + cols.p2pkOuts.length));
    // input 7 spends the txid and vout its prevout names
    assert.deepEqual(plan.inputs.subarray(INPUT_BYTES * 7, INPUT_BYTES * 7 + 4), cols.prevouts.subarray(36 * 7, 36 * 7 + 4));
    assert.equal(plan.inputs.readUInt32LE(INPUT_BYTES * 7 + 4), cols.prevouts.readUInt32LE(36 * 7 + 32));
    assert.deepEqual(plan.txids.subarray(4 * 5, 4 * 6), cols.txids.subarray(32 * 5, 32 * 5 + 4));
    assert.deepEqual(plan.accounts.subarray(0, 12), cols.scripthashes.subarray(0, 12));
  });

  it('reading ahead changes nothing the sync writes: on, the same index as off (groups committed meanwhile)', async () => {
    const chain = await makeChain({ seed: 'prefetch-1', blocks: 120, txsPerBlock: 40 });
    const want = await freshDigest(chain.dir);
    const store = await openStore({ store: 'lmdb', datadir: path.join(tempDir('prefetch'), 'index'), network: 'regtest', prefetch: 'on' });
    try {
      // small batches in groups of 4: each batch read ahead while the one before is applied,
      // inside an open write transaction or between groups
      await syncInto(chain.dir, store, { bulkBatches: 4, batch: { maxBlocks: 3 } });
      assert.equal(await store.digest(), want.digest);
      assert.ok(store.prefetcher.stats.batches >= 30, `${store.prefetcher.stats.batches} batches read ahead`);
      assert.ok(store.prefetcher.stats.keys > chain.txs, 'at least a txid row per transaction');
      assert.equal((await store.verify()).ok, true);
    } finally {
      await store.close();
    }
  });

  it('auto reads ahead only while the index is more than half the memory this process may use (its cgroup\'s limit, else the machine\'s)', () => {
    const GiB = 2 ** 30;
    const tree = (cgroup, files) => {
      const root = tempDir('cgroup');
      fs.mkdirSync(path.join(root, 'proc/self'), { recursive: true });
      fs.writeFileSync(path.join(root, 'proc/self/cgroup'), cgroup);
      for (const [file, text] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
        fs.writeFileSync(path.join(root, file), text);
      }
      return root;
    };
    // cgroup v1: the memory controller's line names the group
    const v1 = tree('12:pids:/x\n9:memory:/bench\n1:name=systemd:/x\n', { 'sys/fs/cgroup/memory/bench/memory.limit_in_bytes': `${GiB}\n` });
    assert.equal(memoryLimit({ root: v1, total: 24 * GiB }), GiB);
    // cgroup v2: one line, the group's memory.max ("max": no limit)
    const v2 = tree('0::/user.slice/sync\n', { 'sys/fs/cgroup/user.slice/sync/memory.max': `${2 * GiB}\n` });
    assert.equal(memoryLimit({ root: v2, total: 24 * GiB }), 2 * GiB);
    const unlimited = tree('0::/\n', { 'sys/fs/cgroup/memory.max': 'max\n' });
    assert.equal(memoryLimit({ root: unlimited, total: 24 * GiB }), 24 * GiB);
    // a limit above the machine's memory: the machine's (v1 writes a huge number for none)
    const huge = tree('9:memory:/\n', { 'sys/fs/cgroup/memory/memory.limit_in_bytes': '9223372036854771712\n' });
    assert.equal(memoryLimit({ root: huge, total: 24 * GiB }), 24 * GiB);
    assert.equal(memoryLimit({ root: tempDir('nothing'), total: 3 * GiB }), 3 * GiB);

    // the decision: a 4 MB file reads ahead under a 6 MB limit, not under 16 MB
    const dir = tempDir('prefetch-auto');
    fs.writeFileSync(path.join(dir, 'data.mdb'), Buffer.alloc(4 << 20, 1));
    assert.equal(new Prefetcher({ datadir: dir, memory: () => 6 << 20 }).active(), true);
    assert.equal(new Prefetcher({ datadir: dir, memory: () => 16 << 20 }).active(), false);
    assert.equal(new Prefetcher({ datadir: dir, mode: 'off', memory: () => 6 << 20 }).active(), false);
    assert.equal(new Prefetcher({ datadir: dir, mode: 'on', memory: () => 16 << 20 }).active(), true);
  });

  it("a store opened without --prefetch reads nothing ahead (off: measured faster beyond RAM, docs/SCALING.md)", async () => {
    const store = await openStore({ store: 'lmdb', datadir: path.join(tempDir('prefetch-default'), 'index'), network: 'regtest' });
    try {
      assert.equal(store.prefetcher.mode, 'off');
      assert.equal(store.prefetcher.active(), false);
    } finally {
      await store.close();
    }
  });

  it('sizes the thread pool for the reads ahead only when they may run, and never over a size given', () => {
    for (const mode of ['on', 'auto']) {
      const env = {};
      poolForPrefetch(mode, env);
      assert.equal(Number(env.UV_THREADPOOL_SIZE), 20, mode);
    }
    for (const mode of ['off', undefined]) {
      const env = {};
      poolForPrefetch(mode, env);
      assert.equal(env.UV_THREADPOOL_SIZE, undefined, `${mode}: libuv's own 4 (each pool thread a malloc arena)`);
    }
    const given = { UV_THREADPOOL_SIZE: '2' };
    poolForPrefetch('on', given);
    assert.equal(given.UV_THREADPOOL_SIZE, '2');
  });
});
