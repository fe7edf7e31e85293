'use strict';

const assert = require('node:assert/strict');
const { Rng, AliasTable, fmix32 } = require('../../tools/generator/rng');
const { zipfRank } = require('../../tools/generator/registry');
const { UtxoPool } = require('../../tools/generator/pool');
const { ChainGenerator } = require('../../tools/generator');
const { parseBlock } = require('../../lib/chain/block');

describe('generator: parts', () => {
  it('Rng streams are reproducible and distinct per label', () => {
    const a = Rng.from('x/1');
    const b = Rng.from('x/1');
    const c = Rng.from('x/2');
    const sa = Array.from({ length: 8 }, () => a.u32());
    assert.deepEqual(sa, Array.from({ length: 8 }, () => b.u32()));
    assert.notDeepEqual(sa, Array.from({ length: 8 }, () => c.u32()));
    const r = Rng.from('mean');
    let sum = 0;
    for (let i = 0; i < 100000; i++) sum += r.float();
    assert.ok(Math.abs(sum / 100000 - 0.5) < 0.01);
  });

  it('AliasTable draws in proportion to the weights', () => {
    const w = [0, 5, 1, 0, 4];
    const t = new AliasTable(w);
    const rng = Rng.from('alias');
    const n = new Array(w.length).fill(0);
    for (let i = 0; i < 200000; i++) n[t.sample(rng)]++;
    assert.equal(n[0], 0);
    assert.equal(n[3], 0);
    for (const i of [1, 2, 4]) assert.ok(Math.abs(n[i] / 200000 - w[i] / 10) < 0.01, `index ${i}: ${n[i]}`);
  });

  it('zipfRank stays in [1, n] and gives rank 1 its power-law mass', () => {
    const rng = Rng.from('zipf');
    const n = 100000;
    const s = 1.6;
    let ones = 0;
    for (let i = 0; i < 100000; i++) {
      const r = zipfRank(rng, n, s);
      assert.ok(r >= 1 && r <= n);
      if (r === 1) ones++;
    }
    const expect = (1 - 2 ** (1 - s)) / (1 - (n + 1) ** (1 - s));
    assert.ok(Math.abs(ones / 100000 - expect) < 0.01, `${ones} vs ${expect}`);
    for (let i = 0; i < 1000; i++) assert.ok(zipfRank(rng, 1, s) === 1 && zipfRank(rng, 3, 1) <= 3);
  });

  it('fmix32 is a bijection: distinct script ids never share a hash prefix', () => {
    const seen = new Set();
    for (let id = 0; id < 300000; id++) seen.add(fmix32(id ^ 0xdeadbeef));
    assert.equal(seen.size, 300000);
  });

  it('UtxoPool never hands out an entry twice and drops the oldest beyond its cap', () => {
    const pool = new UtxoPool(1000);
    const rng = Rng.from('pool');
    const txid = Buffer.alloc(32);
    const taken = new Set();
    for (let i = 0; i < 20000; i++) {
      txid.writeUInt32LE(i, 0);
      pool.add(txid, 0, 0, i, i, i);
      if (i % 3 === 0) {
        const e = pool.pick(rng, 0.8, 50);
        const id = pool.script[e];
        assert.ok(!taken.has(id), `entry ${id} drawn twice`);
        taken.add(id);
      }
    }
    pool.compact();
    assert.ok(pool.live <= 1000);
    assert.ok(pool.dropped > 0);
    // what is left is the youngest part, in creation order
    const left = [];
    for (let i = pool.head; i < pool.tail; i++) if (pool.alive[i]) left.push(pool.script[i]);
    assert.deepEqual(left, [...left].sort((a, b) => a - b));
    assert.ok(left[0] > 10000);
  });

  it('a chain with a tiny pool cap still spends only unspent outputs (dropped ones stay unspent)', () => {
    const g = new ChainGenerator({ seed: 5, txsPerBlock: 150, coinbaseMaturity: 3, poolCap: 1000 });
    const utxo = new Set();
    for (let h = 0; h <= 40; h++) {
      const b = parseBlock(g.nextBlock().raw);
      for (const tx of b.txs) {
        for (const inp of tx.inputs) {
          const k = `${inp.txid.toString('hex')}:${inp.vout}`;
          assert.ok(utxo.delete(k), `spend of ${k}`);
        }
        const id = tx.txid.toString('hex');
        tx.outputs.forEach((o, v) => { if (h > 0 && o.script[0] !== 0x6a) utxo.add(`${id}:${v}`); });
      }
    }
    const st = g.stats();
    assert.ok(st.pool.dropped > 0, 'the cap dropped outputs');
    assert.ok(g.pool.alloc <= g.pool.maxAlloc && g.pool.maxAlloc < 1000 * 1.25 + 1100, 'the pool arrays stay bounded');
    assert.ok(st.pool.live <= g.pool.maxAlloc);
  });
});
