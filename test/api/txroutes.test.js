'use strict';

const assert = require('node:assert/strict');
const bitcore = require('bitcore-lib');
const { syncedFixture, syncedGenerated, startServer, request, referenceIndex, HAL, SATOSHI, TX170 } = require('./helpers');
const { chainOutputs, outputAddress } = require('../helpers/reference');
const { mainnet439Blocks } = require('../helpers/fixtures');
const { readDirRecords } = require('../generator/helpers');
const { parseBlock } = require('../../lib/chain/block');
const { rootFromBranch } = require('../../lib/chain/merkle');
const { fromDisplayHex, toDisplayHex } = require('../../lib/chain/hash');
const { medianTimePast } = require('../../lib/chain/difficulty');
const { blockProof } = require('../../lib/sources/header-index');
const { getNetwork } = require('../../lib/chain/networks');
const { esploraTx, esploraBlock, blockFacts } = require('../../lib/api/esplora-format');
const { insightTx, insightBlock } = require('../../lib/api/insight-format');

const bitcoreNet = (network) => (network === 'main' ? bitcore.Networks.livenet : bitcore.Networks.testnet);
const ADDRESS_TYPES = new Set(['p2pkh', 'p2sh', 'v0_p2wpkh', 'v0_p2wsh', 'v1_p2tr']);

/**
 * An independent picture of a chain: its raw blocks decoded by bitcore-lib, each output's
 * spender and every input's previous output as bitcore-lib reads them.
 * @param {Buffer[]} raws by height
 */
function bitcoreChain(raws) {
  const blocks = raws.map((raw) => bitcore.Block.fromBuffer(raw));
  const outputs = new Map(); // "txid:vout" -> {value, script}
  const spenders = new Map(); // "txid:vout" -> {txid, vin, height}
  const txs = new Map(); // txid -> {tx, height, position}
  blocks.forEach((b, height) => b.transactions.forEach((tx, position) => {
    txs.set(tx.hash, { tx, height, position });
    tx.outputs.forEach((o, n) => outputs.set(`${tx.hash}:${n}`, { value: o.satoshis, script: o.script.toBuffer() }));
    if (!tx.isCoinbase()) {
      tx.inputs.forEach((i, vin) => spenders.set(`${i.prevTxId.toString('hex')}:${i.outputIndex}`, { txid: tx.hash, vin, height }));
    }
  }));
  const prevoutsOf = (tx) => (tx.isCoinbase() ? [null] : tx.inputs.map((i) => outputs.get(`${i.prevTxId.toString('hex')}:${i.outputIndex}`)));
  const status = (height) => ({ confirmed: true, block_height: height, block_hash: blocks[height].hash, block_time: blocks[height].header.time });
  return { raws, blocks, outputs, spenders, txs, prevoutsOf, status };
}

/**
 * Every field of an Esplora transaction that bitcore-lib can decode, checked against it; the
 * rest (asm, types, inner scripts: the formatter's own, checked against real Esplora answers
 * in esplora-format.test.js) by equality with the formatter over bitcore-lib's prevouts.
 */
function assertEsploraTx(j, chain, txid, network) {
  const { tx: r, height, position } = chain.txs.get(txid);
  const prevouts = chain.prevoutsOf(r);
  const where = `${txid} (height ${height})`;
  assert.equal(j.txid, r.hash, where);
  assert.equal(j.version, r.version >>> 0, where);
  assert.equal(j.locktime, r.nLockTime, where);
  const size = r.toBuffer().length;
  assert.equal(j.size, size, where);
  assert.equal(j.weight, 3 * r.toBuffer(true).length + size, where);
  assert.equal(j.fee, r.isCoinbase() ? 0 : prevouts.reduce((s, p) => s + p.value, 0) - r.outputAmount, where);
  assert.deepEqual(j.status, chain.status(height), where);
  assert.equal(j.vin.length, r.inputs.length, where);
  j.vin.forEach((v, k) => {
    const ri = r.inputs[k];
    assert.equal(v.is_coinbase, r.isCoinbase(), where);
    assert.equal(v.txid, ri.prevTxId.toString('hex'), where);
    assert.equal(v.vout, ri.outputIndex, where);
    assert.equal(v.scriptsig, ri._scriptBuffer.toString('hex'), where);
    assert.equal(v.sequence, ri.sequenceNumber, where);
    const w = ri.witnesses || [];
    assert.deepEqual(v.witness, w.length ? w.map((x) => x.toString('hex')) : undefined, where);
    if (r.isCoinbase()) {
      assert.equal(v.prevout, null, where);
    } else {
      assert.equal(v.prevout.value, prevouts[k].value, where);
      assert.equal(v.prevout.scriptpubkey, prevouts[k].script.toString('hex'), where);
      if (ADDRESS_TYPES.has(v.prevout.scriptpubkey_type)) {
        assert.equal(v.prevout.scriptpubkey_address, bitcore.Address.fromScript(bitcore.Script.fromBuffer(prevouts[k].script), bitcoreNet(network)).toString(), where);
      }
    }
  });
  assert.equal(j.vout.length, r.outputs.length, where);
  j.vout.forEach((o, n) => {
    assert.equal(o.scriptpubkey, r.outputs[n].script.toBuffer().toString('hex'), where);
    assert.equal(o.value, r.outputs[n].satoshis, where);
    if (ADDRESS_TYPES.has(o.scriptpubkey_type)) {
      assert.equal(o.scriptpubkey_address, bitcore.Address.fromScript(r.outputs[n].script, bitcoreNet(network)).toString(), where);
    } else if (o.scriptpubkey_type !== 'unknown') {
      assert.equal(o.scriptpubkey_address, undefined, where); // p2pk included, as Esplora
    }
  });
  const ours = parseBlock(chain.raws[height]).txs[position];
  const b = chain.blocks[height];
  assert.deepEqual(j, esploraTx(ours, { prevouts, block: { height, hash: b.hash, time: b.header.time }, network }), where);
}

/** Who spent each output, as Esplora's /outspends says it, from bitcore-lib's decoding. */
function expectedOutspends(chain, txid) {
  const { tx } = chain.txs.get(txid);
  return tx.outputs.map((o, n) => {
    const s = chain.spenders.get(`${txid}:${n}`);
    return s ? { spent: true, txid: s.txid, vin: s.vin, status: chain.status(s.height) } : { spent: false };
  });
}

describe('api: transactions and blocks read from the blocks dir (439 mainnet blocks)', function () {
  this.timeout(120000);
  let fixture;
  let srv;
  let ref;
  let chain;
  const get = (p) => request(srv.url + p);
  const tip = 438;

  before(async () => {
    fixture = await syncedFixture();
    srv = await startServer(fixture.datadir);
    ref = referenceIndex();
    chain = bitcoreChain(mainnet439Blocks());
  });
  after(async () => {
    if (srv) await srv.close();
    if (fixture) await fixture.cleanup();
  });

  it('GET /api/tx/:txid for every transaction: every field as bitcore-lib decodes it, prevouts and fees from the funding transactions', async () => {
    for (const txid of ref.txids) {
      const r = await get(`/api/tx/${txid}`);
      assert.equal(r.status, 200, txid);
      assertEsploraTx(r.json, chain, txid, 'main');
    }
    const hal = (await get(`/api/tx/${TX170}`)).json;
    assert.equal(hal.vin[0].prevout.value, 50e8);
    assert.equal(hal.vin[0].prevout.scriptpubkey_type, 'p2pk');
    assert.equal(hal.vout[0].scriptpubkey_address, undefined); // P2PK: Esplora names no address
  });

  it('/hex and /raw: the transaction\'s bytes; /status; unknown txids 404 (status: unconfirmed, as Esplora)', async () => {
    for (const txid of ref.txids) {
      const bytes = chain.txs.get(txid).tx.toBuffer();
      const hex = await get(`/api/tx/${txid}/hex`);
      assert.equal(hex.text, bytes.toString('hex'));
      assert.match(hex.headers.get('content-type'), /^text\/plain/);
      const raw = await fetch(`${srv.url}/api/tx/${txid}/raw`);
      assert.equal(raw.headers.get('content-type'), 'application/octet-stream');
      assert.deepEqual(Buffer.from(await raw.arrayBuffer()), bytes);
    }
    const unknown = '11'.repeat(32);
    for (const p of ['', '/hex', '/raw', '/outspends', '/merkle-proof']) {
      const r = await get(`/api/tx/${unknown}${p}`);
      assert.equal(r.status, 404, p);
      assert.equal(r.json.error.code, 'ERR_TX_NOT_FOUND', p);
    }
    assert.deepEqual((await get(`/api/tx/${unknown}/status`)).json, { confirmed: false });
    assert.deepEqual((await get(`/api/tx/${unknown}/outspend/0`)).json, { spent: false });
  });

  it('/outspends and /outspend/:vout: the spender of every output, from the index\'s spender rows', async () => {
    let spent = 0;
    for (const txid of ref.txids) {
      const want = expectedOutspends(chain, txid);
      spent += want.filter((o) => o.spent).length;
      assert.deepEqual((await get(`/api/tx/${txid}/outspends`)).json, want, txid);
      for (let n = 0; n < want.length; n++) assert.deepEqual((await get(`/api/tx/${txid}/outspend/${n}`)).json, want[n]);
      // past the last output: unspent, as electrs answers
      assert.deepEqual((await get(`/api/tx/${txid}/outspend/${want.length}`)).json, { spent: false });
    }
    assert.equal(spent, ref.outputs.filter((o) => o.spentAt !== null).length);
    assert.ok(spent >= 5);
  });

  it('/merkle-proof: each branch leads from the txid to the header\'s merkle root', async () => {
    for (const txid of ref.txids) {
      const { height, position } = chain.txs.get(txid);
      const r = (await get(`/api/tx/${txid}/merkle-proof`)).json;
      assert.equal(r.block_height, height);
      assert.equal(r.pos, position);
      const root = rootFromBranch(fromDisplayHex(txid), r.merkle.map(fromDisplayHex), r.pos);
      assert.equal(toDisplayHex(root), chain.blocks[height].header.merkleRoot.toString('hex').match(/../g).reverse().join(''));
    }
  });

  it('GET /api/block/:hash for every block: header fields, size, weight, median time; /header, /raw, /status, /txids, /txid/:i, /txs', async () => {
    for (let h = 0; h <= tip; h++) {
      const b = chain.blocks[h];
      const r = await get(`/api/block/${b.hash}`);
      assert.equal(r.status, 200);
      const times = chain.blocks.slice(Math.max(0, h - 10), h + 1).map((x) => x.header.time);
      assert.deepEqual(r.json, {
        id: b.hash, height: h, version: b.header.version, timestamp: b.header.time, tx_count: b.transactions.length,
        size: chain.raws[h].length, weight: 4 * chain.raws[h].length, // no witness before segwit
        merkle_root: Buffer.from(b.header.merkleRoot).reverse().toString('hex'),
        previousblockhash: h === 0 ? null : chain.blocks[h - 1].hash, mediantime: medianTimePast(times),
        nonce: b.header.nonce, bits: b.header.bits, difficulty: 1,
      });
      assert.equal((await get(`/api/block/${b.hash}/header`)).text, b.header.toBuffer().toString('hex'));
      assert.deepEqual((await get(`/api/block/${b.hash}/status`)).json, { in_best_chain: true, height: h, next_best: h < tip ? chain.blocks[h + 1].hash : null });
      const txids = b.transactions.map((t) => t.hash);
      assert.deepEqual((await get(`/api/block/${b.hash}/txids`)).json, txids);
      for (let i = 0; i < txids.length; i++) assert.equal((await get(`/api/block/${b.hash}/txid/${i}`)).text, txids[i]);
      const txs = (await get(`/api/block/${b.hash}/txs`)).json;
      assert.deepEqual(txs, await Promise.all(txids.map(async (t) => (await get(`/api/tx/${t}`)).json)));
    }
    const raw = await fetch(`${srv.url}/api/block/${chain.blocks[170].hash}/raw`);
    assert.deepEqual(Buffer.from(await raw.arrayBuffer()), chain.raws[170]);
  });

  it('/api/blocks[/:start_height]: ten blocks newest first, as /api/block answers each', async () => {
    const tipBlocks = (await get('/api/blocks')).json;
    assert.deepEqual(tipBlocks.map((b) => b.height), [438, 437, 436, 435, 434, 433, 432, 431, 430, 429]);
    assert.deepEqual(tipBlocks[3], (await get(`/api/block/${chain.blocks[435].hash}`)).json);
    assert.deepEqual((await get('/api/blocks/5')).json.map((b) => b.id), [5, 4, 3, 2, 1, 0].map((h) => chain.blocks[h].hash));
    assert.deepEqual((await get('/api/blocks/tip')).json, tipBlocks); // electrs: unparsable means the tip
    assert.equal((await get('/api/blocks/439')).status, 404);
  });

  it('address txs: /txs and /txs/chain list whole transactions newest first, as /api/tx answers each; after_txid pages', async () => {
    for (const a of [HAL, SATOSHI, ...ref.busiest(3)]) {
      const want = ref.at(a).history.map((e) => e.txid).reverse();
      const [txs, chainTxs] = await Promise.all([get(`/api/address/${a}/txs`), get(`/api/address/${a}/txs/chain`)]);
      assert.deepEqual(txs.json, chainTxs.json);
      assert.deepEqual(txs.json.map((t) => t.txid), want.slice(0, 25));
      for (const t of txs.json) assert.deepEqual(t, (await get(`/api/tx/${t.txid}`)).json);
    }
    const sat = ref.at(SATOSHI).history.map((e) => e.txid).reverse();
    const after = await get(`/api/address/${SATOSHI}/txs?after_txid=${sat[1]}`);
    assert.deepEqual(after.json.map((t) => t.txid), sat.slice(2));
    const missing = await get(`/api/address/${SATOSHI}/txs?after_txid=${ref.txids[3]}`);
    assert.equal(missing.status, 422);
    assert.equal(missing.json.error.code, 'ERR_AFTER_TXID_NOT_FOUND');
  });

  it('insight: /tx for every transaction (prevouts, fees, spenders), /rawtx, /txs?block and ?address, /addrs/txs, /block, /block-index, /rawblock', async () => {
    const expected = (txid) => {
      const { tx, height, position } = chain.txs.get(txid);
      const b = chain.blocks[height];
      const ours = parseBlock(chain.raws[height]).txs[position];
      const spends = tx.outputs.map((o, n) => chain.spenders.get(`${txid}:${n}`) || null);
      return insightTx(ours, { prevouts: chain.prevoutsOf(tx), spends, block: { height, hash: b.hash, time: b.header.time }, tipHeight: tip, network: 'main' });
    };
    for (const txid of ref.txids) {
      const r = await get(`/insight-api/tx/${txid}`);
      assert.equal(r.status, 200, txid);
      const { tx } = chain.txs.get(txid);
      assert.equal(r.json.valueOut, tx.outputAmount / 1e8);
      if (!tx.isCoinbase()) assert.equal(r.json.fees, (chain.prevoutsOf(tx).reduce((s, p) => s + p.value, 0) - tx.outputAmount) / 1e8);
      assert.deepEqual(r.json, expected(txid), txid);
      assert.deepEqual((await get(`/insight-api/rawtx/${txid}`)).json, { rawtx: tx.toBuffer().toString('hex') });
    }
    const h170 = chain.blocks[170];
    const byBlock = await get(`/insight-api/txs?block=${h170.hash}`);
    assert.deepEqual(byBlock.json, { pagesTotal: 1, txs: h170.transactions.map((t) => expected(t.hash)) });
    const sat = ref.at(SATOSHI).history.map((e) => e.txid).reverse();
    const byAddr = await get(`/insight-api/txs?address=${SATOSHI}&pageNum=0`);
    assert.deepEqual(byAddr.json, { pagesTotal: Math.ceil(sat.length / 10), txs: sat.slice(0, 10).map(expected) });
    assert.equal((await get('/insight-api/txs')).status, 400);

    // several addresses: merged, newest first, ties by txid descending (the patched node's order)
    const addrs = [HAL, SATOSHI, ...ref.busiest(4)];
    const seen = new Map();
    for (const a of addrs) for (const e of ref.at(a).history) seen.set(e.txid, e.height);
    const order = [...seen].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? 1 : -1)).map(([t]) => t);
    const multi = await get(`/insight-api/addrs/${addrs.join(',')}/txs?from=2&to=7`);
    assert.deepEqual(multi.json, { totalItems: order.length, from: 2, to: 7, items: order.slice(2, 7).map(expected) });
    const posted = await request(`${srv.url}/insight-api/addrs/txs`, { method: 'POST', body: { addrs: addrs.join(','), from: 2, to: 7 } });
    assert.deepEqual(posted.json, multi.json);
    const bare = await get(`/insight-api/addrs/${addrs.join(',')}/txs?noAsm=1&noScriptSig=1&noSpent=1`);
    assert.equal(bare.json.items.length, Math.min(10, order.length));
    for (const t of bare.json.items) {
      for (const v of t.vout) assert.ok(!('asm' in v.scriptPubKey) && !('spentTxId' in v));
      for (const v of t.vin) assert.ok(!('scriptSig' in v));
    }
    assert.equal((await get(`/insight-api/addrs/${HAL}/txs?from=0&to=51`)).status, 400);

    let work = 0n;
    const works = chain.blocks.map((b) => { work += blockProof(b.header.bits); return work; });
    for (const h of [0, 1, 170, tip]) {
      const b = chain.blocks[h];
      assert.deepEqual((await get(`/insight-api/block-index/${h}`)).json, { blockHash: b.hash });
      const want = insightBlock(blockFacts(parseBlock(chain.raws[h])), {
        txids: b.transactions.map((t) => t.hash), height: h, tipHeight: tip, chainwork: works[h], nextHash: h < tip ? chain.blocks[h + 1].hash : null,
      });
      assert.deepEqual((await get(`/insight-api/block/${b.hash}`)).json, want);
      assert.deepEqual((await get(`/insight-api/rawblock/${b.hash}`)).json, { rawblock: chain.raws[h].toString('hex') });
    }
    assert.equal((await get('/insight-api/block-index/439')).status, 404);
  });

  it('native /api/v1/tx/:txid?full=1: values, addresses and script hashes as the index files them, spenders, fee', async () => {
    for (const txid of ref.txids) {
      const { tx, height, position } = chain.txs.get(txid);
      const r = (await get(`/api/v1/tx/${txid}?full=1`)).json;
      const plain = (await get(`/api/v1/tx/${txid}`)).json;
      assert.deepEqual({ ...r, version: undefined }, { ...r, ...plain, version: undefined });
      assert.equal(r.position, position);
      assert.equal(r.height, height);
      assert.equal(r.coinbase, tx.isCoinbase());
      assert.equal(r.size, tx.toBuffer().length);
      const prevouts = chain.prevoutsOf(tx);
      if (!tx.isCoinbase()) {
        r.inputs.forEach((i, k) => {
          assert.equal(i.value, prevouts[k].value);
          assert.equal(i.address, outputAddress(bitcore.Script.fromBuffer(prevouts[k].script)));
        });
        assert.equal(r.fee, prevouts.reduce((s, p) => s + p.value, 0) - tx.outputAmount);
      }
      r.outputs.forEach((o, n) => {
        assert.equal(o.value, tx.outputs[n].satoshis);
        assert.equal(o.address, outputAddress(tx.outputs[n].script)); // P2PK under its key's P2PKH address
        const s = chain.spenders.get(`${txid}:${n}`);
        assert.deepEqual(o.spent, s ? { txid: s.txid, vin: s.vin, height: s.height } : null);
      });
    }
    assert.equal((await get(`/api/v1/tx/${TX170}?full=2`)).status, 400);
  });

  it('the mempool hook: an unconfirmed spender from a mempool view of the current tip, none from a view of another', async () => {
    const { MempoolView } = require('../../lib/core/mempool');
    const spender = Buffer.alloc(32, 0x5a); // a mempool transaction spending Hal's unspent output
    const snapshot = (tipHash) => new MempoolView(({
      seq: 1, tip: fromDisplayHex(tipHash), txs: [{
        txid: spender, time: 1, fee: 1000, vsize: 110, raw: Buffer.from('00', 'hex'),
        inputs: [{ txid: fromDisplayHex(TX170), vout: 0, value: 1e9, scripthash: Buffer.alloc(32, 1), unconfirmed: false }],
        outputs: [{ value: 1e9 - 1000, scripthash: Buffer.alloc(32, 2) }],
      }],
    }));
    let view = snapshot(chain.blocks[tip].hash);
    const withPool = await startServer(fixture.datadir, { mempool: () => view });
    try {
      const got = (p) => request(withPool.url + p);
      const unconfirmed = { spent: true, txid: toDisplayHex(spender), vin: 0, status: { confirmed: false } };
      assert.deepEqual((await got(`/api/tx/${TX170}/outspend/0`)).json, unconfirmed);
      assert.deepEqual((await got(`/api/tx/${TX170}/outspends`)).json[0], unconfirmed);
      const ins = (await got(`/insight-api/tx/${TX170}`)).json.vout[0];
      assert.deepEqual([ins.spentTxId, ins.spentIndex, ins.spentHeight], [toDisplayHex(spender), 0, null]);
      assert.deepEqual((await got(`/api/v1/tx/${TX170}?full=1`)).json.outputs[0].spent, { txid: toDisplayHex(spender), vin: 0, height: null });
      // the confirmed spender of output 1 still comes from the index
      assert.deepEqual((await got(`/api/tx/${TX170}/outspends`)).json[1], (await get(`/api/tx/${TX170}/outspends`)).json[1]);
      // a view resolved against another tip is not this index's mempool: nothing from it
      view = snapshot(chain.blocks[tip - 1].hash);
      assert.deepEqual((await got(`/api/tx/${TX170}/outspend/0`)).json, { spent: false });
    } finally {
      await withPool.close();
    }
  });

  it('hostile txids, hashes, indexes and pages: 4xx JSON, never a 500', async () => {
    const h = chain.blocks[170].hash;
    const cases = [
      [`/api/tx/${'g'.repeat(64)}`, 400], [`/api/tx/${TX170.slice(1)}`, 400], [`/api/tx/${TX170}0`, 400], ['/api/tx/%00', 400],
      [`/api/tx/${TX170}/outspend/-1`, 400], [`/api/tx/${TX170}/outspend/4294967296`, 400], [`/api/tx/${TX170}/outspend/1e3`, 400],
      [`/api/tx/${TX170}/outspend/99999`, 200],
      [`/api/block/${h.slice(2)}`, 400], [`/api/block/${'ff'.repeat(32)}`, 404], [`/api/block/${'ff'.repeat(32)}/txs`, 404],
      [`/api/block/${h}/txid/2`, 404], [`/api/block/${h}/txid/-1`, 400], [`/api/block/${h}/txid/99999999999999999999`, 400],
      [`/api/block/${h}/txs/25`, 404], [`/api/block/${h}/txs/1`, 400], [`/api/block/${h}/txs/${'9'.repeat(400)}`, 200],
      [`/api/block/${h}/txs/undefined`, 200], ['/api/blocks/99999999999999999999999', 404], ['/api/blocks/-5', 200],
      [`/insight-api/tx/${'zz'.repeat(32)}`, 400], [`/insight-api/txs?block=${h}&pageNum=-1`, 400], [`/insight-api/txs?block=${h}&pageNum=999`, 200],
      [`/insight-api/txs?block=${h}&pageNum=99999999999`, 400], [`/insight-api/txs?block=nothex`, 400], [`/insight-api/block/${'00'.repeat(32)}`, 404],
      [`/insight-api/addrs/${HAL}/txs?from=5&to=5`, 400], [`/insight-api/addrs/${HAL}/txs?from=abc`, 400], ['/insight-api/block-index/-1', 400],
      [`/api/v1/tx/${TX170}?full=yes`, 400], [`/api/v1/block/${'00'.repeat(31)}`, 400], [`/api/v1/block/${'00'.repeat(32)}`, 404],
    ];
    for (const [p, status] of cases) {
      const r = await get(p);
      assert.equal(r.status, status, `${p}: ${r.text.slice(0, 200)}`);
      if (status >= 400) assert.equal(typeof r.json.error.code, 'string', p);
    }
    assert.deepEqual((await get(`/api/block/${h}/txs/undefined`)).json, (await get(`/api/block/${h}/txs`)).json);
    assert.deepEqual((await get(`/api/block/${h}/txs/${'9'.repeat(400)}`)).json, (await get(`/api/block/${h}/txs`)).json); // past u32: 0, as electrs
    assert.deepEqual((await get(`/api/block/${'FF'.repeat(32)}/status`)).json, { in_best_chain: false, height: null, next_best: null });
    assert.equal(srv.logs.length, 0, srv.logs.join('\n'));
  });
});

describe('api: transactions and blocks of a generated testnet chain (segwit, taproot, multisig, fees, full blocks)', function () {
  this.timeout(120000);
  let gen;
  let srv;
  let chain;
  const get = (p) => request(srv.url + p);

  before(async () => {
    gen = await syncedGenerated({ network: 'testnet', seed: 'tx-routes', blocks: 8, txsPerBlock: 40, coinbaseMaturity: 1 });
    srv = await startServer(gen.datadir, { network: 'testnet' });
    const records = readDirRecords(gen.blocksDir, getNetwork('testnet').magic);
    chain = bitcoreChain(records.map((r) => r.raw));
  });
  after(async () => {
    if (srv) await srv.close();
    if (gen) await gen.cleanup();
  });

  it('GET /api/tx/:txid for every transaction: every field as bitcore-lib decodes it', async () => {
    const types = new Set();
    let fees = 0;
    for (const txid of chain.txs.keys()) {
      const r = await get(`/api/tx/${txid}`);
      assert.equal(r.status, 200, txid);
      assertEsploraTx(r.json, chain, txid, 'testnet');
      for (const v of r.json.vin) if (v.prevout) types.add(v.prevout.scriptpubkey_type);
      fees += r.json.fee;
    }
    for (const t of ['p2pkh', 'p2sh', 'v0_p2wpkh', 'v0_p2wsh', 'v1_p2tr']) assert.ok(types.has(t), `an input spends ${t}`);
    assert.ok(fees > 0);
  });

  it('/outspends of every transaction; a block\'s transactions 25 a page (/txs/:start_index), equal to /api/tx', async () => {
    for (const txid of chain.txs.keys()) assert.deepEqual((await get(`/api/tx/${txid}/outspends`)).json, expectedOutspends(chain, txid), txid);
    const big = chain.blocks.reduce((a, b) => (b.transactions.length > a.transactions.length ? b : a));
    assert.ok(big.transactions.length > 25);
    const pages = [];
    for (let start = 0; start < big.transactions.length; start += 25) {
      const page = (await get(`/api/block/${big.hash}/txs/${start}`)).json;
      assert.ok(page.length <= 25);
      pages.push(...page);
    }
    assert.deepEqual(pages.map((t) => t.txid), big.transactions.map((t) => t.hash));
    for (const t of pages) assert.deepEqual(t, (await get(`/api/tx/${t.txid}`)).json);
    const h = chain.blocks.indexOf(big);
    const weight = big.transactions.reduce((w, t) => w + 3 * t.toBuffer(true).length + t.toBuffer().length, 0) +
      4 * (80 + (chain.raws[h].length - 80 - big.transactions.reduce((s, t) => s + t.toBuffer().length, 0)));
    const b = (await get(`/api/block/${big.hash}`)).json;
    assert.equal(b.weight, weight); // BIP141's, the header and count bytes at 4 each
    assert.deepEqual(b, esploraBlock(blockFacts(parseBlock(chain.raws[h])), { height: h, mediantime: b.mediantime }));
  });
});
