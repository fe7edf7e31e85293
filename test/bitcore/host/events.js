'use strict';

/**
 * The service's events as insight's clients see them, over socket.io (bitcore-node's web
 * service, insight-api's `inv` room, the bus): when the index takes a new block, each of its
 * transactions arrives as insight's `tx` message and on `bitcoind/rawtransaction`, the block
 * as `block` and `bitcoind/hashblock`, and a subscriber to `bitcoind/addresstxid` hears of the
 * transactions naming its address. Runs in a process with the host's bitcore-lib 0.13
 * (test/bitcore/regtest-node.test.js starts it). Unconfirmed transactions wait for the mempool.
 */

const assert = require('node:assert/strict');
const net = require('node:net');
const path = require('node:path');
const { createRequire } = require('node:module');
const { tempDir } = require('../../helpers/tmp');
const { startCli } = require('../../helpers/cli');
const { tipOf, waitFor } = require('../../helpers/chains');
const { RegtestMiner } = require('../regtest-miner');

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

describe('events over socket.io: a mined block\'s transactions and hash', function () {
  this.timeout(60000);
  let node;
  let miner;
  let follower;
  let socket;
  const payee = bitcore.PrivateKey('22'.repeat(32), 'regtest');
  const heard = { tx: [], block: [], rawtransaction: [], hashblock: [], addresstxid: [] };
  const order = [];

  before(async () => {
    const blocksDir = tempDir('events-blocks');
    const datadir = path.join(tempDir('events-index'), 'index');
    miner = new RegtestMiner({ dir: blocksDir, bitcore, key: bitcore.PrivateKey('11'.repeat(32), 'regtest') });
    miner.generate(102);
    follower = startCli(['sync', '--follow', '--blocks-dir', blocksDir, '--datadir', datadir, '--network', 'regtest',
      '--poll-ms', '50', '--threads', '0', '--quiet']);
    await waitFor(async () => { const t = await tipOf(datadir); return t && t.height === 102; }, 30000, 'the index at 102');
    const port = await freePort();
    node = new BitcoreNode({
      network: 'regtest', port,
      services: [
        { name: 'bitcoind', module: BitcoinService, config: { datadir, blocksDir, tipPollMs: 50 } },
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
    await new Promise((resolve) => setTimeout(resolve, 200)); // the subscriptions reach the server
  });

  after(async () => {
    if (socket) socket.close();
    if (node) await new Promise((resolve) => node.stop(resolve));
    if (follower) {
      follower.kill('SIGTERM');
      await follower.done;
    }
    if (miner) await miner.close();
  });

  it('each transaction of the new block (insight\'s tx message, the raw bus event), then the block; the subscribed address\'s transaction', async () => {
    const pay = miner.sendToAddress(payee.toAddress('regtest').toString(), 3);
    const other = miner.sendToAddress(bitcore.PrivateKey('33'.repeat(32), 'regtest').toAddress('regtest').toString(), 1);
    const hash = miner.mine([pay, other]);
    await waitFor(() => heard.block.length >= 1 && heard.hashblock.length >= 1, 20000, 'the block message');
    assert.deepEqual(heard.block, [hash]);
    assert.deepEqual(order, ['tx', 'tx', 'tx', 'block']);
    assert.deepEqual(heard.hashblock, [hash]);
    const txids = heard.tx.map((t) => t.txid);
    assert.equal(txids.length, 3);
    assert.deepEqual(txids.slice(1), [pay.hash, other.hash]);
    const payMsg = heard.tx[1];
    assert.equal(payMsg.valueOut, pay.outputAmount / 1e8);
    assert.deepEqual(payMsg.vout[0], { [payee.toAddress('regtest').toString()]: 3e8 });
    assert.deepEqual(heard.rawtransaction.slice(1), [pay.toString(), other.toString()]);
    assert.deepEqual(heard.addresstxid, [{ address: payee.toAddress('regtest').toString(), txid: pay.hash }]);
  });

  it('bitcore-node\'s socket.io RPC reaches the service: getSpentInfo, getBlockOverview, getAddressBalance; a wrong parameter count is refused', async () => {
    const call = (method, params) => new Promise((resolve) => socket.emit('message', { method, params }, resolve));
    const [spentCoin] = miner.coinbases.filter((c) => c.spent);
    const spender = heard.tx[1].txid;
    assert.deepEqual((await call('getSpentInfo', [{ txid: spentCoin.txid, index: 0 }])).result, { txid: spender, index: 0, height: miner.height });
    assert.deepEqual((await call('getSpentInfo', [{ txid: heard.tx[0].txid, index: 0 }])).result, {}); // unspent
    assert.deepEqual((await call('getSpentInfo', [{ txid: 'ab'.repeat(32), index: 0 }])).result, {}); // no such transaction
    const overview = (await call('getBlockOverview', [miner.hash])).result;
    assert.equal(overview.height, miner.height);
    assert.deepEqual(overview.txids, heard.tx.map((t) => t.txid));
    assert.equal(overview.confirmations, 1);
    const balance = (await call('getAddressBalance', [payee.toAddress('regtest').toString(), {}])).result;
    assert.deepEqual(balance, { balance: 3e8, received: 3e8 });
    assert.deepEqual(await call('getAddressBalance', [payee.toAddress('regtest').toString()]), { error: { message: 'Expected 2 parameter(s)' } });
    assert.match((await call('getDetailedTransaction', ['zz'])).error.message, /txid must be hexadecimal string/);
  });
});
