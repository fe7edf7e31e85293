'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { BlocksDirSource } = require('../../lib/sources/blocksdir');
const { SyncService } = require('../../lib/sync/service');
const { sha256d, toDisplayHex } = require('../../lib/chain/hash');
const { makeChain, addBranch, openIndex, syncInto, freshDigest } = require('../helpers/chains');
const { tempDir } = require('../helpers/tmp');

/**
 * Every test here compares digests: a digest covers every key and value of the index, so two
 * indexes with equal digests are the same index, however each got there.
 */
describe('sync: generated chains, stale branches and live reorgs', function () {
  this.timeout(120000);

  it('stale branches (and shuffled files) are left out; batch size changes nothing', async () => {
    const seed = 'stale-1';
    const withStale = await makeChain({
      seed, blocks: 160,
      stale: [{ atHeight: 12, length: 1 }, { atHeight: 40, length: 4 }, { atHeight: 120, length: 2 }],
      shuffle: { window: 3 },
    });
    const clean = await makeChain({ seed, blocks: 160 });
    assert.equal(withStale.staleBlocks, 7);
    assert.deepEqual(withStale.hashes, clean.hashes, 'the stale branches do not change the best chain');

    const a = await freshDigest(withStale.dir, { batch: { maxBlocks: 7, maxMs: 60000 } });
    const b = await freshDigest(clean.dir, { batch: { maxBlocks: 500 } });
    const c = await freshDigest(clean.dir, { batch: { maxBlocks: 1 }, threads: 0 });
    assert.equal(a.tip.height, 160);
    assert.equal(a.tip.hash, clean.tip.hash);
    assert.equal(a.tip.nextTxNum, clean.txs);
    assert.equal(a.digest, b.digest);
    assert.equal(b.digest, c.digest);
  });

  it('reorgs of depth 1, 6 and 100 applied live equal a fresh sync of the final best chain', async () => {
    const seed = 'reorg-1';
    const chain = await makeChain({ seed, blocks: 200 });
    const datadir = path.join(tempDir('live'), 'index');
    let store = await openIndex(datadir, { undoDepth: 100 });
    try {
      const first = await syncInto(chain.dir, store, { batch: { maxBlocks: 16 }, undoDepth: 100 });
      assert.equal(first.tip.height, 200);
      assert.deepEqual(first.reorgs, []);

      // each step: a heavier branch forking `depth` blocks below the index's tip
      const steps = [
        { depth: 1, blocks: 2, branchSeed: 'b1' },
        { depth: 6, blocks: 7, branchSeed: 'b6' },
        { depth: 100, blocks: 101, branchSeed: 'b100' },
      ];
      let tip = first.tip;
      for (const step of steps) {
        const forkHeight = tip.height - step.depth;
        const branch = await addBranch({ dir: chain.dir, seed, forkHeight, branchSeed: step.branchSeed, blocks: step.blocks });
        assert.equal(branch.tip.height, tip.height + 1);
        // a restart between steps too: the store is reopened for the 100-deep one
        if (step.depth === 100) {
          await store.close();
          store = await openIndex(datadir, { undoDepth: 100 });
        }
        const r = await syncInto(chain.dir, store, { batch: { maxBlocks: 16 }, undoDepth: 100 });
        assert.deepEqual(r.reorgs, [{ fromHeight: tip.height, forkHeight, depth: step.depth }]);
        assert.equal(r.tip.height, branch.tip.height);
        assert.equal(r.tip.hash, branch.tip.hash);
        assert.equal(r.tip.nextTxNum, branch.txs);
        for (const h of [forkHeight, forkHeight + 1, r.tip.height]) assert.equal(await store.getBlockHash(h), branch.hashes[h]);

        const live = await store.digest();
        const fresh = await freshDigest(chain.dir, { undoDepth: 100 });
        assert.equal(live, fresh.digest, `after the ${step.depth}-deep reorg`);
        tip = r.tip;

        if (step.depth === 100) {
          // the same best chain in a dir holding nothing else, generated directly as a branch
          const alone = await makeChain({ seed, blocks: branch.tip.height, branches: [{ atHeight: forkHeight + 1, seed: step.branchSeed }] });
          assert.deepEqual(alone.hashes, branch.hashes);
          assert.equal((await freshDigest(alone.dir, { undoDepth: 100 })).digest, live);
        }
      }
    } finally {
      await store.close();
    }
  });

  it('a catch-up keeps no undo for blocks deeper than undoDepth below the source\'s tip; caught up, the index is a fresh sync\'s', async () => {
    const chain = await makeChain({ seed: 'undo-floor', blocks: 130, txsPerBlock: 10 });
    const datadir = path.join(tempDir('floor'), 'index');
    const store = await openIndex(datadir, { undoDepth: 100 });
    try {
      // stop after the first batch (blocks 0..15): the source's tip is 130, so only blocks
      // above 30 may ever need their undo
      const stop = new AbortController();
      await syncInto(chain.dir, store, {
        undoDepth: 100, batch: { maxBlocks: 16 }, signal: stop.signal,
        onProgress: (p) => { if (p.phase === 'batch') stop.abort(); },
      });
      const tip = await store.getTip();
      assert.equal(tip.height, 15);
      assert.equal(await store.getTouched(15), null);
      await assert.rejects(store.revert(14), (err) => err.code === 'ERR_UNDO_MISSING');
      assert.deepEqual(await store.getTip(), tip);
      await syncInto(chain.dir, store, { undoDepth: 100, batch: { maxBlocks: 16 } });
      assert.notEqual(await store.getTouched(31), null);
      assert.equal((await store.getTip()).height, 130);
      assert.equal(await store.digest(), (await freshDigest(chain.dir, { undoDepth: 100 })).digest);
    } finally {
      await store.close();
    }
  });

  it('a reorg one block deeper than the undo kept stops with ERR_REORG_TOO_DEEP and changes nothing', async () => {
    const seed = 'reorg-deep';
    const chain = await makeChain({ seed, blocks: 130, txsPerBlock: 10 });
    const datadir = path.join(tempDir('deep'), 'index');
    const store = await openIndex(datadir, { undoDepth: 100 });
    try {
      await syncInto(chain.dir, store, { undoDepth: 100 });
      const before = await store.digest();
      const tipBefore = await store.getTip();
      await addBranch({ dir: chain.dir, seed, forkHeight: 130 - 101, branchSeed: 'too-deep', blocks: 102, txsPerBlock: 10 });
      await assert.rejects(syncInto(chain.dir, store, { undoDepth: 100 }), (err) => {
        assert.equal(err.code, 'ERR_REORG_TOO_DEEP');
        assert.equal(err.name, 'SyncError');
        assert.deepEqual([err.details.forkHeight, err.details.depth, err.details.undoDepth], [29, 101, 100]);
        // the message says what happened and what to do
        assert.match(err.message, /forks from the index at height 29, 101 blocks below/);
        assert.match(err.message, /undo data is kept for only 100 blocks/);
        assert.match(err.message, /new --datadir/);
        assert.match(err.message, /--undo-depth/);
        return true;
      });
      assert.deepEqual(await store.getTip(), tipBefore);
      assert.equal(await store.digest(), before);
    } finally {
      await store.close();
    }
  });

  it('a block the parser rejects: an error with its height and hash, and nothing of its batch written', async () => {
    const chain = await makeChain({ seed: 'bad-block', blocks: 80 });
    // damage block 50's last byte (its last tx's locktime): the header is intact, so the
    // blocks-dir reader still finds the block, but its transactions no longer match the merkle root
    const file = path.join(chain.dir, 'blk00000.dat');
    const buf = fs.readFileSync(file);
    let pos = 0;
    let at = -1;
    while (pos < buf.length) {
      const size = buf.readUInt32LE(pos + 4);
      if (toDisplayHex(sha256d(buf.subarray(pos + 8, pos + 88))) === chain.hashes[50]) at = pos + 8 + size - 1;
      pos += 8 + size;
    }
    assert.ok(at > 0);
    buf[at] ^= 0x01;
    fs.writeFileSync(file, buf);

    const datadir = path.join(tempDir('bad'), 'index');
    const store = await openIndex(datadir);
    try {
      await assert.rejects(syncInto(chain.dir, store, { batch: { maxBlocks: 10, maxMs: 600000 } }), (err) => {
        assert.equal(err.code, 'ERR_BAD_SOURCE_BLOCK');
        assert.equal(err.details.height, 50);
        assert.equal(err.details.hash, chain.hashes[50]);
        assert.equal(err.details.parseCode, 'ERR_MERKLE_MISMATCH');
        assert.match(err.message, new RegExp(`block 50 \\(${chain.hashes[50]}\\)`));
        return true;
      });
      // batches 0-9 … 40-49 are whole and committed; the batch holding 50 is not
      const tip = await store.getTip();
      assert.equal(tip.height, 49);
      assert.equal(tip.hash, chain.hashes[49]);
    } finally {
      await store.close();
    }
  });

  it('a source whose best chain stops inside the index waits instead of reverting', async () => {
    const seed = 'behind';
    const long = await makeChain({ seed, blocks: 40, txsPerBlock: 5 });
    const short = await makeChain({ seed, blocks: 30, txsPerBlock: 5 });
    const datadir = path.join(tempDir('behind'), 'index');
    const store = await openIndex(datadir);
    try {
      await syncInto(long.dir, store);
      const before = await store.digest();
      const events = [];
      const r = await syncInto(short.dir, store, { onProgress: (p) => events.push(p.phase) });
      assert.equal(r.behind, true);
      assert.ok(events.includes('behind'));
      assert.equal(r.tip.height, 40);
      assert.equal(await store.digest(), before);
    } finally {
      await store.close();
    }
  });

  it('an abort stops at a batch boundary and a second run resumes to the same index', async () => {
    const chain = await makeChain({ seed: 'abort', blocks: 120 });
    const datadir = path.join(tempDir('abort'), 'index');
    const store = await openIndex(datadir);
    const source = new BlocksDirSource({ dir: chain.dir, network: 'regtest' });
    try {
      const controller = new AbortController();
      const heights = [];
      const service = new SyncService({
        source, store, network: 'regtest', threads: 1, batch: { maxBlocks: 10 },
        onProgress: (p) => {
          if (p.phase !== 'batch') return;
          heights.push(p.height);
          if (p.height >= 39) controller.abort();
        },
      });
      const r = await service.run({ signal: controller.signal });
      assert.equal(r.tip.height, 39);
      assert.deepEqual(heights, [9, 19, 29, 39]);
      assert.equal((await store.getTip()).height, 39);
      await syncInto(chain.dir, store);
      assert.equal(await store.digest(), (await freshDigest(chain.dir)).digest);
    } finally {
      await source.close();
      await store.close();
    }
  });
});
