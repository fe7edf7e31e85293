'use strict';

const assert = require('node:assert/strict');
const bitcore = require('bitcore-lib');
const { parseBlock } = require('../../lib/chain/block');
const { parseTransaction } = require('../../lib/chain/tx');
const { esploraAsm } = require('../../lib/chain/asm');
const { esploraType, esploraAddress, innerScripts } = require('../../lib/chain/esplora-script');
const { rootFromBranch } = require('../../lib/chain/merkle');
const { fromDisplayHex, toDisplayHex, sha256d } = require('../../lib/chain/hash');
const { medianTimePast } = require('../../lib/chain/difficulty');
const { esploraTx, esploraOutspend, esploraBlock, esploraBlockStatus, esploraMerkleProof, blockFacts } = require('../../lib/api/esplora-format');
const { StoreError } = require('../../lib/errors');
const { referenceBlocks, chainOutputs } = require('../helpers/reference');
const { prng } = require('../helpers/prng');
const KNOWN = require('../fixtures/known-answers.json');
const BIP350 = require('../fixtures/bip173-350.json');

const h = (hex) => Buffer.from(hex, 'hex');
const bitcoreNet = (network) => (network === 'main' ? bitcore.Networks.livenet : bitcore.Networks.testnet);

const TX_KEYS = ['txid', 'version', 'locktime', 'vin', 'vout', 'size', 'weight', 'fee', 'status'];
const OUT_KEYS = ['scriptpubkey', 'scriptpubkey_asm', 'scriptpubkey_type', 'scriptpubkey_address', 'value'];
const IN_KEYS = ['txid', 'vout', 'prevout', 'scriptsig', 'scriptsig_asm', 'witness', 'is_coinbase', 'sequence',
  'inner_redeemscript_asm', 'inner_witnessscript_asm'];

/** Keys in electrs' serialization order, optional ones skipped when absent. */
function assertKeyOrder(obj, order, where) {
  const keys = Object.keys(obj);
  assert.deepEqual(keys, order.filter((k) => keys.includes(k)), where);
}

/** What Esplora's type should be, by bitcore-lib's own predicates where it has one. */
function bitcoreType(script) {
  if (script.toBuffer().length === 0) return 'empty';
  if (script.isPublicKeyHashOut()) return 'p2pkh';
  if (script.isScriptHashOut()) return 'p2sh';
  if (script.isWitnessPublicKeyHashOut()) return 'v0_p2wpkh';
  if (script.isWitnessScriptHashOut()) return 'v0_p2wsh';
  if (script.isTaproot()) return 'v1_p2tr';
  if (script.isPublicKeyOut()) return 'p2pk';
  if (script.isDataOut()) return 'op_return';
  if (script.isMultisigOut()) return 'multisig';
  return null; // nonstandard for bitcore: Esplora's looser rules decide
}

describe('Esplora formatter', () => {
  describe('known answers: real Esplora JSON (blockstream.info, mempool.space) for real transactions', () => {
    for (const k of KNOWN.esplora) {
      const a = k.answer;
      const kinds = [...new Set([...a.vin.map((i) => (i.prevout ? i.prevout.scriptpubkey_type : 'coinbase')), ...a.vout.map((o) => o.scriptpubkey_type)])];
      it(`${a.txid.slice(0, 16)}… (${k.network}; ${kinds.join(', ')})`, () => {
        const raw = h(k.raw);
        const tx = parseTransaction(raw);
        assert.equal(tx.hash, a.txid); // the bytes are that transaction
        const prevouts = a.vin.map((i) => i.prevout && { value: i.prevout.value, script: h(i.prevout.scriptpubkey) });
        const block = a.status.confirmed ? { height: a.status.block_height, hash: a.status.block_hash, time: a.status.block_time } : null;
        const got = esploraTx(tx, { prevouts, block, network: k.network });
        const want = { ...a };
        delete want.sigops; // mempool.space only; see lib/api/esplora-format.js
        assert.deepEqual(got, want);
        assert.equal(JSON.stringify(got), JSON.stringify(want)); // key order too
      });
    }
  });

  it('every transaction of every fixture: each field as bitcore-lib decodes it, fees from bitcore\'s own prevouts in the 439-block chain', function () {
    this.timeout(120000);
    const outs = chainOutputs();
    const types = new Map();
    let spends = 0;
    let txCount = 0;
    for (const b of referenceBlocks()) {
      const block = parseBlock(b.raw);
      const info = { height: b.height === null ? 1 : b.height, hash: block.hash, time: block.header ? 0 : block.time };
      block.txs.forEach((tx, i) => {
        const r = b.ref.transactions[i];
        const where = `${b.name} tx ${i}`;
        let prevouts;
        let wantFee = 0;
        if (r.isCoinbase()) {
          prevouts = [null];
        } else if (b.height !== null) {
          prevouts = r.inputs.map((inp) => outs.get(`${inp.prevTxId.toString('hex')}:${inp.outputIndex}`));
          wantFee = prevouts.reduce((s, p) => s + p.value, 0) - r.outputAmount;
          spends++;
        } else {
          // the single raw blocks come without their prevouts: stand-in P2PKH outputs whose
          // values make the expected fee known (the sum of the input positions)
          prevouts = r.inputs.map((inp, k) => ({ value: k + (k === 0 ? r.outputAmount : 0), script: h(`76a914${'11'.repeat(20)}88ac`) }));
          wantFee = (r.inputs.length * (r.inputs.length - 1)) / 2;
        }
        const j = esploraTx(tx, { prevouts, block: info, network: b.network });
        assertKeyOrder(j, TX_KEYS, where);
        assert.equal(j.txid, r.hash, where);
        assert.equal(j.version, r.version >>> 0, where);
        assert.equal(j.locktime, r.nLockTime, where);
        const full = r.toBuffer().length;
        assert.equal(j.size, full, where);
        assert.equal(j.weight, 3 * r.toBuffer(true).length + full, where);
        assert.equal(j.fee, wantFee, where);
        assert.deepEqual(j.status, { confirmed: true, block_height: info.height, block_hash: info.hash, block_time: info.time });
        assert.equal(j.vin.length, r.inputs.length, where);
        j.vin.forEach((v, k) => {
          const ri = r.inputs[k];
          assertKeyOrder(v, IN_KEYS, where);
          assert.equal(v.is_coinbase, r.isCoinbase(), where);
          assert.equal(v.txid, ri.prevTxId.toString('hex'), where);
          assert.equal(v.vout, ri.outputIndex, where);
          assert.equal(v.scriptsig, ri._scriptBuffer.toString('hex'), where);
          assert.equal(v.scriptsig_asm, esploraAsm(ri._scriptBuffer), where);
          assert.equal(v.sequence, ri.sequenceNumber, where);
          const w = ri.witnesses || [];
          assert.deepEqual(v.witness, w.length ? w.map((x) => x.toString('hex')) : undefined, where);
          if (r.isCoinbase()) assert.equal(v.prevout, null, where);
          else assert.equal(v.prevout.value, prevouts[k].value, where);
        });
        assert.equal(j.vout.length, r.outputs.length, where);
        j.vout.forEach((o, n) => {
          const ro = r.outputs[n];
          const script = ro.script.toBuffer();
          assertKeyOrder(o, OUT_KEYS, where);
          assert.equal(o.scriptpubkey, script.toString('hex'), where);
          assert.equal(o.scriptpubkey_asm, esploraAsm(script), where);
          assert.equal(o.value, ro.satoshis, where);
          const ref = bitcoreType(ro.script);
          if (ref !== null && !(ref === 'op_return' || ref === 'multisig')) assert.equal(o.scriptpubkey_type, ref, `${where} output ${n}`);
          if (ref === 'op_return') assert.equal(o.scriptpubkey_type, 'op_return', where);
          types.set(o.scriptpubkey_type, (types.get(o.scriptpubkey_type) || 0) + 1);
          if (['p2pkh', 'p2sh', 'v0_p2wpkh', 'v0_p2wsh', 'v1_p2tr'].includes(o.scriptpubkey_type)) {
            assert.equal(o.scriptpubkey_address, bitcore.Address.fromScript(ro.script, bitcoreNet(b.network)).toString(), where);
          } else if (o.scriptpubkey_type !== 'unknown') {
            assert.equal(o.scriptpubkey_address, undefined, where); // p2pk included: Esplora gives it none
          }
        });
        txCount++;
      });
    }
    assert.ok(txCount > 5000, `${txCount} txs`);
    // (no transaction of the first 439 blocks pays a fee: the known answers above do)
    assert.equal(spends, 7, 'the first 439 blocks hold 7 spending transactions');
    for (const t of ['p2pk', 'p2pkh', 'p2sh', 'v0_p2wpkh', 'v0_p2wsh', 'op_return']) assert.ok(types.get(t) > 0, `fixtures hold ${t}: ${JSON.stringify([...types])}`);
  });

  it('an input whose previous output is not supplied is an error, never a guessed fee', () => {
    const k = KNOWN.esplora.find((x) => x.answer.vin.length === 2);
    const tx = parseTransaction(h(k.raw));
    const prevouts = [{ value: 1, script: h('51') }];
    assert.throws(() => esploraTx(tx, { prevouts, block: null, network: 'main' }),
      (err) => err instanceof StoreError && err.code === 'ERR_MISSING_PREVOUT' && /input 1 of 3bbb2f59/.test(err.message));
  });

  it('an unconfirmed transaction has status {confirmed: false}', () => {
    const k = KNOWN.esplora[1];
    const prevouts = k.answer.vin.map((i) => ({ value: i.prevout.value, script: h(i.prevout.scriptpubkey) }));
    assert.deepEqual(esploraTx(parseTransaction(h(k.raw)), { prevouts, block: null, network: 'main' }).status, { confirmed: false });
  });

  it('outspends as real Esplora answers them (/tx/f4184fc5…/outspends on blockstream.info)', () => {
    const got = [
      esploraOutspend({ txid: 'ea44e97271691990157559d0bdd9959e02790c34db6c006d779e82fa5aee708e', vin: 0,
        block: { height: 92240, hash: '0000000000077430a94a5376bf2af42d4b1aebdecedfa9e4f7e3f0465a84d891', time: 1289939967 } }),
      esploraOutspend({ txid: 'a16f3ce4dd5deb92d98ef5cf8afeaf0775ebca408f708b2146c4fb42b41e14be', vin: 0,
        block: { height: 181, hash: '00000000dc55860c8a29c58d45209318fa9e9dc2c1833a7226d86bc465afc6e5', time: 1231740133 } }),
    ];
    assert.equal(JSON.stringify(got), '[{"spent":true,"txid":"ea44e97271691990157559d0bdd9959e02790c34db6c006d779e82fa5aee708e","vin":0,"status":{"confirmed":true,"block_height":92240,"block_hash":"0000000000077430a94a5376bf2af42d4b1aebdecedfa9e4f7e3f0465a84d891","block_time":1289939967}},{"spent":true,"txid":"a16f3ce4dd5deb92d98ef5cf8afeaf0775ebca408f708b2146c4fb42b41e14be","vin":0,"status":{"confirmed":true,"block_height":181,"block_hash":"00000000dc55860c8a29c58d45209318fa9e9dc2c1833a7226d86bc465afc6e5","block_time":1231740133}}]');
    assert.deepEqual(esploraOutspend(null), { spent: false });
  });

  describe('script types and addresses', () => {
    it('BIP173/BIP350 addresses from their scriptPubKeys, as rust-bitcoin 0.28 encodes every witness program', () => {
      for (const v of BIP350.validAddresses) {
        const net = v.address.toLowerCase().startsWith('bc1') ? 'main' : 'testnet';
        assert.equal(esploraAddress(h(v.scriptPubKey), net), v.address.toLowerCase());
      }
      // a version 0 program of a length BIP141 gives no meaning still has an address here
      assert.match(esploraAddress(h(`0010${'ab'.repeat(16)}`), 'main'), /^bc1q/);
      assert.equal(esploraType(h(`0010${'ab'.repeat(16)}`)), 'unknown');
    });

    it('the types of scripts only Esplora\'s rules decide', () => {
      const key33 = `21${'05'.repeat(33)}ac`; // a 33-byte push with no valid key prefix: p2pk all the same
      assert.equal(esploraType(h(key33)), 'p2pk');
      assert.equal(esploraAddress(h(key33), 'main'), null);
      assert.equal(esploraType(h('51024e73')), 'anchor');
      assert.equal(esploraAddress(h('51024e73'), 'main'), 'bc1pfeessrawgf');
      assert.equal(esploraType(h('6a')), 'op_return');
      assert.equal(esploraType(h('')), 'empty');
      for (const first of ['50', '62', '65', '7e', '89', 'ba', 'ff']) assert.equal(esploraType(h(`${first}51`)), 'provably_unspendable', first);
      // mempool.space's loose multisig shape: keys unchecked
      assert.equal(esploraType(h(`51${'21'}${'00'.repeat(33)}51ae`)), 'multisig');
      assert.equal(esploraType(h(`52${'21'}${'00'.repeat(33)}51ae`)), 'unknown'); // m > n
      assert.equal(esploraType(h('5151ae')), 'unknown'); // too short for a key
    });

    it('inner scripts: P2SH redeem script, P2SH-P2WSH and P2WSH witness script, taproot script path with and without annex', () => {
      const p2sh = h(`a914${'00'.repeat(20)}87`);
      const p2wsh = h(`0020${'00'.repeat(32)}`);
      const p2tr = h(`5120${'00'.repeat(32)}`);
      const ws = h('51');
      const redeemWsh = h(`0020${'11'.repeat(32)}`);
      assert.deepEqual(innerScripts(p2sh, h(`00${'22'}${redeemWsh.toString('hex')}`), [h('aa'), ws]), { redeem: redeemWsh, witness: ws });
      assert.deepEqual(innerScripts(p2sh, h('0151'), []), { redeem: h('51'), witness: null });
      assert.deepEqual(innerScripts(p2sh, h('0151ac'), []), { redeem: null, witness: null }); // ends in an opcode
      assert.deepEqual(innerScripts(p2sh, h('0251'), []), { redeem: null, witness: null }); // push past the end
      assert.deepEqual(innerScripts(p2wsh, h(''), [h(''), ws]), { redeem: null, witness: ws });
      assert.deepEqual(innerScripts(p2tr, h(''), [h('aa'.repeat(64))]), { redeem: null, witness: null }); // key path
      const control = h(`c0${'00'.repeat(32)}`);
      assert.deepEqual(innerScripts(p2tr, h(''), [h('aa'), ws, control]), { redeem: null, witness: ws });
      assert.deepEqual(innerScripts(p2tr, h(''), [h('aa'), ws, control, h('50ff')]), { redeem: null, witness: ws }); // annex
      assert.deepEqual(innerScripts(h(`76a914${'00'.repeat(20)}88ac`), h('0151'), [ws]), { redeem: null, witness: null });
    });
  });

  describe('blocks', () => {
    it('the genesis block as blockstream.info/api/blocks/0 answers it, but with the BIP141 weight', () => {
      const g = referenceBlocks().find((b) => b.height === 0);
      const got = esploraBlock(blockFacts(parseBlock(g.raw)), { height: 0, mediantime: 1231006505 });
      const want = {
        id: '000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f', height: 0, version: 1, timestamp: 1231006505,
        tx_count: 1, size: 285, weight: 816, merkle_root: '4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b',
        previousblockhash: null, mediantime: 1231006505, nonce: 2083236893, bits: 486604799, difficulty: 1,
      };
      // Blockstream's patched rust-bitcoin 0.23 sums the transactions' weights only (816);
      // mempool/electrs (rust-bitcoin 0.28) and Core's getblock add 4 x (header + count) = 324
      want.weight = 816 + 4 * 81;
      assert.equal(JSON.stringify(got), JSON.stringify(want));
    });

    it('every fixture block: header fields, size, weight and the merkle root recomputed by bitcore-lib', () => {
      const chain = referenceBlocks().filter((b) => b.height !== null);
      for (const b of referenceBlocks()) {
        const facts = blockFacts(parseBlock(b.raw));
        const hdr = b.ref.header;
        let mediantime = hdr.time;
        if (b.height !== null) mediantime = medianTimePast(chain.slice(Math.max(0, b.height - 10), b.height + 1).map((x) => x.ref.header.time));
        const j = esploraBlock(facts, { height: b.height || 0, mediantime });
        assert.equal(j.id, b.ref.hash, b.name);
        assert.equal(j.version, hdr.version >>> 0, b.name);
        assert.equal(j.timestamp, hdr.time, b.name);
        assert.equal(j.bits, hdr.bits, b.name);
        assert.equal(j.nonce, hdr.nonce, b.name);
        assert.ok(b.ref.validMerkleRoot(), b.name);
        assert.equal(j.merkle_root, toDisplayHex(b.ref.getMerkleRoot()), b.name);
        assert.equal(j.tx_count, b.ref.transactions.length, b.name);
        assert.equal(j.size, b.raw.length, b.name);
        const stripped = b.raw.length - b.ref.transactions.reduce((s, t) => s + t.toBuffer().length - t.toBuffer(true).length, 0);
        assert.equal(j.weight, 3 * stripped + b.raw.length, b.name);
        const prev = Buffer.from(hdr.prevHash).reverse().toString('hex');
        assert.equal(j.previousblockhash, /^0+$/.test(prev) ? null : prev, b.name);
        // Core's GetDifficulty is the double nearest the exact quotient of the two targets
        const target = (BigInt(hdr.bits & 0xffffff) << BigInt(8 * ((hdr.bits >>> 24) - 3)));
        const q = (BigInt(0xffff) << 208n) * 10n ** 30n / target;
        const s = q.toString().padStart(31, '0');
        assert.equal(j.difficulty, Number(`${s.slice(0, -30)}.${s.slice(-30)}`), b.name);
      }
    });

    it('median time past as Core computes it: block 1 takes the later of two timestamps', () => {
      assert.equal(medianTimePast([1231006505, 1231469665]), 1231469665);
      assert.equal(medianTimePast([5, 1, 4, 2, 3, 9, 8, 7, 6, 10, 11]), 6);
      assert.throws(() => medianTimePast([]), RangeError);
    });

    it('block status on and off the best chain', () => {
      assert.deepEqual(esploraBlockStatus({ height: 5, nextHash: 'ab' }), { in_best_chain: true, height: 5, next_best: 'ab' });
      assert.deepEqual(esploraBlockStatus({ height: 438, nextHash: null }), { in_best_chain: true, height: 438, next_best: null });
      assert.deepEqual(esploraBlockStatus(null), { in_best_chain: false, height: null, next_best: null });
    });
  });

  describe('merkle proofs', () => {
    it('block 100000 as blockstream.info and mempool.space answer /tx/:txid/merkle-proof', () => {
      const ids = ['8c14f0db3df150123e6f3dbbf30f8b955a8249b62ac1d1ff16284aefa3d06d87', 'fff2525b8931402dd09222c50775608f75787bd2b87e56995a7bdd30f79702c4',
        '6359f0868171b1d194cbee1af2f16ea598ae8fad666d9b012c8ed2b79a236ec4', 'e9a66845e05d5abc0ad04ec80f774a7e585c6e8db975962d069a522137b80c1d'].map(fromDisplayHex);
      assert.deepEqual(esploraMerkleProof(ids, 0, 100000), {
        block_height: 100000,
        merkle: ['fff2525b8931402dd09222c50775608f75787bd2b87e56995a7bdd30f79702c4', '8e30899078ca1813be036a073bbf80b86cdddde1c96e9e9c99e9e3782df4ae49'],
        pos: 0,
      });
      assert.deepEqual(esploraMerkleProof(ids, 1, 100000).merkle,
        ['8c14f0db3df150123e6f3dbbf30f8b955a8249b62ac1d1ff16284aefa3d06d87', '8e30899078ca1813be036a073bbf80b86cdddde1c96e9e9c99e9e3782df4ae49']);
      for (let pos = 0; pos < 4; pos++) {
        const branch = esploraMerkleProof(ids, pos, 100000).merkle.map(fromDisplayHex);
        assert.equal(toDisplayHex(rootFromBranch(ids[pos], branch, pos)), 'f3e94742aca4b5ef85488dc37c06c3282295ffec960994b2c0d5ac2a25a95766');
      }
    });

    it('transactions of every fixture block: each proof leads back to the header\'s merkle root', () => {
      const rand = prng(13);
      let proofs = 0;
      for (const b of referenceBlocks()) {
        const block = parseBlock(b.raw);
        const ids = block.txs.map((t) => t.txid);
        const depth = Math.ceil(Math.log2(ids.length));
        // a proof costs a pass over the block: the first, the last and 30 seeded positions
        const positions = new Set([0, ids.length - 1]);
        for (let k = 0; k < 30; k++) positions.add(Math.floor(rand() * ids.length));
        for (const pos of positions) {
          const id = ids[pos];
          const p = esploraMerkleProof(ids, pos, 7);
          assert.equal(p.merkle.length, depth, b.name);
          assert.ok(rootFromBranch(id, p.merkle.map(fromDisplayHex), pos).equals(block.merkleRoot), `${b.name} tx ${pos}`);
          proofs++;
        }
        // a proof for the wrong position does not verify (a single-tx block has nothing to prove)
        if (ids.length > 1) assert.ok(!rootFromBranch(ids[0], esploraMerkleProof(ids, 1, 7).merkle.map(fromDisplayHex), 0).equals(block.merkleRoot));
      }
      assert.ok(proofs > 600, `${proofs} proofs`);
      assert.throws(() => esploraMerkleProof([sha256d(Buffer.alloc(1))], 1, 0), RangeError);
    });
  });
});
