'use strict';

const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnOwned: spawn } = require('../helpers/procs');
const bitcore = require('bitcore-lib');
const { useBtcd } = require('../helpers/btcd');
const { nodeWallet } = require('../helpers/node-chain');
const { startCli } = require('../helpers/cli');
const { useMongo } = require('../helpers/mongo-server');
const { tempDir } = require('../helpers/tmp');
const { waitFor } = require('../helpers/chains');
const { bwsHost } = require('../helpers/bitcore-client');
const { request } = require('../api/helpers');

const { wallet: keys, minerA } = nodeWallet();

/**
 * bitcore-wallet-service 8.25.47 on Node 20, its storage on the tests' FerretDB and its v8
 * blockchain explorer pointed at `addrindex serve` (btcd regtest behind it), driven by
 * bitcore-wallet-client 8.25.47 (test/bitcore8/bws-child.js, in the host .cache/bws): a wallet
 * created (the service registers it with the explorer and imports its address, signed), the
 * address paid by btcd, the balance, a scan, the history and the unspent outputs the service
 * reads from the explorer, each equal to btcd's payment.
 */
describe('bitcore-wallet-service 8.25.47 with its v8 explorer on addrindex (FerretDB storage, btcd regtest)', function () {
  this.timeout(300000);
  const btcd = useBtcd([{ miningAddress: minerA }]);
  const mongo = useMongo();
  let follow;
  let serve;
  let child;

  after(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    for (const c of [serve, follow]) if (c && c.exitCode === null) c.kill('SIGTERM');
    for (const c of [serve, follow]) if (c) await c.done;
  });

  it('a wallet created, its address paid: balance, scan, history and coins as btcd says', async () => {
    const host = await bwsHost();
    const node = btcd.nodes[0];
    await node.generate(101);
    const dir = tempDir('bitcore8-bws-idx');
    follow = startCli(['sync', '--rpc-url', node.url, '--network', 'regtest', '--datadir', dir, '--follow', '--poll-ms', '100', '--mempool-poll-ms', '100']);
    await follow.waitFor(/mempool: \d+ transaction\(s\)/, 120000);
    const socketKey = new bitcore.PrivateKey();
    serve = startCli(['serve', '--datadir', dir, '--workers', '2', '--port', '0', '--bws-key', socketKey.toPublicKey().toString()], { env: { ADDRINDEX_RPC_URL: node.url } });
    const url = (await serve.waitFor(/listening on (http:\/\/\S+)/))[1];

    child = spawn(process.execPath, [path.join(__dirname, 'bws-child.js')], {
      cwd: host, stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, NODE_PATH: path.join(host, 'node_modules'), BWS_TEST: JSON.stringify({ url, mongo: mongo.mongo.url, dbname: mongo.dbName('bws'), socketKey: socketKey.toString() }) },
    });
    const steps = new Map();
    let partial = '';
    let stderr = '';
    child.stderr.on('data', (d) => { stderr = (stderr + d).slice(-4000); });
    child.stdout.on('data', (d) => {
      const parts = (partial + d).split('\n');
      partial = parts.pop();
      for (const l of parts) {
        if (!l.startsWith('{"step"')) continue; // the service's own log lines
        const e = JSON.parse(l);
        steps.set(e.step, e.res);
      }
    });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    const step = (name) => waitFor(() => steps.has(name) || steps.has('error') || child.exitCode !== null, 120000, name)
      .then(() => {
        assert.ok(!steps.has('error'), `the service's client failed: ${steps.get('error')}\n${stderr}`);
        assert.ok(steps.has(name), `no step ${name}: ${stderr}`);
        return steps.get(name);
      });

    assert.equal(await step('wallet'), 'complete');
    const address = await step('fund');
    const cb = keys.coinbaseCoin(Buffer.from(await node.call('getblock', await node.call('getblockhash', 1), 0), 'hex'), 'miner-a');
    const tx = new bitcore.Transaction().from({ txId: cb.txId, outputIndex: cb.outputIndex, satoshis: cb.satoshis, script: cb.script })
      .to(address, 1.5e8).change(minerA).fee(2000).sign(keys.key('miner-a'));
    await node.sendTx(tx.serialize());
    await node.generate(1);
    // the payment is confirmed in the index before the service asks
    await waitFor(async () => (await request(`${url}/api/BTC/regtest/tx/${tx.hash}`)).json?.confirmations === 1, 30000, 'the payment in the index');
    child.stdin.write('go\n');
    assert.deepEqual(await step('balance'), { total: 1.5e8, confirmed: 1.5e8, available: 1.5e8 });
    assert.deepEqual(await step('history'), [{ txid: tx.hash, action: 'received', amount: 1.5e8, confirmations: 1 }]);
    assert.deepEqual(await step('utxos'), [{ txid: tx.hash, vout: 0, satoshis: 1.5e8, confirmations: 1 }]);
    assert.equal(await exited, 0, stderr);
  });
});
