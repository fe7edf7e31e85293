'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { ROOT } = require('../helpers/cli');
const { spawnOwned, running } = require('../helpers/procs');
const { waitFor } = require('../helpers/chains');

const MOCHA = path.join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js');
const FIXTURE = path.join(__dirname, 'orphan-fixture.js');

/** Alive and not a zombie waiting for a parent to reap it. */
function alive(pid) {
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/**
 * Runs orphan-fixture.js in a mocha process of its own and reads what it started: the
 * follower, the server, the server's workers, the temp dirs.
 */
async function runFixture(mode, extraArgs = []) {
  const child = spawnOwned(process.execPath, [MOCHA, '--no-config', '--reporter', 'dot', ...extraArgs, FIXTURE], {
    cwd: ROOT, env: { ...process.env, ORPHAN_FIXTURE_MODE: mode }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { err += d; });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const started = await waitFor(() => {
    const line = out.split('\n').find((l) => l.startsWith('{"pids"'));
    if (line) return JSON.parse(line);
    if (child.exitCode !== null) throw new Error(`the fixture's mocha exited ${child.exitCode} first:\n${out}\n${err}`);
    return null;
  }, 120000, 'the fixture\'s children');
  return { child, exited, ...started };
}

describe('no process or temp dir of the suite outlives it', function () {
  this.timeout(240000);

  it('a test process killed outright (as by a native crash): its sync, serve and workers are killed, its temp dirs removed', async () => {
    const { child, exited, pids, dirs } = await runFixture('hang');
    assert.equal(pids.length, 4);
    assert.ok(pids.every(alive));
    child.kill('SIGKILL'); // no exit hook runs: only the watchdog can clean up
    assert.equal((await exited).signal, 'SIGKILL');
    await waitFor(() => !pids.some(alive), 30000, `the fixture's children ${pids} to be gone`);
    await waitFor(() => !dirs.some((d) => fs.existsSync(d)), 30000, 'the fixture\'s temp dirs to be removed');
  });

  it('a test process that ends with its children still running: its exit hook kills them and removes its dirs', async () => {
    const { exited, pids, dirs } = await runFixture('leave', ['--exit']);
    assert.equal(pids.length, 4);
    assert.equal((await exited).code, 0);
    await waitFor(() => !pids.some(alive), 30000, `the fixture's children ${pids} to be gone`);
    await waitFor(() => !dirs.some((d) => fs.existsSync(d)), 30000, 'the fixture\'s temp dirs to be removed');
  });

  it('every child this test process started through the helpers and has since stopped is unregistered', () => {
    // the two fixtures' mocha processes were owned too; both have exited
    assert.deepEqual(running().filter((r) => r.what.includes('orphan-fixture')), []);
  });
});
