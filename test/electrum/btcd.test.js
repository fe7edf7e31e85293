'use strict';

const assert = require('node:assert/strict');
const path = require('node:path');
const { useBtcd } = require('../helpers/btcd');
const { nodeWallet, buildScriptChain } = require('../helpers/node-chain');
const { referenceIndex } = require('../helpers/reference');
const { runCli } = require('../helpers/cli');
const { tempDir } = require('../helpers/tmp');
const { waitFor } = require('../helpers/chains');
const { startElectrum, connectClient, scripthashOf, toElectrum, expectedStatus } = require('./helpers');

const { wallet, minerA } = nodeWallet();
const nullable = (v) => (v && typeof v === 'object' && 'result' in v ? v.result : v);

/**
 * The script view over a real node's chain: btcd mines a chain that pays one key ('a') as P2PK
 * and as P2PKH in one transaction and spends both in another (test/helpers/node-chain.js),
 * signed for real; addrindex syncs it over JSON-RPC and @mempool/electrum-client asks.
 */
describe('electrum: a btcd regtest chain paying one key as P2PK and as P2PKH', function () {
  this.timeout(180000);
  const btcd = useBtcd([{ miningAddress: minerA }]);
  let node;
  let chain;
  let datadir;
  let srv;
  let client;

  const sync = async () => {
    const r = await runCli(['sync', '--rpc-url', node.url, '--network', 'regtest', '--datadir', datadir, '--threads', '0', '--quiet']);
    assert.equal(r.code, 0, r.stderr);
  };
  const scriptOf = (kind, label) => wallet.output(kind, label).script.toBuffer();

  before(async function () {
    this.timeout(180000);
    [node] = btcd.nodes;
    chain = await buildScriptChain(node, wallet, 'miner-a');
    datadir = path.join(tempDir('electrum-btcd'), 'index');
    await sync();
    srv = await startElectrum(datadir, { network: 'regtest', limits: { pollMs: 50 } });
    client = await connectClient(srv.port);
  });
  after(async () => {
    if (client) client.close();
    if (srv) await srv.close();
  });

  it('every output script answers as the bitcore reference of the script view; the key\'s two scripts apart, the address view both', async () => {
    const raws = await node.rawBlocks(0);
    const sref = referenceIndex(raws, undefined, { view: 'script' });
    const aref = referenceIndex(raws);
    for (const [sh, summary] of sref.summaries) {
      const e = toElectrum(sh);
      const hist = sref.history.get(sh).map((x) => ({ tx_hash: x.txid, height: x.height }));
      assert.deepEqual(await client.blockchainScripthash_getBalance(e), { confirmed: summary.balance, unconfirmed: 0 }, sh);
      assert.deepEqual(await client.blockchainScripthash_getHistory(e), hist, sh);
      assert.deepEqual(await client.blockchainScripthash_listunspent(e),
        (sref.utxos.get(sh) || []).map((u) => ({ tx_hash: u.txid, tx_pos: u.vout, height: u.height, value: u.value })), sh);
      assert.equal(nullable(await client.request('blockchain.scripthash.get_history', [e])).length, hist.length);
    }
    // key 'a': `fund` pays its P2PK and P2PKH scripts 1 BTC each, `spendAll` spends both and
    // pays its P2PKH script again
    const p2pk = scripthashOf(scriptOf('p2pk', 'a'));
    const p2pkh = scripthashOf(scriptOf('p2pkh', 'a'));
    const both = [chain.txs.fund, chain.txs.spendAll];
    assert.deepEqual((await client.blockchainScripthash_getHistory(p2pk)).map((x) => x.tx_hash), both);
    assert.deepEqual((await client.blockchainScripthash_getHistory(p2pkh)).map((x) => x.tx_hash), both);
    assert.deepEqual(await client.blockchainScripthash_getBalance(p2pk), { confirmed: 0, unconfirmed: 0 });
    assert.deepEqual(await client.blockchainScripthash_getBalance(p2pkh), { confirmed: chain.amounts.spendAllToA, unconfirmed: 0 });
    for (const [e, kind] of [[p2pk, 'p2pk'], [p2pkh, 'p2pkh']]) {
      const sh = toElectrum(e);
      assert.equal(nullable(await client.blockchainScripthash_subscribe(e)), expectedStatus(sref.history.get(sh)), kind);
    }
    // the REST rule: the address (P2PKH) account counts both scripts' outputs
    const a = await srv.store.getSummary(Buffer.from(toElectrum(p2pkh), 'hex'));
    assert.deepEqual(a, aref.summaries.get(toElectrum(p2pkh)));
    assert.equal(a.received, 2e8 + chain.amounts.spendAllToA);
    assert.equal((await srv.store.getSummary(Buffer.from(toElectrum(p2pkh), 'hex'), { view: 'script' })).received, 1e8 + chain.amounts.spendAllToA);
  });

  it('a P2PK payment mined: its own script hash is notified with its new status, its key\'s P2PKH script hash stays quiet', async () => {
    const own = scripthashOf(scriptOf('p2pk', 'n'));
    const keyHash = scripthashOf(scriptOf('p2pkh', 'n'));
    const statuses = new Map();
    client.subscribe.on('blockchain.scripthash.subscribe', ([sh, status]) => statuses.set(sh, [...(statuses.get(sh) || []), status]));
    assert.equal(nullable(await client.blockchainScripthash_subscribe(own)), null);
    assert.equal(nullable(await client.blockchainScripthash_subscribe(keyHash)), null);
    const coin = chain.coins.find((c) => c.label === 'b');
    const pay = wallet.pay([coin], [{ kind: 'p2pk', label: 'n', satoshis: 1000000 }, { kind: 'p2wpkh', label: 'change' }]);
    await node.sendTx(pay.hex);
    const [hash] = await node.generate(1);
    const height = (await node.tip()).height;
    await sync();
    const want = expectedStatus([{ txid: pay.txid, height }]);
    await waitFor(() => (statuses.get(own) || []).includes(want), 30000, 'the P2PK script hash\'s notification');
    await client.server_ping();
    assert.deepEqual(statuses.get(own), [want]);
    assert.equal(statuses.get(keyHash), undefined, 'the P2PKH script hash of the same key is not notified');
    assert.deepEqual(await client.blockchainScripthash_getHistory(keyHash), []);
    assert.deepEqual(await client.blockchainScripthash_listunspent(own), [{ tx_hash: pay.txid, tx_pos: 0, height, value: 1000000 }]);
    assert.equal(typeof hash, 'string');
  });
});
