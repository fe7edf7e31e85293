'use strict';

const assert = require('node:assert/strict');
const mempoolJS = require('@mempool/mempool.js');
const { syncedFixture, syncedGenerated, startServer, request, referenceIndex, HAL, SATOSHI, TX170 } = require('./helpers');

/**
 * The real @mempool/mempool.js client, unchanged, pointed at the server. It builds
 * `${protocol}://${hostname}/api/...` for mainnet (and /testnet/api, /signet/api for those),
 * with axios; protocol must be given as 'http' unless the hostname says localhost.
 */
describe('api: the @mempool/mempool.js client against the server', function () {
  let fixture;
  let srv;
  let bitcoin;
  let ref;

  before(async () => {
    fixture = await syncedFixture();
    srv = await startServer(fixture.datadir);
    const { port } = srv.server.address();
    ({ bitcoin } = mempoolJS({ hostname: `127.0.0.1:${port}`, network: 'mainnet', protocol: 'http' }));
    ref = referenceIndex();
  });
  after(async () => {
    if (srv) await srv.close();
    if (fixture) await fixture.cleanup();
  });

  it('getAddress: the height-170 payee has 10 BTC from one funded output', async () => {
    const a = await bitcoin.addresses.getAddress({ address: HAL });
    assert.equal(a.address, HAL);
    assert.deepEqual(a.chain_stats, { funded_txo_count: 1, funded_txo_sum: 1e9, spent_txo_count: 0, spent_txo_sum: 0, tx_count: 1 });
    assert.equal(a.mempool_stats.tx_count, 0);
    const s = await bitcoin.addresses.getAddress({ address: SATOSHI });
    const want = ref.at(SATOSHI).summary;
    assert.equal(s.chain_stats.funded_txo_sum - s.chain_stats.spent_txo_sum, want.balance);
    assert.equal(s.chain_stats.tx_count, want.txCount);
  });

  it('getAddressTxsUtxo and getAddressTxsChain: the height-170 output and transaction with status', async () => {
    const block170 = ref.txs.find((t) => t.txid === TX170);
    const status = { confirmed: true, block_height: 170, block_hash: block170.blockHash, block_time: block170.time };
    assert.deepEqual(await bitcoin.addresses.getAddressTxsUtxo({ address: HAL }), [{ txid: TX170, vout: 0, status, value: 1e9 }]);
    assert.deepEqual(await bitcoin.addresses.getAddressTxsChain({ address: HAL }), [{ txid: TX170, status }]);
    const chain = await bitcoin.addresses.getAddressTxsChain({ address: SATOSHI });
    assert.deepEqual(chain.map((t) => t.txid), ref.at(SATOSHI).history.map((e) => e.txid).reverse());
    assert.deepEqual(await bitcoin.addresses.getAddressTxsMempool({ address: HAL }), []);
  });

  it('transactions and blocks: tx status, tip height and hash, block at height', async () => {
    const block170 = ref.txs.find((t) => t.txid === TX170);
    assert.deepEqual(await bitcoin.transactions.getTxStatus({ txid: TX170 }),
      { confirmed: true, block_height: 170, block_hash: block170.blockHash, block_time: block170.time });
    assert.equal(await bitcoin.blocks.getBlocksTipHeight(), 438);
    assert.equal(await bitcoin.blocks.getBlocksTipHash(), ref.blocks[438].hash);
    assert.equal(await bitcoin.blocks.getBlockHeight({ height: 170 }), block170.blockHash);
  });

  it('what needs transaction bodies fails with 501 and says why', async () => {
    for (const call of [() => bitcoin.addresses.getAddressTxs({ address: HAL }), () => bitcoin.transactions.getTx({ txid: TX170 })]) {
      await assert.rejects(call(), (err) => {
        assert.equal(err.response.status, 501);
        assert.equal(err.response.data.error.code, 'ERR_NOT_IMPLEMENTED');
        return true;
      });
    }
    await assert.rejects(bitcoin.addresses.getAddress({ address: 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx' }),
      (err) => err.response.status === 400 && err.response.data.error.code === 'ERR_ADDRESS_NETWORK');
  });
});

describe('api: @mempool/mempool.js on a testnet index (its /testnet/api/ prefix)', function () {
  this.timeout(30000);
  let gen;
  let srv;

  before(async () => {
    gen = await syncedGenerated({ network: 'testnet', seed: 'mempool-js', blocks: 6, txsPerBlock: 6 });
    srv = await startServer(gen.datadir, { network: 'testnet' });
  });
  after(async () => {
    if (srv) await srv.close();
    if (gen) await gen.cleanup();
  });

  it('answers the client under /testnet/api/ as mempool.space does, and plain /api/ too', async () => {
    const { port } = srv.server.address();
    const { bitcoin } = mempoolJS({ hostname: `127.0.0.1:${port}`, network: 'testnet', protocol: 'http' });
    assert.equal(await bitcoin.blocks.getBlocksTipHeight(), gen.tip.height);
    const address = gen.addresses[0];
    const viaClient = await bitcoin.addresses.getAddress({ address });
    assert.equal(viaClient.address, address);
    assert.ok(viaClient.chain_stats.funded_txo_count >= 1);
    const plain = await request(`${srv.url}/api/address/${address}`);
    assert.deepEqual(plain.json, viaClient);
    // only this network's prefix: a signet path is not a route here, and mainnet addresses are refused
    assert.equal((await request(`${srv.url}/signet/api/blocks/tip/height`)).status, 404);
    await assert.rejects(bitcoin.addresses.getAddress({ address: HAL }), (err) => err.response.data.error.code === 'ERR_ADDRESS_NETWORK');
  });
});
