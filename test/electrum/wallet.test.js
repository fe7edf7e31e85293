'use strict';

const assert = require('node:assert/strict');
const path = require('node:path');
const { makeChain, addBranch, waitFor } = require('../helpers/chains');
const { runCli, followAndServe } = require('../helpers/cli');
const { tempDir } = require('../helpers/tmp');
const { installElectrum, startWalletDaemon, sats } = require('../helpers/electrum-wallet');
const { useBtcd } = require('../helpers/btcd');
const { nodeWallet } = require('../helpers/node-chain');
const { BlocksDirSource } = require('../../lib/sources/blocksdir');
const { parseBlock } = require('../../lib/chain/block');
const { describeOutput } = require('../../lib/chain/describe');
const { decodeAddress } = require('../../lib/chain/address');
const { NETWORKS } = require('../../lib/chain/networks');
const { toDisplayHex } = require('../../lib/chain/hash');
const { startElectrum } = require('./helpers');

/**
 * The real Electrum wallet (Debian's package, 4.3.4 on bookworm; installed by
 * scripts/install-electrum.sh when missing) as a daemon on regtest, pointed at the server
 * with --oneserver: a watching-only wallet of addresses of a generated regtest chain must
 * show the index's balances, histories and unspent outputs, verified by the wallet itself
 * (headers chained from genesis, merkle proofs of every transaction), and follow new blocks.
 * The generator writes real regtest blocks (genesis, links, merkle roots, regtest proof of
 * work), so no node is needed for this; the wallet checks no proof of work on regtest anyway.
 */
describe('electrum: the Electrum wallet daemon (watching-only) against the server, on regtest', function () {
  this.timeout(180000);
  const seed = 'electrum-wallet';
  let chain;
  let datadir;
  let srv;
  let daemon;
  let addresses;
  let rpc;

  before(async function () {
    this.timeout(600000); // the first run may install the wallet with apt-get
    installElectrum();
    chain = await makeChain({ seed, blocks: 30 });
    datadir = tempDir('electrum-wallet-index');
    assert.equal((await runCli(['sync', '--blocks-dir', chain.dir, '--datadir', datadir, '--network', 'regtest', '--threads', '0', '--quiet'])).code, 0);
    // no blocks dir given: the one the sync recorded in the index (the wallet fetches every transaction)
    srv = await startElectrum(datadir, { network: 'regtest', limits: { pollMs: 50 } });

    // four addresses of each kind the chain pays (P2PK has no address of its own), busiest first
    const uses = new Map();
    const source = new BlocksDirSource({ dir: chain.dir, network: 'regtest' });
    await source.scan();
    for await (const b of source.blocks(1)) {
      for (const tx of parseBlock(b.raw).txs) {
        for (const o of tx.outputs) {
          const d = describeOutput(o.script, NETWORKS.regtest);
          if (!d.address || d.type === 'p2pk') continue;
          const u = uses.get(d.address) || { type: d.type, n: 0 };
          u.n++;
          uses.set(d.address, u);
        }
      }
    }
    await source.close();
    addresses = [];
    for (const type of ['p2pkh', 'p2sh', 'p2wpkh', 'p2wsh', 'p2tr']) {
      const of = [...uses].filter(([, u]) => u.type === type).sort((x, y) => y[1].n - x[1].n || (x[0] < y[0] ? -1 : 1));
      addresses.push(...of.slice(0, 4).map(([a]) => a));
    }
    assert.equal(addresses.length, 20);

    daemon = await startWalletDaemon(srv.port, addresses);
    rpc = daemon.rpc;
  });

  after(async () => {
    if (daemon) await daemon.stop();
    if (srv) await srv.close();
  });

  const synced = (height) => daemon.synced(height);

  /** What the index holds for the wallet's addresses. */
  async function indexView() {
    let total = 0;
    const histories = new Map();
    const utxos = [];
    for (const a of addresses) {
      const sh = decodeAddress(a, 'regtest').scripthash;
      const s = await srv.store.getSummary(sh);
      total += s ? s.balance : 0;
      histories.set(a, (await srv.store.getHistory(sh, { limit: 100000 })).entries.map((e) => ({ tx_hash: toDisplayHex(e.txid), height: e.height })));
      for (const u of (await srv.store.getUtxos(sh, { limit: 100000 })).utxos) {
        utxos.push(`${a} ${toDisplayHex(u.txid)}:${u.vout} ${u.value} @${u.height}`);
      }
    }
    return { total, histories, utxos: utxos.sort() };
  }

  async function compare() {
    const want = await indexView();
    const balance = await rpc('getbalance');
    assert.equal(sats(balance.confirmed) + sats(balance.unmatured || 0) + sats(balance.unconfirmed || 0), want.total);
    for (const a of addresses) assert.deepEqual(await rpc('getaddresshistory', { address: a }), want.histories.get(a), a);
    const unspent = (await rpc('listunspent')).map((u) => `${u.address} ${u.prevout_hash}:${u.prevout_n} ${sats(u.value)} @${u.height}`).sort();
    assert.deepEqual(unspent, want.utxos);
    assert.ok(want.utxos.length > 20 && want.total > 0);
    return want;
  }

  it('getbalance, getaddresshistory and listunspent equal the index\'s, as the wallet verified them', async () => {
    await synced(30);
    await compare();
    // the wallet fetched its transactions: each cut alone out of its block in the recorded blocks dir
    const { txReads, txMisses } = srv.reader.blocks.stats;
    assert.ok(txReads > 20 && txMisses === 0, JSON.stringify(srv.reader.blocks.stats));
  });

  it('new blocks reach the wallet through the notifications alone, and it agrees with the index again', async () => {
    const before = await indexView();
    await addBranch({ dir: chain.dir, seed, forkHeight: 30, branchSeed: seed, blocks: 3 }); // three more blocks of the same chain
    assert.equal((await runCli(['sync', '--blocks-dir', chain.dir, '--datadir', datadir, '--network', 'regtest', '--threads', '0', '--quiet'])).code, 0);
    await synced(33);
    const after = await compare();
    assert.notEqual(after.total, before.total, 'the new blocks pay or spend the wallet\'s addresses');
  });
});

/**
 * The same wallet in front of a real node: btcd behind `serve --rpc-url`, `sync --follow`
 * keeping the index and the mempool snapshot. A transaction the wallet broadcasts goes through
 * the server to btcd; the wallet sees it unconfirmed (from the follower's snapshot), then mined,
 * and verifies its merkle proof against the headers it has chained (get_tx_status counts a
 * confirmation only for a verified transaction).
 */
describe('electrum: the Electrum wallet daemon against serve with btcd behind it (sync --follow)', function () {
  this.timeout(180000);
  const { wallet, minerA } = nodeWallet();
  const btcd = useBtcd([{ miningAddress: minerA }]);
  let node;
  let follow;
  let serve;
  let daemon;
  let coinbase;
  const addresses = ['ew-1', 'ew-2'].map((label) => wallet.output('p2pkh', label).address);

  before(async function () {
    this.timeout(600000);
    installElectrum();
    [node] = btcd.nodes;
    const hashes = await node.generate(101);
    coinbase = wallet.coinbaseCoin(Buffer.from(await node.call('getblock', hashes[0], 0), 'hex'), 'miner-a');
    const datadir = path.join(tempDir('electrum-wallet-btcd'), 'index');
    let electrumPort;
    ({ follow, serve, electrumPort } = await followAndServe(node.url, datadir, { workers: 1 }));
    daemon = await startWalletDaemon(electrumPort, addresses);
    await daemon.synced(101);
  });
  after(async () => {
    if (daemon) await daemon.stop();
    for (const child of [serve, follow]) {
      if (child && child.exitCode === null) {
        child.kill('SIGTERM');
        assert.equal((await child.done).code, 0, child.text());
      }
    }
  });

  it('broadcast from the wallet reaches btcd; the payment shows unconfirmed, then confirmed and verified', async () => {
    const { rpc } = daemon;
    assert.deepEqual(await rpc('getbalance'), { confirmed: '0' });
    const pay = wallet.pay([coinbase], [{ kind: 'p2pkh', label: 'ew-1', satoshis: 1e8 }, { kind: 'p2pkh', label: 'ew-2', satoshis: 5e7 }, { kind: 'p2pkh', label: 'miner-a' }]);
    assert.equal(await rpc('broadcast', { tx: pay.hex }), pay.txid);
    assert.ok((await node.call('getrawmempool')).includes(pay.txid), 'btcd holds it');
    const history = (height) => addresses.map(() => [{ tx_hash: pay.txid, height }]);
    const heights = async () => Promise.all(addresses.map(async (address) => (await rpc('getaddresshistory', { address })).map((e) => ({ tx_hash: e.tx_hash, height: e.height }))));

    await waitFor(async () => sats((await rpc('getbalance')).unconfirmed || 0) === 1.5e8, 30000, 'the wallet to see the payment unconfirmed');
    assert.deepEqual(await heights(), history(0));
    assert.deepEqual((await rpc('listunspent')).map((u) => [u.address, u.prevout_hash, u.prevout_n, sats(u.value), u.height]).sort(),
      [[addresses[0], pay.txid, 0, 1e8, 0], [addresses[1], pay.txid, 1, 5e7, 0]]);

    await node.generate(1);
    await daemon.synced(102);
    await waitFor(async () => (await rpc('get_tx_status', { txid: pay.txid })).confirmations === 1, 30000, 'the wallet to verify the payment\'s merkle proof');
    assert.deepEqual(await rpc('getbalance'), { confirmed: '1.5' });
    assert.deepEqual(await heights(), history(102));
  });
});
