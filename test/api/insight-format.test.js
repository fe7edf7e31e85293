'use strict';

const assert = require('node:assert/strict');
const bitcore = require('bitcore-lib');
const { parseBlock } = require('../../lib/chain/block');
const { parseTransaction } = require('../../lib/chain/tx');
const { coreAsm } = require('../../lib/chain/asm');
const { decodeAddress } = require('../../lib/chain/address');
const { insightOutputAddress, insightInputAddress } = require('../../lib/chain/insight-script');
const { insightTx, insightBlock, bitcoreDifficulty, blockReward } = require('../../lib/api/insight-format');
const { blockFacts } = require('../../lib/api/esplora-format');
const { blockProof } = require('../../lib/sources/header-index');
const { StoreError } = require('../../lib/errors');
const { referenceBlocks, chainOutputs } = require('../helpers/reference');
const KNOWN = require('../fixtures/known-answers.json');

const h = (hex) => Buffer.from(hex, 'hex');
const bitcoreNet = (network) => (network === 'main' ? bitcore.Networks.livenet : bitcore.Networks.testnet);

// insight-api 0.4.3's key order (lib/transactions.js): the order of assignments there
const TX_KEYS = ['txid', 'version', 'locktime', 'vin', 'vout', 'blockhash', 'blockheight', 'confirmations', 'time', 'blocktime',
  'isCoinBase', 'valueOut', 'size', 'valueIn', 'fees'];
const IN_KEYS = ['txid', 'vout', 'sequence', 'n', 'scriptSig', 'addr', 'valueSat', 'value', 'doubleSpentTxID'];
const OUT_KEYS = ['value', 'n', 'scriptPubKey', 'spentTxId', 'spentIndex', 'spentHeight'];

function assertKeyOrder(obj, order, where) {
  const keys = Object.keys(obj);
  assert.deepEqual(keys, order.filter((k) => keys.includes(k)), where);
}

/**
 * The one address insight would show for an output, by bitcore-lib: P2PKH, P2SH, P2PK (its
 * key's P2PKH address), a bare multisig with exactly one key of a valid length, and the
 * segwit outputs bitcore-lib types. null otherwise.
 */
function bitcoreOutputAddress(script, network) {
  const net = bitcoreNet(network);
  const s = script;
  if (s.isPublicKeyHashOut() || s.isScriptHashOut() || s.isWitnessPublicKeyHashOut() || s.isWitnessScriptHashOut() || s.isTaproot()) {
    const a = bitcore.Address.fromScript(s, net);
    return { address: a.toString(), type: a.type };
  }
  const validLength = (buf) => (buf.length === 33 && (buf[0] === 2 || buf[0] === 3)) || (buf.length === 65 && [4, 6, 7].includes(buf[0]));
  let keys = [];
  if (s.chunks.length === 2 && s.chunks[0].buf && s.chunks[0].buf.length >= 33 && s.chunks[0].buf.length <= 65 && s.chunks[1].opcodenum === 0xac) {
    keys = [s.chunks[0].buf];
  } else if (s.isMultisigOut()) {
    keys = s.chunks.slice(1, -2).map((c) => c.buf);
  }
  const valid = keys.filter(validLength);
  if (valid.length !== 1) return null;
  const a = bitcore.Address.fromPublicKeyHash(bitcore.crypto.Hash.sha256ripemd160(valid[0]), net);
  return { address: a.toString(), type: 'pubkeyhash' };
}

describe('insight formatter', () => {
  it('a real insight-api answer (blockexplorer.com, 2018): same values, 0.4.3\'s key order', () => {
    const k = KNOWN.insight[0];
    const a = k.answer;
    const tx = parseTransaction(h(k.raw));
    assert.equal(tx.hash, a.txid);
    const prevouts = a.vin.map((i) => ({ value: i.valueSat, script: decodeAddress(i.addr, k.network).script }));
    const spends = a.vout.map((o) => (o.spentTxId ? { txid: o.spentTxId, vin: o.spentIndex, height: o.spentHeight } : null));
    const got = insightTx(tx, {
      prevouts, spends, block: { height: a.blockheight, hash: a.blockhash, time: a.time },
      tipHeight: a.blockheight + a.confirmations - 1, network: k.network,
    });
    assert.deepEqual(got, a); // values; that server's 0.4.0 put scriptSig before sequence, 0.4.3 after
    assertKeyOrder(got, TX_KEYS);
    assertKeyOrder(got.vin[0], IN_KEYS);
    assert.deepEqual(Object.keys(got.vin[0].scriptSig), ['hex', 'asm']);
  });

  it('every transaction of every fixture: each field as bitcore-lib decodes it', function () {
    this.timeout(120000);
    const outs = chainOutputs();
    let withAddress = 0;
    let txCount = 0;
    for (const b of referenceBlocks()) {
      const block = parseBlock(b.raw);
      const height = b.height === null ? 1000 : b.height;
      const info = { height, hash: block.hash, time: block.time };
      block.txs.forEach((tx, i) => {
        const r = b.ref.transactions[i];
        const where = `${b.name} tx ${i}`;
        const prevouts = r.isCoinbase() ? [null]
          : r.inputs.map((inp, k) => outs.get(`${inp.prevTxId.toString('hex')}:${inp.outputIndex}`) ||
            { value: k + (k === 0 ? r.outputAmount : 0), script: h(`76a914${'22'.repeat(20)}88ac`) });
        const spends = r.outputs.map((o, n) => (n % 2 ? { txid: 'ab'.repeat(32), vin: n, height: height + 1 } : null));
        const j = insightTx(tx, { prevouts, spends, block: info, tipHeight: height + 5, network: b.network });
        assertKeyOrder(j, TX_KEYS, where);
        assert.equal(j.txid, r.hash, where);
        assert.equal(j.version, r.version, where);
        assert.equal(j.locktime, r.nLockTime, where);
        assert.equal(j.blockhash, block.hash);
        assert.equal(j.blockheight, height);
        assert.equal(j.confirmations, 6);
        assert.equal(j.time, block.time);
        assert.equal(j.blocktime, block.time);
        assert.equal(j.size, r.toBuffer().length, where);
        assert.equal(j.valueOut, r.outputAmount / 1e8, where);
        if (r.isCoinBase) assert.equal(j.isCoinBase, r.isCoinbase() ? true : undefined, where);
        if (r.isCoinbase()) {
          assert.deepEqual(j.vin, [{ coinbase: r.inputs[0]._scriptBuffer.toString('hex'), sequence: r.inputs[0].sequenceNumber, n: 0 }], where);
          assert.equal(j.valueIn, undefined);
          assert.equal(j.fees, undefined);
        } else {
          const inSum = prevouts.reduce((s, p) => s + p.value, 0);
          assert.equal(j.valueIn, inSum / 1e8, where);
          assert.equal(j.fees, (inSum - r.outputAmount) / 1e8, where);
          j.vin.forEach((v, k) => {
            const ri = r.inputs[k];
            assertKeyOrder(v, IN_KEYS, where);
            assert.equal(v.txid, ri.prevTxId.toString('hex'), where);
            assert.equal(v.vout, ri.outputIndex, where);
            assert.equal(v.sequence, ri.sequenceNumber, where);
            assert.equal(v.n, k);
            assert.equal(v.scriptSig.hex, ri._scriptBuffer.toString('hex'), where);
            assert.equal(v.scriptSig.asm, coreAsm(ri._scriptBuffer, true), where);
            assert.equal(v.valueSat, prevouts[k].value, where);
            assert.equal(v.value, prevouts[k].value / 1e8, where);
            assert.equal(v.doubleSpentTxID, null);
            const ps = bitcore.Script.fromBuffer(prevouts[k].script);
            const spentAddr = ps.isPublicKeyHashOut() || ps.isScriptHashOut() ? ps.toAddress(bitcoreNet(b.network)).toString()
              : ps.isPublicKeyOut() ? bitcore.Address.fromPublicKeyHash(bitcore.crypto.Hash.sha256ripemd160(ps.chunks[0].buf), bitcoreNet(b.network)).toString()
                : null;
            // a P2PK input names its key's P2PKH address, as insight-api on the bitcore-node service
            // names it (the patched node's spent index kept only P2PKH and P2SH)
            assert.equal(v.addr, spentAddr, where);
          });
        }
        j.vout.forEach((o, n) => {
          const ro = r.outputs[n];
          const script = ro.script.toBuffer();
          assertKeyOrder(o, OUT_KEYS, where);
          assert.equal(o.value, (ro.satoshis / 1e8).toFixed(8), where);
          assert.equal(o.n, n);
          assert.equal(o.scriptPubKey.hex, script.toString('hex'), where);
          assert.equal(o.scriptPubKey.asm, coreAsm(script), where);
          assert.equal(o.spentTxId, n % 2 ? 'ab'.repeat(32) : null);
          assert.equal(o.spentIndex, n % 2 ? n : null);
          assert.equal(o.spentHeight, n % 2 ? height + 1 : null);
          const want = bitcoreOutputAddress(ro.script, b.network);
          if (want) {
            assert.deepEqual(o.scriptPubKey.addresses, [want.address], `${where} output ${n}`);
            assert.equal(o.scriptPubKey.type, want.type, where);
            withAddress++;
          } else {
            assert.equal(o.scriptPubKey.addresses, undefined, `${where} output ${n}`);
          }
        });
        txCount++;
      });
    }
    assert.ok(txCount > 5000 && withAddress > 10000, `${txCount} txs, ${withAddress} outputs with an address`);
  });

  it('insight\'s query flags, an unconfirmed transaction, and a missing prevout', () => {
    const k = KNOWN.insight[0];
    const tx = parseTransaction(h(k.raw));
    const prevouts = [{ value: 91361400, script: decodeAddress('1BDHEPgB8iGipkaaJDxkAYjuzvEowNvGG7', 'main').script }];
    const bare = insightTx(tx, { prevouts, block: null, tipHeight: 10, network: 'main', now: 1700000000, options: { noAsm: true, noScriptSig: true, noSpent: true } });
    assert.equal(bare.vin[0].scriptSig, undefined);
    assert.deepEqual(bare.vout[1], {
      value: '0.91314400', n: 1,
      scriptPubKey: { hex: '76a9147003cc5915f6c23fd512b38daeeecfdde7a587e988ac', addresses: ['1BDHEPgB8iGipkaaJDxkAYjuzvEowNvGG7'], type: 'pubkeyhash' },
    });
    assert.equal('blockhash' in bare, false);
    assert.equal(bare.blockheight, -1);
    assert.equal(bare.confirmations, 0);
    assert.equal(bare.time, 1700000000);
    assert.equal('blocktime' in bare, false);
    const noAsm = insightTx(tx, { prevouts, block: null, tipHeight: 10, network: 'main', now: 1, options: { noAsm: true } });
    assert.deepEqual(Object.keys(noAsm.vin[0].scriptSig), ['hex']);
    assert.equal(noAsm.vout[0].spentTxId, null);
    assert.throws(() => insightTx(tx, { prevouts: [], block: null, tipHeight: 10, network: 'main' }),
      (err) => err instanceof StoreError && err.code === 'ERR_MISSING_PREVOUT');
  });

  describe('addresses as bitcore\'s bitcoind (Core 0.12.1) gave them', () => {
    const key = `02${'11'.repeat(32)}`;
    const bad = `05${'11'.repeat(32)}`; // 33 bytes, but no valid key starts with 05
    const pkhOf = (k) => bitcore.Address.fromPublicKeyHash(bitcore.crypto.Hash.sha256ripemd160(h(k)), 'livenet').toString();

    it('P2PK shows its key\'s P2PKH address only for a key of a valid length; its spending input shows none', () => {
      assert.deepEqual(insightOutputAddress(h(`21${key}ac`), 'main'), { address: pkhOf(key), type: 'pubkeyhash' });
      assert.equal(insightOutputAddress(h(`21${bad}ac`), 'main'), null);
      assert.equal(insightInputAddress(h(`21${key}ac`), 'main'), null);
    });

    it('Core\'s templates accept any push: a 20-byte hash behind OP_PUSHDATA1 is still P2PKH for outputs, not for inputs', () => {
      const pkh = '33'.repeat(20);
      const loose = h(`76a94c14${pkh}88ac`);
      assert.deepEqual(insightOutputAddress(loose, 'main'), { address: bitcore.Address.fromPublicKeyHash(h(pkh), 'livenet').toString(), type: 'pubkeyhash' });
      assert.equal(insightInputAddress(loose, 'main'), null); // the spent index knew only the exact 25-byte form
    });

    it('bare multisig: an address only when exactly one key is of a valid length', () => {
      assert.deepEqual(insightOutputAddress(h(`5121${key}51ae`), 'main'), { address: pkhOf(key), type: 'pubkeyhash' });
      assert.equal(insightOutputAddress(h(`5121${key}21${key}52ae`), 'main'), null); // two addresses: insight shows none
      assert.deepEqual(insightOutputAddress(h(`5121${key}21${bad}52ae`), 'main'), { address: pkhOf(key), type: 'pubkeyhash' });
      assert.equal(insightOutputAddress(h(`5221${key}51ae`), 'main'), null); // m > n
      assert.equal(insightOutputAddress(h(`0021${key}51ae`), 'main'), null); // m = 0
    });

    it('segwit outputs and inputs get the address and type today\'s bitcore-lib gives them; other witness versions none', () => {
      for (const [hex, type] of [[`0014${'44'.repeat(20)}`, 'witnesspubkeyhash'], [`0020${'44'.repeat(32)}`, 'witnessscripthash'], [`5120${'44'.repeat(32)}`, 'taproot']]) {
        const a = bitcore.Address.fromScript(bitcore.Script.fromBuffer(h(hex)), 'livenet');
        assert.deepEqual(insightOutputAddress(h(hex), 'main'), { address: a.toString(), type });
        assert.equal(a.type, type);
        assert.equal(insightInputAddress(h(hex), 'main'), a.toString());
      }
      assert.equal(insightOutputAddress(h('51024e73'), 'main'), null);
      assert.equal(insightOutputAddress(h(`5220${'44'.repeat(32)}`), 'main'), null);
    });
  });

  describe('blocks', () => {
    it('every fixture block: fields as bitcore-lib reads them, difficulty by bitcore-lib\'s getDifficulty', () => {
      const chain = referenceBlocks().filter((b) => b.height !== null);
      let work = 0n;
      const works = chain.map((b) => (work += blockProof(b.ref.header.bits)));
      assert.equal(works[0].toString(16), '100010001'); // Core's getblockheader chainwork of genesis
      assert.equal(works[1].toString(16), '200020002');
      for (const b of referenceBlocks()) {
        const block = parseBlock(b.raw);
        const height = b.height === null ? 300000 : b.height;
        const next = b.height !== null && b.height < chain.length - 1 ? chain[b.height + 1].ref.hash : null;
        const j = insightBlock(blockFacts(block), {
          txids: block.txs.map((t) => t.hash), height, tipHeight: chain.length - 1 + (b.height === null ? 300000 : 0),
          chainwork: b.height === null ? 1n : works[b.height], nextHash: next,
        });
        const hdr = b.ref.header;
        assert.equal(j.hash, b.ref.hash);
        assert.equal(j.size, b.raw.length);
        assert.equal(j.version, hdr.version);
        assert.equal(j.merkleroot, toHex(hdr.merkleRoot));
        assert.deepEqual(j.tx, b.ref.transactions.map((t) => t.hash));
        assert.equal(j.time, hdr.time);
        assert.equal(j.nonce, hdr.nonce);
        assert.equal(j.bits, hdr.bits.toString(16));
        assert.equal(j.difficulty, hdr.getDifficulty(), b.name);
        assert.equal(j.chainwork.length, 64);
        assert.equal(j.confirmations, chain.length - 1 - (b.height === null ? 0 : b.height) + 1);
        const prev = toHex(hdr.prevHash);
        assert.equal(j.previousblockhash, /^0+$/.test(prev) ? null : prev);
        assert.equal('nextblockhash' in j, next !== null);
        assert.equal(j.isMainChain, true);
        assert.deepEqual(j.poolInfo, {});
      }
    });

    it('reward: the subsidy by height, halving every 210,000 blocks', () => {
      assert.equal(blockReward(0), 50);
      assert.equal(blockReward(209999), 50);
      assert.equal(blockReward(210000), 25);
      assert.equal(blockReward(840000), 3.125);
      assert.equal(blockReward(64 * 210000), 0);
    });

    it('difficulty below 1 and of targets with a small exponent, as bitcore-lib computes them', () => {
      for (const bits of [0x207fffff, 0x1e0ffff0, 0x1d00ffff, 0x1b0404cb, 0x03123456, 0x18034379]) {
        const header = new bitcore.BlockHeader({ version: 1, prevHash: Buffer.alloc(32), merkleRoot: Buffer.alloc(32), time: 0, bits, nonce: 0 });
        assert.equal(bitcoreDifficulty(bits), header.getDifficulty(), bits.toString(16));
      }
    });
  });
});

/** bitcore-lib keeps header hashes in internal order: display hex. */
function toHex(buf) {
  return Buffer.from(buf).reverse().toString('hex');
}
