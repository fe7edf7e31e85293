'use strict';

const assert = require('node:assert/strict');
const { TxidIndex } = require('../../lib/mempool/txid-index');
const { prng } = require('../helpers/prng');

describe('TxidIndex (lib/mempool/txid-index.js): held txids in flat arrays', () => {
  it('adds, finds (by bytes and by hex digits), removes and marks as a Map of txids does, keys shared and tables grown (seeded)', () => {
    const rnd = prng(41);
    const txid = () => Buffer.from(Array.from({ length: 32 }, () => Math.floor(rnd() * 256)));
    const index = new TxidIndex();
    /** @type {Map<string, {id: string, txid: Buffer, slot: number}>} */
    const ref = new Map();
    const made = [];
    const isTxidOf = (item, buf, at) => item.txid.equals(buf.subarray(at, at + 32));
    for (let round = 0; round < 30; round++) {
      // arrivals: some share their key (the displayed first four bytes: the last four) with a
      // held one, some all but one byte
      for (let k = 0; k < 300; k++) {
        const t = txid();
        if (made.length && rnd() < 0.25) {
          const from = made[Math.floor(rnd() * made.length)];
          if (rnd() < 0.5) from.copy(t, 28, 28, 32);
          else from.copy(t, 1, 1, 32);
        }
        const id = Buffer.from(t).reverse().toString('hex');
        if (ref.has(id)) continue;
        const item = { id, txid: t };
        item.slot = index.add(t, 0, item);
        ref.set(id, item);
        made.push(t);
      }
      for (const [id, item] of [...ref]) {
        if (rnd() < 0.3) {
          index.remove(item.slot);
          ref.delete(id);
        }
      }
      assert.equal(index.size, ref.size);
      const mark = round + 1;
      let marked = 0;
      for (const t of made) {
        const at = Math.floor(rnd() * 8);
        const buf = Buffer.alloc(at + 40);
        t.copy(buf, at);
        const id = Buffer.from(t).reverse().toString('hex');
        const hex = Buffer.from(`["${id}"]`, 'latin1');
        const want = ref.get(id);
        const bySlot = index.find(buf, at, isTxidOf);
        assert.equal(index.findHex(hex, 2), bySlot);
        if (!want) {
          assert.equal(bySlot, -1);
          continue;
        }
        assert.equal(bySlot, want.slot);
        assert.equal(index.get(bySlot), want);
        // upper-case digits are not matched here (the follower looks those up by their string)
        if (/[a-f]/.test(id.slice(0, 8))) assert.equal(index.findHex(Buffer.from(`["${id.toUpperCase()}"]`, 'latin1'), 2), -1);
        if (rnd() < 0.5 && index.mark(bySlot, mark)) marked++;
      }
      const unmarked = index.unmarked(mark);
      assert.equal(unmarked.length, ref.size - marked);
      for (const item of unmarked) assert.ok(ref.has(item.id));
    }
  });
});
