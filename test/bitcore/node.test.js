'use strict';

const assert = require('node:assert/strict');
const path = require('node:path');
const bitcore = require('bitcore-lib');
const { useBtcd } = require('../helpers/btcd');
const { nodeWallet } = require('../helpers/node-chain');
const { runCli } = require('../helpers/cli');
const { tempDir } = require('../helpers/tmp');
const { startBitcore } = require('../helpers/bitcore-host');
const { request } = require('../api/helpers');
const { openIndex } = require('../helpers/chains');
const { outputScripthash } = require('../helpers/reference');
const { encodeReplacement } = require('../../lib/codec/mempool');
const { fromDisplayHex } = require('../../lib/chain/hash');

const { wallet, minerA } = nodeWallet();

/**
 * The bitcoind service with a node behind it (`rpcUrl`, btcd regtest): insight-api 0.4.3's
 * broadcast, fee estimate, status and sync pages answer from the node, and the blocks of an
 * index synced over JSON-RPC (no blocks dir, no --txstore) are read from the node's getblock.
 */
describe('insight-api on addrindex\'s bitcoind service with a node (rpcUrl, btcd)', function () {
  this.timeout(180000);
  const btcd = useBtcd([{ miningAddress: minerA }]);
  let node;
  let bc;
  let raws;
  let payment;
  let datadir;

  before(async function () {
    this.timeout(180000);
    [node] = btcd.nodes;
    await node.generate(101);
    raws = await node.rawBlocks(0);
    payment = wallet.pay([wallet.coinbaseCoin(raws[1], 'miner-a')], [{ kind: 'p2pkh', label: 'to', satoshis: 1e8 }, { kind: 'p2wpkh', label: 'change' }]);
    datadir = path.join(tempDir('bitcore-node-index'), 'index');
    const r = await runCli(['sync', '--rpc-url', node.url, '--network', 'regtest', '--datadir', datadir, '--threads', '0']);
    assert.equal(r.code, 0, r.stderr);
    // sendTransaction waits for the index's mempool as long as a test may need (without a snapshot it does not)
    bc = await startBitcore({ network: 'regtest', bitcoind: { datadir, rpcUrl: node.url, tipPollMs: 50, broadcastWaitMs: 60000 } });
  });
  after(async () => {
    if (bc) await bc.stop();
  });
  const insight = (p, opts) => request(`${bc.url}/insight-api${p}`, opts);

  it('reads the blocks of an index synced over JSON-RPC from the node: transactions and blocks as bitcore-lib decodes them', async () => {
    assert.match(bc.cli.text(), /blocks from the node/);
    for (const h of [1, 50, 101]) {
      const block = bitcore.Block.fromBuffer(raws[h]);
      const b = (await insight(`/block/${block.hash}`)).json;
      assert.deepEqual([b.height, b.tx], [h, block.transactions.map((t) => t.hash)]);
      const cb = block.transactions[0];
      const tx = await insight(`/tx/${cb.hash}`);
      assert.equal(tx.status, 200, tx.text);
      assert.equal(tx.json.vout[0].value, (cb.outputs[0].satoshis / 1e8).toFixed(8));
      assert.equal((await insight(`/rawblock/${block.hash}`)).json.rawblock, raws[h].toString('hex'));
    }
  });

  it('POST /tx/send broadcasts through the node; the node\'s refusal is insight\'s 400 with the node\'s code', async () => {
    const sent = await insight('/tx/send', { method: 'POST', body: { rawtx: payment.hex } });
    assert.equal(sent.status, 200, sent.text);
    assert.deepEqual(sent.json, { txid: payment.txid });
    assert.ok((await node.call('getrawmempool')).includes(payment.txid));
    const again = await insight('/tx/send', { method: 'POST', body: { rawtx: payment.hex } });
    assert.equal(again.status, 400, again.text);
    assert.match(again.text, /already have transaction.*Code:-\d+/i);
    const junk = await insight('/tx/send', { method: 'POST', body: { rawtx: 'zz' } });
    assert.equal(junk.status, 400, junk.text);
    assert.match(junk.text, /Code:-\d+/);
  });

  it('fee estimates and the relay fee are the node\'s; sync compares the index with the node\'s tip', async () => {
    // btcd answers 0 while it has no fee data; the service says so as Core does, -1
    const nodeSays = async (n) => { const r = await node.call('estimatefee', n); return r > 0 ? r : -1; };
    const est = (await insight('/utils/estimatefee?nbBlocks=2,6')).json;
    assert.deepEqual(est, { 2: await nodeSays(2), 6: await nodeSays(6) });
    const info = (await insight('/status?q=getInfo')).json.info;
    assert.equal(info.relayfee, (await node.call('getinfo')).relayfee);
    assert.equal((await insight('/sync')).json.syncPercentage, 100);
    await node.generate(5); // the index is not told: it stays at 101 of 106
    await new Promise((resolve) => setTimeout(resolve, 1100)); // past the service's one-second memory of the node's tip
    const sync = (await insight('/sync')).json;
    assert.equal(sync.status, 'syncing');
    assert.equal(sync.syncPercentage, Math.round((100 * 101) / 106)); // insight rounds it
  });

  it('with a mempool snapshot in the index, /tx/send answers once the snapshot shows the transaction: the address page has it at once', async () => {
    const store = await openIndex(datadir);
    try {
      const tip = await store.getTip();
      const snap = (seq, txs) => encodeReplacement({ seq, tip: fromDisplayHex(tip.hash), txs });
      assert.equal(await store.putMempool(snap(1, [])), true);
      const coin = wallet.coinbaseCoin(raws[2], 'miner-a');
      const pay = wallet.pay([coin], [{ kind: 'p2pkh', label: 'late', satoshis: 2e8 }, { kind: 'p2pkh', label: 'late-change' }]);
      const to = wallet.output('p2pkh', 'late').address;
      let written = false;
      const sent = insight('/tx/send', { method: 'POST', body: { rawtx: pay.hex } }).then((r) => ({ r, written }));
      const deadline = Date.now() + 30000;
      while (!(await node.call('getrawmempool')).includes(pay.txid)) {
        assert.ok(Date.now() < deadline, 'btcd took the transaction');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // what the follower would write: the transaction resolved against the index's tip
      const fee = coin.satoshis - pay.tx.outputAmount;
      written = true;
      assert.equal(await store.putMempool(snap(2, [{
        txid: fromDisplayHex(pay.txid), time: Math.floor(Date.now() / 1000), fee, vsize: pay.tx.toBuffer().length, raw: pay.tx.toBuffer(),
        inputs: [{ txid: fromDisplayHex(coin.txId), vout: coin.outputIndex, value: coin.satoshis, scripthash: Buffer.from(outputScripthash(coin.script), 'hex'), unconfirmed: false }],
        outputs: pay.tx.outputs.map((o) => ({ value: o.satoshis, scripthash: Buffer.from(outputScripthash(o.script), 'hex') })),
      }])), true);
      const { r, written: after } = await sent;
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json, { txid: pay.txid });
      assert.equal(after, true, 'the answer came after the snapshot showed the transaction');
      const page = (await insight(`/addr/${to}`)).json;
      assert.deepEqual([page.unconfirmedBalanceSat, page.unconfirmedTxApperances, page.transactions], [2e8, 1, [pay.txid]]);
    } finally {
      await store.close();
    }
  });
});
