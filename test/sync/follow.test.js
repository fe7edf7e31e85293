'use strict';

const assert = require('node:assert/strict');
const path = require('node:path');
const { makeChain, addBranch, freshDigest, digestOf, tipOf, waitFor } = require('../helpers/chains');
const { startCli, runCli } = require('../helpers/cli');
const { tempDir } = require('../helpers/tmp');

describe('sync --follow', function () {
  this.timeout(120000);

  it('follows blocks appended to the dir (and a reorg), and stops cleanly on SIGTERM', async () => {
    const seed = 'follow-1';
    const chain = await makeChain({ seed, blocks: 30, txsPerBlock: 10 });
    const datadir = path.join(tempDir('follow'), 'index');
    const child = startCli(['sync', '--blocks-dir', chain.dir, '--datadir', datadir, '--network', 'regtest',
      '--follow', '--poll-ms', '100', '--threads', '1']);
    try {
      const at = (hash) => async () => {
        const tip = await tipOf(datadir);
        return tip && tip.hash === hash ? tip : null;
      };
      await waitFor(at(chain.tip.hash), 30000, 'the initial sync');

      // the node writes 10 more blocks on top of the tip
      const more = await addBranch({ dir: chain.dir, seed, forkHeight: 30, branchSeed: 'more', blocks: 10, txsPerBlock: 10 });
      assert.equal(more.tip.height, 40);
      await waitFor(at(more.tip.hash), 30000, 'tip 40');

      // then a heavier branch from height 37: a 3-deep reorg while following
      const reorg = await addBranch({
        dir: chain.dir, seed, forkHeight: 37, branchSeed: 'reorg', blocks: 5, txsPerBlock: 10,
        branches: [{ atHeight: 31, seed: 'more' }],
      });
      assert.deepEqual(reorg.hashes.slice(0, 38), more.hashes.slice(0, 38));
      await waitFor(at(reorg.tip.hash), 30000, 'the reorg to tip 42');

      child.kill('SIGTERM');
      const res = await child.done;
      assert.equal(res.code, 0, res.stderr);
      assert.equal(res.signal, null);
      assert.match(res.stderr, /SIGTERM: stopping after the batch being committed/);
      assert.match(res.stderr, /reorg: reverted 3 block\(s\) from height 40 to the fork point 37/);
      assert.equal(await digestOf(datadir), (await freshDigest(chain.dir)).digest);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('SIGTERM in the middle of a long catch-up: exit 0 at a batch boundary, verify passes, a restart completes', async () => {
    // many small commits (groups of 4 batches of 2 blocks), so the catch-up lasts long enough
    // to be interrupted
    const chain = await makeChain({ seed: 'follow-2', blocks: 1500, txsPerBlock: 4 });
    const datadir = path.join(tempDir('follow-term'), 'index');
    const args = ['sync', '--blocks-dir', chain.dir, '--datadir', datadir, '--network', 'regtest',
      '--follow', '--batch-blocks', '2', '--bulk-batches', '4', '--threads', '1'];
    const child = startCli(args);
    try {
      await waitFor(async () => {
        const tip = await tipOf(datadir);
        return tip && tip.height >= 20;
      }, 30000, 'the first batches');
      // ~750 commits ahead: the signal lands mid catch-up
      child.kill('SIGTERM');
      const res = await child.done;
      assert.equal(res.code, 0, res.stderr);
      const tip = await tipOf(datadir);
      assert.ok(tip.height < chain.tip.height, `stopped before the end (tip ${tip.height})`);
      assert.equal((tip.height + 1) % 2, 0, `tip ${tip.height} ends a 2-block batch`);
      const verify = await runCli(['verify', '--datadir', datadir]);
      assert.equal(verify.code, 0, verify.stderr);
    } finally {
      child.kill('SIGKILL');
    }
    const again = await runCli([...args.filter((a) => a !== '--follow'), '--batch-blocks', '500']);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(await digestOf(datadir), (await freshDigest(chain.dir)).digest);
  });
});
