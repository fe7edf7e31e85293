'use strict';

const assert = require('node:assert/strict');
const bitcore = require('bitcore-lib');
const { useBtcd } = require('../helpers/btcd');
const { nodeWallet, buildScriptChain } = require('../helpers/node-chain');
const { runCli } = require('../helpers/cli');
const { tempDir } = require('../helpers/tmp');
const { syncedFixture, startServer, request, referenceIndex, TX170 } = require('../api/helpers');

const { wallet, minerA } = nodeWallet();

/**
 * bitcore-node v8's routes field by field, against references that are not addrindex: the
 * bundled mainnet blocks read by bitcore-lib, and a btcd regtest chain holding every output
 * kind (test/helpers/node-chain.js), read from btcd itself (`getblock`, `getrawtransaction`
 * verbose, `gettxout`). Addresses are bitcore-lib's (`Script#toAddress`, what bitcore-node files
 * a coin under; none: "false"). Shapes: bitcore-node 8.25.47's models' _apiTransform.
 */

/** bitcore's timeNormalized of each block, from the blocks' times (ms, one after the parent's when not later). */
function normalized(times) {
  const out = [];
  for (const t of times) out.push(out.length && t * 1000 <= out[out.length - 1] ? out[out.length - 1] + 1 : t * 1000);
  return out;
}

const addressOf = (scriptHex, network) => {
  const a = new bitcore.Script(scriptHex).toAddress(network);
  return a ? a.toString() : 'false';
};

describe('bitcore v8 routes: the bundled mainnet blocks, against bitcore-lib', function () {
  this.timeout(60000);
  let fixture;
  let srv;
  let blocks;
  const get = async (p) => {
    const r = await request(`${srv.url}/api/BTC/mainnet${p}`);
    assert.equal(r.status, 200, `${p}: ${r.text}`);
    return JSON.parse(r.text);
  };

  before(async () => {
    fixture = await syncedFixture();
    srv = await startServer(fixture.datadir, { blocksDir: fixture.blocksDir });
    blocks = referenceIndex().blocks;
  });
  after(async () => {
    if (srv) await srv.close();
    if (fixture) await fixture.cleanup();
  });

  it('/block/:height, /block/:hash, /block/tip, /block: every field from the block bitcore-lib parses', async () => {
    const norm = normalized(blocks.map((b) => b.header.time));
    for (const h of [0, 1, 170, 437, 438]) {
      const b = blocks[h];
      const want = {
        chain: 'BTC', network: 'mainnet', hash: b.hash, height: h, version: b.header.version, size: b.toBuffer().length,
        merkleRoot: Buffer.from(b.header.merkleRoot).reverse().toString('hex'), time: new Date(b.header.time * 1000).toISOString(),
        timeNormalized: new Date(norm[h]).toISOString(), nonce: b.header.nonce, bits: b.header.bits,
        previousBlockHash: Buffer.from(b.header.prevHash).reverse().toString('hex'), nextBlockHash: h < 438 ? blocks[h + 1].hash : '',
        reward: b.transactions[0].outputAmount, transactionCount: b.transactions.length, confirmations: 439 - h,
      };
      const byHeight = await get(`/block/${h}`);
      assert.match(byHeight._id, /^[0-9a-f]{24}$/);
      delete byHeight._id;
      assert.deepEqual(byHeight, want);
      const byHash = await get(`/block/${b.hash}`);
      delete byHash._id;
      assert.deepEqual(byHash, want);
    }
    const tip = await get('/block/tip');
    assert.deepEqual([tip.height, tip.hash, tip.processed, tip.confirmations], [438, blocks[438].hash, true, undefined]);
    assert.deepEqual((await get('/block?limit=3')).map((b) => b.height), [438, 437, 436]);
    assert.deepEqual((await get('/block?paging=height&since=100&direction=1&limit=2')).map((b) => b.height), [101, 102]);
    assert.deepEqual((await get('/block?sinceBlock=435')).map((b) => b.height), [438, 437, 436]);
    const at = new Date(norm[200] + 1000).toISOString();
    assert.equal((await get(`/block/before-time/${at}`)).height, norm.findLastIndex((t) => t <= norm[200] + 1000));
    const missing = await request(`${srv.url}/api/BTC/mainnet/block/9999`);
    assert.equal(missing.status, 404);
    assert.equal(missing.json.error.code, 'ERR_BLOCK_NOT_FOUND');
  });

  it('/tx/:txid, /tx/:txid/coins, /tx?blockHeight: the first payment, field by field', async () => {
    const b = blocks[170];
    const tx = b.transactions[1];
    const got = await get(`/tx/${TX170}`);
    delete got._id;
    assert.deepEqual(got, {
      txid: TX170, network: 'mainnet', chain: 'BTC', blockHeight: 170, blockHash: b.hash, blockTime: new Date(b.header.time * 1000).toISOString(),
      blockTimeNormalized: new Date(normalized(blocks.map((x) => x.header.time))[170]).toISOString(), coinbase: false,
      locktime: -1, inputCount: 1, outputCount: 2, size: tx.toBuffer().length, fee: -1, value: tx.outputAmount, confirmations: 269,
    }, 'bitcore shows a fee and a locktime of 0 as -1');
    const coins = await get(`/tx/${TX170}/coins`);
    const funding = blocks[9].transactions[0];
    assert.deepEqual(coins.inputs.map(({ _id, ...c }) => c), [{
      chain: 'BTC', network: 'mainnet', coinbase: true, mintIndex: 0, spentTxid: TX170, mintTxid: funding.hash, mintHeight: 9, spentHeight: 170,
      address: addressOf(funding.outputs[0].script.toHex(), 'livenet'), script: funding.outputs[0].script.toHex(), value: 50e8, confirmations: -1,
    }]);
    assert.equal(coins.inputs[0].address, 'false', 'bitcore-lib gives a P2PK output no address');
    const outs = referenceIndex().outputs.filter((o) => o.txid === TX170);
    assert.deepEqual(coins.outputs.map(({ _id, ...c }) => c), tx.outputs.map((o, vout) => {
      const s = outs.find((x) => x.vout === vout);
      return {
        chain: 'BTC', network: 'mainnet', coinbase: false, mintIndex: vout, spentTxid: s.spentTxid || '', mintTxid: TX170, mintHeight: 170,
        spentHeight: s.spentAt === null ? -2 : s.spentAt, address: addressOf(o.script.toHex(), 'livenet'), script: o.script.toHex(), value: o.satoshis, confirmations: -1,
      };
    }));
    const list = await get('/tx?blockHeight=170');
    assert.deepEqual(await get(`/tx/?blockHash=${b.hash}`), list, 'a trailing slash is no slash (express, which bitcore-node runs on)');
    assert.deepEqual(list.map((t) => [t.txid, t.coinbase, t.inputCount, t.fee]), [[b.transactions[0].hash, true, 1, -1], [TX170, false, 1, -1]]);
    const populated = await get(`/tx/${TX170}/populated`);
    assert.deepEqual(populated.coins, coins);
    const bad = await request(`${srv.url}/api/BTC/mainnet/tx/zz`);
    assert.equal(bad.status, 400);
    const none = await request(`${srv.url}/api/BTC/mainnet/tx/${'00'.repeat(32)}`);
    assert.equal(none.status, 404);
  });

  it('/valid/:input, another network, an unknown route: as bitcore answers (JSON errors)', async () => {
    assert.deepEqual(await get(`/valid/${TX170}`), { isValid: true, type: 'blockOrTx' });
    assert.deepEqual(await get('/valid/1Q2TWHE3GMdB6BZKafqwxXtWAWgFt5Jvm3'), { isValid: true, type: 'addr' });
    assert.deepEqual(await get('/valid/bitcoin:1Q2TWHE3GMdB6BZKafqwxXtWAWgFt5Jvm3?amount=1'), { isValid: true, type: 'addr' });
    assert.deepEqual(await get('/valid/170'), { isValid: true, type: 'blockOrTx' });
    assert.deepEqual(await get('/valid/mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn'), { isValid: false, type: 'invalid' }, 'a testnet address');
    for (const p of ['/api/BTC/testnet/block/tip', '/api/BTC/mainnet/nothing/here', '/api/LTC/mainnet/block/tip']) {
      const r = await request(srv.url + p);
      assert.equal(r.status, 404, p);
      assert.equal(typeof r.json.error.code, 'string');
    }
  });
});

describe('bitcore v8 routes: a btcd regtest chain of every output kind, against btcd', function () {
  this.timeout(240000);
  // --txindex: verbose getrawtransaction of confirmed transactions, the reference here
  const btcd = useBtcd([{ miningAddress: minerA, args: ['--txindex'] }]);
  let node;
  let chain;
  let srv;
  const get = async (p) => {
    const r = await request(`${srv.url}/api/BTC/regtest${p}`);
    assert.equal(r.status, 200, `${p}: ${r.text}`);
    return JSON.parse(r.text);
  };

  before(async () => {
    node = btcd.nodes[0];
    chain = await buildScriptChain(node, wallet, 'miner-a');
    const datadir = tempDir('bitcore8-routes');
    const sync = await runCli(['sync', '--rpc-url', node.url, '--txstore', '--network', 'regtest', '--datadir', datadir, '--threads', '1', '--quiet']);
    assert.equal(sync.code, 0, sync.stderr);
    srv = await startServer(datadir, { network: 'regtest', indexKeepsBlocks: true });
  });
  after(async () => {
    if (srv) await srv.close();
  });

  /** btcd's verbose transaction, with its block's height. */
  const nodeTx = async (txid) => {
    const t = await node.call('getrawtransaction', txid, 1);
    const header = await node.call('getblockheader', t.blockhash, true);
    return { ...t, height: header.height };
  };

  it('/tx/:txid and /tx/:txid/coins of every transaction of the chain: btcd\'s figures, bitcore-lib\'s addresses', async () => {
    const tip = await node.tip();
    for (const txid of Object.values(chain.txs)) {
      const t = await nodeTx(txid);
      const prevs = await Promise.all(t.vin.map(async (i) => (await node.call('getrawtransaction', i.txid, 1)).vout[i.vout]));
      const sats = (v) => Math.round(v * 1e8);
      const outSum = t.vout.reduce((n, o) => n + sats(o.value), 0);
      const fee = prevs.reduce((n, p) => n + sats(p.value), 0) - outSum;
      const got = await get(`/tx/${txid}`);
      assert.deepEqual(
        [got.blockHeight, got.blockHash, got.blockTime, got.coinbase, got.locktime, got.inputCount, got.outputCount, got.size, got.fee, got.value, got.confirmations],
        [t.height, t.blockhash, new Date(t.blocktime * 1000).toISOString(), false, t.locktime || -1, t.vin.length, t.vout.length, t.hex.length / 2, fee, outSum, tip.height - t.height + 1],
        txid);
      const coins = await get(`/tx/${txid}/coins`);
      assert.deepEqual(coins.inputs.map((c) => [c.mintTxid, c.mintIndex, c.value, c.script, c.address, c.spentTxid, c.spentHeight]),
        t.vin.map((i, k) => [i.txid, i.vout, sats(prevs[k].value), prevs[k].scriptPubKey.hex, addressOf(prevs[k].scriptPubKey.hex, 'regtest'), txid, t.height]));
      for (const c of coins.outputs) {
        const o = t.vout[c.mintIndex];
        const unspent = await node.call('gettxout', txid, c.mintIndex, false);
        assert.deepEqual([c.value, c.script, c.address, c.mintHeight, c.coinbase], [sats(o.value), o.scriptPubKey.hex, addressOf(o.scriptPubKey.hex, 'regtest'), t.height, false]);
        if (o.scriptPubKey.type === 'nulldata') continue; // never in btcd's UTXO set, never spent
        assert.equal(c.spentHeight === -2, unspent !== null, `${txid}:${c.mintIndex} spent or not as btcd says`);
        if (c.spentHeight !== -2) {
          const spender = await nodeTx(c.spentTxid);
          assert.ok(spender.vin.some((i) => i.txid === txid && i.vout === c.mintIndex));
          assert.equal(c.spentHeight, spender.height);
        }
      }
    }
  });

  it('/address/:address (all, unspent), /balance for every output kind: btcd\'s outputs paying exactly that script', async () => {
    const txs = await Promise.all(Object.values(chain.txs).map(nodeTx));
    for (const [kind, address] of Object.entries(chain.addresses)) {
      if (!address) continue;
      const want = [];
      for (const t of txs) {
        for (const o of t.vout) {
          if (addressOf(o.scriptPubKey.hex, 'regtest') !== address) continue;
          const unspent = await node.call('gettxout', t.txid, o.n, false);
          want.push({ txid: t.txid, vout: o.n, value: Math.round(o.value * 1e8), height: t.height, unspent: unspent !== null });
        }
      }
      const coins = await get(`/address/${address}?limit=100`);
      const key = (x) => `${x.txid}:${x.vout}`;
      assert.deepEqual(coins.map((c) => ({ txid: c.mintTxid, vout: c.mintIndex, value: c.value, height: c.mintHeight, unspent: c.spentHeight === -2 })).sort((a, b) => key(a).localeCompare(key(b))),
        want.sort((a, b) => key(a).localeCompare(key(b))), kind);
      assert.ok(coins.every((c) => c.address === address), kind);
      const ids = coins.map((c) => c._id);
      assert.deepEqual([...ids].sort().reverse(), ids, `${kind}: newest first`);
      const unspent = await get(`/address/${address}?unspent=true`);
      assert.deepEqual(unspent.map((c) => key({ txid: c.mintTxid, vout: c.mintIndex })).sort(), want.filter((w) => w.unspent).map(key).sort(), kind);
      const confirmed = want.filter((w) => w.unspent).reduce((n, w) => n + w.value, 0);
      assert.deepEqual(await get(`/address/${address}/balance`), { confirmed, unconfirmed: 0, balance: confirmed }, kind);
      if (coins.length > 1) {
        const page = await get(`/address/${address}?limit=1&since=${coins[0]._id}`);
        assert.deepEqual(page.map((c) => c._id), [coins[1]._id], `${kind}: paging by since`);
      }
    }
  });

  it('/block/:height against btcd\'s getblock; /block/:id/fee from btcd\'s fees', async () => {
    const tip = await node.tip();
    for (let h = tip.height - 3; h <= tip.height; h++) {
      const hash = await node.call('getblockhash', h);
      const b = await node.call('getblock', hash, 1);
      const got = await get(`/block/${h}`);
      assert.deepEqual([got.hash, got.height, got.version, got.merkleRoot, got.time, got.nonce, got.bits, got.previousBlockHash, got.nextBlockHash, got.size, got.transactionCount, got.confirmations],
        [b.hash, h, b.version, b.merkleroot, new Date(b.time * 1000).toISOString(), b.nonce, parseInt(b.bits, 16), b.previousblockhash, b.nextblockhash || '', b.size, b.tx.length, tip.height - h + 1]);
      const fees = await get(`/block/${h}/fee`);
      const rates = [];
      let total = 0;
      for (const txid of b.tx.slice(1)) {
        const t = await nodeTx(txid);
        const prevs = await Promise.all(t.vin.map(async (i) => (await node.call('getrawtransaction', i.txid, 1)).vout[i.vout].value));
        const fee = Math.round(prevs.reduce((n, v) => n + v, 0) * 1e8) - Math.round(t.vout.reduce((n, o) => n + o.value, 0) * 1e8);
        total += fee;
        rates.push(fee / (t.hex.length / 2));
      }
      assert.equal(fees.feeTotal, total);
      if (rates.length) assert.equal(fees.mean, rates.reduce((a, c) => a + c, 0) / rates.length);
    }
  });
});
