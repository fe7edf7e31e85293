'use strict';

const assert = require('node:assert/strict');
const layout = require('../../lib/stores/layout');
const r = require('../../lib/codec/records');
const { Writer } = require('../../lib/codec/io');
const { findTxNums } = require('../../lib/stores/update');

const w = new Writer();

/** A snapshot over a Map of hex key -> value, the shape update.js reads through. */
function snapshot(rows) {
  const get = (k) => rows.get(k.toString('hex'));
  return { get, getMany: (keys) => keys.map(get) };
}

/** A txid starting with `prefix` (4 bytes, hex), then filled with `fill`. */
function txid(prefix, fill) {
  return Buffer.concat([Buffer.from(prefix, 'hex'), Buffer.alloc(28, fill)]);
}

describe('codec: tx rows keyed by a txid prefix', () => {
  // TxNums 0..69 with txids of their own; 5, 66 and 69 share the prefix aabbccdd, and 69
  // repeats 66's whole txid (a BIP30 pair while both are indexed)
  const txids = Array.from({ length: 70 }, (_, i) => txid((0x10000000 + i).toString(16), i));
  txids[5] = txid('aabbccdd', 1);
  txids[66] = txid('aabbccdd', 2);
  txids[69] = txid('aabbccdd', 2);
  const rows = new Map();
  const put = (k, v) => rows.set(k.toString('hex'), Buffer.from(v));
  const all = Buffer.concat(txids);
  const offsets = Array.from({ length: 70 }, (_, i) => 81 + 200 * i);
  // two rows: a full one, then the rest (the txids around 64 fall in the second)
  const N = r.TXIDS_PER_ROW;
  put(layout.txidsKey(0), r.encodeTxids(w, null, all, 0, N, offsets, 0));
  put(layout.txidsKey(N), r.encodeTxids(w, null, all, 32 * N, 70 - N, offsets, N));
  const lists = new Map();
  txids.forEach((t, i) => {
    const k = layout.txKey(t, 0).toString('hex');
    if (!lists.has(k)) lists.set(k, []);
    lists.get(k).push(i);
  });
  for (const [k, list] of lists) rows.set(k, Buffer.from(r.encodeTxNums(w, list)));
  const snap = snapshot(rows);

  it('stores one row per prefix, listing every TxNum that has it', () => {
    assert.equal(rows.get(layout.txKey(txids[5], 0).toString('hex')).toString('hex'), '02' + '05' + '3c' + '02');
    assert.equal(lists.size, 68);
  });

  it('finds each TxNum by its whole txid, and nothing for a txid it does not hold', async () => {
    const unknown = [txid('aabbccdd', 3), txid('99999999', 0), Buffer.concat([txids[64].subarray(0, 31), Buffer.from([0xee])])];
    const ask = [...txids, ...unknown];
    const got = await findTxNums(snap, Buffer.concat(ask), ask.map((_, i) => 32 * i));
    const want = txids.map((_, i) => (i === 66 ? 69 : i)); // the later of the pair
    assert.deepEqual(got, [...want, null, null, null]);
    // one buffer per lookup, at offsets
    const one = await findTxNums(snap, [Buffer.concat([Buffer.alloc(3), txids[5]])], [3]);
    assert.deepEqual(one, [5]);
  });

  it('does not match a TxNum past the end of the last txids row', async () => {
    const extra = new Map(rows);
    const t = txid('aabbccdd', 9);
    extra.set(layout.txKey(t, 0).toString('hex'), Buffer.from(r.encodeTxNums(w, [5, 66, 69, 70])));
    assert.deepEqual(await findTxNums(snapshot(extra), t, [0]), [null]);
  });
});
