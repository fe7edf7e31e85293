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

  before(async function () {
    this.timeout(180000);
    [node] = btcd.nodes;
    await node.generate(101);
    raws = await node.rawBlocks(0);
    payment = wallet.pay([wallet.coinbaseCoin(raws[1], 'miner-a')], [{ kind: 'p2pkh', label: 'to', satoshis: 1e8 }, { kind: 'p2wpkh', label: 'change' }]);
    const datadir = path.join(tempDir('bitcore-node-index'), 'index');
    const r = await runCli(['sync', '--rpc-url', node.url, '--network', 'regtest', '--datadir', datadir, '--threads', '0']);
    assert.equal(r.code, 0, r.stderr);
    bc = await startBitcore({ network: 'regtest', bitcoind: { datadir, rpcUrl: node.url, tipPollMs: 50 } });
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
});
