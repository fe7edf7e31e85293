'use strict';

const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const { promisify } = require('node:util');
const { startCli } = require('../helpers/cli');
const { tempDir } = require('../helpers/tmp');

const run = promisify(execFile);

/** `addrindex start` on a datadir; `ready()` waits until it has printed its examples. */
function start(datadir) {
  const s = startCli(['start', '--datadir', datadir, '--port', '0', '--workers', '1']);
  s.ready = () => s.waitFor(/Ctrl-C stops the server\./, 60000);
  return s;
}

describe('addrindex start: the main job on a fresh clone', function () {
  this.timeout(60000);
  let datadir;
  before(() => { datadir = tempDir('start'); });

  it('indexes the bundled blocks, serves, and every printed example works as printed', async () => {
    const s = start(datadir);
    try {
      await s.ready();
      const { stdout: out, stderr: err } = s.output;
      assert.match(err, /indexed 439 blocks/);
      // what a person sees first is the explorer, and it answers a browser with insight-ui
      const first = out.split('\n').find((l) => l.trim());
      const explorer = first.match(/open (http:\/\/127\.0\.0\.1:\d+\/insight\/) in a browser/);
      assert.ok(explorer, first);
      const page = await fetch(explorer[1], { headers: { accept: 'text/html' } });
      assert.match(await page.text(), /window\.apiPrefix = '\/insight-api'/);
      // readable lines only: no JSON log lines mixed in, on either stream
      for (const line of `${out}\n${err}`.split('\n')) assert.ok(!line.startsWith('{"level"'), line);
      const commands = out.split('\n').map((l) => l.trim()).filter((l) => l.startsWith('curl '));
      assert.ok(commands.length >= 8, out);
      for (const cmd of commands) {
        // through a shell exactly as a person pastes it; -f turns an HTTP error into a failure
        const { stdout } = await run('sh', ['-c', cmd.replace(/^curl /, 'curl -sf ')]);
        const body = JSON.parse(stdout);
        assert.ok(body && typeof body === 'object', cmd);
        assert.equal(body.error, undefined, cmd);
      }
      const hal = JSON.parse((await run('sh', ['-c', commands.find((c) => /\/api\/v1\/address\/1Q2TWHE3GMdB6BZKafqwxXtWAWgFt5Jvm3$/.test(c)).replace(/^curl /, 'curl -sf ')])).stdout);
      assert.equal(hal.balance, 1e9);
      assert.equal(hal.firstHeight, 170);
    } finally {
      s.kill('SIGINT');
    }
    assert.equal((await s.exited).code, 0);
  });

  it('--quiet prints errors only: a sync says nothing, a sync that fails says why', async () => {
    const blocksDir = tempDir('start-quiet-blocks');
    require('node:fs').copyFileSync(require('node:path').join(__dirname, '..', 'fixtures', 'mainnet', 'blk-first-439.dat'), `${blocksDir}/blk00000.dat`);
    const quiet = startCli(['sync', '--blocks-dir', blocksDir, '--datadir', tempDir('start-quiet'), '--quiet', '--threads', '0']);
    const done = await quiet.exited;
    assert.deepEqual([done.code, done.stdout, done.stderr], [0, '', '']);
    const failed = await startCli(['sync', '--blocks-dir', `${blocksDir}/missing`, '--datadir', tempDir('start-quiet-2'), '--quiet']).exited;
    assert.notEqual(failed.code, 0);
    assert.equal(failed.stdout, '');
    assert.match(failed.stderr, /^addrindex: .*\[ERR_/);
  });

  it('a second start finds the index already there and does not sync again', async () => {
    const s = start(datadir);
    try {
      await s.ready();
      assert.match(s.output.stderr, /already holds the 439 blocks/);
    } finally {
      s.kill('SIGTERM');
    }
    assert.equal((await s.exited).code, 0);
  });
});
