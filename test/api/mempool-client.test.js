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
    const hal = await bitcoin.addresses.getAddressTxsChain({ address: HAL });
    assert.deepEqual(hal.map((t) => [t.txid, t.status]), [[TX170, status]]);
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

  it('getTx, getTxHex, getTxOutspends: the height-170 payment, its prevout and fee, who spent its change', async () => {
    const tx = await bitcoin.transactions.getTx({ txid: TX170 });
    const r = ref.blocks[170].transactions[1];
    assert.equal(tx.txid, TX170);
    assert.equal(tx.size, r.toBuffer().length);
    assert.equal(tx.vin[0].prevout.value, 50e8);
    assert.equal(tx.vin[0].txid, r.inputs[0].prevTxId.toString('hex'));
    assert.deepEqual(tx.vout.map((o) => o.value), r.outputs.map((o) => o.satoshis));
    assert.equal(tx.fee, 0);
    assert.equal(await bitcoin.transactions.getTxHex({ txid: TX170 }), r.toBuffer().toString('hex'));
    const spends = await bitcoin.transactions.getTxOutspends({ txid: TX170 });
    const change = ref.outputs.find((o) => o.txid === TX170 && o.vout === 1);
    assert.deepEqual(spends.map((s) => [s.spent, s.txid, s.vin]), [[false, undefined, undefined], [true, change.spentTxid, change.spentVin]]);
    assert.equal(spends[1].status.block_height, change.spentAt);
    await assert.rejects(bitcoin.transactions.getTx({ txid: '11'.repeat(32) }), (err) => err.response.status === 404);
  });

  it('getAddressTxs (and after_txid): whole transactions newest first, as getTx answers each', async () => {
    const want = ref.at(SATOSHI).history.map((e) => e.txid).reverse();
    const txs = await bitcoin.addresses.getAddressTxs({ address: SATOSHI });
    assert.deepEqual(txs.map((t) => t.txid), want);
    for (const t of txs) assert.deepEqual(t, await bitcoin.transactions.getTx({ txid: t.txid }));
    const after = await bitcoin.addresses.getAddressTxs({ address: SATOSHI, after_txid: want[0] });
    assert.deepEqual(after.map((t) => t.txid), want.slice(1));
  });

  it('getBlock and getBlockTxs: block 170 as mempool.space shapes it, its transactions with and without a start index', async () => {
    const b = ref.blocks[170];
    const block = await bitcoin.blocks.getBlock({ hash: b.hash });
    assert.equal(block.id, b.hash);
    assert.equal(block.height, 170);
    assert.equal(block.tx_count, 2);
    assert.equal(block.timestamp, b.header.time);
    assert.equal(block.previousblockhash, ref.blocks[169].hash);
    assert.equal(block.extras.reward, 50e8);
    assert.equal(block.extras.coinbaseRaw, b.transactions[0].inputs[0]._scriptBuffer.toString('hex'));
    const txs = await bitcoin.blocks.getBlockTxs({ hash: b.hash }); // the client asks for /txs/undefined
    assert.deepEqual(txs.map((t) => t.txid), b.transactions.map((t) => t.hash));
    assert.deepEqual(await bitcoin.blocks.getBlockTxs({ hash: b.hash, start_index: 0 }), txs);
    assert.deepEqual(txs[1], await bitcoin.transactions.getTx({ txid: TX170 }));
    const blocks = await bitcoin.blocks.getBlocks({ start_height: 170 });
    assert.deepEqual(blocks[0], block);
    assert.deepEqual(blocks.map((x) => x.height), [170, 169, 168, 167, 166, 165, 164, 163, 162, 161]);
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
    // transactions and blocks too, mempool.space's /testnet/api/v1/block included
    const [tx] = await bitcoin.addresses.getAddressTxs({ address });
    assert.deepEqual(await bitcoin.transactions.getTx({ txid: tx.txid }), (await request(`${srv.url}/api/tx/${tx.txid}`)).json);
    const block = await bitcoin.blocks.getBlock({ hash: tx.status.block_hash });
    assert.equal(block.height, tx.status.block_height);
    assert.ok((await bitcoin.blocks.getBlockTxs({ hash: block.id })).some((t) => t.txid === tx.txid));
    await assert.rejects(bitcoin.addresses.getAddress({ address: HAL }), (err) => err.response.data.error.code === 'ERR_ADDRESS_NETWORK');
  });
});
