'use strict';

const assert = require('node:assert/strict');
const path = require('node:path');
const mempoolJS = require('@mempool/mempool.js');
const { useBtcd } = require('../helpers/btcd');
const { nodeWallet } = require('../helpers/node-chain');
const { runCli, startCli } = require('../helpers/cli');
const { waitFor } = require('../helpers/chains');
const { tempDir } = require('../helpers/tmp');

const { wallet, minerA } = nodeWallet();
const addr = (kind, label) => wallet.output(kind, label).address;

/**
 * `serve --store level --rpc-url`: LevelDB admits one process, so serve's primary owns the
 * index and follows the node itself (lib/cli/follow-node.js: the block sync and the mempool
 * follower), while its workers forward their reads to it.
 */
describe('serve --store level with a node: the primary follows it (blocks and mempool), the workers forward', function () {
  this.timeout(180000);
  const btcd = useBtcd([{ miningAddress: minerA }]);
  let a;
  let coins;
  let datadir;

  before(async function () {
    this.timeout(300000);
    [a] = btcd.nodes;
    const hashes = await a.generate(110);
    coins = [];
    for (const h of hashes.slice(0, 4)) coins.push(wallet.coinbaseCoin(Buffer.from(await a.call('getblock', h, 0), 'hex'), 'miner-a'));
    datadir = path.join(tempDir('serve-level'), 'index');
    const synced = await runCli(['sync', '--rpc-url', a.url, '--network', 'regtest', '--store', 'level', '--datadir', datadir, '--threads', '1']);
    assert.equal(synced.code, 0, synced.stderr);
  });

  it('a payment appears in /api/address/:a/txs/mempool through forwarding workers, then a block the primary commits confirms it; SIGTERM stops both and leaves a whole index', async () => {
    const serve = startCli(['serve', '--store', 'level', '--datadir', datadir, '--workers', '2', '--port', '0', '--grace-ms', '2000',
      '--poll-ms', '100', '--mempool-poll-ms', '100'], { env: { ADDRINDEX_RPC_URL: a.url } });
    try {
      const port = Number((await serve.waitFor(/listening on http:\/\/127\.0\.0\.1:(\d+)/))[1]);
      await serve.waitFor(/following .*new blocks and the mempool/);
      const { bitcoin } = mempoolJS({ hostname: `127.0.0.1:${port}`, network: 'mainnet', protocol: 'http' });
      const to = addr('p2wpkh', 'level-pay');
      const pay = wallet.pay([coins[0]], [{ kind: 'p2wpkh', label: 'level-pay', satoshis: 7e7 }, { kind: 'p2pkh', label: 'miner-a' }], { fee: 2800 });
      await a.sendTx(pay.hex);
      await waitFor(async () => {
        const mem = await bitcoin.addresses.getAddressTxsMempool({ address: to });
        return mem.length ? mem : null;
      }, 30000, 'the payment in /txs/mempool');
      // each request may land on either worker: both read the primary's snapshot
      for (let k = 0; k < 4; k++) {
        const mem = await bitcoin.addresses.getAddressTxsMempool({ address: to });
        assert.deepEqual(mem.map((t) => [t.txid, t.fee, t.status.confirmed]), [[pay.txid, 2800, false]]);
        const info = await bitcoin.addresses.getAddress({ address: to });
        assert.deepEqual([info.mempool_stats.funded_txo_sum, info.chain_stats.funded_txo_sum], [7e7, 0]);
      }
      // the mempool's size in /metrics: every worker's reading merged (max), as the tip's
      const tx = await bitcoin.transactions.getTx({ txid: pay.txid });
      const scrape = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      assert.match(scrape, /^addrindex_mempool_txs 1$/m);
      assert.match(scrape, new RegExp(`^addrindex_mempool_vsize_bytes ${Math.ceil(tx.weight / 4)}$`, 'm'));
      const [mined] = await a.generate(1);
      const status = await waitFor(async () => {
        const st = await bitcoin.transactions.getTxStatus({ txid: pay.txid });
        return st.confirmed ? st : null;
      }, 30000, 'the payment confirmed by the block the primary synced');
      assert.equal(status.block_hash, mined);
      await waitFor(async () => ((await bitcoin.addresses.getAddressTxsMempool({ address: to })).length === 0 ? true : null), 30000, 'the mempool without it');
      const info = await bitcoin.addresses.getAddress({ address: to });
      assert.deepEqual([info.chain_stats.funded_txo_sum, info.mempool_stats.tx_count], [7e7, 0]);
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      assert.match(metrics, /^addrindex_mempool_txs 0$/m);
      serve.kill('SIGTERM');
      const res = await serve.done;
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stderr, /stopped/);
    } finally {
      serve.kill('SIGKILL');
      await serve.done;
    }
    // the primary's commits are whole: the index verifies, at the block it synced
    const verified = await runCli(['verify', '--store', 'level', '--datadir', datadir]);
    assert.equal(verified.code, 0, verified.stderr);
    const status = await runCli(['status', '--store', 'level', '--datadir', datadir]);
    assert.match(status.stdout, new RegExp(`${(await a.tip()).hash}`));
  });

  it('--mempool-poll-ms goes with --store level and a node', async () => {
    const lmdb = await runCli(['serve', '--datadir', datadir, '--mempool-poll-ms', '100'], { env: { ADDRINDEX_RPC_URL: a.url } });
    assert.notEqual(lmdb.code, 0);
    assert.match(lmdb.stderr, /--mempool-poll-ms goes with --store level and a node[\s\S]*\[ERR_USAGE\]/);
    const noNode = await runCli(['serve', '--store', 'level', '--datadir', datadir, '--mempool-poll-ms', '100'], { env: {} });
    assert.notEqual(noNode.code, 0);
    assert.match(noNode.stderr, /--mempool-poll-ms goes with --store level and a node/);
  });
});
