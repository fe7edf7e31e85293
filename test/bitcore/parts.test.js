'use strict';

const assert = require('node:assert/strict');
const bitcore = require('bitcore-lib');
const { parseBlock } = require('../../lib/chain/block');
const { parseTxDetail } = require('../../lib/chain/tx');
const { sha256d, toDisplayHex } = require('../../lib/chain/hash');
const { NETWORKS } = require('../../lib/chain/networks');
const { strippedTx, strippedBlock } = require('../../lib/bitcore/stripped');
const { detailedTx } = require('../../lib/bitcore/detailed-tx');
const { parseAddresses, base58Of } = require('../../lib/bitcore/addresses');
const { mempoolTxids, mempoolBalance, withMempoolUtxos } = require('../../lib/bitcore/mempool');
const { MempoolView, emptyMempool } = require('../../lib/core/mempool');
const { BlockTimes } = require('../../lib/bitcore/timestamps');
const { ChainReader } = require('../../lib/bitcore/chain');
const { RpcError, rpcError, serviceFailure } = require('../../lib/bitcore/rpc-error');
const { syncPercentage, numericVersion, info } = require('../../lib/bitcore/status');
const { StoreError } = require('../../lib/errors');
const { READ_ATTEMPTS } = require('../../lib/core/consistent');
const { referenceBlocks, mainnetReference } = require('../helpers/reference');
const { HAL } = require('../api/helpers');
const { tempDir } = require('../helpers/tmp');
const path = require('node:path');

/**
 * The service's parts that need no bitcore-node host, against independent references:
 * bitcore-lib 11 in this process (its own non-witness serialization, address encoding) and
 * the reference index of the 439 mainnet blocks. The whole service runs under the real
 * bitcore-node and insight-api in insight.test.js and regtest-node.test.js.
 */
describe('bitcore service parts', () => {
  describe('non-witness serializations (what bitcore-lib 0.13 can read)', () => {
    it('every transaction of every bundled block is bitcore-lib\'s toBuffer(noWitness), and hashes to its txid', () => {
      let witnessTxs = 0;
      for (const b of referenceBlocks()) {
        const block = parseBlock(b.raw);
        block.txs.forEach((tx, i) => {
          const stripped = strippedTx(tx);
          assert.ok(stripped.equals(b.ref.transactions[i].toBuffer(true)), `${b.name} tx ${i}`);
          assert.equal(toDisplayHex(sha256d(stripped)), tx.hash);
          if (tx.hasWitness) witnessTxs++;
        });
        const sb = strippedBlock(b.raw, block);
        const again = parseBlock(sb); // merkle root checked: the header still covers these bytes
        assert.equal(again.hash, block.hash);
        assert.ok(again.txs.every((t) => !t.hasWitness));
        if (!block.txs.some((t) => t.hasWitness)) assert.equal(sb, b.raw);
      }
      assert.ok(witnessTxs > 1000, `${witnessTxs} witness transactions checked`);
    });
  });

  describe('detailed transactions (bitcore-node\'s getDetailedTransaction shape)', () => {
    const block = parseBlock(referenceBlocks().find((b) => b.name === 'testnet/block928816.raw').raw);
    const net = NETWORKS.testnet;

    it('a segwit spend: empty scriptSig as "" with asm null, values and fee from its prevouts, segwit outputs without an address, the non-witness hex', () => {
      const tx = block.txs.find((t) => t.hasWitness && parseTxDetail(t).details.some((d) => d.script.length === 0) &&
        t.outputs.some((o) => o.script.length === 22 || o.script.length === 34));
      const ref = new bitcore.Transaction(tx.raw);
      // prevouts as a caller finds them: value and script of each spent output
      const prevouts = tx.inputs.map((_, n) => ({ value: 1000000 + n, script: Buffer.from(`76a914${'11'.repeat(20)}88ac`, 'hex') }));
      const spends = tx.outputs.map((_, n) => (n === 0 ? { txid: 'cd'.repeat(32), index: 3, height: 928900 } : null));
      const d = detailedTx(tx, { prevouts, spends, height: 928816, blockHash: block.hash, time: block.time, network: net });
      assert.deepEqual(Object.keys(d), ['hex', 'blockHash', 'height', 'blockTimestamp', 'version', 'hash', 'locktime', 'inputs', 'inputSatoshis', 'outputs', 'outputSatoshis', 'feeSatoshis']);
      assert.equal(d.hex, ref.toBuffer(true).toString('hex'));
      assert.equal(d.hash, ref.hash);
      assert.equal(d.version, ref.version);
      assert.equal(d.locktime, ref.nLockTime);
      const inSum = prevouts.reduce((n, p) => n + p.value, 0);
      assert.equal(d.inputSatoshis, inSum);
      assert.equal(d.outputSatoshis, ref.outputAmount);
      assert.equal(d.feeSatoshis, inSum - ref.outputAmount);
      d.inputs.forEach((input, n) => {
        assert.deepEqual(Object.keys(input), ['prevTxId', 'outputIndex', 'script', 'scriptAsm', 'sequence', 'address', 'satoshis']);
        assert.equal(input.prevTxId, ref.inputs[n].prevTxId.toString('hex'));
        assert.equal(input.outputIndex, ref.inputs[n].outputIndex);
        assert.equal(input.sequence, ref.inputs[n].sequenceNumber);
        assert.equal(input.script, ref.inputs[n].script.toHex());
        if (input.script === '') assert.equal(input.scriptAsm, null);
        else assert.equal(typeof input.scriptAsm, 'string');
        assert.equal(input.address, new bitcore.Address(Buffer.from('11'.repeat(20), 'hex'), 'testnet').toString());
      });
      d.outputs.forEach((o, n) => {
        const s = ref.outputs[n].script;
        assert.equal(o.satoshis, ref.outputs[n].satoshis);
        assert.equal(o.script, s.toHex());
        const base58 = s.isPublicKeyHashOut() || s.isScriptHashOut() ? s.toAddress('testnet').toString() : null;
        assert.equal(o.address, base58, `output ${n}`);
        assert.equal(o.spentTxId, n === 0 ? 'cd'.repeat(32) : undefined);
        assert.equal(o.spentIndex, n === 0 ? 3 : undefined);
        assert.equal(o.spentHeight, n === 0 ? 928900 : undefined);
      });
      assert.ok(d.outputs.some((o) => o.address === null), 'a segwit output has no address');
      assert.ok(d.inputs.some((i) => i.script === '' && i.scriptAsm === null), 'a segwit input has an empty scriptSig');
    });

    it('a coinbase: null outpoint, asm, address and satoshis; no input value, fee 0', () => {
      const cb = block.txs[0];
      const d = detailedTx(cb, { prevouts: [], spends: cb.outputs.map(() => null), height: 928816, blockHash: block.hash, time: block.time, network: net });
      assert.equal(d.coinbase, true);
      const ref = new bitcore.Transaction(cb.raw);
      assert.deepEqual(d.inputs, [{
        prevTxId: null, outputIndex: null, script: ref.inputs[0]._scriptBuffer.toString('hex'), scriptAsm: null,
        sequence: ref.inputs[0].sequenceNumber, address: null, satoshis: null,
      }]);
      assert.equal(d.inputSatoshis, 0);
      assert.equal(d.feeSatoshis, 0);
    });
  });

  describe('addresses', () => {
    const main = NETWORKS.main;
    const rpc = (fn) => assert.throws(fn, (e) => e instanceof RpcError && e.code === -5 && e.message === 'Invalid address');

    it('base58 P2PKH and P2SH, as strings or bitcore-lib Addresses, duplicates dropped; anything else is the node\'s -5', () => {
      const p2sh = '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy';
      const t = parseAddresses([HAL, new bitcore.Address(p2sh), HAL], main, null);
      assert.deepEqual(t.map((x) => x.address), [HAL, p2sh]);
      assert.equal(t[0].script, bitcore.Script.fromAddress(HAL).toHex());
      assert.equal(t[1].script, bitcore.Script.fromAddress(p2sh).toHex());
      rpc(() => parseAddresses('bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', main, null));
      rpc(() => parseAddresses('mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn', main, null));
      rpc(() => parseAddresses(['nope'], main, null));
      rpc(() => parseAddresses([{}], main, null));
      assert.deepEqual(parseAddresses([], main, null), []);
    });

    it('the address of a script is the one the index files it under: P2PK as its key\'s P2PKH address', () => {
      const ref = mainnetReference();
      let p2pk = 0;
      for (const b of ref.blocks.slice(1)) {
        for (const tx of b.transactions) {
          for (const o of tx.outputs) {
            const want = o.script.isPublicKeyOut() ? new bitcore.PublicKey(o.script.chunks[0].buf).toAddress().toString()
              : o.script.isPublicKeyHashOut() ? o.script.toAddress().toString() : null;
            if (o.script.isPublicKeyOut()) p2pk++;
            assert.equal(base58Of(o.script.toBuffer(), main), want);
          }
        }
      }
      assert.ok(p2pk > 400);
    });
  });

  describe('mempool merging (bitcore-node 3\'s, over the index\'s snapshot)', () => {
    // a snapshot as the follower writes it, decoded: tx aa pays HAL twice, tx bb spends a
    // confirmed HAL output (c1:2) and one of aa's, tx cc pays HAL again and another address
    const net = NETWORKS.main;
    const [hal] = parseAddresses(HAL, net, null);
    const other = Buffer.alloc(32, 7);
    const id = (b) => Buffer.alloc(32, b);
    const txid = (b) => toDisplayHex(id(b));
    const view = new MempoolView({
      seq: 3, tip: id(0xee), txs: [
        { txid: id(0xaa), time: 10, fee: 1, vsize: 1, raw: Buffer.alloc(0), inputs: [{ txid: id(0x01), vout: 0, value: 1201, scripthash: other, unconfirmed: false }],
          outputs: [{ value: 500, scripthash: hal.scripthash }, { value: 700, scripthash: hal.scripthash }] },
        { txid: id(0xbb), time: 11, fee: 1, vsize: 1, raw: Buffer.alloc(0),
          inputs: [{ txid: id(0xc1), vout: 2, value: 1000, scripthash: hal.scripthash, unconfirmed: false }, { txid: id(0xaa), vout: 1, value: 700, scripthash: hal.scripthash, unconfirmed: true }],
          outputs: [{ value: 1699, scripthash: other }] },
        { txid: id(0xcc), time: 12, fee: 1, vsize: 1, raw: Buffer.alloc(0), inputs: [{ txid: id(0x02), vout: 0, value: 401, scripthash: other, unconfirmed: false }],
          outputs: [{ value: 100, scripthash: other }, { value: 300, scripthash: hal.scripthash }] },
      ],
    });

    it('txids distinct, newest first; the balance is what they pay the address less what they spend of it', () => {
      assert.deepEqual(mempoolTxids(view, [hal]), [txid(0xcc), txid(0xbb), txid(0xaa)]);
      assert.equal(mempoolBalance(view, [hal]), 500 + 700 + 300 - 1000 - 700);
      assert.deepEqual(mempoolTxids(emptyMempool(null), [hal]), []);
    });

    it('unspent outputs: the mempool\'s own first (newest first, with their time), then confirmed; what it spends removed', () => {
      const confirmed = [
        { address: HAL, txid: txid(0xc2), outputIndex: 0, script: hal.script, satoshis: 9, height: 5 },
        { address: HAL, txid: txid(0xc1), outputIndex: 2, script: hal.script, satoshis: 1000, height: 4 },
      ];
      const got = withMempoolUtxos(confirmed, view, [hal]);
      assert.deepEqual(got.map((u) => `${u.txid}:${u.outputIndex}`), [`${txid(0xcc)}:1`, `${txid(0xaa)}:0`, `${txid(0xc2)}:0`]);
      assert.deepEqual(got[0], { address: HAL, txid: txid(0xcc), outputIndex: 1, script: hal.script, satoshis: 300, timestamp: 12 });
      assert.equal(got[0].height, undefined);
      assert.equal(withMempoolUtxos(confirmed, null, [hal]), confirmed);
      assert.equal(withMempoolUtxos(confirmed, emptyMempool(null), [hal]), confirmed);
    });
  });

  describe('chain reads', () => {
    it('a txid as Core 0.12.1 parses it: not hex is -8, hex of another length names nothing', () => {
      const chain = new ChainReader({ store: null, blocks: null, node: null });
      const ref = mainnetReference();
      assert.throws(() => chain.parseTxid('zz'), (e) => e.code === -8 && /must be hexadecimal string \(not 'zz'\)/.test(e.message));
      assert.throws(() => chain.parseTxid('abc'), (e) => e.code === -8);
      assert.equal(chain.parseTxid('abcd'), null);
      assert.deepEqual(chain.parseTxid(ref.txids[5]), Buffer.from(ref.txids[5], 'hex').reverse());
    });
  });

  it('getblockhashes: blocks whose logical timestamp (its time, or one after its parent\'s when not later) is within [low, high); a reorg is followed', async () => {
    // a chain whose block times go back and repeat, as miners' clocks let them
    const { RegtestMiner } = require('./regtest-miner');
    const { openIndex: openLmdb, syncInto } = require('../helpers/chains');
    const dir = tempDir('times-blocks');
    const miner = new RegtestMiner({ dir });
    const t0 = miner.time;
    const times = [t0 + 600, t0 + 1200, t0 + 900, t0 + 900, t0 + 1203, t0 + 1800, t0 + 1500, t0 + 2400];
    const hashes = [miner.hash, ...times.map((time) => miner.mine([], { time }))];
    await miner.close();
    const store = await openLmdb(path.join(tempDir('times-index'), 'index'));
    try {
      await syncInto(dir, store, { threads: 0 });
      const logical = [t0];
      for (const t of times) logical.push(Math.max(t, logical[logical.length - 1] + 1));
      assert.deepEqual(logical.slice(1), [t0 + 600, t0 + 1200, t0 + 1201, t0 + 1202, t0 + 1203, t0 + 1800, t0 + 1801, t0 + 2400]);
      const bt = new BlockTimes(store);
      const ranges = [[t0 + 1202, t0 + 1200], [t0 + 1203, t0 + 900], [t0 + 1802, t0 + 1800], [t0 + 1, t0], [t0 + 9999, t0 + 2400], [t0 + 600, t0 + 600]];
      for (const [high, low] of ranges) {
        const got = await bt.between(high, low);
        const want = hashes.map((hash, h) => ({ hash, logicalts: logical[h] })).filter((b) => b.logicalts >= low && b.logicalts < high);
        assert.deepEqual(got, want, `[${low - t0}, ${high - t0})`);
      }
      // the index reverts the last three blocks: the table follows
      await store.revert(5);
      assert.deepEqual((await bt.between(t0 + 9999, t0)).map((b) => b.hash), hashes.slice(0, 6));
    } finally {
      await store.close();
    }
  });

  describe('one answer, one tip (paired.js)', () => {
    const { PairedReads } = require('../../lib/bitcore/paired');
    const tipA = { height: 10, hash: 'a'.repeat(64) };

    it('a read that meets rows of two states (ERR_INDEX_MOVED) is read again, as the REST API reads it; other errors fail it', async () => {
      const store = { getTip: async () => tipA };
      const tips = [];
      const reads = new PairedReads(store, null, { onTip: (t) => tips.push(t) });
      let calls = 0;
      const value = await reads.consistent(async (tip) => {
        calls++;
        if (calls === 1) throw new StoreError('ERR_INDEX_MOVED', 'block x is no longer at height 9');
        return tip.height;
      });
      assert.equal(value, 10);
      assert.equal(calls, 2);
      assert.deepEqual(tips, [tipA]);
      calls = 0;
      await assert.rejects(reads.consistent(async () => { calls++; throw new StoreError('ERR_X', 'gone'); }), (e) => e.code === 'ERR_X');
      assert.equal(calls, 1);
      // an index that keeps moving fails the answer after as many attempts as ApiApp gives it
      calls = 0;
      await assert.rejects(reads.consistent(async () => { calls++; throw new StoreError('ERR_INDEX_MOVED', 'moved'); }), (e) => e.code === 'ERR_INDEX_MOVING');
      assert.equal(calls, READ_ATTEMPTS);
    });

    it('getAddressHistory reads a page\'s transactions at the tip its txids were listed at: a reorg or a block between them has the page read again', async () => {
      const { AddressApi } = require('../../lib/bitcore/address-api');
      const tip = (height, c) => ({ height, hash: c.repeat(64) });
      // txids of HAL, oldest first, at each tip: T2 replaced T1's last block (t1 gone, t2 in
      // its place), T3 added a block to T2
      const T1 = tip(2, '1');
      const T2 = tip(2, '2');
      const T3 = tip(3, '3');
      const histories = { [T1.hash]: ['t0', 't1'], [T2.hash]: ['t0', 't2'], [T3.hash]: ['t0', 't2', 't3'] };
      const store = { tip: T1, getTip: async () => store.tip };
      let moveAt = null; // a hook: the index commits `moveAt.to` when the read asks for `moveAt.txid`
      const asked = [];
      const missing = new Set(); // listed, yet not found by the transaction read
      const detailedTx = async (txid, at) => {
        asked.push(`${txid}@${at.tip.hash[0]}`);
        if (moveAt && moveAt.txid === txid) {
          store.tip = moveAt.to;
          moveAt = null;
        }
        const now = histories[store.tip.hash];
        if (!now.includes(txid) || missing.has(txid)) throw rpcError(null, -5, 'No information available about transaction');
        return { txid, height: now.indexOf(txid) + 1, readAt: store.tip.hash[0], inputs: [], outputs: [] };
      };
      const api = new AddressApi({
        index: { store, txids: async () => histories[store.tip.hash].slice() },
        reads: new PairedReads(store, null),
        detailedTx,
        height: () => store.tip.height,
        network: NETWORKS.main,
        bitcore,
        node: null,
      });
      const page = (r) => ({ totalCount: r.totalCount, txs: r.items.map((i) => `${i.tx.txid}@${i.tx.readAt}`) });

      // a reorg after the txids were listed: t1 is no longer in the index (-5), the page is read again at T2
      moveAt = { txid: 't1', to: T2 };
      const reorged = await api.getAddressHistory(HAL, { queryMempool: false });
      assert.deepEqual(page(reorged), { totalCount: 2, txs: ['t2@2', 't0@2'] });
      assert.deepEqual(asked.slice(-2), ['t2@2', 't0@2']);
      assert.ok(asked.includes('t1@1'));

      // a block after the txids were listed: every read succeeds, but the page is T2's and the
      // index is at T3; it is read again, whole, at T3
      asked.length = 0;
      moveAt = { txid: 't2', to: T3 };
      const moved = await api.getAddressHistory(HAL, { queryMempool: false });
      assert.deepEqual(page(moved), { totalCount: 3, txs: ['t3@3', 't2@3', 't0@3'] });
      assert.deepEqual(moved.items.map((i) => i.confirmations), [1, 2, 3]);
      assert.deepEqual(asked.filter((a) => a.endsWith('@3')), ['t3@3', 't2@3', 't0@3']);

      // a transaction that is not there while the index stays put fails the page, once
      asked.length = 0;
      histories[T3.hash] = ['t0', 't2', 't3', 't4'];
      missing.add('t4');
      api.resetCaches();
      await assert.rejects(api.getAddressHistory(HAL, { queryMempool: false }), (e) => e.code === -5);
      assert.equal(asked.filter((a) => a.startsWith('t4')).length, 1);
    });
  });

  describe('errors and status', () => {
    it('RPC errors carry Core\'s numeric code (the host\'s RPCError when it has one); index failures none', () => {
      class HostRPCError extends Error {}
      const e = rpcError({ errors: { RPCError: HostRPCError } }, -5, 'Block not found');
      assert.ok(e instanceof HostRPCError);
      assert.equal(e.code, -5);
      assert.equal(rpcError(null, -8, 'x').code, -8);
      const failure = serviceFailure(new StoreError('ERR_X', 'the index is gone'));
      assert.equal(failure.code, undefined);
      assert.match(failure.message, /the index is gone \[ERR_X\]/);
      assert.equal(failure.cause.code, 'ERR_X');
      const rpcErr = rpcError(null, -5, 'y');
      assert.equal(serviceFailure(rpcErr), rpcErr);
    });

    it('sync percentage of the block source\'s height; getInfo leaves what only a node knows null', () => {
      assert.equal(syncPercentage(438, 438), 100);
      assert.equal(syncPercentage(219, 438), 50);
      assert.equal(syncPercentage(438, null), 100);
      assert.equal(syncPercentage(-1, 0), 0);
      assert.equal(numericVersion('1.2.3'), 1020300);
      assert.equal(numericVersion('0.1.0'), 10000);
      const i = info({ blocks: 5, bits: 0x1d00ffff, network: NETWORKS.testnet, networkName: 'testnet' });
      assert.equal(i.difficulty, 1);
      assert.equal(i.testnet, true);
      for (const k of ['protocolVersion', 'timeOffset', 'connections', 'relayFee']) assert.equal(i[k], null, k);
    });
  });

  describe('TipWatcher', () => {
    const { TipWatcher } = require('../../lib/bitcore/tip');
    const { RewindHold } = require('../../lib/core/rewind-hold');
    const { openStore } = require('../../lib/stores');
    const { mainnetChain, syncBlocks } = require('../stores/data');

    it('hands on a reorg\'s new tip, not the revert to its fork; a lower tip that stays, once held long enough', async () => {
      const store = await openStore({ store: 'lmdb', datadir: path.join(tempDir('tip-watcher'), 'index'), network: 'main' });
      try {
        const { blocks } = mainnetChain();
        await syncBlocks(store, blocks, 0, 20);
        let clock = 0;
        const changes = [];
        const rewind = new RewindHold({ holdMs: 2000, now: () => clock });
        const watcher = new TipWatcher(store, { onChange: (tip, prev) => changes.push([prev.height, tip.height]), rewind });
        assert.equal((await watcher.start()).height, 20);
        await watcher.stop();
        // a follower's reorg: the revert committed, the new branch not yet
        await store.revert(18);
        assert.equal(await watcher.poll(), false);
        clock += 1999;
        assert.equal(await watcher.poll(), false);
        await syncBlocks(store, blocks, 19, 22);
        assert.equal(await watcher.poll(), true);
        assert.deepEqual(changes, [[20, 22]]);
        // a lower tip that stays (a node told to invalidate a block) is a tip after all
        await store.revert(15);
        assert.equal(await watcher.poll(), false);
        clock += 1000;
        assert.equal(await watcher.poll(), false);
        clock += 1000;
        assert.equal(await watcher.poll(), true);
        assert.deepEqual(changes, [[20, 22], [22, 15]]);
        assert.equal(await watcher.poll(), false);
      } finally {
        await store.close();
      }
    });
  });
});
