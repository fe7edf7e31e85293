'use strict';

const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const bitcore = require('bitcore-lib');
const { syncedFixture, startServer, request, referenceIndex, HAL, SATOSHI, TX170 } = require('../api/helpers');
const { startElectrum, connectClient, scripthashOf, toElectrum, expectedStatus, rootOf, plainMerkleRoot } = require('./helpers');
const { NETWORKS } = require('../../lib/chain/networks');

const scripthashOfAddress = (a) => scripthashOf(bitcore.Script.fromAddress(a).toBuffer());

describe('electrum: @mempool/electrum-client against the bundled mainnet blocks', function () {
  this.timeout(60000);
  let fixture;
  let srv;
  let rest;
  let client;
  let ref;
  let sref; // the reference in the script view: script hashes mean sha256 of the output script

  before(async () => {
    fixture = await syncedFixture();
    srv = await startElectrum(fixture.datadir, { blocksDir: fixture.blocksDir });
    rest = await startServer(fixture.datadir);
    client = await connectClient(srv.port);
    ref = referenceIndex();
    sref = referenceIndex('script');
  });
  after(async () => {
    if (client) client.close();
    if (srv) await srv.close();
    if (rest) await rest.close();
    if (fixture) await fixture.cleanup();
  });

  it('server.version negotiates 1.4; server.features names the mainnet genesis and the protocol range', async () => {
    const version = require('../../package.json').version;
    assert.deepEqual(await client.server_version('test-client 1.0', '1.4'), [`addrindex ${version}`, '1.4']);
    const f = await client.server_features();
    assert.equal(f.genesis_hash, NETWORKS.main.genesis);
    assert.equal(f.genesis_hash, ref.blocks[0].hash);
    assert.equal(f.protocol_min, '1.4');
    assert.equal(f.protocol_max, '1.4.2');
    assert.equal(f.hash_function, 'sha256');
    assert.equal(f.pruning, null);
    assert.equal(f.server_version, `addrindex ${version}`);
    assert.deepEqual(f.hosts, { '127.0.0.1': { tcp_port: srv.port, ssl_port: null } });
  });

  it('balances, histories and unspent outputs of every output script equal the bitcore reference of the script view', async () => {
    const shs = sref.scripthashes();
    assert.ok(shs.length > 400);
    for (const hex of shs) {
      const sh = toElectrum(hex);
      const want = sref.at(hex);
      const [bal, hist, utxos] = await Promise.all([
        client.blockchainScripthash_getBalance(sh), client.blockchainScripthash_getHistory(sh), client.blockchainScripthash_listunspent(sh)]);
      assert.deepEqual(bal, { confirmed: want.summary.balance, unconfirmed: 0 }, sh);
      assert.deepEqual(hist, want.history.map((e) => ({ tx_hash: e.txid, height: e.height })), sh);
      assert.deepEqual(utxos, want.utxos.map((u) => ({ tx_hash: u.txid, tx_pos: u.vout, height: u.height, value: u.value })), sh);
    }
  });

  it('a P2PK output is found under its own script hash, not its key\'s P2PKH one; the REST address routes still count it (both said in the banner)', async () => {
    // height 170 pays Hal Finney with a P2PK output
    const tx = ref.blocks[170].transactions.find((t) => t.hash === TX170);
    const p2pk = tx.outputs[0].script;
    assert.ok(p2pk.isPublicKeyOut());
    assert.equal(srv.reader.exactScripthash, true);
    assert.equal(sref.p2pkOf(HAL), crypto.createHash('sha256').update(p2pk.toBuffer()).digest().toString('hex'));
    assert.deepEqual(await client.blockchainScripthash_getHistory(scripthashOf(p2pk.toBuffer())), [{ tx_hash: TX170, height: 170 }]);
    assert.deepEqual(await client.blockchainScripthash_getBalance(scripthashOf(p2pk.toBuffer())), { confirmed: 10 * 1e8, unconfirmed: 0 });
    assert.match(await client.server_banner(), /a P2PK output is found under its own script's hash, not under its key's P2PKH script hash/);
    // every address of these blocks is a P2PK key's: its P2PKH script hash answers nothing over
    // Electrum, and the key's P2PK outputs over the REST address routes
    const addresses = ref.addresses();
    assert.ok(addresses.length > 400);
    for (const a of addresses) {
      const sh = scripthashOfAddress(a);
      const [bal, hist, utxos, answer] = await Promise.all([client.blockchainScripthash_getBalance(sh), client.blockchainScripthash_getHistory(sh),
        client.blockchainScripthash_listunspent(sh), client.request('blockchain.scripthash.subscribe', [sh])]);
      // (the client hands back the whole message when the result is null)
      assert.deepEqual([bal, hist, utxos, answer.result], [{ confirmed: 0, unconfirmed: 0 }, [], [], null], a);
      const own = sref.at(sref.p2pkOf(a));
      const [rSum, rHist] = await Promise.all([request(`${rest.url}/api/v1/address/${a}`), request(`${rest.url}/api/v1/address/${a}/history?limit=1000`)]);
      assert.equal(rSum.json.balance, ref.at(a).summary.balance, a);
      assert.equal(rSum.json.balance, own.summary.balance, a);
      assert.deepEqual(rHist.json.entries.map((e) => e.txid), own.history.map((e) => e.txid), a);
      // the P2PK script's own hash: the same outputs over REST's script hash route
      const rOwn = await request(`${rest.url}/api/v1/scripthash/${toElectrum(sref.p2pkOf(a))}`);
      assert.equal(rOwn.json.balance, own.summary.balance, a);
      await client.request('blockchain.scripthash.unsubscribe', [sh]);
    }
  });

  it('subscribe answers the status recomputed from the reference history (null for an unused script hash)', async () => {
    for (const hex of [sref.p2pkOf(HAL), sref.p2pkOf(SATOSHI), ...sref.busiest(10)]) {
      const status = await client.blockchainScripthash_subscribe(toElectrum(hex));
      assert.equal(status, expectedStatus(sref.at(hex).history), hex);
    }
    const unused = scripthashOf(Buffer.from('76a914000000000000000000000000000000000000000088ac', 'hex'));
    // the client hands back the whole message when the result is null
    const answer = await client.blockchainScripthash_subscribe(unused);
    assert.equal(answer && typeof answer === 'object' ? answer.result : answer, null);
    assert.deepEqual(await client.blockchainScripthash_getHistory(unused), []);
  });

  it('get_merkle and id_from_pos: every branch leads to the merkle root in the block header', async () => {
    let checked = 0;
    for (const height of [0, 1, 170, 181, 182, 183, 248, 300, 438]) {
      const block = ref.blocks[height];
      const root = Buffer.from(block.header.merkleRoot).reverse().toString('hex');
      const txids = block.transactions.map((t) => t.hash);
      assert.equal(plainMerkleRoot(txids), root);
      for (let pos = 0; pos < txids.length; pos++) {
        const m = await client.blockchainTransaction_getMerkle(txids[pos], height);
        assert.deepEqual([m.block_height, m.pos], [height, pos]);
        assert.equal(rootOf(txids[pos], pos, m.merkle), root, `${height}/${pos}`);
        const byPos = await client.request('blockchain.transaction.id_from_pos', [height, pos, true]);
        assert.deepEqual(byPos, { tx_hash: txids[pos], merkle: m.merkle });
        assert.equal(await client.request('blockchain.transaction.id_from_pos', { height, tx_pos: pos }), txids[pos]);
        checked++;
      }
    }
    assert.ok(checked > 12, `only ${checked} transactions`);
    await assert.rejects(client.blockchainTransaction_getMerkle(TX170, 171), (e) => e.code === 1 && /not in block at height 171/.test(e.message));
    await assert.rejects(client.request('blockchain.transaction.id_from_pos', [170, 2]), (e) => e.code === 1 && /no tx at position 2/.test(e.message));
    await assert.rejects(client.request('blockchain.transaction.id_from_pos', [439, 0]), (e) => e.code === 1 && /out of range/.test(e.message));
  });

  it('headers: each one, runs of them, the tip, and proofs to a checkpoint, all against the fixture blocks', async () => {
    const raw = ref.blocks.map((b) => b.header.toBuffer().toString('hex'));
    for (const h of [0, 1, 170, 437, 438]) assert.equal(await client.request('blockchain.block.header', [h]), raw[h]);
    const all = await client.request('blockchain.block.headers', [0, 2016]);
    assert.deepEqual(all, { count: 439, hex: raw.join(''), max: 2016 });
    assert.deepEqual(await client.request('blockchain.block.headers', [430, 5]), { count: 5, hex: raw.slice(430, 435).join(''), max: 2016 });
    assert.deepEqual(await client.request('blockchain.block.headers', [439, 10]), { count: 0, hex: '', max: 2016 });
    assert.deepEqual(await client.blockchainHeaders_subscribe(), { hex: raw[438], height: 438 });

    // the protocol documentation's example, then every height against a root computed here
    const doc = await client.request('blockchain.block.header', { height: 5, cp_height: 8 });
    assert.equal(doc.root, 'e347b1c43fd9b5415bf0d92708db8284b78daf4d0e24f9c3405f45feb85e25db');
    const hashes = ref.blocks.map((b) => b.hash);
    for (const cp of [8, 200, 438]) {
      const root = plainMerkleRoot(hashes.slice(0, cp + 1));
      for (const h of [0, 5, Math.floor(cp / 2), cp]) {
        const p = await client.request('blockchain.block.header', [h, cp]);
        assert.equal(p.header, raw[h]);
        assert.equal(p.root, root);
        assert.equal(rootOf(hashes[h], h, p.branch), root, `header ${h} to ${cp}`);
      }
    }
    const run = await client.request('blockchain.block.headers', [100, 50, 438]);
    assert.equal(run.count, 50);
    assert.equal(rootOf(hashes[149], 149, run.branch), plainMerkleRoot(hashes));
    await assert.rejects(client.request('blockchain.block.header', [9, 8]), (e) => e.code === 1 && /cp_height 8/.test(e.message));
    await assert.rejects(client.request('blockchain.block.header', [5, 439]), (e) => e.code === 1 && /chain height 438/.test(e.message));
    await assert.rejects(client.request('blockchain.block.header', [439]), (e) => e.code === 1 && /height 439 out of range/.test(e.message));
  });

  it('batches: BlueWallet-style arrays of get_balance and listunspent answer each item', async () => {
    const hexes = sref.busiest(25);
    const shs = hexes.map(toElectrum);
    const balances = await client.blockchainScripthash_getBalanceBatch(shs);
    assert.equal(balances.length, 25);
    for (const r of balances) {
      assert.deepEqual(r.result, { confirmed: sref.at(hexes[shs.indexOf(r.param)]).summary.balance, unconfirmed: 0 });
    }
    const unspent = await client.blockchainScripthash_listunspentBatch(shs);
    for (const r of unspent) assert.equal(r.result.length, sref.at(hexes[shs.indexOf(r.param)]).utxos.length);
  });

  it('transaction.get: the raw bytes bitcore-lib serializes; verbose gets Esplora\'s error text', async () => {
    for (const height of [1, 170, 438]) {
      for (const tx of ref.blocks[height].transactions) {
        assert.equal(await client.blockchainTransaction_get(tx.hash), tx.toBuffer().toString('hex'));
      }
    }
    const txs = await client.blockchainTransaction_getBatch([TX170, ref.blocks[9].transactions[0].hash]);
    assert.deepEqual(txs.map((t) => t.result), [ref.blocks[170].transactions[1].toBuffer().toString('hex'), ref.blocks[9].transactions[0].toBuffer().toString('hex')]);
    await assert.rejects(client.blockchainTransaction_get(TX170, true),
      (e) => e.code === 1 && e.message === 'verbose transactions are currently unsupported');
    await assert.rejects(client.blockchainTransaction_get('00'.repeat(32)), (e) => e.code === 1 && /no transaction 0{64} in the index/.test(e.message));
  });

  it('without a node: confirmed data only, and said so (unconfirmed 0, estimatefee -1, empty mempool, no broadcast)', async () => {
    assert.equal(await client.blockchainEstimatefee(2), -1);
    assert.equal(await client.blockchain_relayfee(), 0.00001);
    assert.deepEqual(await client.mempool_getFeeHistogram(), []);
    assert.deepEqual(await client.blockchainScripthash_getMempool(toElectrum(sref.p2pkOf(SATOSHI))), []);
    assert.deepEqual(await client.serverPeers_subscribe(), []);
    assert.match(await client.server_banner(), /No node behind this server/);
    await assert.rejects(client.blockchainTransaction_broadcast('0100'), (e) => e.code === 2 && /no node/.test(e.message));
    const ping = await client.server_ping();
    assert.equal(ping && typeof ping === 'object' ? ping.result : ping, null);
  });
});
