'use strict';

const assert = require('node:assert/strict');
const path = require('node:path');
const bitcore = require('bitcore-lib');
const { useBtcd } = require('../helpers/btcd');
const { nodeWallet } = require('../helpers/node-chain');
const { startCli } = require('../helpers/cli');
const { tipOf, waitFor } = require('../helpers/chains');
const { tempDir } = require('../helpers/tmp');
const { startBitcore } = require('../helpers/bitcore-host');
const { startServer, request } = require('../api/helpers');
const { assertSameTx } = require('./insight-compare');
const { openServeNode } = require('../../lib/node/serve-node');

const { wallet, minerA } = nodeWallet();

/**
 * insight-api 0.4.3 unchanged on addrindex's bitcoind service, live: btcd regtest as the node
 * (`rpcUrl`), `addrindex sync --follow` keeping the index and its mempool snapshot beside it
 * (the mempool follower), transactions sent through insight's /tx/send. Each answer is
 * checked against bitcore-lib's reading of what was sent and against addrindex's own insight
 * routes over the same index: the mempool's at once after a send (the service answers the
 * send once the index shows it), a mempool child spending its mempool parent, then the block
 * that confirms both.
 */
describe('insight-api on addrindex\'s bitcoind service with btcd and the mempool follower', function () {
  this.timeout(180000);
  let node;
  let follower;
  let bc;
  let own;
  let datadir;
  let coin;
  let serveNode;
  let fund;
  let child;
  /** "txid:vout" → script, of every output this test makes or spends */
  const scripts = new Map();
  const since = Math.floor(Date.now() / 1000);
  const insight = (p, opts) => request(`${bc.url}/insight-api${p}`, opts);
  const mine = (p) => request(`${own.url}/insight-api${p}`);
  const addr = (label) => wallet.output('p2pkh', label).address;
  const scriptOf = (txid, vout) => scripts.get(`${txid}:${vout}`);
  const remember = (pay) => pay.tx.outputs.forEach((o, n) => scripts.set(`${pay.txid}:${n}`, o.script.toBuffer()));

  // (before useBtcd's hooks: the service and the follower stop before the node does)
  after(async () => {
    if (bc) await bc.stop();
    if (own) await own.close();
    if (serveNode) serveNode.close();
    if (follower) {
      follower.kill('SIGTERM');
      await follower.done;
    }
  });
  const btcd = useBtcd([{ miningAddress: minerA }]);

  before(async function () {
    this.timeout(180000);
    [node] = btcd.nodes;
    await node.generate(101);
    const [raw1] = await node.rawBlocks(1, 1);
    coin = wallet.coinbaseCoin(raw1, 'miner-a');
    scripts.set(`${coin.txId}:${coin.outputIndex}`, coin.script.toBuffer());
    datadir = path.join(tempDir('bitcore-live'), 'index');
    serveNode = openServeNode({ node: { rpcUrl: node.url }, network: 'regtest', env: {} });
    follower = startCli(['sync', '--follow', '--rpc-url', node.url, '--datadir', datadir, '--network', 'regtest',
      '--poll-ms', '50', '--mempool-poll-ms', '50', '--threads', '0', '--quiet']);
    await waitFor(async () => { const t = await tipOf(datadir); return t && t.height === 101; }, 60000, 'the index at 101');
    [bc, own] = await Promise.all([
      startBitcore({ network: 'regtest', bitcoind: { datadir, rpcUrl: node.url, tipPollMs: 50 } }),
      // addrindex's own routes read this index's blocks from the node too (no --txstore, no blocks dir)
      startServer(datadir, { network: 'regtest', node: serveNode, fetchFromNode: (hash) => serveNode.block(hash) }),
    ]);
  });

  /** The service's answers for an address beside addrindex's own, and its page of transactions. */
  async function sameAddress(a) {
    const [r, ours] = await Promise.all([insight(`/addr/${a}`), mine(`/addr/${a}`)]);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json, ours.json, a);
    const key = (x) => `${x.txid}:${x.vout}`;
    const [u, uOurs] = await Promise.all([insight(`/addr/${a}/utxo`), mine(`/addr/${a}/utxo`)]);
    assert.deepEqual(new Map(u.json.map((x) => [key(x), x])), new Map(uOurs.json.map((x) => [key(x), x])), a);
    return { summary: r.json, utxos: u.json };
  }

  it('/tx/send: answered once the index\'s mempool shows the transaction; the address pages show it at once, as addrindex\'s own routes', async () => {
    fund = wallet.pay([coin], [
      { kind: 'p2pkh', label: 'live-a', satoshis: 1e8 },
      { kind: 'p2sh', label: 'live-a', satoshis: 2e8 },
      { kind: 'p2wpkh', label: 'live-a', satoshis: 3e8 },
      { kind: 'p2pk', label: 'live-a', satoshis: 4e8 },
      { kind: 'nulldata', label: 'live-a' },
      { kind: 'p2pkh', label: 'live-change' },
    ]);
    remember(fund);
    const sent = await insight('/tx/send', { method: 'POST', body: { rawtx: fund.hex } });
    assert.equal(sent.status, 200, sent.text);
    assert.deepEqual(sent.json, { txid: fund.txid });
    const a = await sameAddress(addr('live-a'));
    // the P2PKH output and the P2PK one, which counts toward its key's P2PKH address
    assert.deepEqual([a.summary.unconfirmedBalanceSat, a.summary.unconfirmedTxApperances, a.summary.transactions], [5e8, 1, [fund.txid]]);
    assert.deepEqual(a.utxos.map((x) => [x.txid, x.vout, x.satoshis, x.confirmations]).sort(), [[fund.txid, 0, 1e8, 0], [fund.txid, 3, 4e8, 0]]);
    const p2sh = await sameAddress(wallet.output('p2sh', 'live-a').address);
    assert.deepEqual([p2sh.summary.unconfirmedBalanceSat, p2sh.summary.transactions], [2e8, [fund.txid]]);
    const t = (await insight(`/tx/${fund.txid}`)).json;
    assertSameTx(t, (await mine(`/tx/${fund.txid}`)).json, { since, scriptOf });
    assert.deepEqual([t.blockheight, t.confirmations, t.size], [-1, 0, fund.tx.toBuffer(true).length]);
    assert.equal(Math.round(t.fees * 1e8), coin.satoshis - fund.tx.outputAmount);
    assert.deepEqual(t.vin.map((i) => [i.txid, i.vout, i.valueSat, i.addr]), [[coin.txId, coin.outputIndex, coin.satoshis, minerA]]);
    assert.deepEqual((await insight(`/rawtx/${fund.txid}`)).json, { rawtx: fund.tx.toBuffer(true).toString('hex') });
  });

  it('a child spending its mempool parent: unconfirmed balances net out, the parent\'s output spent at height -1, histories newest first', async () => {
    const spendable = fund.coins.filter((c) => c.label === 'live-a' && (c.kind === 'p2pkh' || c.kind === 'p2pk'));
    child = wallet.pay(spendable, [{ kind: 'p2pkh', label: 'live-b', satoshis: 4e8 }, { kind: 'p2wpkh', label: 'live-change2' }]);
    remember(child);
    const sent = await insight('/tx/send', { method: 'POST', body: { rawtx: child.hex } });
    assert.equal(sent.status, 200, sent.text);
    const a = await sameAddress(addr('live-a'));
    assert.deepEqual([a.summary.unconfirmedBalanceSat, a.summary.unconfirmedTxApperances, a.summary.transactions], [0, 2, [child.txid, fund.txid]]);
    assert.deepEqual(a.utxos, []);
    const b = await sameAddress(addr('live-b'));
    assert.deepEqual([b.summary.unconfirmedBalanceSat, b.summary.transactions], [4e8, [child.txid]]);
    const parent = (await insight(`/tx/${fund.txid}`)).json;
    assert.deepEqual(parent.vout.slice(0, 4).map((o) => [o.spentTxId, o.spentIndex, o.spentHeight]),
      [[child.txid, 0, -1], [null, null, null], [null, null, null], [child.txid, 1, -1]]);
    const c = (await insight(`/tx/${child.txid}`)).json;
    assertSameTx(c, (await mine(`/tx/${child.txid}`)).json, { since, scriptOf });
    assert.deepEqual(c.vin.map((i) => [i.txid, i.vout, i.valueSat, i.addr]), [[fund.txid, 0, 1e8, addr('live-a')], [fund.txid, 3, 4e8, addr('live-a')]]);
    const [page, ours] = await Promise.all([insight(`/txs?address=${addr('live-a')}`), mine(`/txs?address=${addr('live-a')}`)]);
    assert.deepEqual(page.json.txs.map((x) => x.txid), [child.txid, fund.txid]);
    page.json.txs.forEach((x, k) => assertSameTx(x, ours.json.txs[k], { since, scriptOf }));
  });

  it('the block that confirms them: confirmed answers, as addrindex\'s own routes; nothing unconfirmed left', async () => {
    const [hash] = await node.generate(1);
    const height = (await node.tip()).height;
    await waitFor(async () => (await insight('/sync')).json.blockChainHeight === height, 30000, 'the service at the new block');
    await waitFor(async () => (await mine(`/addr/${addr('live-a')}`)).json.unconfirmedTxApperances === 0, 30000, 'the snapshot of the new tip');
    const a = await sameAddress(addr('live-a'));
    assert.deepEqual([a.summary.unconfirmedBalanceSat, a.summary.unconfirmedTxApperances, a.summary.txApperances, a.summary.transactions],
      [0, 0, 2, [child.txid, fund.txid]]);
    for (const txid of [fund.txid, child.txid]) {
      const t = (await insight(`/tx/${txid}`)).json;
      assertSameTx(t, (await mine(`/tx/${txid}`)).json, { since, scriptOf });
      assert.deepEqual([t.blockhash, t.blockheight, t.confirmations], [hash, height, 1]);
    }
    assert.equal((await insight(`/tx/${fund.txid}`)).json.vout[0].spentHeight, height);
    const block = (await insight(`/block/${hash}`)).json;
    assert.deepEqual(block.tx.slice(1).sort(), [fund.txid, child.txid].sort());
    assert.equal(bitcore.Block.fromBuffer(Buffer.from((await insight(`/rawblock/${hash}`)).json.rawblock, 'hex')).hash, hash);
  });

  it('follow: true with a node: the service keeps its own index and mempool snapshot; /tx/send answers once its snapshot shows the transaction', async () => {
    const own2 = path.join(tempDir('bitcore-live-follow'), 'index');
    const bc2 = await startBitcore({ network: 'regtest', bitcoind: { datadir: own2, rpcUrl: node.url, follow: true, tipPollMs: 50, followPollMs: 50, mempoolPollMs: 50 } });
    try {
      const height = (await node.tip()).height;
      await waitFor(async () => (await request(`${bc2.url}/insight-api/sync`)).json.blockChainHeight === height, 60000, 'its own index at the node\'s tip');
      // (a P2PKH coin: btcd refuses witness spends below the segwit height)
      const [b] = child.coins.filter((c) => c.label === 'live-b');
      const pay = wallet.pay([b], [{ kind: 'p2pkh', label: 'live-c', satoshis: 1e7 }, { kind: 'p2wpkh', label: 'live-change3' }]);
      const sent = await request(`${bc2.url}/insight-api/tx/send`, { method: 'POST', body: { rawtx: pay.hex } });
      assert.equal(sent.status, 200, sent.text);
      const page = (await request(`${bc2.url}/insight-api/addr/${addr('live-c')}`)).json;
      assert.deepEqual([page.unconfirmedBalanceSat, page.unconfirmedTxApperances, page.transactions], [1e7, 1, [pay.txid]]);
      // the same snapshot as the separate follower's (both follow the one node)
      await waitFor(async () => (await mine(`/addr/${addr('live-c')}`)).json.unconfirmedTxApperances === 1, 30000, 'the other index\'s snapshot');
      assert.deepEqual((await request(`${bc2.url}/addrindex/insight-api/addr/${addr('live-c')}`)).json, (await mine(`/addr/${addr('live-c')}`)).json);
    } finally {
      const r = await bc2.stop();
      assert.equal(r.code, 0, bc2.cli.text());
    }
  });
});
