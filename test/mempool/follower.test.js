'use strict';

const assert = require('node:assert/strict');
const path = require('node:path');
const mempoolJS = require('@mempool/mempool.js');
const { NodeClient } = require('../../lib/node/client');
const { resolveEndpoint } = require('../../lib/node/endpoint');
const { FeeEstimator, ESPLORA_TARGETS } = require('../../lib/node/fees');
const { NodeSource } = require('../../lib/sources/node');
const { SyncService } = require('../../lib/sync/service');
const { openStore } = require('../../lib/stores');
const { MongoStore } = require('../../lib/stores/mongo');
const { MempoolFollower } = require('../../lib/mempool/follower');
const { mempoolEntry } = require('../../lib/mempool/entry');
const { viewOfWhole, MempoolCache } = require('../../lib/mempool/cache');
const { parseTarget } = require('../../lib/chain/address');
const { fromDisplayHex, toDisplayHex } = require('../../lib/chain/hash');
const sha256 = (b) => require('node:crypto').createHash('sha256').update(b).digest();
const { useBtcd } = require('../helpers/btcd');
const { startMongo } = require('../helpers/mongo-server');
const { nodeWallet, TAPROOT_HEIGHT } = require('../helpers/node-chain');
const { KINDS } = require('../helpers/wallet');
const { waitFor } = require('../helpers/chains');
const { runCli, startCli } = require('../helpers/cli');
const { tempDir } = require('../helpers/tmp');

const { wallet, minerA, minerB } = nodeWallet();

/** The followers' clock: every store's follower stamps the same first-seen time, so their snapshots are the same bytes. */
const NOW_MS = Date.UTC(2024, 0, 2, 3, 4, 5);

const sh = (address) => parseTarget(address, 'regtest').scripthash;
const addr = (kind, label) => wallet.output(kind, label).address;

function clientOf(node, opts = {}) {
  return NodeClient.fromEndpoint(resolveEndpoint({ rpcUrl: node.url, network: 'regtest', env: {} }), { retryMs: 30000, maxDelayMs: 200, ...opts });
}

/**
 * What btcd says of its mempool transaction (`getrawmempool true`: its own fee and vsize), an
 * independent reference beside bitcore-lib's.
 */
async function btcdEntry(node, txid) {
  const all = await node.call('getrawmempool', true);
  const e = all[txid];
  assert.ok(e, `btcd holds ${txid}`);
  return { fee: Math.round(e.fee * 1e8), vsize: e.vsize };
}

describe('the mempool follower against btcd, into every store (lib/mempool)', function () {
  this.timeout(120000);
  const btcd = useBtcd([{ miningAddress: minerA }, { miningAddress: minerB }]);
  let a;
  let b;
  let mongo = null;
  /** @type {Array<{kind: string, store: any, client: NodeClient, source: NodeSource, follower: MempoolFollower}>} */
  const lanes = [];
  let coins;

  /** Brings B to A's best chain (they are not peers: blocks move only by submitblock). */
  async function syncB() {
    const from = (await b.tip()).height + 1;
    await b.submitBlocks(await a.rawBlocks(from));
  }

  /**
   * Every store's index catches up with A (SyncService over RPC), then its follower polls once.
   * The stored snapshots must be the same bytes and each must name its index's tip.
   * `offer`: the first lane's sync hands its blocks to its follower, as sync --follow does.
   */
  async function step({ offer = false } = {}) {
    const polls = [];
    for (const lane of lanes) {
      const onBlock = offer && lane === lanes[0] ? (hash, raw) => lane.follower.offerBlock(hash, raw) : undefined;
      await new SyncService({ source: lane.source, store: lane.store, network: 'regtest', threads: 0, onBlock }).run();
      polls.push(await lane.follower.poll());
    }
    const stored = [];
    for (const lane of lanes) {
      const tip = await lane.store.getTip();
      const head = await lane.store.getMempoolHead();
      const raw = await lane.store.getMempool({ raws: true });
      assert.equal(head.tip, tip.hash, `${lane.kind}: the snapshot is of the index's tip`);
      stored.push({ tip, head, raw });
    }
    for (let i = 1; i < stored.length; i++) {
      assert.ok(stored[i].raw.equals(stored[0].raw), `${lanes[i].kind}'s snapshot is ${lanes[0].kind}'s, byte for byte, the transactions' bytes with it`);
      assert.deepEqual(stored[i].head, stored[0].head);
    }
    // as a reader sees it: the parts, and each transaction's bytes read from the store when asked
    const view = await new MempoolCache(lanes[0].store).view(stored[0].head.seq);
    assert.equal(view.tip, stored[0].tip.hash);
    return { polls, view, tip: stored[0].tip, head: stored[0].head };
  }

  /** A snapshot transaction, checked against the wallet's transaction, bitcore-lib and btcd. */
  async function checkedTx(view, made) {
    const t = view.get(fromDisplayHex(made.txid));
    assert.ok(t, `${made.txid} is in the snapshot`);
    assert.equal((await view.raw(t)).toString('hex'), made.hex);
    const ref = await btcdEntry(a, made.txid);
    // fee: what the inputs the wallet spent are worth, less the outputs (bitcore-lib), and btcd's
    assert.equal(t.fee, made.tx._getUnspentValue());
    assert.equal(t.fee, ref.fee);
    // vsize: bitcore-lib's weight / 4 (both serializations), and btcd's
    assert.equal(t.vsize, made.tx.vsize);
    assert.equal(t.vsize, ref.vsize);
    assert.equal(t.time, NOW_MS / 1000);
    assert.equal(t.inputs.length, made.tx.inputs.length);
    made.tx.inputs.forEach((input, i) => {
      assert.equal(toDisplayHex(t.inputs[i].txid), input.prevTxId.toString('hex'));
      assert.equal(t.inputs[i].vout, input.outputIndex);
      assert.equal(t.inputs[i].value, input.output.satoshis);
    });
    made.tx.outputs.forEach((o, vout) => {
      assert.equal(t.outputs[vout].value, o.satoshis);
      const script = o.script.toBuffer();
      if (o.script.isDataOut()) assert.equal(t.outputs[vout].scripthash, null);
      else if (!o.script.isPublicKeyOut()) assert.deepEqual(t.outputs[vout].scripthash, require('node:crypto').createHash('sha256').update(script).digest());
    });
    return t;
  }

  before(async function () {
    this.timeout(300000);
    [a, b] = btcd.nodes;
    const hashes = await a.generate(TAPROOT_HEIGHT + 8);
    coins = [];
    for (const h of hashes.slice(0, 12)) coins.push(wallet.coinbaseCoin(Buffer.from(await a.call('getblock', h, 0), 'hex'), 'miner-a'));
    await syncB();
    try {
      mongo = await startMongo();
    } catch (err) {
      console.log(`      (no MongoDB-wire server: the MongoDB store is left out: ${err.message})`);
    }
    const opened = [
      ['lmdb', () => openStore({ store: 'lmdb', datadir: path.join(tempDir('mp-lmdb'), 'index'), network: 'regtest', readOnly: false })],
      ['level', () => openStore({ store: 'level', datadir: path.join(tempDir('mp-level'), 'index'), network: 'regtest', readOnly: false })],
    ];
    if (mongo) opened.push(['mongo', () => MongoStore.open({ url: mongo.url, dbName: `addrindex_mempool_${process.pid}`, network: 'regtest' })]);
    for (const [kind, open] of opened) {
      const store = await open();
      const client = clientOf(a);
      lanes.push({
        kind, store, client,
        source: new NodeSource({ client: clientOf(a), network: 'regtest' }),
        follower: new MempoolFollower({ store, client, network: 'regtest', tipGraceMs: 600000, now: () => NOW_MS }),
      });
    }
    const s = await step();
    assert.equal(s.view.txs.length, 0);
    assert.equal(s.head.seq, 1, 'an empty mempool is stored too: readers tell it from no follower');
  });

  after(async function () {
    this.timeout(30000);
    for (const lane of lanes) {
      await lane.follower.stop();
      await lane.source.close();
      lane.client.close();
      await lane.store.close();
    }
    if (mongo) await mongo.stop();
  });

  it('a payment appears with its fee and vsize (as bitcore-lib and btcd compute them) and its addresses, then confirms and leaves', async () => {
    const pay = wallet.pay([coins[0]], [{ kind: 'p2wpkh', label: 'm-pay', satoshis: 12345678 }, { kind: 'p2pkh', label: 'miner-a' }], { fee: 2345 });
    await a.sendTx(pay.hex);
    const s = await step();
    for (const p of s.polls) assert.deepEqual([p.outcome, p.added, p.removed, p.txs], ['written', 1, 0, 1]);
    const t = await checkedTx(s.view, pay);
    assert.equal(t.fee, 2345);
    assert.deepEqual(t.inputs[0].scripthash, sh(coins[0].address));
    assert.equal(t.inputs[0].unconfirmed, false);
    assert.deepEqual(s.view.summary(sh(addr('p2wpkh', 'm-pay'))), { txCount: 1, received: 12345678, sent: 0, fundedCount: 1, spentCount: 0, balance: 12345678 });
    assert.deepEqual(s.view.utxos(sh(addr('p2wpkh', 'm-pay'))).map((u) => [u.vout, u.value]), [[0, 12345678]]);
    const miner = s.view.summary(sh(coins[0].address));
    assert.equal(miner.sent, coins[0].satoshis);
    assert.equal(miner.balance, coins[0].satoshis - 12345678 - 2345 - coins[0].satoshis);
    assert.equal(s.view.spender(fromDisplayHex(coins[0].txId), coins[0].outputIndex).tx, t);

    const [mined] = await a.generate(1);
    const s2 = await step();
    assert.equal(s2.tip.hash, mined);
    assert.equal(s2.view.txs.length, 0, 'confirmed: it left the mempool');
    for (const p of s2.polls) assert.deepEqual([p.outcome, p.removed], ['written', 1]);
    for (const lane of lanes) {
      const sum = await lane.store.getSummary(sh(addr('p2wpkh', 'm-pay')));
      assert.deepEqual([sum.balance, sum.txCount], [12345678, 1], `${lane.kind}: confirmed in the index`);
    }
  });

  it('a chain of unconfirmed transactions: children resolve their inputs from their parents in the snapshot, parents first; a parent confirmed alone leaves its children in', async () => {
    const fund = wallet.pay([coins[1]], [
      ...KINDS.map((kind) => ({ kind, label: 'c', satoshis: kind === 'nulldata' ? 0 : 1e8 })),
      { kind: 'p2wpkh', label: 'c-change' },
    ], { fee: 3000 });
    const spent = fund.coins.filter((c) => c.label === 'c' && ['p2wpkh', 'p2tr', 'p2wsh', 'p2sh', 'p2pk'].includes(c.kind));
    const child = wallet.pay(spent, [{ kind: 'p2tr', label: 'c-child', satoshis: 2e8 }, { kind: 'p2wpkh', label: 'c-child-change' }], { fee: 4100 });
    const grand = wallet.pay([child.coins[0]], [{ kind: 'p2pkh', label: 'c-grand' }], { fee: 1500 });
    // the child reaches the node first: the snapshot still lists parents first
    await a.sendTx(fund.hex);
    await a.sendTx(child.hex);
    await a.sendTx(grand.hex);
    const s = await step();
    const [tf, tc, tg] = [await checkedTx(s.view, fund), await checkedTx(s.view, child), await checkedTx(s.view, grand)];
    const at = (t) => s.view.txs.indexOf(t);
    assert.ok(at(tf) < at(tc) && at(tc) < at(tg), 'parents first');
    assert.deepEqual(tf.inputs.map((i) => i.unconfirmed), [false]);
    assert.deepEqual(tc.inputs.map((i) => [i.unconfirmed, i.value]), spent.map(() => [true, 1e8]));
    spent.forEach((c, i) => assert.deepEqual(tc.inputs[i].scripthash, sh(c.address)));
    assert.deepEqual(tg.inputs.map((i) => [i.unconfirmed, i.value]), [[true, 2e8]]);
    // the outputs the child spends are no unconfirmed UTXO of theirs; the one it leaves is
    assert.deepEqual(s.view.utxos(sh(addr('p2wpkh', 'c'))), []);
    // P2PK counts toward its key's P2PKH address, as in the confirmed index (the child spends
    // the P2PK output); the snapshot also carries its own script hash, Electrum's script view
    assert.deepEqual(s.view.utxos(sh(addr('p2pkh', 'c'))).map((u) => [u.vout, u.value]), [[KINDS.indexOf('p2pkh'), 1e8]]);
    const p2pkOwn = sha256(wallet.output('p2pk', 'c').script.toBuffer());
    const p2pkIn = spent.findIndex((c) => c.kind === 'p2pk');
    assert.deepEqual(tf.outputs.map((o) => o.p2pk), fund.tx.outputs.map((o, v) => (v === KINDS.indexOf('p2pk') ? p2pkOwn : null)));
    assert.deepEqual(tc.inputs.map((i) => i.p2pk), spent.map((c, i) => (i === p2pkIn ? p2pkOwn : null)), 'from the parent in the snapshot');
    assert.deepEqual(tc.inputs[p2pkIn].scripthash, sh(addr('p2pkh', 'c')));
    assert.deepEqual(s.view.entries(p2pkOwn, 'script').map((e) => [e.tx, e.received, e.sent]), [[tf, 1e8, 0], [tc, 0, 1e8]]);
    assert.deepEqual(s.view.entries(sh(addr('p2pkh', 'c')), 'script').map((e) => [e.tx, e.received, e.sent]), [[tf, 1e8, 0]]);
    assert.equal(s.view.summary(sh(addr('p2tr', 'c-child'))).balance, 0, 'paid by the child, spent by the grandchild');

    // B mines the parent alone (A's mempool keeps the child and the grandchild)
    await syncB();
    await b.sendTx(fund.hex);
    const [onB] = await b.generate(1);
    await a.submitBlocks(await b.rawBlocks((await b.tip()).height));
    assert.equal((await a.tip()).hash, onB);
    const s2 = await step();
    assert.equal(s2.view.get(fromDisplayHex(fund.txid)), null);
    const tc2 = await checkedTx(s2.view, child);
    // the child's part is the one written before the block (its inputs' flag says what they
    // spent then); the view says its parent is gone: it spends confirmed outputs now
    assert.deepEqual(tc2.part, tc.part);
    assert.deepEqual(tc2.inputs.map((i) => [i.unconfirmed, i.value]), spent.map(() => [true, 1e8]));
    assert.deepEqual([s.view.hasUnconfirmedInputs(tc), s2.view.hasUnconfirmedInputs(tc2)], [true, false], 'now spending confirmed outputs');
    assert.equal(s2.view.hasUnconfirmedInputs(await checkedTx(s2.view, grand)), true, 'the grandchild still spends the child');
    assert.deepEqual(tc2.inputs.map((i) => i.p2pk), spent.map((c, i) => (i === p2pkIn ? p2pkOwn : null)), 'from the index\'s prevout');
    await checkedTx(s2.view, grand);
    assert.equal(s2.view.txs.length, 2);

    await a.generate(1);
    assert.equal((await step()).view.txs.length, 0);
  });

  it('a BIP125 replacement takes the place of the original, whose descendants leave with it', async () => {
    const orig = wallet.pay([coins[2]], [{ kind: 'p2wpkh', label: 'r-pay', satoshis: 5e7 }, { kind: 'p2pkh', label: 'miner-a' }], { rbf: true, fee: 1000 });
    const child = wallet.pay([orig.coins[0]], [{ kind: 'p2tr', label: 'r-child' }], { fee: 1000 });
    await a.sendTx(orig.hex);
    await a.sendTx(child.hex);
    let s = await step();
    await checkedTx(s.view, orig);
    await checkedTx(s.view, child);

    const repl = wallet.pay([coins[2]], [{ kind: 'p2wpkh', label: 'r-new', satoshis: 5e7 }, { kind: 'p2pkh', label: 'miner-a' }], { fee: 9000 });
    await a.sendTx(repl.hex);
    s = await step();
    for (const p of s.polls) assert.deepEqual([p.added, p.removed], [1, 2]);
    assert.equal(s.view.get(fromDisplayHex(orig.txid)), null);
    assert.equal(s.view.get(fromDisplayHex(child.txid)), null);
    const t = await checkedTx(s.view, repl);
    assert.equal(s.view.spender(fromDisplayHex(coins[2].txId), coins[2].outputIndex).tx, t);
    assert.equal(s.view.summary(sh(addr('p2wpkh', 'r-pay'))).txCount, 0);
    assert.equal(s.view.summary(sh(addr('p2wpkh', 'r-new'))).balance, 5e7);
    await a.generate(1);
    assert.equal((await step()).view.txs.length, 0);
  });

  it('a reorg made on a second node: while the index lags the node the stored pair stays; then the orphaned payment is back in the snapshot, and its spender, stored before, is written again with the bytes the store held', async () => {
    await syncB();
    const fork = (await a.tip()).height;
    const orphan = wallet.pay([coins[3]], [{ kind: 'p2wsh', label: 'o-pay', satoshis: 3e7 }, { kind: 'p2pkh', label: 'miner-a' }], { fee: 2500 });
    await a.sendTx(orphan.hex);
    const [onA] = await a.generate(1);
    let s = await step();
    assert.equal(s.tip.hash, onA);
    assert.equal(s.view.txs.length, 0);
    for (const lane of lanes) assert.equal((await lane.store.getSummary(sh(addr('p2wsh', 'o-pay')))).txCount, 1);
    // spends the payment's change while it is confirmed
    const kid = wallet.pay([orphan.coins[1]], [{ kind: 'p2wpkh', label: 'o-kid' }], { fee: 1500 });
    await a.sendTx(kid.hex);
    s = await step();
    assert.deepEqual((await checkedTx(s.view, kid)).inputs.map((i) => i.unconfirmed), [false]);
    for (const lane of lanes) assert.equal(lane.follower.pool.get(kid.txid).raw, null, `${lane.kind}: the follower let the stored bytes go`);

    const onB = await b.generate(2);
    await a.submitBlocks(await b.rawBlocks(fork + 1));
    assert.equal((await a.tip()).hash, onB[1], 'A follows the longer branch');
    assert.ok((await a.call('getrawmempool')).includes(orphan.txid), 'btcd put the orphaned payment back in its mempool');
    // the index still stands on A's block: the follower does not write a snapshot of it from
    // the mempool of another tip
    for (const lane of lanes) {
      const before = await lane.store.getMempoolHead();
      const p = await lane.follower.poll();
      assert.equal(p.outcome, 'waiting');
      assert.deepEqual(await lane.store.getMempoolHead(), before);
      assert.equal(before.tip, onA);
    }

    s = await step();
    assert.equal(s.tip.hash, onB[1]);
    const t = await checkedTx(s.view, orphan);
    assert.deepEqual(t.inputs.map((i) => i.unconfirmed), [false]);
    // its part changed (it spends a mempool output now) and its place (after its parent's): its
    // bytes, which the follower no longer held, were read back from the store and written again
    const k = await checkedTx(s.view, kid);
    assert.deepEqual(k.inputs.map((i) => i.unconfirmed), [true]);
    assert.deepEqual(s.view.txs.map((x) => toDisplayHex(x.txid)), [orphan.txid, kid.txid]);
    assert.equal(s.view.summary(sh(addr('p2wsh', 'o-pay'))).balance, 3e7);
    for (const lane of lanes) assert.equal(await lane.store.getSummary(sh(addr('p2wsh', 'o-pay'))), null, `${lane.kind}: reverted`);
    await a.generate(1);
    assert.equal((await step()).view.txs.length, 0);
  });

  it('a block the index connected is taken from the sync that applied it, else from the node (getblock), not its list: what it confirms leaves, and a conflict with its descendants; the list that follows changes nothing', async () => {
    await syncB();
    // on A: a payment and its child, and a parent with its child; B mines a double spend of
    // the payment's coin beside the parent
    const spend = wallet.pay([coins[10]], [{ kind: 'p2wpkh', label: 'k-spend', satoshis: 2e7 }, { kind: 'p2pkh', label: 'miner-a' }], { fee: 1200 });
    const spendChild = wallet.pay([spend.coins[0]], [{ kind: 'p2tr', label: 'k-spend-child' }], { fee: 1100 });
    const parent = wallet.pay([coins[11]], [{ kind: 'p2wsh', label: 'k-parent', satoshis: 3e7 }, { kind: 'p2pkh', label: 'miner-a' }], { fee: 1300 });
    const kid = wallet.pay([parent.coins[0]], [{ kind: 'p2sh', label: 'k-kid' }], { fee: 1400 });
    const double = wallet.pay([coins[10]], [{ kind: 'p2wpkh', label: 'k-double', satoshis: 2e7 }, { kind: 'p2pkh', label: 'miner-a' }], { fee: 5000 });
    for (const t of [spend, spendChild, parent, kid]) await a.sendTx(t.hex);
    let s = await step();
    assert.equal(s.view.txs.length, 4);
    await b.sendTx(double.hex);
    await b.sendTx(parent.hex);
    const [onB] = await b.generate(1);
    await a.submitBlocks(await b.rawBlocks((await b.tip()).height));
    assert.deepEqual((await a.call('getrawmempool')).sort(), [kid.txid], 'btcd dropped the confirmed parent and the double spend\'s conflicts');

    // the first lane's follower is handed the block by its sync; the others ask the node
    const asked = [];
    const ask = lanes[0].client.getRawBlocks;
    lanes[0].client.getRawBlocks = (hashes) => {
      asked.push(...hashes);
      return ask.call(lanes[0].client, hashes);
    };
    try {
      s = await step({ offer: true });
    } finally {
      lanes[0].client.getRawBlocks = ask;
    }
    assert.deepEqual(asked, [], 'the block the sync applied is not asked of the node');
    assert.equal(s.tip.hash, onB);
    for (const p of s.polls) {
      assert.deepEqual([p.outcome, p.blocks, p.listed, p.removed, p.conflicts, p.added, p.asked, p.txs], ['written', 1, 0, 3, 2, 0, 0, 1]);
    }
    assert.deepEqual(s.view.txs.map((t) => toDisplayHex(t.txid)), [kid.txid]);
    const t = await checkedTx(s.view, kid);
    assert.equal(s.view.hasUnconfirmedInputs(t), false, 'its parent is confirmed');
    assert.equal(s.view.summary(sh(addr('p2wpkh', 'k-spend'))).txCount, 0);
    // the node's list agrees with what the blocks said: nothing to fetch, let go or write
    for (const lane of lanes) {
      const p = await lane.follower.poll();
      assert.deepEqual([p.outcome, p.listed, p.added, p.removed, p.txs], ['unchanged', 1, 0, 0, 1], lane.kind);
    }
    // a follower told to list each time comes to the same snapshot at the next block
    for (const lane of lanes) lane.follower.blockStepMax = 0;
    await a.generate(1);
    s = await step();
    for (const p of s.polls) assert.deepEqual([p.outcome, p.blocks, p.listed, p.removed], ['written', 0, 0, 1]);
    assert.equal(s.view.txs.length, 0);
    for (const lane of lanes) lane.follower.blockStepMax = 6;
  });

  it('a follower started on a stored snapshot takes its transactions without fetching them again', async () => {
    const pay = wallet.pay([coins[4]], [{ kind: 'p2tr', label: 'l-pay', satoshis: 4e7 }, { kind: 'p2pkh', label: 'miner-a' }], { fee: 1700 });
    await a.sendTx(pay.hex);
    const s = await step();
    for (const lane of lanes) {
      const again = new MempoolFollower({ store: lane.store, client: lane.client, network: 'regtest', tipGraceMs: 600000, now: () => NOW_MS + 5000 });
      assert.equal(await again.load(), 1);
      const calls = lane.client.rpc.stats.calls;
      const p = await again.poll();
      assert.deepEqual([p.outcome, p.added, p.txs, p.seq], ['written', 0, 1, s.head.seq + 1]);
      assert.equal(lane.client.rpc.stats.calls - calls, 2, 'getrawmempool and getbestblockhash, no getrawtransaction');
      const view = viewOfWhole(await lane.store.getMempool());
      assert.equal(view.get(fromDisplayHex(pay.txid)).time, NOW_MS / 1000, 'first seen when the first follower saw it');
      lane.follower = again;
    }
    await a.generate(1);
    assert.equal((await step()).view.txs.length, 0);
  });

  it('past maxBytes the lowest fee-rate package goes, the child with its parent, counted in the head; what was evicted is not fetched again while listed', async () => {
    const low = wallet.pay([coins[7]], [{ kind: 'p2wpkh', label: 'e-low', satoshis: 1e7 }, { kind: 'p2pkh', label: 'miner-a' }], { fee: 1000 });
    const lowChild = wallet.pay([low.coins[0]], [{ kind: 'p2wpkh', label: 'e-low-child' }], { fee: 1000 });
    const high = wallet.pay([coins[8]], [{ kind: 'p2wpkh', label: 'e-high', satoshis: 1e7 }, { kind: 'p2pkh', label: 'miner-a' }], { fee: 9000 });
    const mid = wallet.pay([coins[9]], [{ kind: 'p2wpkh', label: 'e-mid', satoshis: 1e7 }, { kind: 'p2pkh', label: 'miner-a' }], { fee: 4000 });
    for (const m of [low, lowChild, high, mid]) await a.sendTx(m.hex);
    // room for two of the four
    const bytes = (m) => mempoolEntry(Buffer.from(m.hex, 'hex'), 0).bytes;
    const maxBytes = bytes(high) + bytes(mid) + 1;
    const bounded = (lane, max) => new MempoolFollower({ store: lane.store, client: lane.client, network: 'regtest', tipGraceMs: 600000, now: () => NOW_MS, maxBytes: max });
    for (const lane of lanes) lane.follower = bounded(lane, maxBytes);
    let s = await step();
    assert.deepEqual(s.view.txs.map((t) => toDisplayHex(t.txid)).sort(), [high.txid, mid.txid].sort());
    assert.equal(s.head.evicted, 2);
    assert.equal(s.view.evicted, 2);
    for (const lane of lanes) {
      assert.deepEqual([lane.follower.stats.evicted, lane.follower.last.evicted], [2, 2]);
      assert.ok(lane.follower.pool.bytes <= maxBytes);
    }
    const fetched = lanes.map((lane) => lane.follower.stats.fetched);
    s = await step();
    assert.deepEqual(lanes.map((lane) => lane.follower.stats.fetched), fetched, 'not fetched again');
    assert.equal(s.view.txs.length, 2);
    for (const lane of lanes) lane.follower = bounded(lane, undefined);
    await a.generate(1);
    assert.equal((await step()).view.txs.length, 0);
  });

  it('the node killed and restarted while followers poll: the stored snapshots stay whole, then follow the node again', async () => {
    const raws = await a.rawBlocks(1);
    const pay = wallet.pay([coins[5]], [{ kind: 'p2wpkh', label: 'k-pay', satoshis: 6e7 }, { kind: 'p2pkh', label: 'miner-a' }], { fee: 2000 });
    await a.sendTx(pay.hex);
    const has = (lane, present) => async () => {
      const raw = await lane.store.getMempool();
      const view = viewOfWhole(raw);
      return Boolean(view.get(fromDisplayHex(pay.txid))) === present ? view : null;
    };
    for (const lane of lanes) {
      lane.follower.pollMs = 50;
      await lane.follower.start();
    }
    for (const lane of lanes) await waitFor(has(lane, true), 30000, `${lane.kind}: the payment in the snapshot`);
    const heads = await Promise.all(lanes.map((l) => l.store.getMempoolHead()));
    const retries = lanes.map((l) => l.client.rpc.stats.retries);

    await a.kill();
    for (const [i, lane] of lanes.entries()) {
      await waitFor(async () => lane.client.rpc.stats.retries > retries[i], 30000, `${lane.kind}: the follower retrying`);
      assert.deepEqual(await lane.store.getMempoolHead(), heads[i], `${lane.kind}: nothing written while the node is away`);
      assert.ok(await has(lane, true)(), 'the stored snapshot is whole');
    }
    await a.start(); // btcd starts from genesis, with an empty mempool: give it its chain back
    await a.submitBlocks(raws);
    for (const lane of lanes) await waitFor(has(lane, false), 30000, `${lane.kind}: the node's empty mempool`);
    await a.sendTx(pay.hex);
    for (const [i, lane] of lanes.entries()) {
      await waitFor(has(lane, true), 30000, `${lane.kind}: the payment back`);
      assert.ok((await lane.store.getMempoolHead()).seq > heads[i].seq);
      assert.equal(lane.follower.stats.failures, 0, 'the client waited for the node: no poll failed');
    }
    for (const lane of lanes) await lane.follower.stop();
    await a.generate(1);
    assert.equal((await step()).view.txs.length, 0);
  });

  it('stopped while a poll waits for the node (the signal of sync --follow\'s SIGTERM): the loop ends, no failure reported', async () => {
    const ac = new AbortController();
    const client = clientOf(a, { signal: ac.signal });
    // Counted from the start: requests sent and not yet answered. A poll's request already
    // under way when the node stops waits there (30 s, the client's timeout) and no new one is
    // sent, so waiting for a new request failed whenever the stop caught one in flight.
    let awaiting = 0;
    const post = client.rpc._post.bind(client.rpc);
    client.rpc._post = (...args) => {
      awaiting++;
      return post(...args).finally(() => { awaiting--; });
    };
    const errors = [];
    const lane = lanes[0];
    const follower = new MempoolFollower({ store: lane.store, client, network: 'regtest', pollMs: 20, tipGraceMs: 600000, onError: (err, fatal) => errors.push([err.code, fatal]) });
    try {
      await follower.start();
      await waitFor(async () => follower.stats.polls >= 2, 30000, 'polls');
      const head = await lane.store.getMempoolHead();
      a.child.kill('SIGSTOP');
      await waitFor(async () => awaiting > 0, 30000, `a poll waiting for the stopped node ${JSON.stringify(errors)} ${JSON.stringify(follower.stats)}`);
      ac.abort();
      await follower.stopped;
      assert.deepEqual(errors, []);
      assert.equal(follower.stats.failures, 0);
      assert.deepEqual(await lane.store.getMempoolHead(), head, 'nothing written meanwhile');
    } finally {
      a.child.kill('SIGCONT');
      await follower.stop();
      client.close();
    }
  });

  it('fee estimates: btcd answers estimatefee only, learnt once, asked in one batch, kept a while', async () => {
    const client = clientOf(a);
    try {
      const fees = new FeeEstimator(client);
      const one = await fees.estimate(2);
      assert.equal(one.method, 'estimatefee');
      assert.ok(one.satPerVb === null || one.satPerVb > 0);
      const requests = client.rpc.stats.requests;
      const all = await fees.estimates();
      assert.equal(client.rpc.stats.requests - requests, 1, 'the other targets in one request');
      for (const [k, v] of Object.entries(all)) {
        assert.ok(ESPLORA_TARGETS.includes(Number(k)) && Number(k) <= 25 && v > 0, `${k}: ${v}`);
      }
      await fees.estimates();
      assert.equal(client.rpc.stats.requests - requests, 1, 'kept');
      await assert.rejects(fees.estimate(0), RangeError);
    } finally {
      client.close();
    }
  });

  it('sync --follow with a node keeps the snapshot, and serve answers from it (@mempool/mempool.js): a payment appears, a block confirms it; --mempool-poll-ms needs --follow and a node', async () => {
    const datadir = path.join(tempDir('mp-cli'), 'index');
    const child = startCli(['sync', '--rpc-url', a.url, '--network', 'regtest', '--datadir', datadir,
      '--follow', '--poll-ms', '100', '--mempool-poll-ms', '100', '--threads', '1', '--metrics-port', '0']);
    let ro = null;
    let serve = null;
    try {
      await child.waitFor(/mempool: \d+ transaction\(s\)/, 60000);
      ro = await openStore({ store: 'lmdb', datadir, network: 'regtest', readOnly: true });
      // the index holds no blocks (synced over RPC): serve reads the transactions' prevouts from the node
      serve = startCli(['serve', '--datadir', datadir, '--workers', '2', '--port', '0', '--grace-ms', '2000'], { env: { ADDRINDEX_RPC_URL: a.url } });
      const port = Number((await serve.waitFor(/listening on http:\/\/127\.0\.0\.1:(\d+)/))[1]);
      const { bitcoin } = mempoolJS({ hostname: `127.0.0.1:${port}`, network: 'mainnet', protocol: 'http' });
      const pairOf = async () => {
        const head = await ro.getMempoolHead();
        const tip = await ro.getTip();
        if (!head || head.tip !== tip.hash) return null;
        return { tip, view: viewOfWhole(await ro.getMempool()) };
      };
      const pay = wallet.pay([coins[6]], [{ kind: 'p2sh', label: 'cli-pay', satoshis: 8e7 }, { kind: 'p2pkh', label: 'miner-a' }], { fee: 3100 });
      await a.sendTx(pay.hex);
      const seen = await waitFor(async () => {
        const p = await pairOf();
        return p && p.view.get(fromDisplayHex(pay.txid)) ? p : null;
      }, 30000, 'the payment in the snapshot');
      assert.equal(seen.view.get(fromDisplayHex(pay.txid)).fee, 3100);
      // sync's metrics: the stored snapshot's size
      const metricsUrl = (await child.waitFor(/metrics on (http:\S+)/))[1];
      const scrape = await waitFor(async () => {
        const text = await (await fetch(metricsUrl)).text();
        return /^addrindex_mempool_txs 1$/m.test(text) ? text : null;
      }, 30000, 'sync: addrindex_mempool_txs 1');
      assert.match(scrape, new RegExp(`^addrindex_mempool_vsize_bytes ${seen.view.get(fromDisplayHex(pay.txid)).vsize}$`, 'm'));
      // both workers answer from the stored snapshot (each request may land on either)
      for (let k = 0; k < 4; k++) {
        assert.deepEqual(await bitcoin.transactions.getTxStatus({ txid: pay.txid }), { confirmed: false });
        const mem = await bitcoin.addresses.getAddressTxsMempool({ address: addr('p2sh', 'cli-pay') });
        assert.deepEqual(mem.map((t) => [t.txid, t.fee, t.status.confirmed]), [[pay.txid, 3100, false]]);
      }
      const [mined] = await a.generate(1);
      await waitFor(async () => {
        const p = await pairOf();
        return p && p.tip.hash === mined && !p.view.get(fromDisplayHex(pay.txid)) ? p : null;
      }, 30000, 'the snapshot of the new tip, without the payment');
      assert.equal((await ro.getSummary(sh(addr('p2sh', 'cli-pay')))).balance, 8e7);
      const status = await waitFor(async () => {
        const st = await bitcoin.transactions.getTxStatus({ txid: pay.txid });
        return st.confirmed ? st : null;
      }, 30000, 'serve: the payment confirmed');
      assert.equal(status.block_hash, mined);
      assert.deepEqual(await bitcoin.addresses.getAddressTxsMempool({ address: addr('p2sh', 'cli-pay') }), []);
      child.kill('SIGTERM');
      const res = await child.done;
      assert.equal(res.code, 0, res.stderr);
    } finally {
      child.kill('SIGKILL');
      if (serve) {
        serve.kill('SIGTERM');
        await serve.done;
      }
      if (ro) await ro.close();
    }

    const bad = await runCli(['sync', '--rpc-url', a.url, '--network', 'regtest', '--datadir', datadir, '--mempool-poll-ms', '100']);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /--mempool-poll-ms goes with --follow \[ERR_USAGE\]/);
    const noNode = await runCli(['sync', '--blocks-dir', tempDir('mp-empty'), '--network', 'regtest', '--datadir', datadir, '--follow', '--mempool-poll-ms', '100']);
    assert.notEqual(noNode.code, 0);
    assert.match(noNode.stderr, /--mempool-poll-ms needs a node .* \[ERR_USAGE\]/);
  });
});
