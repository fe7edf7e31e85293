'use strict';

const assert = require('node:assert/strict');
const path = require('node:path');
const bitcore = require('bitcore-lib');
const { useBtcd } = require('../helpers/btcd');
const { nodeWallet, buildScriptChain } = require('../helpers/node-chain');
const { referenceIndex } = require('../helpers/reference');
const { followAndServe } = require('../helpers/cli');
const { tempDir } = require('../helpers/tmp');
const { waitFor } = require('../helpers/chains');
const { request } = require('../api/helpers');
const { openStore } = require('../../lib/stores');
const { connectClient, scripthashOf, toElectrum, expectedStatus, rootOf, plainMerkleRoot } = require('./helpers');

const { wallet, minerA } = nodeWallet();
const nullable = (v) => (v && typeof v === 'object' && 'result' in v ? v.result : v);
const scriptOf = (kind, label) => wallet.output(kind, label).script.toBuffer();

/**
 * Electrum over a real node, as it is deployed: btcd mines a chain that pays one key ('a') as
 * P2PK and as P2PKH in one transaction and spends both in another (test/helpers/node-chain.js),
 * signed for real; `addrindex sync --follow` keeps the index and the mempool snapshot at the
 * node's state, and `addrindex serve --electrum-port` with the node (its URL in
 * $ADDRINDEX_RPC_URL) answers @mempool/electrum-client: every answer against bitcore-lib's
 * reference of the script view, merkle proofs and headers against btcd's own blocks, and
 * payments broadcast through the server, accepted by btcd, then mined, pushed to the script
 * hashes they touch (the follower's snapshot, then the block).
 */
describe('electrum: a btcd regtest chain followed by sync --follow, served with the node', function () {
  this.timeout(180000);
  const btcd = useBtcd([{ miningAddress: minerA }]);
  let node;
  let chain;
  let follow;
  let serve;
  let url;
  let ro; // the index, read-only: the address view beside Electrum's
  let client;
  /** display hex → every status pushed to the client, in order */
  const pushed = new Map();

  before(async function () {
    this.timeout(180000);
    [node] = btcd.nodes;
    chain = await buildScriptChain(node, wallet, 'miner-a');
    const datadir = path.join(tempDir('electrum-btcd'), 'index');
    let electrumPort;
    ({ follow, serve, url, electrumPort } = await followAndServe(node.url, datadir));
    client = await connectClient(electrumPort);
    client.subscribe.on('blockchain.scripthash.subscribe', ([sh, status]) => pushed.set(sh, [...(pushed.get(sh) || []), status]));
    ro = await openStore({ store: 'lmdb', datadir, network: 'regtest', readOnly: true });
  });
  after(async () => {
    if (client) client.close();
    for (const child of [serve, follow]) {
      if (child && child.exitCode === null) {
        child.kill('SIGTERM');
        const res = await child.done;
        assert.equal(res.code, 0, child.text());
      }
    }
    if (ro) await ro.close();
  });

  /** The index has reached the node's tip, and its snapshot is of that tip. */
  async function caughtUp() {
    const tip = await node.tip();
    await waitFor(async () => {
      const [mine, head] = [await ro.getTip(), await ro.getMempoolHead()];
      return mine.hash === tip.hash && head && head.tip === tip.hash;
    }, 60000, `the index and its snapshot at ${tip.height}`);
    return tip;
  }

  /** Waits until `want` is the last status pushed for a script hash, then a ping (what came before it has arrived). */
  async function pushedStatus(sh, want, what) {
    await waitFor(() => (pushed.get(sh) || []).at(-1) === want, 30000, what);
    await client.server_ping();
  }

  it('every output script answers as the bitcore reference of the script view; the key\'s two scripts apart, the address view both', async () => {
    await caughtUp();
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
    const a = await ro.getSummary(Buffer.from(toElectrum(p2pkh), 'hex'));
    assert.deepEqual(a, aref.summaries.get(toElectrum(p2pkh)));
    assert.equal(a.received, 2e8 + chain.amounts.spendAllToA);
    assert.equal((await ro.getSummary(Buffer.from(toElectrum(p2pkh), 'hex'), { view: 'script' })).received, 1e8 + chain.amounts.spendAllToA);
  });

  it('merkle proofs and headers against btcd\'s blocks: every transaction\'s branch leads to getblock\'s merkle root, headers to a checkpoint root of getblockhash\'s hashes', async () => {
    const tip = await caughtUp();
    const hashes = [];
    for (let h = 0; h <= tip.height; h++) hashes.push(await node.call('getblockhash', h));
    let checked = 0;
    let odd = 0; // blocks of 3+ transactions (an odd count: the last hash paired with itself)
    for (let h = 0; h <= tip.height; h++) {
      const block = await node.call('getblock', hashes[h], 1);
      // the busy blocks in full; of the coinbase-only ones, the ends and every 50th
      if (block.tx.length === 1 && h > 1 && h < tip.height - 1 && h % 50) continue;
      if (block.tx.length > 2 && block.tx.length % 2) odd++;
      for (let pos = 0; pos < block.tx.length; pos++) {
        const m = await client.blockchainTransaction_getMerkle(block.tx[pos], h);
        assert.deepEqual([m.block_height, m.pos], [h, pos]);
        assert.equal(rootOf(block.tx[pos], pos, m.merkle), block.merkleroot, `${h}/${pos}`);
        assert.deepEqual(await client.request('blockchain.transaction.id_from_pos', [h, pos, true]), { tx_hash: block.tx[pos], merkle: m.merkle });
        assert.equal(await client.request('blockchain.transaction.id_from_pos', [h, pos]), block.tx[pos]);
        checked++;
      }
    }
    assert.ok(checked > 12 && odd > 0, `${checked} transactions, ${odd} blocks of an odd count`);
    // raw transactions (read from the node's getblock: the index keeps no blocks) as bitcore-lib cuts them from btcd's block
    const raws = new Map();
    for (const raw of await node.rawBlocks(0)) for (const tx of bitcore.Block.fromBuffer(raw).transactions) raws.set(tx.hash, tx.toBuffer().toString('hex'));
    for (const txid of Object.values(chain.txs)) assert.equal(await client.blockchainTransaction_get(txid), raws.get(txid));

    const headers = [];
    for (const hash of hashes) headers.push(await node.call('getblockheader', hash, false));
    assert.deepEqual(await client.request('blockchain.block.headers', [0, 2016]), { count: tip.height + 1, hex: headers.join(''), max: 2016 });
    assert.deepEqual(await client.blockchainHeaders_subscribe(), { hex: headers[tip.height], height: tip.height });
    for (const cp of [431, 432, tip.height]) {
      const root = plainMerkleRoot(hashes.slice(0, cp + 1));
      for (const h of [0, 1, 300, Math.floor(cp / 2), cp - 1, cp]) {
        const p = await client.request('blockchain.block.header', [h, cp]);
        assert.equal(p.header, headers[h]);
        assert.equal(p.root, root);
        assert.equal(rootOf(hashes[h], h, p.branch), root, `header ${h} to ${cp}`);
      }
    }
    await assert.rejects(client.request('blockchain.block.header', [5, tip.height + 1]), (e) => e.code === 1 && new RegExp(`chain height ${tip.height}`).test(e.message));
  });

  it('fee estimates and the relay fee are the node\'s (btcd answers estimatefee; its -1 or error: Electrum\'s -1)', async () => {
    for (const target of [1, 2, 6, 25]) {
      const fee = await node.call('estimatefee', target).catch(() => -1);
      assert.equal(await client.blockchainEstimatefee(target), fee > 0 ? fee : -1, `${target} blocks`);
    }
    assert.equal(await client.blockchain_relayfee(), (await node.call('getinfo')).relayfee);
  });

  it('a P2PK payment broadcast through the server: pushed to its own script hash once btcd accepts it (the follower\'s snapshot), and again when mined; its key\'s P2PKH script hash stays quiet', async () => {
    const own = scripthashOf(scriptOf('p2pk', 'n'));
    const keyHash = scripthashOf(scriptOf('p2pkh', 'n'));
    const payer = scripthashOf(scriptOf('p2wpkh', 'b'));
    const payerBefore = nullable(await client.blockchainScripthash_subscribe(payer));
    assert.equal(nullable(await client.blockchainScripthash_subscribe(own)), null);
    assert.equal(nullable(await client.blockchainScripthash_subscribe(keyHash)), null);
    const coin = chain.coins.find((c) => c.label === 'b');
    const pay = wallet.pay([coin], [{ kind: 'p2pk', label: 'n', satoshis: 1000000 }, { kind: 'p2wpkh', label: 'change' }], { fee: 2100 });
    assert.equal(await client.blockchainTransaction_broadcast(pay.hex), pay.txid);
    assert.ok((await node.call('getrawmempool')).includes(pay.txid), 'btcd holds it');

    await pushedStatus(own, expectedStatus([{ txid: pay.txid, height: 0 }]), 'the push of the accepted payment');
    assert.deepEqual(await client.blockchainScripthash_getMempool(own), [{ tx_hash: pay.txid, height: 0, fee: 2100 }]);
    assert.deepEqual(await client.blockchainScripthash_getBalance(own), { confirmed: 0, unconfirmed: 1000000 });
    assert.deepEqual(await client.blockchainScripthash_listunspent(own), [{ tx_hash: pay.txid, tx_pos: 0, height: 0, value: 1000000 }]);
    const payerHistory = await client.blockchainScripthash_getHistory(payer);
    assert.deepEqual(payerHistory.at(-1), { tx_hash: pay.txid, height: 0, fee: 2100 });
    assert.notEqual((pushed.get(payer) || []).at(-1), payerBefore, 'the payer\'s script hash is pushed too');

    const [mined] = await node.generate(1);
    const { height } = await caughtUp();
    await pushedStatus(own, expectedStatus([{ txid: pay.txid, height }]), 'the push of its confirmation');
    assert.deepEqual(pushed.get(own), [expectedStatus([{ txid: pay.txid, height: 0 }]), expectedStatus([{ txid: pay.txid, height }])], 'one push each');
    assert.equal(pushed.get(keyHash), undefined, 'the P2PKH script hash of the same key is not notified');
    assert.deepEqual(await client.blockchainScripthash_getHistory(keyHash), []);
    assert.deepEqual(await client.blockchainScripthash_listunspent(own), [{ tx_hash: pay.txid, tx_pos: 0, height, value: 1000000 }]);
    assert.deepEqual(await client.blockchainScripthash_getMempool(own), []);
    assert.deepEqual((await client.blockchainTransaction_getMerkle(pay.txid, height)).pos, 1);
    assert.equal((await node.call('getblock', mined, 1)).tx[1], pay.txid);
  });

  it('P2PK outputs spent in the mempool, a confirmed one (the index\'s prevout) and an unconfirmed one (its parent\'s): each under its own script hash over Electrum, under its key\'s address over REST', async () => {
    const own = (label) => scripthashOf(scriptOf('p2pk', label));
    const keyHash = (label) => scripthashOf(scriptOf('p2pkh', label));
    const paid = (await client.blockchainScripthash_listunspent(own('n')))[0];
    const confirmed = await client.blockchainScripthash_getHistory(own('n'));
    for (const sh of [own('q'), keyHash('q')]) assert.equal(nullable(await client.blockchainScripthash_subscribe(sh)), null);
    const coinN = { txId: paid.tx_hash, outputIndex: paid.tx_pos, satoshis: paid.value, ...wallet.output('p2pk', 'n'), kind: 'p2pk' };
    const tx1 = wallet.pay([coinN], [{ kind: 'p2pk', label: 'q', satoshis: 600000 }, { kind: 'p2wpkh', label: 'q-change' }], { fee: 1500 });
    const tx2 = wallet.pay([tx1.coins[0]], [{ kind: 'p2wpkh', label: 'q-out' }], { fee: 1200 });
    assert.equal(await client.blockchainTransaction_broadcast(tx1.hex), tx1.txid);
    assert.equal(await client.blockchainTransaction_broadcast(tx2.hex), tx2.txid);

    const history = (txs) => [...confirmed.map((e) => ({ txid: e.tx_hash, height: e.height })), ...txs];
    await pushedStatus(own('n'), expectedStatus(history([{ txid: tx1.txid, height: 0 }])), 'the spend of the confirmed P2PK output');
    const [q0, q1] = [{ txid: tx1.txid, height: 0 }, { txid: tx2.txid, height: -1 }];
    await pushedStatus(own('q'), expectedStatus([q0, q1]), 'the P2PK output paid and spent in the mempool');
    assert.deepEqual(await client.blockchainScripthash_getBalance(own('n')), { confirmed: 1000000, unconfirmed: -1000000 });
    assert.deepEqual(await client.blockchainScripthash_listunspent(own('n')), []);
    assert.deepEqual(await client.blockchainScripthash_getMempool(own('q')), [{ tx_hash: tx1.txid, height: 0, fee: 1500 }, { tx_hash: tx2.txid, height: -1, fee: 1200 }]);
    assert.deepEqual(await client.blockchainScripthash_getBalance(own('q')), { confirmed: 0, unconfirmed: 0 });
    for (const label of ['n', 'q']) {
      assert.equal(pushed.get(keyHash(label)), undefined, `${label}'s P2PKH script hash is quiet`);
      assert.deepEqual(await client.blockchainScripthash_getMempool(keyHash(label)), []);
    }

    // REST keeps the address rule: the keys' P2PKH addresses count their P2PK outputs
    const addrQ = wallet.output('p2pkh', 'q').address;
    const addrN = wallet.output('p2pkh', 'n').address;
    const q = (await request(`${url}/api/address/${addrQ}`)).json;
    assert.deepEqual(q.mempool_stats, { funded_txo_count: 1, funded_txo_sum: 600000, spent_txo_count: 1, spent_txo_sum: 600000, tx_count: 2 });
    assert.deepEqual((await request(`${url}/api/address/${addrQ}/txs/mempool`)).json.map((t) => t.txid).sort(), [tx1.txid, tx2.txid].sort());
    const n = (await request(`${url}/api/address/${addrN}`)).json;
    assert.deepEqual([n.chain_stats.funded_txo_sum, n.mempool_stats.spent_txo_sum], [1000000, 1000000]);

    await node.generate(1);
    const { height } = await caughtUp();
    // one block: the parent before its child, in chain order
    await pushedStatus(own('q'), expectedStatus([{ txid: tx1.txid, height }, { txid: tx2.txid, height }]), 'the push of their confirmation');
    await pushedStatus(own('n'), expectedStatus(history([{ txid: tx1.txid, height }])), 'the confirmed spend');
    // the follower may have seen tx1 alone first: then one push more, never a repeated status
    const steps = [[q0], [q0, q1], [{ txid: tx1.txid, height }, { txid: tx2.txid, height }]].map(expectedStatus);
    const heard = pushed.get(own('q'));
    assert.ok(heard.length >= 2 && heard.every((st, k) => steps.includes(st) && st !== heard[k - 1]), JSON.stringify(heard));
    assert.deepEqual(await client.blockchainScripthash_getBalance(own('q')), { confirmed: 0, unconfirmed: 0 });
    assert.deepEqual(await client.blockchainScripthash_getBalance(own('n')), { confirmed: 0, unconfirmed: 0 });
    for (const label of ['n', 'q']) assert.equal(pushed.get(keyHash(label)), undefined, `${label}'s P2PKH script hash is still quiet`);
    assert.equal((await request(`${url}/api/address/${addrQ}`)).json.chain_stats.tx_count, 2);
  });
});
