'use strict';

const assert = require('node:assert/strict');
const mempoolJS = require('@mempool/mempool.js');
const { useBtcd } = require('../helpers/btcd');
const { nodeWallet } = require('../helpers/node-chain');
const { runCli, startCli } = require('../helpers/cli');
const { tempDir } = require('../helpers/tmp');
const { waitFor } = require('../helpers/chains');
const { connectClient } = require('../electrum/helpers');
const { syncedFixture, request } = require('./helpers');
const { ESPLORA_TARGETS } = require('../../lib/node/serve-node');

const { wallet, minerA } = nodeWallet();

/**
 * `addrindex serve` with a node (btcd regtest, the URL from $ADDRINDEX_RPC_URL): the node's tip
 * for the lag in /api/v1/status, /ready and the metrics; confirmed transactions and blocks read
 * from the node (`getblock HASH 0`) for an index synced over RPC, which has no blocks dir;
 * broadcasts (Esplora through @mempool/mempool.js's postTx, insight, Electrum), the node's
 * refusals, and fee estimates, each checked against btcd's own answer.
 */
describe('serve with a node (btcd regtest): lag, getblock fallback, broadcast, fee estimates', function () {
  this.timeout(120000);
  const btcd = useBtcd([{ miningAddress: minerA }]);
  let node;
  let datadir;
  let serve;
  let url;
  let electrum;
  let fund; // a confirmed transaction the index holds
  let coins; // fund's outputs, spent by the broadcasts
  const get = (p) => request(url + p);

  before(async () => {
    node = btcd.nodes[0];
    const hashes = await node.generate(101);
    const cb = wallet.coinbaseCoin(Buffer.from(await node.call('getblock', hashes[0], 0), 'hex'), 'miner-a');
    fund = wallet.pay([cb], [
      // spent below by key signatures: btcd's regtest activates segwit only at height 432
      { kind: 'p2pkh', label: 'x', satoshis: 1e8 }, { kind: 'p2pkh', label: 'y', satoshis: 1e8 }, { kind: 'p2pkh', label: 'z', satoshis: 1e8 },
      { kind: 'p2pkh', label: 'change' },
    ]);
    await node.sendTx(fund.hex);
    await node.generate(1);
    coins = fund.coins;
    datadir = tempDir('node-serve');
    const sync = await runCli(['sync', '--rpc-url', node.url, '--network', 'regtest', '--datadir', datadir, '--threads', '1', '--quiet']);
    assert.equal(sync.code, 0, sync.stderr);
    serve = startCli(['serve', '--datadir', datadir, '--workers', '2', '--port', '0', '--electrum-port', '0', '--max-lag', '0',
      '--poll-ms', '100', '--grace-ms', '2000'], { env: { ADDRINDEX_RPC_URL: node.url } });
    url = (await serve.waitFor(/listening on (http:\/\/\S+)/))[1];
    electrum = await connectClient(Number((await serve.waitFor(/electrum tcp 127\.0\.0\.1:(\d+)/))[1]));
  });
  after(async () => {
    if (electrum) electrum.close();
    if (serve && serve.exitCode === null) {
      serve.kill('SIGTERM');
      assert.equal((await serve.done).code, 0, serve.text());
    }
  });

  it('names the node with its password masked, and reads the index\'s blocks from it (no blocks dir)', async () => {
    await serve.waitFor(/node http:\/\/addrindex:\*\*\*@127\.0\.0\.1:\d+\/ \(tip 102\)/);
    assert.ok(!serve.text().includes(node.pass), 'the password is never printed');
    assert.match(serve.text(), /transactions and blocks will be read from the node \(getblock\)/);
    assert.equal((await get(`/api/tx/${fund.txid}/hex`)).text, fund.hex);
    assert.equal(await electrum.blockchainTransaction_get(fund.txid), fund.hex);
    const tip = await node.tip();
    assert.equal((await get(`/api/block/${tip.hash}/raw`)).text.length > 0, true);
    assert.equal(Buffer.from(await (await fetch(`${url}/api/block/${tip.hash}/raw`)).arrayBuffer()).toString('hex'), await node.call('getblock', tip.hash, 0));
    const tx = (await get(`/api/tx/${fund.txid}`)).json;
    assert.deepEqual([tx.status.block_height, tx.fee], [102, 2000]);
  });

  it('the node\'s tip: the lag in /api/v1/status, /ready (--max-lag 0) and the metrics', async () => {
    const status = (await get('/api/v1/status')).json;
    assert.deepEqual(status.sync, { sourceTip: 102, sourceTipHash: (await node.tip()).hash, lag: 0, reason: 'the node\'s best chain, as last read over JSON-RPC' });
    assert.equal((await get('/ready')).status, 200);
    await node.generate(1);
    const behind = await waitFor(async () => {
      const r = await get('/ready');
      return r.status === 503 && r.json;
    }, 20000, '/ready to see the node one block ahead');
    assert.deepEqual([behind.lag, behind.node.tip.height], [1, 103]);
    assert.deepEqual(behind.reasons, ['the index is 1 blocks behind the node (max 0)']);
    assert.equal((await get('/api/v1/status')).json.sync.lag, 1);
    const metrics = (await get('/metrics')).text;
    assert.match(metrics, /^addrindex_node_tip_height 103$/m);
    assert.match(metrics, /^addrindex_index_lag_blocks 1$/m);
    const sync = await runCli(['sync', '--rpc-url', node.url, '--network', 'regtest', '--datadir', datadir, '--threads', '1', '--quiet']);
    assert.equal(sync.code, 0, sync.stderr);
    await waitFor(async () => (await get('/ready')).status === 200, 20000, '/ready again');
  });

  it('broadcast: Esplora (mempool.js postTx), insight and Electrum reach btcd; its refusals are 400 / error 1 with its reason', async () => {
    const { port } = new URL(url);
    const { bitcoin } = mempoolJS({ hostname: `127.0.0.1:${port}`, network: 'mainnet', protocol: 'http' });
    const [x, y, z] = coins;
    const a = wallet.pay([x], [{ kind: 'p2wpkh', label: 'a' }]);
    const posted = await bitcoin.transactions.postTx({ txhex: a.hex }).catch((e) => e.response.data);
    assert.equal(posted, a.txid);
    assert.ok((await node.call('getrawmempool')).includes(a.txid), 'btcd holds it');

    // the same again, and a double spend of the same coin: btcd's reason, as a 400
    const again = await request(`${url}/api/tx`, { method: 'POST', body: a.hex, headers: { 'content-type': 'text/plain' } });
    assert.equal(again.status, 400);
    assert.equal(again.json.error.code, 'ERR_TX_REJECTED');
    assert.match(again.json.error.message, /^the node refused the transaction: .*already have transaction/);
    const double = wallet.pay([x], [{ kind: 'p2pkh', label: 'other' }], { fee: 5000 });
    const refused = await request(`${url}/api/tx`, { method: 'POST', body: double.hex, headers: { 'content-type': 'text/plain' } });
    assert.equal(refused.status, 400);
    assert.match(refused.json.error.message, /already spent/);
    // a signature that does not verify
    const bad = wallet.pay([y], [{ kind: 'p2pkh', label: 'b' }]);
    const sigAt = bad.hex.indexOf('3044') >= 0 ? bad.hex.indexOf('3044') : bad.hex.indexOf('3045');
    const broken = `${bad.hex.slice(0, sigAt + 20)}${bad.hex[sigAt + 20] === '0' ? '1' : '0'}${bad.hex.slice(sigAt + 21)}`;
    const badSig = await request(`${url}/api/tx`, { method: 'POST', body: broken, headers: { 'content-type': 'text/plain' } });
    assert.equal(badSig.status, 400, badSig.text);
    assert.equal(badSig.json.error.code, 'ERR_TX_REJECTED');

    const b = wallet.pay([y], [{ kind: 'p2wpkh', label: 'b' }]);
    assert.deepEqual((await request(`${url}/insight-api/tx/send`, { method: 'POST', body: { rawtx: b.hex } })).json, { txid: b.txid });
    const c = wallet.pay([z], [{ kind: 'p2wpkh', label: 'c' }]);
    assert.equal(await electrum.blockchainTransaction_broadcast(c.hex), c.txid);
    await assert.rejects(electrum.blockchainTransaction_broadcast(wallet.pay([z], [{ kind: 'p2pkh', label: 'd' }], { fee: 9000 }).hex),
      (e) => e.code === 1 && /rejected by network rules/.test(e.message) && /already spent/.test(e.message));
    assert.deepEqual((await node.call('getrawmempool')).sort(), [a.txid, b.txid, c.txid].sort());
    // a mempool transaction no snapshot holds yet: Electrum asks the node for it
    assert.equal(await electrum.blockchainTransaction_get(c.txid), c.hex);
  });

  it('fee estimates and the relay fee are btcd\'s (estimatefee: it has no estimatesmartfee)', async () => {
    const want = {};
    for (const t of ESPLORA_TARGETS) {
      const r = await node.call('estimatefee', t).catch(() => null);
      if (typeof r === 'number' && r > 0) want[t] = Math.round(r * 1e8) / 1e3;
    }
    assert.deepEqual((await get('/api/fee-estimates')).json, want);
    const two = await node.call('estimatefee', 2).catch(() => -1);
    assert.equal(await electrum.blockchainEstimatefee(2), two > 0 ? two : -1);
    assert.equal(await electrum.blockchain_relayfee(), (await node.call('getinfo')).relayfee);
  });
});

describe('serve with a node that cannot be used: one clear error, the password never printed', function () {
  this.timeout(120000);
  const btcd = useBtcd([{ miningAddress: minerA }]);

  it('wrong credentials: ERR_NODE_AUTH; a node of another network: ERR_NODE_NETWORK', async () => {
    const node = btcd.nodes[0];
    const fixture = await syncedFixture(10);
    try {
      const regtest = tempDir('node-serve-err');
      await node.generate(1);
      const sync = await runCli(['sync', '--rpc-url', node.url, '--network', 'regtest', '--datadir', regtest, '--threads', '1', '--quiet']);
      assert.equal(sync.code, 0, sync.stderr);
      const wrong = node.url.replace(`:${node.pass}@`, ':not-the-password@');
      const auth = await runCli(['serve', '--datadir', regtest, '--rpc-url', wrong, '--workers', '1', '--port', '0']);
      assert.notEqual(auth.code, 0);
      assert.match(auth.stderr, /\[ERR_NODE_AUTH\]/);
      assert.ok(!`${auth.stdout}${auth.stderr}`.includes('not-the-password'));
      const net = await runCli(['serve', '--datadir', fixture.datadir, '--rpc-url', node.url, '--workers', '1', '--port', '0']);
      assert.notEqual(net.code, 0);
      assert.match(net.stderr, /is a regtest node .*not main.*\[ERR_NODE_NETWORK\]/);
      const usage = await runCli(['serve', '--datadir', regtest, '--rpc-retry-s', '5', '--workers', '1']);
      assert.notEqual(usage.code, 0, usage.stderr);
      assert.match(usage.stderr, /--rpc-retry-s goes with a node/);
    } finally {
      await fixture.cleanup();
    }
  });
});
