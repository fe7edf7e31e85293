'use strict';

/**
 * Not a test of its own (no .test.js): the suite that test/ops/orphans.test.js runs in a
 * mocha process of its own and then ends, to see that nothing it started outlives it.
 * It starts what a live test starts — `sync --follow` and `serve` with two cluster workers on
 * one index, each in temp dirs — prints their pids (the workers' too) and dirs as one JSON line, and then, per
 * $ORPHAN_FIXTURE_MODE:
 * - `hang`: waits forever (the outer test kills this mocha process: a crash);
 * - `leave`: ends the test without stopping anything (mocha runs with --exit).
 */

const fs = require('node:fs');
const path = require('node:path');
const { MAINNET_439 } = require('../helpers/fixtures');
const { startCli } = require('../helpers/cli');
const { tempDir } = require('../helpers/tmp');
const { waitFor } = require('../helpers/chains');
const { childrenOf } = require('../helpers/procs');


describe('a suite that leaves its children running', function () {
  this.timeout(0);

  it('starts sync --follow and serve --workers 2, and does not stop them', async () => {
    const blocksDir = tempDir('orphan-blocks');
    fs.copyFileSync(MAINNET_439, path.join(blocksDir, 'blk00000.dat'));
    const indexDir = tempDir('orphan-index');
    const datadir = path.join(indexDir, 'index');
    const follow = startCli(['sync', '--blocks-dir', blocksDir, '--datadir', datadir, '--network', 'main', '--follow', '--poll-ms', '200']);
    await follow.waitFor(/at the source's tip|synced/i, 60000);
    const serve = startCli(['serve', '--datadir', datadir, '--network', 'main', '--workers', '2', '--port', '0']);
    await serve.waitFor(/listening on http/, 60000);
    // serve forks its workers after it listens: wait until both are there
    const workers = await waitFor(() => {
      const w = childrenOf(serve.pid);
      return w.length >= 2 && w;
    }, 60000, 'serve\'s two workers');
    process.stdout.write(`${JSON.stringify({ pids: [follow.pid, serve.pid, ...workers], dirs: [blocksDir, indexDir] })}\n`);
    if (process.env.ORPHAN_FIXTURE_MODE === 'hang') await new Promise(() => {});
  });
});
