'use strict';

const assert = require('node:assert/strict');
const path = require('node:path');
const { BlocksDirSource } = require('../../lib/sources/blocksdir');
const { SyncService } = require('../../lib/sync/service');
const { SourceError } = require('../../lib/errors');
const { makeChain, openIndex, freshDigest } = require('../helpers/chains');
const { tempDir: tmpDir } = require('../helpers/tmp');

/**
 * A blocks-dir source whose reads end with ERR_SOURCE_CHANGED at chosen heights, the way the
 * node source ends a read when the node's chain moved under it (the real case is exercised
 * against btcd in test/sync/node.test.js; here the heights are exact).
 */
function changingSource(dir, failAt) {
  const inner = new BlocksDirSource({ dir, network: 'regtest' });
  const left = [...failAt];
  return {
    scans: 0,
    async scan() {
      this.scans++;
      return inner.scan();
    },
    tip: () => inner.tip(),
    hashAt: (h) => inner.hashAt(h),
    async *blocks(from, to) {
      for await (const b of inner.blocks(from, to)) {
        if (left.length && b.height === left[0]) {
          left.shift();
          throw new SourceError('ERR_SOURCE_CHANGED', `the chain changed at ${b.height}`, { height: b.height });
        }
        yield b;
      }
    },
    close: () => inner.close(),
  };
}

describe('sync: a source whose chain changes while it is read (ERR_SOURCE_CHANGED)', function () {
  this.timeout(60000);

  it('commits the batches before, rescans and goes on to the same index', async () => {
    const chain = await makeChain({ seed: 'changed-1', blocks: 80 });
    const source = changingSource(chain.dir, [23, 24, 61]);
    const store = await openIndex(path.join(tmpDir('changed'), 'index'));
    const events = [];
    try {
      const service = new SyncService({
        source, store, network: 'regtest', threads: 1, batch: { maxBlocks: 10 },
        onProgress: (p) => { if (p.phase === 'changed') events.push({ height: p.height, reason: p.reason }); },
      });
      const r = await service.run();
      assert.equal(r.tip.height, 80);
      // the blocks read before each failure are committed first (a shorter last batch)
      assert.deepEqual(events.map((e) => e.height), [22, 23, 60]);
      assert.match(events[0].reason, /the chain changed at 23/);
      assert.equal(source.scans, 4);
      assert.equal(await store.digest(), (await freshDigest(chain.dir)).digest);
    } finally {
      await store.close();
      await source.close();
    }
  });

  it('without --follow, gives up after 10 changed passes in a row, with every block before the change indexed', async () => {
    const chain = await makeChain({ seed: 'changed-2', blocks: 40 });
    const source = changingSource(chain.dir, Array(11).fill(15));
    const store = await openIndex(path.join(tmpDir('changed'), 'index'));
    try {
      const service = new SyncService({ source, store, network: 'regtest', threads: 1, batch: { maxBlocks: 5 }, pollMs: 10 });
      await assert.rejects(service.run(), { code: 'ERR_SOURCE_CHANGED' });
      assert.equal((await store.getTip()).height, 14);
    } finally {
      await store.close();
      await source.close();
    }
  });
});
