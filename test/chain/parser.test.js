'use strict';

const assert = require('node:assert/strict');
const bitcore = require('bitcore-lib');
const { parseBlock } = require('../../lib/chain/block');
const { parseTransaction } = require('../../lib/chain/tx');
const { ParseError } = require('../../lib/errors');
const { toDisplayHex, sha256d } = require('../../lib/chain/hash');
const { KNOWN_HASHES, RAW_BLOCKS, readFixture, mainnet439Blocks } = require('../helpers/fixtures');

/** Compares our parse of a block with bitcore-lib's, field by field. */
function assertSameAsBitcore(buf) {
  const ours = parseBlock(buf);
  const ref = bitcore.Block.fromBuffer(buf);
  assert.equal(ours.hash, ref.hash);
  assert.equal(ours.prev, Buffer.from(ref.header.prevHash).reverse().toString('hex'));
  assert.equal(ours.time, ref.header.time);
  assert.equal(ours.bits, ref.header.bits);
  assert.equal(ours.nonce, ref.header.nonce);
  assert.equal(ours.version, ref.header.version);
  assert.equal(ours.txs.length, ref.transactions.length);
  let outputs = 0;
  ours.txs.forEach((tx, i) => {
    const rtx = ref.transactions[i];
    assert.equal(tx.hash, rtx.hash, `txid of tx ${i}`);
    assert.equal(tx.coinbase, rtx.isCoinbase());
    assert.equal(tx.hasWitness, rtx.hasWitnesses());
    if (tx.hasWitness) assert.equal(toDisplayHex(tx.wtxid), rtx.witnessHash);
    else assert.equal(tx.wtxid, null);
    assert.equal(tx.size, rtx.toBuffer().length);
    if (!tx.coinbase) {
      assert.equal(tx.inputs.length, rtx.inputs.length);
      tx.inputs.forEach((inp, k) => {
        assert.equal(toDisplayHex(inp.txid), rtx.inputs[k].prevTxId.toString('hex'));
        assert.equal(inp.vout, rtx.inputs[k].outputIndex);
      });
    } else {
      assert.equal(tx.inputs.length, 0);
    }
    assert.equal(tx.outputs.length, rtx.outputs.length);
    tx.outputs.forEach((out, k) => {
      assert.equal(out.value, rtx.outputs[k].satoshis);
      assert.ok(out.script.equals(rtx.outputs[k].script.toBuffer()));
      // zero-copy: the script is a view into the block buffer
      assert.equal(out.script.buffer, buf.buffer);
      outputs++;
    });
  });
  return { block: ours, outputs };
}

describe('block and transaction parser', () => {
  for (const rel of RAW_BLOCKS) {
    it(`${rel}: matches bitcore-lib, merkle root checks`, () => {
      const buf = readFixture(rel);
      const { block, outputs } = assertSameAsBitcore(buf);
      assert.ok(outputs > 0);
      assert.equal(block.size, buf.length);
      if (KNOWN_HASHES[rel]) assert.equal(block.hash, KNOWN_HASHES[rel]);
      // the hash is the byte-reversed double SHA-256 of the 80-byte header
      assert.equal(block.hash, toDisplayHex(sha256d(buf.subarray(0, 80))));
    });
  }

  it('parses segwit transactions in the witness-heavy testnet blocks', () => {
    const block = parseBlock(readFixture('testnet/block928816.raw'));
    const witness = block.txs.filter((t) => t.hasWitness).length;
    assert.ok(witness > 500, `expected most txs with witness data, got ${witness}`);
  });

  it('the first 439 mainnet blocks parse and link', () => {
    const blocks = mainnet439Blocks();
    assert.equal(blocks.length, 439);
    let prev = '0'.repeat(64);
    for (const raw of blocks) {
      const b = parseBlock(raw);
      assert.equal(b.prev, prev);
      prev = b.hash;
    }
    assert.equal(parseBlock(blocks[0]).hash, '000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f');
    const b170 = assertSameAsBitcore(blocks[170]).block;
    const pay = b170.txs.find((t) => t.hash.startsWith('f4184fc5'));
    assert.equal(pay.hash, 'f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16');
    assert.deepEqual(pay.outputs.map((o) => o.value), [10e8, 40e8]);
  });

  it('parses a single transaction and rejects trailing bytes', () => {
    const block = parseBlock(readFixture('mainnet/block482683.raw'));
    const raw = Buffer.from(block.txs[1].raw);
    assert.equal(parseTransaction(raw).hash, block.txs[1].hash);
    assert.throws(() => parseTransaction(Buffer.concat([raw, Buffer.from([0])])), { code: 'ERR_TRAILING_BYTES' });
  });
});

describe('parser on hostile input', () => {
  const base = readFixture('mainnet/block482683.raw'); // small, legacy and segwit txs

  /** Every failure must be a ParseError with a code; anything else is a bug. */
  function parseOrTypedError(buf) {
    try {
      parseBlock(buf);
      return null;
    } catch (err) {
      if (!(err instanceof ParseError) || !err.code) throw err;
      return err.code;
    }
  }

  it('every truncation of a block is a typed error', () => {
    for (let len = 0; len < base.length; len += 7) {
      const code = parseOrTypedError(base.subarray(0, len));
      assert.ok(code, `truncated at ${len} must fail`);
    }
  });

  it('trailing bytes and an empty transaction list are rejected', () => {
    assert.equal(parseOrTypedError(Buffer.concat([base, Buffer.alloc(3)])), 'ERR_TRAILING_BYTES');
    const noTx = Buffer.concat([base.subarray(0, 80), Buffer.from([0])]);
    assert.equal(parseOrTypedError(noTx), 'ERR_BAD_BLOCK');
  });

  it('counts and lengths pointing past the end fail before allocating', () => {
    const header = base.subarray(0, 80);
    const cases = [
      Buffer.concat([header, Buffer.from([0xfe, 0xff, 0xff, 0xff, 0x01])]), // 33M txs
      Buffer.concat([header, Buffer.from([0xff, 1, 2, 3, 4, 5, 6, 7, 8])]), // 64-bit count
      Buffer.concat([header, Buffer.from([0xfd, 0x05, 0x00])]), // non-canonical
    ];
    for (const c of cases) assert.match(parseOrTypedError(c), /^ERR_(TRUNCATED|BAD_VARINT)$/);
    // a script length in the first output raised to 0xfe 0xffffff00
    const block = parseBlock(base);
    const out = block.txs[0].outputs[0];
    const at = out.script.byteOffset - base.byteOffset - 1;
    const bad = Buffer.concat([base.subarray(0, at), Buffer.from([0xfe, 0, 0, 0, 1]), base.subarray(at + 1)]);
    assert.equal(parseOrTypedError(bad), 'ERR_TRUNCATED');
  });

  it('a changed byte in a transaction breaks the merkle root', () => {
    const copy = Buffer.from(base);
    const block = parseBlock(copy);
    const s = block.txs[3].outputs[0].script;
    s[s.length - 2] ^= 0xff;
    assert.equal(parseOrTypedError(copy), 'ERR_MERKLE_MISMATCH');
  });

  it('a duplicated last transaction (CVE-2012-2459) is rejected although the root matches', () => {
    // with an odd tx count, appending a copy of the last tx leaves the merkle root unchanged
    const src = readFixture('mainnet/block300025.raw');
    const block = parseBlock(src);
    assert.equal(block.txs.length % 2, 1);
    const last = block.txs[block.txs.length - 1].raw;
    const count = block.txs.length + 1;
    const countBytes = Buffer.from([0xfd, count & 0xff, count >> 8]);
    const firstTx = block.txs[0].offset;
    const mutated = Buffer.concat([src.subarray(0, 80), countBytes, src.subarray(firstTx), last]);
    assert.equal(parseOrTypedError(mutated), 'ERR_MERKLE_MUTATED');
  });

  it('random bytes and thousands of mutated fixture blocks give typed errors or a valid parse', function () {
    this.timeout(120000);
    // deterministic xorshift so a failure reproduces
    let s = 0x9e3779b9;
    const rnd = () => {
      s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
      return s / 0x100000000;
    };
    const sources = [base, readFixture('testnet/block1087400.raw')];
    const codes = new Map();
    let ok = 0;
    for (let i = 0; i < 3000; i++) {
      const src = sources[i % sources.length];
      const buf = Buffer.from(src);
      const edits = 1 + Math.floor(rnd() * 4);
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(rnd() * buf.length);
        const kind = rnd();
        if (kind < 0.6) buf[at] = Math.floor(rnd() * 256);
        else if (kind < 0.8) buf[at] = [0x00, 0xfd, 0xfe, 0xff][Math.floor(rnd() * 4)];
        else buf[at] ^= 1 << Math.floor(rnd() * 8);
      }
      const cut = rnd() < 0.2 ? buf.subarray(0, Math.floor(rnd() * buf.length)) : buf;
      const code = parseOrTypedError(cut);
      if (code) codes.set(code, (codes.get(code) || 0) + 1);
      else ok++;
    }
    for (let i = 0; i < 500; i++) {
      const junk = Buffer.alloc(Math.floor(rnd() * 4000));
      for (let k = 0; k < junk.length; k++) junk[k] = Math.floor(rnd() * 256);
      const code = parseOrTypedError(junk);
      assert.ok(code, 'random bytes never parse as a block');
    }
    // mutations land mostly in hashed bytes, so nearly all must be caught
    assert.ok(codes.get('ERR_MERKLE_MISMATCH') > 1000, JSON.stringify([...codes]));
    assert.ok(ok < 300, `${ok} mutated blocks parsed`);
  });
});

describe('parser detail mode and sizes (what a served transaction shows)', () => {
  const { referenceBlocks } = require('../helpers/reference');
  const { parseTxDetail } = require('../../lib/chain/tx');
  const { blockWeight } = require('../../lib/chain/block');

  it('every transaction of every fixture: version, locktime, inputs, witnesses, size and weight as bitcore-lib reads them', () => {
    let txs = 0;
    let witnessItems = 0;
    for (const b of referenceBlocks()) {
      const block = parseBlock(b.raw);
      let stripped = 0;
      block.txs.forEach((tx, i) => {
        const r = b.ref.transactions[i];
        const d = parseTxDetail(tx);
        const where = `${b.name} tx ${i}`;
        assert.equal(d.hash, tx.hash, where);
        assert.equal(d.version | 0, r.version, where);
        assert.equal(d.locktime, r.nLockTime, where);
        assert.equal(d.details.length, r.inputs.length, where);
        d.details.forEach((inp, k) => {
          const ri = r.inputs[k];
          assert.equal(toDisplayHex(inp.txid), ri.prevTxId.toString('hex'), where);
          assert.equal(inp.vout, ri.outputIndex, where);
          assert.ok(inp.script.equals(ri._scriptBuffer), `${where} input ${k} script`);
          assert.equal(inp.sequence, ri.sequenceNumber, where);
          const w = ri.witnesses || [];
          assert.equal(inp.witness.length, w.length, `${where} input ${k} witness`);
          inp.witness.forEach((item, j) => assert.ok(item.equals(w[j]), `${where} input ${k} item ${j}`));
          witnessItems += w.length;
        });
        const full = r.toBuffer().length;
        const base = r.toBuffer(true).length;
        assert.equal(d.size, full, where);
        assert.equal(tx.baseSize, base, where);
        assert.equal(tx.weight, 3 * base + full, where);
        assert.equal(tx.vsize, Math.ceil((3 * base + full) / 4), where);
        stripped += base;
        txs++;
      });
      const countBytes = b.raw.length - 80 - block.txs.reduce((s, t) => s + t.size, 0);
      assert.equal(blockWeight(block), 3 * (80 + countBytes + stripped) + b.raw.length, b.name);
    }
    assert.ok(txs > 5000 && witnessItems > 5000, `${txs} txs, ${witnessItems} witness items`);
  });

  it('a standalone coinbase parses as one (getrawtransaction of a block\'s first transaction)', () => {
    const genesis = mainnet439Blocks()[0];
    const cb = parseBlock(genesis).txs[0];
    const tx = parseTransaction(Buffer.from(cb.raw), { detail: true });
    assert.equal(tx.coinbase, true);
    assert.equal(tx.hash, '4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b');
    assert.equal(tx.details[0].vout, 0xffffffff);
    assert.equal(tx.details[0].script.length, 77);
  });
});
