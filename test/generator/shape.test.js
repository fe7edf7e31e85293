'use strict';

const assert = require('node:assert/strict');
const bitcore = require('bitcore-lib');
const { ChainGenerator } = require('../../tools/generator');
const { parseBlock } = require('../../lib/chain/block');
const { classify } = require('../../lib/chain/script');
const { sha256d, toDisplayHex } = require('../../lib/chain/hash');
const { merkleRoot } = require('../../lib/chain/merkle');

const SEED = 11;
const TXS_PER_BLOCK = 200;
const HEIGHT = 200; // 100 coinbase-only blocks (maturity), then ~20k spending txs
const BITCORE_SAMPLE = [101, 102, 150, 199, 200];
const WITNESS_TYPES = new Set(['p2wpkh', 'p2wsh', 'p2tr']);

/**
 * Generates the chain once and checks it independently of the generator's own bookkeeping:
 * a UTXO map built from the parsed bytes, every spend checked against it.
 */
function generateAndCheck() {
  const gen = new ChainGenerator({ seed: SEED, txsPerBlock: TXS_PER_BLOCK });
  const utxo = new Map(); // "txid:vout" → {value, type, script hex, height, coinbase}
  const seen = new Set(); // scripts paid so far
  const entries = new Map(); // script hex → txs funding or spending it
  const r = {
    gen, raws: new Map(), spentTypes: new Map(), blocks: 0, txs: 0, inputs: 0, outputs: 0,
    oneInput: 0, twoOutputs: 0, bigIn: 0, bigOut: 0, byType: {}, newScripts: 0, spendableOutputs: 0,
    sameBlock: 0, oldSpends: 0, youngSpends: 0, segwit: 0, errors: [],
  };
  for (let h = 0; h <= HEIGHT; h++) {
    const b = gen.nextBlock();
    const block = parseBlock(b.raw); // verifies the merkle root
    if (BITCORE_SAMPLE.includes(h)) r.raws.set(h, b.raw);
    r.blocks++;
    let fees = 0;
    const wtxids = [Buffer.alloc(32)];
    block.txs.forEach((tx, i) => {
      const txid = tx.txid.toString('hex');
      const touched = new Set();
      if (i > 0) {
        wtxids.push(tx.hasWitness ? tx.wtxid : tx.txid);
        let inSum = 0;
        let witnessSpend = false;
        let anyP2sh = false;
        const types = [];
        for (const inp of tx.inputs) {
          const key = `${inp.txid.toString('hex')}:${inp.vout}`;
          const u = utxo.get(key);
          if (!u) throw new Error(`block ${h} tx ${i} spends ${key}: not an existing unspent output`);
          if (u.coinbase) assert.ok(h - u.height >= 100, `coinbase spent at age ${h - u.height}`);
          utxo.delete(key);
          inSum += u.value;
          types.push(u.type);
          if (WITNESS_TYPES.has(u.type)) witnessSpend = true;
          if (u.type === 'p2sh') anyP2sh = true;
          if (u.height === h) r.sameBlock++;
          if (h - u.height > 20) r.oldSpends++;
          if (h - u.height <= 6) r.youngSpends++;
          touched.add(u.script);
        }
        r.spentTypes.set(`${h}:${i}`, types);
        if (witnessSpend) assert.ok(tx.hasWitness, 'spending witness outputs needs BIP144 serialization');
        if (tx.hasWitness) assert.ok(witnessSpend || anyP2sh, 'witness data only where a spend needs it');
        let outSum = 0;
        let nulldata = 0;
        for (const out of tx.outputs) {
          outSum += out.value;
          const type = classify(out.script).type;
          r.byType[type] = (r.byType[type] || 0) + 1;
          if (type === 'nulldata') {
            nulldata++;
            assert.equal(out.value, 0);
            continue;
          }
          const hex = out.script.toString('hex');
          r.spendableOutputs++;
          if (!seen.has(hex)) r.newScripts++;
        }
        assert.ok(nulldata <= 1, 'at most one OP_RETURN per tx');
        const fee = inSum - outSum;
        assert.ok(Number.isSafeInteger(fee) && fee >= 0, `fee ${fee} at block ${h} tx ${i}`);
        fees += fee;
        r.txs++;
        r.inputs += tx.inputs.length;
        r.outputs += tx.outputs.length;
        if (tx.inputs.length === 1) r.oneInput++;
        if (tx.outputs.length === 2) r.twoOutputs++;
        if (tx.inputs.length >= 10) r.bigIn++;
        if (tx.outputs.length >= 10) r.bigOut++;
        if (tx.hasWitness) r.segwit++;
      }
      tx.outputs.forEach((out, vout) => {
        const type = classify(out.script).type;
        if (type === 'nulldata') return;
        const hex = out.script.toString('hex');
        seen.add(hex);
        touched.add(hex);
        if (h > 0) utxo.set(`${txid}:${vout}`, { value: out.value, type, script: hex, height: h, coinbase: i === 0 });
      });
      for (const s of touched) entries.set(s, (entries.get(s) || 0) + 1);
    });
    if (h > 0) {
      const cb = block.txs[0];
      assert.equal(cb.outputs[0].value, gen.subsidyAt(h) + fees, `coinbase value at ${h}`);
      assert.equal(gen.subsidyAt(h), Math.floor(50e8 / 2 ** Math.floor(h / 150)));
      // BIP141 commitment: OP_RETURN aa21a9ed || sha256d(witness merkle root || reserved zeros)
      const commit = cb.outputs[1].script;
      assert.equal(commit.subarray(0, 6).toString('hex'), '6a24aa21a9ed');
      const expect = sha256d(Buffer.concat([merkleRoot(wtxids), Buffer.alloc(32)]));
      assert.ok(commit.subarray(6).equals(expect), `witness commitment at ${h}`);
    }
  }
  r.entries = entries;
  r.utxo = utxo;
  return r;
}

describe('generator: chain shape and consistency (~20k txs)', function () {
  this.timeout(120000);
  let r;
  before(() => {
    r = generateAndCheck();
  });

  it('spends only existing unspent outputs, conserves value, pays subsidy + fees', () => {
    // the checks run while generating; here what they covered
    assert.ok(r.txs >= 18000, `${r.txs} spending txs`);
    assert.ok(r.inputs > 35000);
  });

  it('inputs and outputs per tx follow the parameters, with consolidations and batch payouts', () => {
    const p = r.gen.p;
    const inMean = r.inputs / r.txs;
    const outMean = r.outputs / r.txs;
    // coin selection adds inputs when the drawn coins cannot pay (about 3 % more)
    assert.ok(inMean >= p.inputsMean - 0.1 && inMean <= p.inputsMean + 0.2, `inputs/tx ${inMean}`);
    assert.ok(Math.abs(outMean - p.outputsMean) <= 0.3, `outputs/tx ${outMean}`);
    const pIn1 = r.gen.dist.inputs.pmf[1];
    const pOut2 = r.gen.dist.outputs.pmf[2];
    assert.ok(Math.abs(r.oneInput / r.txs - pIn1) < 0.05, `1-input share ${r.oneInput / r.txs} vs ${pIn1}`);
    assert.ok(Math.abs(r.twoOutputs / r.txs - pOut2) < 0.03, `2-output share ${r.twoOutputs / r.txs} vs ${pOut2}`);
    assert.ok(r.bigIn > 50, `${r.bigIn} txs with 10+ inputs`);
    assert.ok(r.bigOut > 50, `${r.bigOut} txs with 10+ outputs`);
  });

  it('the output script mix is within 3 points of the parameters', () => {
    const mix = r.gen.p.mix;
    for (const [cls, share] of Object.entries(mix)) {
      const got = (r.byType[cls] || 0) / r.outputs;
      assert.ok(Math.abs(got - share) <= 0.03, `${cls}: ${(100 * got).toFixed(1)} % vs ${(100 * share).toFixed(1)} %`);
    }
    const known = Object.keys(mix);
    for (const t of Object.keys(r.byType)) assert.ok(known.includes(t), `unexpected script type ${t}`);
  });

  it('about 45 % of outputs pay a never-seen script, and the generator counts it the same way', () => {
    const share = r.newScripts / r.spendableOutputs;
    assert.ok(Math.abs(share - r.gen.p.newScriptShare) <= 0.05, `new-script share ${share}`);
    assert.ok(Math.abs(share - r.gen.stats().newScriptShare) < 0.005);
  });

  it('reuse is heavy-tailed: the top script collects many times the median', () => {
    const counts = [...r.entries.values()].sort((a, b) => a - b);
    const median = counts[counts.length >> 1];
    const top = counts[counts.length - 1];
    assert.ok(top >= 100 * median, `top ${top}, median ${median}`);
    assert.ok(top >= 1000, `top ${top}`);
    // the generator's own count of history entries agrees on the top script
    assert.equal(r.gen.stats({ top: 1 }).topScripts[0].entries, top);
  });

  it('spends are mostly young, some in the same block, with a tail of old coins', () => {
    assert.ok(r.sameBlock / r.inputs > 0.02, `same-block spends ${r.sameBlock}`);
    assert.ok(r.youngSpends / r.inputs > 0.6, `spends at most 6 blocks old ${r.youngSpends}`);
    assert.ok(r.oldSpends / r.inputs > 0.03, `spends older than 20 blocks ${r.oldSpends}`);
    assert.ok(r.segwit / r.txs > 0.6, `segwit txs ${r.segwit / r.txs}`);
  });

  it('bitcore-lib parses sampled blocks and agrees on txids, wtxids, prevouts, outputs and input sizes', () => {
    let checked = 0;
    for (const [h, raw] of r.raws) {
      const ours = parseBlock(raw);
      const ref = bitcore.Block.fromBuffer(raw);
      assert.equal(ref.hash, ours.hash);
      assert.equal(ref.transactions.length, ours.txs.length);
      ours.txs.forEach((tx, i) => {
        const rtx = ref.transactions[i];
        assert.equal(rtx.hash, tx.hash);
        if (tx.hasWitness) assert.equal(rtx.witnessHash, toDisplayHex(tx.wtxid));
        tx.outputs.forEach((o, k) => {
          assert.equal(rtx.outputs[k].satoshis, o.value);
          assert.ok(rtx.outputs[k].script.toBuffer().equals(o.script));
        });
        if (i === 0) return;
        const types = r.spentTypes.get(`${h}:${i}`);
        tx.inputs.forEach((inp, k) => {
          const rin = rtx.inputs[k];
          assert.equal(rin.prevTxId.toString('hex'), toDisplayHex(inp.txid));
          assert.equal(rin.outputIndex, inp.vout);
          checkInputSize(types[k], rin._scriptBuffer, rin.witnesses || []);
          checked++;
        });
      });
    }
    assert.ok(checked > 1000, `${checked} inputs checked`);
  });
});

/** Dummy signatures and keys must have the lengths real spends of each type have. */
function checkInputSize(type, scriptSig, witnesses) {
  const sig = (b) => b.length === 71 || b.length === 72;
  const lens = witnesses.map((w) => w.length);
  switch (type) {
    case 'p2pkh':
      assert.ok(scriptSig.length === 106 || scriptSig.length === 107, `p2pkh scriptSig ${scriptSig.length}`);
      assert.equal(witnesses.length, 0);
      break;
    case 'p2wpkh':
      assert.equal(scriptSig.length, 0);
      assert.ok(lens.length === 2 && sig(witnesses[0]) && lens[1] === 33, `p2wpkh witness ${lens}`);
      break;
    case 'p2wsh':
      assert.deepEqual([lens.length, lens[0], lens[3]], [4, 0, 105]);
      assert.ok(sig(witnesses[1]) && sig(witnesses[2]));
      break;
    case 'p2tr':
      assert.equal(scriptSig.length, 0);
      assert.ok((lens.length === 1 && lens[0] === 64) || (lens.length === 3 && lens[0] === 64 && lens[1] === 34 && lens[2] === 33),
        `p2tr witness ${lens}`);
      break;
    case 'p2sh':
      if (scriptSig.length === 23) assert.ok(lens.length === 2 && lens[1] === 33, 'p2sh-p2wpkh');
      else if (scriptSig.length === 35) assert.deepEqual([lens.length, lens[3]], [4, 105]);
      else assert.ok(scriptSig.length >= 250 && scriptSig.length <= 254 && lens.length === 0, `p2sh multisig ${scriptSig.length}`);
      break;
    case 'p2pk':
      assert.ok(scriptSig.length === 72 || scriptSig.length === 73);
      break;
    case 'multisig':
      assert.ok(scriptSig.length === 73 || scriptSig.length === 74);
      break;
    default:
      throw new Error(`spent an output of type ${type}`);
  }
}
