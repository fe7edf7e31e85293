'use strict';

const assert = require('node:assert/strict');
const { JsonCache, txKey } = require('../../lib/api/json-cache');
const { PrevoutCache, outpointKey } = require('../../lib/api/prevout-cache');
const { prng } = require('../helpers/prng');

describe('api caches: prevouts by outpoint, transaction JSON by block and txid', () => {
  it('PrevoutCache keeps copies within its budget, least recently used out first', () => {
    const c = new PrevoutCache(10 * 225);
    const src = Buffer.alloc(25, 7);
    const kept = c.set(outpointKey(Buffer.alloc(32, 1), 0), { value: 5, script: src });
    src.fill(0); // the block or transaction the script came from is reused or freed
    assert.deepEqual(kept, { value: 5, script: Buffer.alloc(25, 7) });
    for (let i = 1; i < 10; i++) c.set(outpointKey(Buffer.alloc(32, 1), i), { value: i, script: Buffer.alloc(25, i) });
    assert.equal(c.map.size, 10);
    c.get(outpointKey(Buffer.alloc(32, 1), 0)); // used: now the most recent
    c.set(outpointKey(Buffer.alloc(32, 2), 0), { value: 1, script: Buffer.alloc(25) });
    assert.equal(c.map.size, 10);
    assert.ok(c.bytes <= c.maxBytes);
    assert.equal(c.get(outpointKey(Buffer.alloc(32, 1), 1)), undefined); // the least recent went
    assert.equal(c.get(outpointKey(Buffer.alloc(32, 1), 0)).value, 5);
    // outpoints of one txid and of txids sharing a prefix do not collide
    assert.notEqual(outpointKey(Buffer.alloc(32, 1), 11), outpointKey(Buffer.alloc(32, 1), 1));
  });

  it('JsonCache stays within its budget whatever is put in, and keys by block and txid', () => {
    const rnd = prng(13);
    const c = new JsonCache(100000);
    for (let i = 0; i < 2000; i++) {
      const key = txKey({ blockHash: (i % 7).toString(16).padStart(64, '0'), txid: Buffer.alloc(32, i % 251) });
      c.set(key, 'x'.repeat(Math.floor(rnd() * 5000)));
      assert.ok(c.bytes <= c.maxBytes);
    }
    c.set('huge', 'y'.repeat(200000)); // larger than the whole budget: not kept
    assert.equal(c.get('huge'), undefined);
    const a = txKey({ blockHash: 'a'.repeat(64), txid: Buffer.alloc(32, 1) });
    const b = txKey({ blockHash: 'b'.repeat(64), txid: Buffer.alloc(32, 1) });
    assert.notEqual(a, b); // the same transaction in another block (a reorg) is another answer
  });
});
