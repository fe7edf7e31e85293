'use strict';

const assert = require('node:assert/strict');
const { KeyTable } = require('../../lib/core/key-table');
const { prng } = require('../helpers/prng');

/**
 * The readers' mempool indexes key by KeyTable (lib/core/key-table.js): checked against a
 * Map of the same keys through seeded runs of inserts, deletes and lookups.
 */
describe('KeyTable (lib/core/key-table.js): fixed-length keys in flat arrays', () => {
  const keyOf = (random, len, space) => {
    // keys from a small space share their first bytes, and often their home slots
    const n = Math.floor(random() * space);
    const b = Buffer.alloc(len, 0xab);
    b.writeUInt32LE(n, len - 4);
    if (random() < 0.5) b.writeUInt32BE(n * 2654435761 >>> 0, 0);
    return b.latin1Slice(0, len);
  };

  for (const [len, space, seed] of [[32, 300, 1], [36, 5000, 2], [32, 50000, 3], [4, 64, 4]]) {
    it(`answers as a Map does: keys of ${len} bytes from ${space} (seed ${seed}), entries reused, tables grown and wrapped`, () => {
      const random = prng(seed);
      const table = new KeyTable(len, seed * 7919);
      /** @type {Map<string, number>} key -> entry */
      const ref = new Map();
      const inUse = new Set();
      for (let op = 0; op < 60000; op++) {
        const key = keyOf(random, len, space);
        const r = random();
        if (r < 0.5) {
          const e = table.insert(key);
          if (ref.has(key)) assert.equal(e, ref.get(key), 'a key keeps its entry');
          else {
            assert.ok(!inUse.has(e), 'a new key takes a free entry');
            ref.set(key, e);
            inUse.add(e);
          }
        } else if (r < 0.8) {
          const e = table.entryOf(key);
          if (ref.has(key)) {
            table.delete(e);
            ref.delete(key);
            inUse.delete(e);
          } else {
            assert.equal(e, -1);
          }
        } else {
          assert.equal(table.entryOf(key), ref.has(key) ? ref.get(key) : -1);
        }
        if (op % 10000 === 0) {
          assert.equal(table.size, ref.size);
          for (const [k, e] of ref) assert.equal(table.entryOf(k), e, 'every key still found after the deletes before it');
        }
      }
      assert.equal(table.size, ref.size);
      for (const [k, e] of ref) assert.equal(table.entryOf(k), e);
      const listed = [...table.entries()].map((e) => table.keyAt(e)).sort();
      assert.deepEqual(listed, [...ref.keys()].sort());
      assert.equal(new Set(ref.values()).size, ref.size, 'no entry given to two keys');
    });
  }

  it('runs of keys that wrap past the table\'s last slot: every delete keeps the others found', () => {
    const random = prng(9);
    for (let round = 0; round < 200; round++) {
      const table = new KeyTable(4, round);
      // keys whose home slots are the last few of the 128 and the first: one run across the end
      const keys = [];
      for (let n = 0; keys.length < 40; n++) {
        const k = Buffer.alloc(4);
        k.writeUInt32LE(n);
        const key = k.latin1Slice(0, 4);
        const home = table._hash(key) & 127;
        if (home >= 110 || home < 4) keys.push(key);
      }
      for (const k of keys) table.insert(k);
      assert.equal(table.table.length, 128);
      const left = new Set(keys);
      while (left.size) {
        const k = [...left][Math.floor(random() * left.size)];
        table.delete(table.entryOf(k));
        left.delete(k);
        for (const o of left) assert.notEqual(table.entryOf(o), -1, `round ${round}`);
        assert.equal(table.entryOf(k), -1);
      }
    }
  });

  it('a key of another length: not found, and refused on insert', () => {
    const table = new KeyTable(32);
    table.insert('a'.repeat(32));
    assert.equal(table.entryOf('a'.repeat(31)), -1);
    assert.equal(table.entryOf(''), -1);
    assert.throws(() => table.insert('a'.repeat(33)), RangeError);
    assert.throws(() => new KeyTable(30), RangeError);
  });
});
