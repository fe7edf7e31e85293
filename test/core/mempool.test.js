'use strict';

const assert = require('node:assert/strict');
const {
  encodeMempoolTx, decodeMempoolTx, encodeMempoolHead, decodeMempoolHead, encodeChange, decodeChange, stubChange, decodeTxidKeyedRow, encodeWhole, decodeWhole,
  encodeReplacement, nextHead, decodeMempoolRaw, decodeMempool,
} = require('../../lib/codec/mempool');
const { Reader } = require('../../lib/codec/io');
const { viewOfWhole } = require('../../lib/mempool/cache');
const { CodecError } = require('../../lib/errors');
const { prng } = require('../helpers/prng');

const sh = (n) => Buffer.alloc(32, n);
const id = (n) => Buffer.alloc(32, 0x80 + n);

/**
 * A parent paying A and B from a confirmed output of C, and a child spending the parent's
 * output to A: every case a view must get right (a spent unconfirmed output, an unconfirmed
 * input, two entries for one script hash). C's output and the one to B are P2PK outputs (own
 * script hashes 13 and 12; index keys 3 and 2, their keys' P2PKH script hashes).
 */
function sample() {
  const parent = {
    txid: id(1), time: 100, fee: 1000, vsize: 200, raw: Buffer.from('parent'),
    inputs: [{ txid: id(9), vout: 3, value: 51000, scripthash: sh(3), p2pk: sh(13), unconfirmed: false }],
    outputs: [{ value: 30000, scripthash: sh(1), p2pk: null }, { value: 20000, scripthash: sh(2), p2pk: sh(12) }, { value: 0, scripthash: null, p2pk: null }],
  };
  const child = {
    txid: id(2), time: 105, fee: 500, vsize: 100, raw: Buffer.from('child'),
    inputs: [{ txid: id(1), vout: 0, value: 30000, scripthash: sh(1), p2pk: null, unconfirmed: true }],
    outputs: [{ value: 29500, scripthash: sh(1), p2pk: null }],
  };
  return { seq: 7, tip: id(30), txs: [parent, child] };
}

describe('the mempool snapshot (lib/codec/mempool.js) and its view (lib/core/mempool.js)', () => {
  /** The sample as a store hands it out whole (places 1, 2). */
  const wholeOf = (snap) => encodeWhole(snap, snap.txs.map((t, k) => ({ rank: k + 1, part: encodeMempoolTx(t) })));

  it('round-trips every field: a part, a row, the whole, a change, the head', () => {
    const snap = sample();
    const back = decodeWhole(wholeOf(snap));
    assert.equal(back.seq, 7);
    assert.deepEqual(back.tip, id(30));
    assert.deepEqual(back.rows.map((r) => r.rank), [1, 2]);
    // a part holds every field but the bytes, which it measures
    const noRaw = ({ raw, ...t }) => ({ ...t, size: raw.length });
    assert.deepEqual(JSON.parse(JSON.stringify(back.rows.map((r) => decodeMempoolTx(r.part)))), JSON.parse(JSON.stringify(snap.txs.map(noRaw))));
    assert.deepEqual(back.rows.map((r) => r.raw), [null, null]);
    const withRaws = decodeWhole(encodeWhole(snap, snap.txs.map((t, k) => ({ rank: k + 1, part: encodeMempoolTx(t), raw: t.raw })), true));
    assert.deepEqual(withRaws.rows.map((r) => Buffer.from(r.raw).toString()), ['parent', 'child']);
    assert.deepEqual(withRaws.rows.map((r) => Buffer.from(r.part)), back.rows.map((r) => Buffer.from(r.part)));
    // the bytes' row: the txid, then the bytes
    const rawRow = Buffer.concat([id(2), Buffer.from('child')]);
    // as a change lays it out, and a store writes it
    assert.deepEqual(decodeChange(encodeReplacement(snap)).upserts.map((u) => Buffer.from(u.rawRow)), snap.txs.map((t) => Buffer.concat([t.txid, t.raw])));
    assert.deepEqual([decodeMempoolRaw(rawRow).txid, decodeMempoolRaw(rawRow).raw.toString()], [id(2), 'child']);
    assert.throws(() => decodeMempoolRaw(rawRow.subarray(0, 32)), CodecError);
    // a part of formats 2 to 5 held the bytes after vsize: format 2's whole, one value, is
    // decoded for dumps of an older index
    const old = Buffer.from(encodeMempoolTx(snap.txs[1]));
    const fields = new Reader(old, 'part');
    fields.skip(32);
    for (let k = 0; k < 4; k++) fields.varint(); // time, fee, vsize, size
    const at = fields.pos;
    const legacyPart = Buffer.concat([old.subarray(0, at), Buffer.from('child'), old.subarray(at)]);
    const format2 = Buffer.concat([Buffer.from([2, 7]), id(30), Buffer.from([1]), legacyPart]);
    assert.deepEqual(JSON.parse(JSON.stringify(decodeMempool(format2).txs)), JSON.parse(JSON.stringify([{ ...noRaw(snap.txs[1]), raw: snap.txs[1].raw }])));
    // a row of format 6 is the part itself; one of format 4 (`01 varint rank part`) is decoded for dumps
    const part = encodeMempoolTx(snap.txs[1]);
    const legacy = decodeTxidKeyedRow(Buffer.concat([Buffer.from([1, 9]), part]));
    assert.deepEqual([legacy.rank, Buffer.from(legacy.part)], [9, part]);
    const { decodeRecord } = require('../../lib/stores/walk');
    assert.deepEqual(decodeRecord(Buffer.from([0x4d, 4, 0, 0, 0, 0, 0, 9]), part).value.txid, snap.txs[1].txid);
    assert.deepEqual(decodeRecord(Buffer.from([0x4d, 2, ...id(1)]), Buffer.concat([Buffer.from([1, 9]), part])).value.rank, 9);
    assert.equal(decodeRecord(Buffer.from([0x4d, 6, 0, 0, 0, 0, 0, 9]), rawRow).value.raw.toString(), 'child');
    assert.equal(decodeRecord(Buffer.from([0x4d, 9]), part).value, null);
    const c = {
      seq: 8, prev: 7, tip: id(31), count: 2, vsize: 300, fee: 1500, evicted: 3, reset: false, removed: [id(5), id(6)], removedRanks: [3, 200000],
      upserts: [{ rank: 4, part: encodeMempoolTx(snap.txs[0]), raw: snap.txs[0].raw }],
    };
    const d = decodeChange(encodeChange(c));
    assert.deepEqual({ ...d, removed: d.removed.map(Buffer.from), upserts: d.upserts.map((u) => ({ rank: u.rank, part: Buffer.from(u.part), raw: Buffer.from(u.raw) })) }, { ...c, stub: false, version: 3 });
    assert.throws(() => encodeChange({ ...c, removedRanks: [3] }), /needs its place/);
    const stub = decodeChange(stubChange(encodeChange(c)));
    assert.deepEqual([stub.stub, stub.seq, stub.prev, stub.removed, stub.upserts], [true, 8, 7, [], []]);
    // changes of versions 2 (format 5: no bytes after a part) and 1 (format 4: no places either)
    // still decode, for dumps and for a store to refuse them
    const v3 = encodeChange({ ...c, removed: [id(5)], removedRanks: [0], upserts: [] });
    const v2 = Buffer.concat([Buffer.from([2]), v3.subarray(1, v3.length - 1), Buffer.from([1, 4, 32]), id(7)]);
    const d2 = decodeChange(v2);
    assert.deepEqual([d2.version, d2.removedRanks, d2.upserts.map((u) => [u.rank, Buffer.from(u.part), u.raw])], [2, [0], [[4, id(7), null]]]);
    // version 2 less the place (one byte, 0) that ends the removed list before the upserts' count
    const v1 = Buffer.concat([Buffer.from([1]), v3.subarray(1, v3.length - 2), v3.subarray(v3.length - 1)]);
    const d1 = decodeChange(v1);
    assert.deepEqual([d1.version, d1.seq, d1.removed.map(Buffer.from), d1.removedRanks, d1.upserts, d1.fee], [1, 8, [id(5)], null, [], 1500]);
    assert.deepEqual(decodeChange(stubChange(v1)).version, 1);
    const head = { seq: 7, tip: id(30), count: 2, vsize: 300, fee: 1500, evicted: 1, from: 3 };
    assert.deepEqual(decodeMempoolHead(encodeMempoolHead(head)), head);
    // format 6's head (version 5); those of formats 5, 4 and 3 (versions 4, 3, 2) named parts
    // holding the bytes: their seq goes on, their snapshot is not read
    const bytes = encodeMempoolHead(head);
    assert.equal(bytes[0], 5);
    for (const v of [2, 3, 4]) assert.deepEqual(decodeMempoolHead(Buffer.concat([Buffer.from([v]), bytes.subarray(1)])), { ...head, from: 8, legacy: true });
    assert.throws(() => decodeMempoolHead(Buffer.concat([Buffer.from([6]), bytes.subarray(1)])), { code: 'ERR_UNKNOWN_FORMAT' });
    // a head of format 2's snapshot (version 1): its seq goes on, nothing else is read
    assert.deepEqual(decodeMempoolHead(Buffer.concat([Buffer.from([1, 7]), id(30)])), { seq: 7, tip: id(30), count: 0, vsize: 0, fee: 0, evicted: 0, from: 8, legacy: true });
    // what a store's head says after a change: a reader may catch up from `from` on
    assert.equal(nextHead(head, c, false, 64).from, 3);
    assert.equal(nextHead(head, { ...c, seq: 100 }, false, 64).from, 36, 'past the kept changes');
    assert.equal(nextHead(head, c, true, 64).from, 8, 'not across a stub');
    assert.equal(nextHead(head, { ...c, reset: true }, false, 64).from, 8, 'nor across a reset');
    const r = decodeChange(encodeReplacement(snap));
    assert.deepEqual([r.reset, r.prev, r.count, r.vsize, r.fee, r.upserts.map((u) => u.rank)], [true, 0, 2, 300, 1500, [1, 2]]);
  });

  it('every truncation and every bad flag is a CodecError, never a partial snapshot or change', () => {
    const random = prng(3);
    const c = encodeChange({ seq: 8, prev: 7, tip: id(31), count: 2, vsize: 300, fee: 1500, evicted: 3, reset: false, removed: [id(5)], removedRanks: [9], upserts: sample().txs.map((t, k) => ({ rank: k, part: encodeMempoolTx(t), raw: t.raw })) });
    for (const [buf, decode] of [[wholeOf(sample()), decodeWhole], [c, decodeChange], [encodeMempoolTx(sample().txs[0]), decodeMempoolTx]]) {
      for (let n = 0; n < buf.length; n++) assert.throws(() => decode(buf.subarray(0, n)), CodecError, `cut at ${n}`);
      assert.throws(() => decode(Buffer.concat([buf, Buffer.from([0])])), CodecError);
      for (let k = 0; k < 500; k++) {
        const bad = Buffer.from(buf);
        bad[Math.floor(random() * bad.length)] ^= 1 + Math.floor(random() * 255);
        try {
          decode(bad);
        } catch (err) {
          assert.ok(err instanceof CodecError, err.stack);
        }
      }
    }
  });

  it('per script hash: entries, unconfirmed totals, outputs left unspent; spenders; fee figures', () => {
    const v = viewOfWhole(wholeOf(sample()));
    assert.deepEqual(v.entries(sh(1)).map((e) => [e.tx.txid[0], e.funded, e.spent, e.received, e.sent]), [[0x81, true, false, 30000, 0], [0x82, true, true, 29500, 30000]]);
    assert.deepEqual(v.summary(sh(1)), { txCount: 2, received: 59500, sent: 30000, fundedCount: 2, spentCount: 1, balance: 29500 });
    assert.deepEqual(v.summary(sh(3)), { txCount: 1, received: 0, sent: 51000, fundedCount: 0, spentCount: 1, balance: -51000 });
    assert.deepEqual(v.summary(sh(4)), { txCount: 0, received: 0, sent: 0, fundedCount: 0, spentCount: 0, balance: 0 });
    assert.deepEqual(v.utxos(sh(1)).map((u) => [u.tx.txid[0], u.vout, u.value]), [[0x82, 0, 29500]], "the parent's output to it is spent by the child");
    assert.deepEqual(v.utxos(sh(2)).map((u) => [u.tx.txid[0], u.vout]), [[0x81, 1]]);
    // P2PK: the address view counts an output toward its key's P2PKH script hash and its own,
    // the script view (Electrum's) toward its own only
    for (const [key, own, balance] of [[sh(2), sh(12), 20000], [sh(3), sh(13), -51000]]) {
      assert.equal(v.summary(key).balance, balance);
      assert.equal(v.summary(own).balance, balance);
      assert.equal(v.summary(own, 'script').balance, balance);
      assert.deepEqual(v.summary(key, 'script'), { txCount: 0, received: 0, sent: 0, fundedCount: 0, spentCount: 0, balance: 0 });
      assert.deepEqual(v.entries(key, 'script'), []);
    }
    assert.deepEqual(v.utxos(sh(12), 'script').map((u) => [u.tx.txid[0], u.vout]), [[0x81, 1]]);
    assert.deepEqual(v.utxos(sh(12)).map((u) => [u.tx.txid[0], u.vout]), [[0x81, 1]]);
    assert.deepEqual(v.utxos(sh(2), 'script'), []);
    assert.deepEqual(v.utxos(sh(1), 'script').map((u) => [u.tx.txid[0], u.vout]), [[0x82, 0]], 'the same for other scripts');
    assert.equal(v.spender(id(9), 3).tx.txid[0], 0x81, 'a confirmed output spent in the mempool');
    assert.equal(v.spender(id(9), 2), null);
    assert.equal(v.hasUnconfirmedInputs(v.get(id(2))), true);
    assert.equal(v.hasUnconfirmedInputs(v.get(id(1))), false);
    assert.deepEqual([v.vsize, v.fee, v.txs.length], [300, 1500, 2]);
    assert.deepEqual(v.feeHistogram(), [[5, 300]]);
    assert.deepEqual(v.recent(1).map((t) => t.txid[0]), [0x82]);
  });

  it("a parent confirmed: the child's part unchanged, the next view says it spends confirmed outputs, and the change names the child's script hashes", () => {
    const v = viewOfWhole(wholeOf(sample()));
    const child = v.get(id(2));
    // the block's change: the parent leaves, nothing enters (format 4 keeps the child's part)
    const next = v.next({ seq: 8, tip: id(31) }, [], [v.get(id(1))], () => 0);
    assert.equal(next.get(id(2)), child, 'the same transaction, its part as it was');
    assert.equal(decodeMempoolTx(child.part).inputs[0].unconfirmed, true, 'its flag as written');
    assert.deepEqual([v.hasUnconfirmedInputs(child), next.hasUnconfirmedInputs(child)], [true, false]);
    assert.equal(next.get(id(1)), null);
    // Electrum's height of the child went from -1 to 0: its script hashes are recomputed
    // (sh 1 is the parent's as well; the child's only would be missed without it)
    const keys = next.changesSince(7).keys;
    assert.ok(keys.has(sh(1).latin1Slice(0, 32)) && keys.has(sh(2).latin1Slice(0, 32)) && keys.has(sh(3).latin1Slice(0, 32)));
    const only = sample();
    only.txs[1].outputs[0].scripthash = sh(7);
    only.txs[1].inputs[0].scripthash = sh(1);
    const w = viewOfWhole(wholeOf(only));
    const changed = w.next({ seq: 8, tip: id(31) }, [], [w.get(id(1))], () => 0).changesSince(7).keys;
    assert.ok(changed.has(sh(7).latin1Slice(0, 32)), "the key only the child touches");
  });
});
