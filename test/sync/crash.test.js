'use strict';

const assert = require('node:assert/strict');
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const { makeChain, freshDigest, digestOf, tipOf, waitFor, prng } = require('../helpers/chains');
const { startCli, runCli } = require('../helpers/cli');
const { tempDir } = require('../helpers/tmp');

describe('sync: crash safety (SIGKILL at random points, then restart)', function () {
  this.timeout(180000);

  it('every restart resumes from a whole batch; the end equals an uninterrupted run; verify passes', async () => {
    const chain = await makeChain({ seed: 'crash-1', blocks: 120, txsPerBlock: 35 });
    assert.ok(chain.txs > 3000, `a few thousand txs (${chain.txs})`);
    const expected = await freshDigest(chain.dir);
    // small batches in groups of two (the writer's cache committed every 4 blocks): ~30
    // commits, so a kill lands between, during and right after commits
    const args = (datadir) => ['sync', '--blocks-dir', chain.dir, '--datadir', datadir, '--network', 'regtest',
      '--batch-blocks', '2', '--bulk-batches', '2', '--threads', '1'];

    // an uninterrupted CLI run: the reference
    const whole = path.join(tempDir('crash-whole'), 'index');
    const ok = await runCli(args(whole));
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(await digestOf(whole), expected.digest);

    // Kill points are chosen by chain position, not by wall time (a shared machine makes
    // times meaningless): a random height ahead, then a random few milliseconds more, so
    // kills land before, during and right after commits. The first kill comes during start-up.
    const datadir = path.join(tempDir('crash'), 'index');
    const rand = prng(20240601);
    const tips = [];
    let killedMidway = 0;
    for (let i = 0; i < 6; i++) {
      const before = tips.length ? tips[tips.length - 1] : -1;
      const child = startCli(args(datadir));
      if (i === 0) {
        await sleep(Math.round(150 * rand()));
      } else {
        const target = before + 2 + Math.floor(rand() * Math.max(1, (chain.tip.height - before) / 3));
        await waitFor(async () => {
          if (child.exitCode !== null) return true;
          const tip = await tipOf(datadir);
          return tip && tip.height >= target;
        }, 60000, `tip ${target}`);
        await sleep(Math.round(20 * rand()));
      }
      child.kill('SIGKILL');
      const res = await child.done;
      const tip = await tipOf(datadir);
      const height = tip ? tip.height : -1;
      if (res.signal === 'SIGKILL' && height > before && height < chain.tip.height) killedMidway++;
      // a restart never loses committed batches, and the tip is always a batch end
      assert.ok(height >= before, `tip went back: ${tips} then ${height}`);
      if (height >= 0 && height < chain.tip.height) assert.equal((height + 1) % 2, 0, `tip ${height} is a batch end`);
      tips.push(height);
      if (height === chain.tip.height) break;
    }
    assert.ok(killedMidway >= 3, `at least three kills landed mid-sync (tips after each kill: ${tips})`);

    const last = await runCli(args(datadir));
    assert.equal(last.code, 0, last.stderr);
    assert.equal(await digestOf(datadir), expected.digest);
    const verify = await runCli(['verify', '--datadir', datadir]);
    assert.equal(verify.code, 0, verify.stderr);
  });
});
