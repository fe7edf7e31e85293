'use strict';

const assert = require('node:assert/strict');
const path = require('node:path');
const { runOwned } = require('../helpers/procs');
const { bitcoreHost } = require('../helpers/bitcore-host');

const ROOT = path.join(__dirname, '..', '..');

/** Runs a mocha file of test/bitcore/host in its own process, with the host's bitcore-lib. */
function runHost(host, file) {
  return runOwned(process.execPath, [path.join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js'), '--no-config', '--timeout', '60000',
    '--reporter', 'spec', path.join(__dirname, 'host', file)],
  { cwd: ROOT, env: { ...process.env, ADDRINDEX_TEST_BITCORE_HOST: host } });
}

/**
 * bitcore-node 3.1.3's regtest/node.js, ported (test/bitcore/host/regtest-node.js), and the
 * socket.io events (host/events.js) run over btcd regtest with `addrindex sync --follow` and
 * its mempool follower beside the service, each in a process of its own: they need the host's
 * bitcore-lib 0.13, which must not meet this process's bitcore-lib 11. Their mocha report is
 * shown when they fail.
 */
describe('bitcore-node 3.1.3\'s regtest/node.js and insight\'s socket.io events against addrindex\'s bitcoind service (btcd regtest)', function () {
  this.timeout(300000);

  it('passes every case, the mempool and orphaned transactions included (none pending)', async () => {
    const host = await bitcoreHost();
    const { code, stdout, stderr } = await runHost(host, 'regtest-node.js');
    const report = `${stdout}\n${stderr}`;
    assert.equal(code, 0, report);
    const passing = Number((/(\d+) passing/.exec(stdout) || [])[1]);
    const pending = Number((/(\d+) pending/.exec(stdout) || [])[1]);
    assert.equal(passing, 20, report);
    assert.ok(!pending, report);
  });

  it('events over socket.io for a mempool transaction and a mined block, and the socket RPC (test/bitcore/host/events.js)', async () => {
    const host = await bitcoreHost();
    const { code, stdout, stderr } = await runHost(host, 'events.js');
    assert.equal(code, 0, `${stdout}\n${stderr}`);
    assert.match(stdout, /2 passing/);
  });
});
