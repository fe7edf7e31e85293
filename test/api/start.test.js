'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const { spawn, execFile } = require('node:child_process');
const { promisify } = require('node:util');
const { BIN, ROOT, tmpdir } = require('./helpers');

const run = promisify(execFile);

/** `addrindex start` until it has printed its examples; resolves with the process and output. */
function start(datadir) {
  const proc = spawn(process.execPath, [BIN, 'start', '--datadir', datadir, '--port', '0', '--workers', '1'], { cwd: ROOT });
  let out = '';
  let err = '';
  proc.stderr.on('data', (d) => { err += d; });
  const ready = new Promise((resolve, reject) => {
    proc.stdout.on('data', (d) => {
      out += d;
      if (out.includes('Ctrl-C stops the server.')) resolve();
    });
    proc.on('exit', (code) => reject(new Error(`start exited with ${code}:\n${out}\n${err}`)));
  });
  return { proc, ready, output: () => ({ out, err }), exited: new Promise((resolve) => proc.on('exit', (code) => resolve(code))) };
}

describe('addrindex start: the main job on a fresh clone', function () {
  this.timeout(60000);
  let datadir;
  before(async () => { datadir = await tmpdir('start'); });
  after(async () => { await fs.promises.rm(datadir, { recursive: true, force: true }); });

  it('indexes the bundled blocks, serves, and every printed example works as printed', async () => {
    const s = start(datadir);
    try {
      await s.ready;
      const { out, err } = s.output();
      assert.match(err, /indexed 439 blocks/);
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
      s.proc.kill('SIGINT');
    }
    assert.equal(await s.exited, 0);
  });

  it('a second start finds the index already there and does not sync again', async () => {
    const s = start(datadir);
    try {
      await s.ready;
      assert.match(s.output().err, /already holds the 439 blocks/);
    } finally {
      s.proc.kill('SIGTERM');
    }
    assert.equal(await s.exited, 0);
  });
});
