'use strict';

const assert = require('node:assert/strict');
const path = require('node:path');
const { BlocksDirSource } = require('../../lib/sources/blocksdir');
const { SyncService } = require('../../lib/sync/service');
const { makeChain, openIndex, freshDigest } = require('../helpers/chains');
const { tempDir: tmpDir } = require('../helpers/tmp');

describe('sync: the allocator\'s free pages handed back after each batch', function () {
  this.timeout(60000);

  it('once per batch, each time after that batch is in the index', async () => {
    const chain = await makeChain({ seed: 'free-memory', blocks: 45 });
    const source = new BlocksDirSource({ dir: chain.dir, network: 'regtest' });
    const store = await openIndex(path.join(tmpDir('free-memory'), 'index'));
    const batches = [];
    const calls = [];
    try {
      const service = new SyncService({
        source, store, network: 'regtest', threads: 1, batch: { maxBlocks: 10 },
        onProgress: (p) => { if (p.phase === 'batch') batches.push(p.height); },
        // the height the index holds at each call, read from the store itself
        freeMemory: () => { calls.push(store.getTip().then((t) => t.height)); },
      });
      const r = await service.run();
      assert.equal(r.tip.height, 45);
      // blocks 0-45 in batches of 10: 9, 19, 29, 39, 45
      assert.deepEqual(batches, [9, 19, 29, 39, 45]);
      assert.deepEqual(await Promise.all(calls), batches);
      assert.equal(await store.digest(), (await freshDigest(chain.dir)).digest);
    } finally {
      await store.close();
      await source.close();
    }
  });
});
