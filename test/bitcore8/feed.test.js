'use strict';

const assert = require('node:assert/strict');
const bitcore = require('bitcore-lib');
const { useBtcd } = require('../helpers/btcd');
const { nodeWallet } = require('../helpers/node-chain');
const { followAndServe } = require('../helpers/cli');
const { tempDir } = require('../helpers/tmp');
const { spawnInHost } = require('../helpers/bitcore-client');
const { request } = require('../api/helpers');

const { wallet: keys, minerA } = nodeWallet();

/** The feed client: socket.io-client 2 (as bitcore's clients), in the bitcore-client host. */
const CLIENT = `
const io = require('socket.io-client');
const o = JSON.parse(process.env.FEED);
const s = io.connect(o.url, { transports: ['websocket'] });
const print = (event, data) => console.log(JSON.stringify({ event, data }));
s.on('connect', () => {
  // a bad signature first: refused; then the wallet and address rooms, inv last: the server
  // takes a socket's messages in order, so the first inv event means every room was joined
  s.emit('room', '/BTC/regtest/wallet', { pubKey: o.pubKey, message: o.message, signature: '00'.repeat(64) });
  s.emit('room', '/BTC/regtest/wallet', { pubKey: o.pubKey, message: o.message, signature: o.signature });
  s.emit('room', '/BTC/regtest/address');
  s.emit('room', '/BTC/regtest/inv');
  print('connect');
});
for (const ev of ['block', 'tx', 'coin', 'failure']) s.on(ev, (d) => print(ev, d));
s.on(o.address, (d) => print('address', d));
`;

/**
 * bitcore-node v8's live feed on `addrindex serve` (socket.io, websocket transport), with
 * socket.io-client 2 as bitcore's own clients: a block mined on btcd arrives as 'block' in the
 * inv room; a payment sent to btcd as 'tx' and 'coin' (inv), as the address's event (address
 * room) and as {pubKey, tx|coin} in the wallet's room, joined with a payload its key signed;
 * a bad signature is refused. Every figure from btcd and bitcore-lib.
 */
describe('bitcore v8 live feed (socket.io) on addrindex serve, btcd regtest', function () {
  this.timeout(180000);
  const btcd = useBtcd([{ miningAddress: minerA }]);
  let node;
  let follow;
  let serve;
  let url;
  let client;
  const walletKey = new bitcore.PrivateKey(bitcore.crypto.Hash.sha256(Buffer.from('feed wallet')).toString('hex'), 'regtest');
  const pubKey = walletKey.toPublicKey().toString();
  const paid = keys.p2pkh('feed-paid');

  before(async () => {
    node = btcd.nodes[0];
    await node.generate(101);
    ({ follow, serve, url } = await followAndServe(node.url, tempDir('bitcore8-feed-idx')));
  });
  after(async () => {
    if (client && client.exitCode === null) client.kill('SIGTERM');
    for (const child of [serve, follow]) if (child && child.exitCode === null) child.kill('SIGTERM');
    for (const child of [serve, follow]) if (child) await child.done;
  });

  /** The next event the client printed that `pred` accepts. */
  const next = (pred) => new Promise((resolve, reject) => {
    let seen = 0;
    const look = () => {
      for (; seen < client.lines.length; seen++) {
        const e = JSON.parse(client.lines[seen]);
        if (pred(e)) {
          client.off('lines', look);
          client.off('exit', gone);
          resolve(e);
          return;
        }
      }
    };
    const gone = () => reject(new Error(`the feed client exited: ${client.stderrText}`));
    client.on('lines', look);
    client.on('exit', gone);
    look();
  });

  it('blocks, mempool transactions and coins reach the inv, address and wallet rooms', async () => {
    const made = await request(`${url}/api/BTC/regtest/wallet`, { method: 'POST', body: { name: 'feed', pubKey } });
    assert.equal(made.status, 200, made.text);
    const lines = [{ address: paid }];
    const importUrl = `/api/BTC/regtest/wallet/${pubKey}`;
    const sign = (message) => {
      const sig = bitcore.crypto.ECDSA.sign(bitcore.crypto.Hash.sha256sha256(Buffer.from(message)), walletKey, 'big');
      return Buffer.concat([sig.r.toBuffer({ size: 32 }), sig.s.toBuffer({ size: 32 })]).toString('hex');
    };
    const imported = await request(url + importUrl, {
      method: 'POST', body: JSON.stringify(lines), headers: { 'content-type': 'application/octet-stream', 'x-signature': sign(`POST|${importUrl}|${JSON.stringify(lines)}`) },
    });
    assert.equal(imported.status, 200, imported.text);

    client = await spawnInHostWith({ url, pubKey, message: 'join', signature: sign('join'), address: paid });
    await next((e) => e.event === 'connect');
    assert.deepEqual((await next((e) => e.event === 'failure')).data, { message: 'Authentication failed' });

    // a block: the feed announces blocks mined after its first look at the tip, which it takes
    // when the socket connects; so blocks are mined until one is announced (the first, normally)
    const block = next((e) => e.event === 'block');
    let announced = false;
    block.then(() => { announced = true; });
    for (let i = 0; i < 20 && !announced; i++) {
      await node.generate(1);
      await Promise.race([block, new Promise((res) => { setTimeout(res, 2000); })]);
    }
    const b = (await block).data;
    const hash = await node.call('getblockhash', b.height);
    const header = await node.call('getblockheader', hash, true);
    assert.deepEqual([b.hash, b.height, b.previousBlockHash, b.transactionCount], [hash, header.height, header.previousblockhash, 1]);

    // a payment to the wallet's address
    const cb = keys.coinbaseCoin(Buffer.from(await node.call('getblock', await node.call('getblockhash', 1), 0), 'hex'), 'miner-a');
    const tx = new bitcore.Transaction().from({ txId: cb.txId, outputIndex: cb.outputIndex, satoshis: cb.satoshis, script: cb.script })
      .to(paid, 7e7).change(minerA).fee(3000).sign(keys.key('miner-a'));
    const events = Promise.all([
      next((e) => e.event === 'tx' && e.data.txid === tx.hash),
      next((e) => e.event === 'address' && e.data.mintTxid === tx.hash),
      next((e) => e.event === 'tx' && e.data.pubKey === pubKey),
      next((e) => e.event === 'coin' && e.data.pubKey === pubKey),
      next((e) => e.event === 'coin' && e.data.mintTxid === tx.hash && e.data.mintIndex === 1),
    ]);
    await node.sendTx(tx.serialize());
    const [txEvent, addressEvent, walletTx, walletCoin, changeCoin] = await events;
    assert.deepEqual([txEvent.data.blockHeight, txEvent.data.fee, txEvent.data.value, txEvent.data.size, txEvent.data.inputCount, txEvent.data.outputCount],
      [-1, 3000, tx.outputAmount, tx.toBuffer().length, 1, 2]);
    assert.deepEqual([addressEvent.data.address, addressEvent.data.value, addressEvent.data.mintIndex, addressEvent.data.mintHeight, addressEvent.data.spentHeight],
      [paid, 7e7, 0, -1, -2]);
    assert.equal(addressEvent.data.script, tx.outputs[0].script.toHex());
    assert.equal(walletTx.data.tx.txid, tx.hash);
    assert.deepEqual([walletCoin.data.coin.mintTxid, walletCoin.data.coin.mintIndex, walletCoin.data.coin.value], [tx.hash, 0, 7e7]);
    assert.equal(changeCoin.data.address, minerA);
    assert.ok(!client.lines.some((l) => { const e = JSON.parse(l); return e.event === 'coin' && e.data.pubKey && e.data.coin.mintIndex === 1; }),
      'the change is not the wallet\'s');
  });

  /** The feed client with its options. */
  async function spawnInHostWith(opts) {
    process.env.FEED = JSON.stringify(opts);
    try {
      return await spawnInHost(CLIENT);
    } finally {
      delete process.env.FEED;
    }
  }
});
