'use strict';

/**
 * The service's events as insight's clients see them, over socket.io (bitcore-node's web
 * service, insight-api's `inv` room, the bus), with btcd regtest as the node and `addrindex
 * sync --follow` keeping the index and its mempool snapshot: when a transaction enters the
 * node's mempool, it arrives as insight's `tx` message and on `bitcoind/rawtransaction`, and a
 * subscriber to `bitcoind/addresstxid` hears of it when it names its address; when a block is
 * mined, its transactions not told yet (the coinbase) arrive, then the block as `block` and
 * `bitcoind/hashblock`. Runs in a process with the host's bitcore-lib 0.13
 * (test/bitcore/regtest-node.test.js starts it).
 */

const assert = require('node:assert/strict');
const net = require('node:net');
const path = require('node:path');
const { createRequire } = require('node:module');
const { tempDir } = require('../../helpers/tmp');
const { startCli } = require('../../helpers/cli');
const { tipOf, waitFor } = require('../../helpers/chains');
const { useBtcd } = require('../../helpers/btcd');
const { NodeMiner } = require('../node-miner');

const HOST = process.env.ADDRINDEX_TEST_BITCORE_HOST;
if (!HOST) throw new Error('ADDRINDEX_TEST_BITCORE_HOST must name the bitcore-node host dir (scripts/install-bitcore.sh)');
const hostRequire = createRequire(path.join(HOST, 'noop.js'));
const bitcore = hostRequire('bitcore-lib');
const index = hostRequire('bitcore-node/lib');
const BitcoreNode = hostRequire('bitcore-node/lib/node');
const Web = hostRequire('bitcore-node/lib/services/web');
const InsightAPI = hostRequire('insight-api');
const io = hostRequire('socket.io-client');
const BitcoinService = require('../../../lib/bitcore');

index.log.debug = () => {};
index.log.info = () => {};

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

describe('events over socket.io: a mempool transaction, a mined block', function () {
  this.timeout(60000);
  let node;
  let miner;
  let follower;
  let socket;
  let client;
  const minerKey = bitcore.PrivateKey('11'.repeat(32), 'regtest');
  const payee = bitcore.PrivateKey('22'.repeat(32), 'regtest');
  const heard = { tx: [], block: [], rawtransaction: [], hashblock: [], addresstxid: [] };
  const order = [];
  let pay;
  let other;
  let mined;

  // (before useBtcd's hooks: the service and the follower stop before the node does)
  after(async () => {
    if (socket) socket.close();
    if (node) await new Promise((resolve) => node.stop(resolve));
    if (follower) {
      follower.kill('SIGTERM');
      await follower.done;
    }
  });
  const btcd = useBtcd([{ miningAddress: minerKey.toAddress('regtest').toString() }]);

  before(async () => {
    [client] = btcd.nodes;
    miner = new NodeMiner({ node: client, bitcore, key: minerKey });
    await client.generate(102);
    const datadir = path.join(tempDir('events-index'), 'index');
    follower = startCli(['sync', '--follow', '--rpc-url', client.url, '--datadir', datadir, '--network', 'regtest',
      '--poll-ms', '50', '--mempool-poll-ms', '50', '--threads', '0', '--quiet']);
    await waitFor(async () => { const t = await tipOf(datadir); return t && t.height === 102; }, 30000, 'the index at 102');
    const port = await freePort();
    node = new BitcoreNode({
      network: 'regtest', port,
      services: [
        { name: 'bitcoind', module: BitcoinService, config: { datadir, rpcUrl: client.url, tipPollMs: 50 } },
        { name: 'web', module: Web, config: {} },
        { name: 'insight-api', module: InsightAPI, config: { disableRateLimiter: true } },
      ],
    });
    await new Promise((resolve, reject) => node.start((err) => (err ? reject(err) : resolve())));
    await waitFor(() => node.services.web.server.listening, 10000, 'the web service');
    socket = io(`http://127.0.0.1:${port}`, { transports: ['websocket'], forceNew: true });
    await new Promise((resolve) => socket.once('connect', resolve));
    for (const name of ['tx', 'block']) socket.on(name, (m) => { heard[name].push(m); order.push(name); });
    for (const topic of ['rawtransaction', 'hashblock', 'addresstxid']) socket.on(`bitcoind/${topic}`, (m) => heard[topic].push(m));
    socket.emit('subscribe', 'inv');
    socket.emit('subscribe', 'bitcoind/rawtransaction');
    socket.emit('subscribe', 'bitcoind/hashblock');
    socket.emit('subscribe', 'bitcoind/addresstxid', [payee.toAddress('regtest').toString(), 'not an address']);
    // a round trip: the subscriptions sent before it have reached the server
    await new Promise((resolve) => socket.emit('message', { method: 'getBestBlockHash', params: [] }, resolve));
  });

  it('a transaction entering the node\'s mempool: insight\'s tx message, the raw bus event, the subscribed address\'s; the block: its coinbase, then the block', async () => {
    const address = payee.toAddress('regtest').toString();
    pay = await miner.sendToAddress(address, 3);
    await client.sendTx(pay.serialize());
    await waitFor(() => heard.tx.length >= 1, 20000, 'the payment\'s tx message');
    other = await miner.sendToAddress(bitcore.PrivateKey('33'.repeat(32), 'regtest').toAddress('regtest').toString(), 1);
    await client.sendTx(other.serialize());
    await waitFor(() => heard.tx.length >= 2, 20000, 'the other payment\'s tx message');
    assert.deepEqual(heard.tx.map((t) => t.txid), [pay.hash, other.hash]);
    assert.equal(heard.tx[0].valueOut, pay.outputAmount / 1e8);
    assert.deepEqual(heard.tx[0].vout[0], { [address]: 3e8 });
    assert.deepEqual(heard.rawtransaction, [pay.toString(), other.toString()]);
    assert.deepEqual(heard.addresstxid, [{ address, txid: pay.hash }]);
    assert.deepEqual(heard.block, []);

    [mined] = await client.generate(1);
    await waitFor(() => heard.block.length >= 1 && heard.hashblock.length >= 1, 20000, 'the block message');
    const txids = (await client.call('getblock', mined, 1)).tx;
    assert.deepEqual(txids.slice(1).sort(), [pay.hash, other.hash].sort());
    assert.deepEqual(order, ['tx', 'tx', 'tx', 'block']);
    assert.equal(heard.tx[2].txid, txids[0], 'the coinbase, told with its block');
    assert.deepEqual(heard.block, [mined]);
    assert.deepEqual(heard.hashblock, [mined]);
    assert.equal(heard.rawtransaction.length, 3);
    assert.deepEqual(heard.addresstxid, [{ address, txid: pay.hash }], 'told once, when it entered the mempool');
  });

  it('bitcore-node\'s socket.io RPC reaches the service: getSpentInfo, getBlockOverview, getAddressBalance; a wrong parameter count is refused', async () => {
    const call = (method, params) => new Promise((resolve) => socket.emit('message', { method, params }, resolve));
    const height = (await client.tip()).height;
    const spent = pay.inputs[0];
    assert.deepEqual((await call('getSpentInfo', [{ txid: spent.prevTxId.toString('hex'), index: spent.outputIndex }])).result, { txid: pay.hash, index: 0, height });
    assert.deepEqual((await call('getSpentInfo', [{ txid: pay.hash, index: 0 }])).result, {}); // unspent
    assert.deepEqual((await call('getSpentInfo', [{ txid: 'ab'.repeat(32), index: 0 }])).result, {}); // no such transaction
    const overview = (await call('getBlockOverview', [mined])).result;
    assert.equal(overview.height, height);
    assert.deepEqual(overview.txids, (await client.call('getblock', mined, 1)).tx);
    assert.equal(overview.confirmations, 1);
    const balance = (await call('getAddressBalance', [payee.toAddress('regtest').toString(), {}])).result;
    assert.deepEqual(balance, { balance: 3e8, received: 3e8 });
    assert.deepEqual(await call('getAddressBalance', [payee.toAddress('regtest').toString()]), { error: { message: 'Expected 2 parameter(s)' } });
    assert.match((await call('getDetailedTransaction', ['zz'])).error.message, /txid must be hexadecimal string/);
  });
});
