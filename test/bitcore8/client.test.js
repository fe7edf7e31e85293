'use strict';

const assert = require('node:assert/strict');
const bitcore = require('bitcore-lib');
const { useBtcd } = require('../helpers/btcd');
const { nodeWallet } = require('../helpers/node-chain');
const { followAndServe } = require('../helpers/cli');
const { tempDir } = require('../helpers/tmp');
const { waitFor } = require('../helpers/chains');
const { runWalletCommand, bitcoreClientHost } = require('../helpers/bitcore-client');
const { request } = require('../api/helpers');

const { wallet: keys, minerA } = nodeWallet();
const PASSWORD = 'correct horse battery staple\n';

/**
 * bitcore-client 8.25.47, unchanged (installed from npm into its own host dir, run as child
 * processes), pointed with --baseUrl at `addrindex serve` over an index that `sync --follow`
 * keeps of a btcd regtest chain: a wallet created and registered, addresses derived and
 * imported, funded by btcd, its balance, coins and transactions listed, a payment built,
 * signed and broadcast by the client, seen unconfirmed then confirmed. Every figure is checked
 * against btcd: `gettxout` for the coins no block spent, `getrawmempool` and the mempool's
 * transactions for the unconfirmed ones (bitcore's balance: coins no block spent, a mempool
 * spend not subtracted, mempool coins as `unconfirmed`).
 */
describe('bitcore-client 8.25.47 on addrindex serve (/api/BTC/regtest, btcd regtest)', function () {
  this.timeout(300000);
  const btcd = useBtcd([{ miningAddress: minerA }]);
  let node;
  let follow;
  let serve;
  let url;
  const walletDir = tempDir('bitcore-client-wallet');
  const run = (command, args, stdin) => runWalletCommand(command, [...args, '--name', 'w', '--path', walletDir], { stdin });
  /** every transaction whose outputs may be the wallet's: txid -> bitcore.Transaction */
  const known = new Map();
  let addresses = [];

  before(async () => {
    await bitcoreClientHost();
    node = btcd.nodes[0];
    await node.generate(101);
    ({ follow, serve, url } = await followAndServe(node.url, tempDir('bitcore8-client-idx')));
  });
  after(async () => {
    for (const child of [serve, follow]) if (child && child.exitCode === null) child.kill('SIGTERM');
    for (const child of [serve, follow]) if (child) await child.done;
  });

  /** bitcore's balance of the wallet, from btcd. */
  const truth = async () => {
    const mempool = new Set(await node.call('getrawmempool'));
    let confirmed = 0;
    let unconfirmed = 0;
    for (const [txid, tx] of known) {
      for (let vout = 0; vout < tx.outputs.length; vout++) {
        const a = tx.outputs[vout].script.toAddress('regtest');
        if (!a || !addresses.includes(a.toString())) continue;
        if (mempool.has(txid)) unconfirmed += tx.outputs[vout].satoshis;
        else if (await node.call('gettxout', txid, vout, false)) confirmed += tx.outputs[vout].satoshis;
      }
    }
    return { confirmed, unconfirmed, balance: confirmed + unconfirmed };
  };
  const balance = async () => {
    const r = await run('wallet-balance', []);
    const m = /confirmed: (\d+),\s+unconfirmed: (\d+),\s+balance: (\d+)/.exec(r.stdout);
    assert.ok(m, `wallet-balance printed ${r.stdout} ${r.stderr}`);
    return { confirmed: Number(m[1]), unconfirmed: Number(m[2]), balance: Number(m[3]) };
  };
  const utxos = async () => {
    const r = await run('wallet-utxos', []);
    assert.equal(r.code, 0, r.stderr);
    // the client prints a line of its own before the server's list
    return JSON.parse(r.stdout.slice(r.stdout.indexOf('[')));
  };
  const txList = async () => {
    const r = await run('wallet-transaction-list', []);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
  };
  const indexed = async (pred) => waitFor(async () => pred(await balance()), 30000);

  it('wallet-create registers the wallet; wallet-derive derives addresses and imports them', async () => {
    const made = await run('wallet-create', ['--chain', 'BTC', '--network', 'regtest', '--baseUrl', `${url}/api`], PASSWORD);
    assert.match(made.stdout, /Wallet created!/, made.stderr);
    assert.doesNotMatch(made.stdout + made.stderr, /Failed to register/);
    const derived = await run('wallet-derive', ['--gap', '3'], PASSWORD);
    addresses = [...derived.stdout.matchAll(/index: \d+: (\S+)/g)].map((m) => m[1]);
    assert.equal(addresses.length, 3, derived.stdout + derived.stderr);
    const check = await run('wallet-check', []);
    assert.equal(check.code, 0, check.stderr);
    assert.deepEqual(await balance(), { confirmed: 0, unconfirmed: 0, balance: 0 });
  });

  it('a payment from btcd: unconfirmed, then confirmed; balance, coins and transactions as btcd says', async () => {
    const hash = await node.call('getblockhash', 1);
    const raw = Buffer.from(await node.call('getblock', hash, 0), 'hex');
    const cb = keys.coinbaseCoin(raw, 'miner-a');
    const tx = new bitcore.Transaction()
      .from({ txId: cb.txId, outputIndex: cb.outputIndex, satoshis: cb.satoshis, script: cb.script })
      .to(addresses[0], 2e8).to(addresses[1], 1e8).change(minerA).fee(2000).sign(keys.key('miner-a'));
    known.set(tx.hash, tx);
    await node.sendTx(tx.serialize());
    await indexed((b) => b.unconfirmed === 3e8);
    assert.deepEqual(await balance(), await truth());
    let coins = await utxos();
    assert.deepEqual(coins.map((c) => [c.mintTxid, c.mintIndex, c.value, c.mintHeight, c.spentHeight, c.confirmations]).sort(),
      [[tx.hash, 0, 2e8, -1, -2, 0], [tx.hash, 1, 1e8, -1, -2, 0]].sort());
    await node.generate(1);
    await indexed((b) => b.confirmed === 3e8);
    assert.deepEqual(await balance(), await truth());
    const tip = await node.tip();
    coins = await utxos();
    assert.deepEqual(coins.map((c) => [c.mintTxid, c.mintIndex, c.value, c.mintHeight, c.spentHeight, c.confirmations, c.address]).sort(),
      [[tx.hash, 0, 2e8, tip.height, -2, 1, addresses[0]], [tx.hash, 1, 1e8, tip.height, -2, 1, addresses[1]]].sort());
    const lines = await txList();
    assert.deepEqual(lines.map((l) => [l.txid, l.category, l.satoshis, l.height, l.address]).sort(),
      [[tx.hash, 'receive', 2e8, tip.height, addresses[0]], [tx.hash, 'receive', 1e8, tip.height, addresses[1]]].sort());
    assert.equal(lines[0].fee, 2000);
  });

  it('wallet-tx + wallet-sign + wallet-broadcast: a payment out, unconfirmed then confirmed', async () => {
    const coins = await utxos();
    const outside = new bitcore.PrivateKey(bitcore.crypto.Hash.sha256(Buffer.from('outside')).toString('hex'), 'regtest').toAddress('regtest').toString();
    const built = await run('wallet-tx', ['--recipients', JSON.stringify([{ address: outside, amount: 5e7 }]), '--utxos', JSON.stringify([coins[0]]),
      '--change', addresses[2], '--fee', '1000', '--nonce', '0']);
    const rawTx = JSON.parse(built.stdout.trim().split('\n').pop()).rawTx;
    assert.ok(rawTx, built.stdout + built.stderr);
    const signed = await run('wallet-sign', ['--tx', rawTx], PASSWORD);
    const signedHex = JSON.parse(signed.stdout.trim().split('\n').pop());
    assert.match(signedHex, /^[0-9a-f]+$/, signed.stdout + signed.stderr);
    const sent = await run('wallet-broadcast', ['--tx', signedHex]);
    const txid = JSON.parse(sent.stdout.trim().split('\n').pop()).txid;
    const payment = new bitcore.Transaction(signedHex);
    assert.equal(txid, payment.hash, sent.stdout + sent.stderr);
    known.set(txid, payment);
    assert.ok((await node.call('getrawmempool')).includes(txid), 'btcd took the payment');
    await indexed((b) => b.unconfirmed > 0);
    assert.deepEqual(await balance(), await truth());
    const pending = await txList();
    const sends = pending.filter((l) => l.txid === txid);
    assert.deepEqual(sends.map((l) => [l.category, l.satoshis, l.height]).sort(), [['fee', -1000, -1], ['move', -(coins[0].value - 5e7 - 1000), -1], ['send', -5e7, -1]].sort());
    await node.generate(1);
    await indexed((b) => b.unconfirmed === 0);
    assert.deepEqual(await balance(), await truth());
    const tip = await node.tip();
    const left = await utxos();
    assert.equal(left.reduce((n, c) => n + c.value, 0), (await truth()).confirmed);
    assert.ok(left.every((c) => c.spentHeight === -2 && c.confirmations === tip.height - c.mintHeight + 1));
    assert.ok((await txList()).filter((l) => l.txid === txid).every((l) => l.height === tip.height));
  });

  it('a request with a bad or missing signature is refused (401) and names no data', async () => {
    const pub = new bitcore.PrivateKey().toPublicKey().toString();
    const made = await request(`${url}/api/BTC/regtest/wallet`, { method: 'POST', body: JSON.stringify({ name: 'x', pubKey: pub }), headers: { 'content-type': 'application/json' } });
    assert.equal(made.status, 200, made.text);
    for (const headers of [{}, { 'x-signature': '00'.repeat(64) }]) {
      const r = await request(`${url}/api/BTC/regtest/wallet/${pub}/balance`, { headers });
      assert.equal(r.status, 401);
      assert.deepEqual(Object.keys(r.json), ['error']);
    }
  });
});
