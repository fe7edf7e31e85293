'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { runCli } = require('../helpers/cli');
const { tempDir } = require('../helpers/tmp');
const { bitcoreProject } = require('../helpers/bitcore-host');
const { syncedFixture } = require('../api/helpers');

/**
 * `addrindex bitcore --config`: a config it cannot run is one clear line and a non-zero exit,
 * never a hanging process (the node started against it is stopped again).
 */
describe('addrindex bitcore: configs it cannot run', function () {
  this.timeout(120000);
  let fixture;
  before(async () => {
    fixture = await syncedFixture(20);
  });
  after(async () => {
    if (fixture) await fixture.cleanup();
  });

  const fails = async (args, re) => {
    const r = await runCli(['bitcore', ...args]);
    assert.notEqual(r.code, 0, r.stdout);
    assert.match(r.stderr, re);
    return r;
  };

  it('no --config, a missing file, not JSON, no bitcoind service', async () => {
    await fails([], /bitcore needs --config/);
    await fails(['--config', '/nonexistent/bitcore-node.json'], /cannot read \/nonexistent\/bitcore-node.json: no such file \[ERR_BITCORE_CONFIG\]/);
    const dir = tempDir('bitcore-config');
    fs.writeFileSync(path.join(dir, 'a.json'), '{ nope');
    await fails(['--config', path.join(dir, 'a.json')], /is not JSON/);
    fs.writeFileSync(path.join(dir, 'b.json'), JSON.stringify({ services: ['web', 'insight-api'] }));
    await fails(['--config', path.join(dir, 'b.json')], /has no "bitcoind": addrindex is the bitcoind service/);
    fs.writeFileSync(path.join(dir, 'c.json'), JSON.stringify({ services: ['bitcoind'], network: 'mainnet' }));
    await fails(['--config', path.join(dir, 'c.json')], /"network" is "mainnet"; bitcore-node knows livenet, testnet and regtest/);
  });

  it('no bitcore-node beside the config', async () => {
    const dir = tempDir('bitcore-config');
    fs.writeFileSync(path.join(dir, 'bitcore-node.json'), JSON.stringify({ services: ['bitcoind', 'web'] }));
    await fails(['--config', path.join(dir, 'bitcore-node.json')], /no bitcore-node in .* \[ERR_NO_BITCORE_NODE\]/);
  });

  it('bitcore-node\'s own bitcoind settings (spawn/connect), a missing index, a service not installed', async () => {
    const spawn = await bitcoreProject({ services: ['bitcoind', 'web'], servicesConfig: { bitcoind: { spawn: { datadir: './data', exec: 'bitcoind' } } } });
    await fails(['--config', spawn.configPath], /servicesConfig.bitcoind is addrindex's: .*not bitcore-node's "spawn"\/"connect" \[ERR_BITCORE_CONFIG\]/);
    const none = await bitcoreProject({ services: ['bitcoind', 'web'], servicesConfig: { bitcoind: { datadir: tempDir('empty') } } });
    await fails(['--config', none.configPath], /ERR_NO_INDEX|no index/i);
    const nothing = await bitcoreProject({ services: ['bitcoind', 'web'], servicesConfig: { bitcoind: { datadir: tempDir('empty'), follow: true } } });
    await fails(['--config', nothing.configPath], /follow needs a block source: "blocksDir", or a node \("rpcUrl" or "rpcCookie"\) \[ERR_BITCORE_CONFIG\]/);
    const missing = await bitcoreProject({ services: ['bitcoind', 'web', 'no-such-service'], servicesConfig: { bitcoind: { datadir: fixture.datadir } } });
    await fails(['--config', missing.configPath], /service "no-such-service" is not installed beside the config/);
  });

  it('a port already taken: the web service\'s failure is reported and every service stopped', async () => {
    const taken = net.createServer();
    await new Promise((resolve) => taken.listen(0, resolve));
    try {
      const p = await bitcoreProject({
        port: taken.address().port, services: ['bitcoind', 'web', 'insight-api'],
        servicesConfig: { bitcoind: { datadir: fixture.datadir, blocksDir: fixture.blocksDir } },
      });
      await fails(['--config', p.configPath], /the web service cannot listen on port \d+: .*EADDRINUSE.* \[ERR_LISTEN\]/);
    } finally {
      taken.close();
    }
  });
});
