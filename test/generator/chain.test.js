'use strict';

const assert = require('node:assert/strict');
const { ChainGenerator, genesisBlock } = require('../../tools/generator');
const { putHeightPush } = require('../../tools/generator/chain');
const { parseBlock } = require('../../lib/chain/block');
const { NETWORKS } = require('../../lib/chain/networks');
const { UsageError } = require('../../lib/errors');

const SMALL = { txsPerBlock: 20, coinbaseMaturity: 5 };

function blocks(opts, n) {
  const g = new ChainGenerator(opts);
  const out = [];
  for (let i = 0; i < n; i++) out.push(g.nextBlock());
  return out;
}

/** The regtest target (bits 0x207fffff) as a number, and a header hash read as one. */
const REGTEST_TARGET = 0x7fffffn << (8n * (0x20n - 3n));
const hashNumber = (hex) => BigInt(`0x${hex}`);

describe('generator: ChainGenerator', () => {
  it('height 0 is the real genesis block of each network', () => {
    for (const name of Object.keys(NETWORKS)) {
      const g = genesisBlock(name);
      const b = parseBlock(g.raw);
      assert.equal(b.hash, NETWORKS[name].genesis, name);
      assert.equal(b.txs[0].hash, name === 'testnet4'
        ? '7aa0a7ae1e223414cb807e40cd57e667b718e42aaf9306db9102fe28912b7b4e' // BIP94's merkle root
        : '4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b', name);
    }
    const [b0] = blocks({ seed: 1 }, 1);
    assert.equal(b0.height, 0);
    assert.equal(b0.hash, NETWORKS.regtest.genesis);
    assert.equal(b0.prev, '0'.repeat(64));
  });

  it('is deterministic: the same seed gives the same bytes, another seed other blocks', () => {
    const a = blocks({ seed: 'abc', ...SMALL }, 25);
    const b = blocks({ seed: 'abc', ...SMALL }, 25);
    const c = blocks({ seed: 'abd', ...SMALL }, 25);
    for (let i = 0; i < 25; i++) assert.ok(a[i].raw.equals(b[i].raw), `block ${i}`);
    assert.ok(a[0].raw.equals(c[0].raw), 'genesis is shared');
    for (let i = 1; i < 25; i++) assert.notEqual(a[i].hash, c[i].hash, `block ${i}`);
  });

  it('every block parses with a valid merkle root, links to its parent and has regtest proof of work', () => {
    const list = blocks({ seed: 3, ...SMALL }, 40);
    let prevTime = 0;
    list.forEach((b, h) => {
      const parsed = parseBlock(b.raw); // verifies the merkle root
      assert.equal(parsed.hash, b.hash);
      assert.equal(parsed.txs.length, b.txCount);
      assert.equal(parsed.size, b.raw.length);
      if (h > 0) {
        assert.equal(parsed.prev, list[h - 1].hash, `prev link of ${h}`);
        assert.equal(b.prev, list[h - 1].hash);
        assert.equal(parsed.bits, 0x207fffff);
        assert.ok(hashNumber(parsed.hash) <= REGTEST_TARGET, `proof of work of ${h}`);
        assert.ok(parsed.time > prevTime, 'times increase');
      }
      prevTime = parsed.time;
    });
    assert.ok(list[30].txCount > 1, 'blocks after coinbase maturity carry spends');
  });

  it('coinbases carry the BIP34 height push and so have unique txids', () => {
    const list = blocks({ seed: 4, txsPerBlock: 0 }, 300);
    const seen = new Set();
    for (const b of list.slice(1)) {
      const cb = parseBlock(b.raw).txs[0];
      const at = 4 + (cb.hasWitness ? 2 : 0) + 1 + 36; // version, segwit marker, input count, null outpoint
      const script = cb.raw.subarray(at + 1, at + 1 + cb.raw[at]);
      const expect = Buffer.alloc(9);
      const end = putHeightPush(expect, 0, b.height);
      assert.ok(script.subarray(0, end).equals(expect.subarray(0, end)), `height push at ${b.height}`);
      assert.ok(!seen.has(cb.hash));
      seen.add(cb.hash);
    }
    // Bitcoin Core's CScript() << n: small ints as opcodes, then minimal little-endian numbers
    const push = (h) => { const b = Buffer.alloc(9); return b.subarray(0, putHeightPush(b, 0, h)).toString('hex'); };
    assert.equal(push(1), '51');
    assert.equal(push(16), '60');
    assert.equal(push(17), '0111');
    assert.equal(push(128), '028000');
    assert.equal(push(255), '02ff00');
    assert.equal(push(256), '020001');
    assert.equal(push(840000), '0340d10c');
  });

  it('a branch shares every block below atHeight and differs from it on', () => {
    const base = blocks({ seed: 9, ...SMALL }, 30);
    const branched = blocks({ seed: 9, ...SMALL, branches: [{ atHeight: 20, seed: 'other' }] }, 30);
    for (let h = 0; h < 20; h++) assert.ok(base[h].raw.equals(branched[h].raw), `shared ${h}`);
    for (let h = 20; h < 30; h++) assert.notEqual(base[h].hash, branched[h].hash, `forked ${h}`);
    assert.equal(branched[20].prev, base[19].hash);
  });

  it('fork() continues exactly like a fresh generator with that branch', () => {
    const g = new ChainGenerator({ seed: 9, ...SMALL });
    for (let h = 0; h < 20; h++) g.nextBlock();
    const f = g.fork('other');
    const fresh = blocks({ seed: 9, ...SMALL, branches: [{ atHeight: 20, seed: 'other' }] }, 30);
    for (let h = 20; h < 30; h++) assert.ok(f.nextBlock().raw.equals(fresh[h].raw), `block ${h}`);
    // the original is untouched by its fork
    const base = blocks({ seed: 9, ...SMALL }, 30);
    for (let h = 20; h < 30; h++) assert.ok(g.nextBlock().raw.equals(base[h].raw), `original ${h}`);
  });

  it('minBlockBytes fills a block; fundingOutputs makes spends possible from height 1', () => {
    const g = new ChainGenerator({ seed: 2, txsPerBlock: 0, minBlockBytes: 200000, fundingOutputs: 3000 });
    g.nextBlock();
    const b = g.nextBlock();
    assert.ok(b.raw.length >= 200000);
    assert.ok(b.txCount > 100);
    parseBlock(b.raw);
  });

  it('rejects unknown parameters and impossible shapes', () => {
    assert.throws(() => new ChainGenerator({ seed: 1, txPerBlock: 5 }), (e) => e instanceof UsageError && /txPerBlock/.test(e.message));
    assert.throws(() => new ChainGenerator({}), UsageError);
    assert.throws(() => new ChainGenerator({ seed: 1, inputsMean: 0.5 }), UsageError);
    assert.throws(() => new ChainGenerator({ seed: 1, mix: { p2wpkh: 1, bogus: 1 } }), UsageError);
    assert.throws(() => new ChainGenerator({ seed: 1, branches: [{ atHeight: 0, seed: 1 }] }), UsageError);
  });
});
