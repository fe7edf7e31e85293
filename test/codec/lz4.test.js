'use strict';

const assert = require('node:assert/strict');
const lz4 = require('lz4-napi');
const { Writer } = require('../../lib/codec/io');
const r = require('../../lib/codec/records');
const compress = require('../../lib/codec/compress');
const { openValue, MAX_UNCOMPRESSED } = require('../../lib/codec/format');
const { CodecError } = require('../../lib/errors');
const { prng } = require('../helpers/prng');

const w = new Writer();
const code = (c) => (err) => err instanceof CodecError && err.code === c;

/** An undo of n spends drawn from `distinct` script hashes (fewer = more repetition). */
function undo(n, distinct, seed = 1) {
  const random = prng(seed);
  const next = () => Math.floor(random() * 2 ** 32);
  const pool = Array.from({ length: distinct }, () => Buffer.from(Array.from({ length: 32 }, () => next() & 0xff)));
  const shs = Buffer.concat(Array.from({ length: n }, () => pool[next() % distinct]));
  const txNums = Array.from({ length: n }, () => next() % 1e9);
  const vouts = Array.from({ length: n }, () => next() % 4);
  const values = Array.from({ length: n }, () => next() % 1e8);
  return { n, txNums, vouts, values, shs };
}

/** An undo's format byte when it is stored LZ4-compressed. */
const UNDO_LZ4 = 0x80 | r.VERSION.undo;

function encode(u) {
  return Buffer.from(r.encodeUndo(w, u.n, u.txNums, u.vouts, u.values, u.shs, 0, []));
}

/** A compressed undo value whose LZ4 size prefix says `size`. */
function withSize(value, size) {
  const bad = Buffer.from(value);
  bad.writeUInt32LE(size, 1);
  return bad;
}

describe('codec: LZ4 framing', () => {
  afterEach(() => compress.configure({ enabled: true, thresholds: compress.DEFAULT_THRESHOLDS }));

  it('stores a value compressed only when allowed, above the threshold and smaller', () => {
    const rep = undo(200, 5);
    const packed = encode(rep);
    assert.equal(packed[0], UNDO_LZ4);
    assert.ok(packed.length < 0.6 * 200 * 32, `${packed.length} bytes`);
    assert.deepEqual(r.decodeUndo(packed).shs, rep.shs);
    // every script hash different, few spends: LZ4 would not be smaller, so it stays raw
    // although above the threshold
    const few = undo(8, 8);
    const bytes = prng(5);
    few.shs = Buffer.from(Array.from({ length: 32 * 8 }, () => Math.floor(bytes() * 256)));
    const rand = encode(few);
    assert.ok(rand.length >= compress.DEFAULT_THRESHOLDS.undo);
    assert.equal(rand[0], r.VERSION.undo);
    assert.ok(lz4.compressSync(rand.subarray(1)).length + 1 >= rand.length);
    // off: raw, and both forms decode to the same
    compress.configure({ enabled: false });
    const raw = encode(rep);
    assert.equal(raw[0], r.VERSION.undo);
    assert.deepEqual(r.decodeUndo(raw), r.decodeUndo(packed));
    // a threshold above the value: raw
    compress.configure({ enabled: true, thresholds: { undo: raw.length + 1 } });
    assert.equal(encode(rep)[0], r.VERSION.undo);
    assert.equal(compress.pack(w, Buffer.from([1, 2, 3]), 'no such kind')[0], 1);
  });

  it('checks the size prefix against a bound before decompressing', () => {
    const packed = encode(undo(300, 4));
    const t0 = process.hrtime.bigint();
    for (const size of [0, 0xffffffff, MAX_UNCOMPRESSED + 1, 255 * (packed.length - 5) + 1]) {
      assert.throws(() => r.decodeUndo(withSize(packed, size)), code('ERR_BAD_LZ4'), `size ${size}`);
    }
    assert.ok(Number(process.hrtime.bigint() - t0) / 1e6 < 50, 'refused without allocating');
    const real = packed.readUInt32LE(1);
    // a size that is wrong but within the bound: the block does not decode to it
    for (const size of [real - 1, real + 1, 2 * real]) assert.throws(() => r.decodeUndo(withSize(packed, size)), code('ERR_BAD_LZ4'), `size ${size}`);
    assert.throws(() => r.decodeUndo(Buffer.from([UNDO_LZ4, 1, 0, 0])), code('ERR_BAD_LZ4'));
  });

  it('refuses LZ4 on kinds never compressed, and bodies that are not LZ4', () => {
    const body = lz4.compressSync(Buffer.alloc(100, 1));
    for (const f of [0x81, 0x82]) {
      assert.throws(() => r.decodeAccount(Buffer.concat([Buffer.from([f]), body]), new r.Account()), code('ERR_UNKNOWN_FORMAT'));
      assert.throws(() => r.decodeTxNums(Buffer.concat([Buffer.from([f]), body])), code('ERR_UNKNOWN_FORMAT'));
    }
    // a valid LZ4 block of bytes that are not an undo: decompresses, then the undo decoder refuses it
    assert.throws(() => r.decodeUndo(Buffer.concat([Buffer.from([UNDO_LZ4]), body])), (err) => err instanceof CodecError);
    assert.throws(() => openValue(Buffer.concat([Buffer.from([0x81]), Buffer.alloc(40, 0xff)]), 'x', 1, true), code('ERR_BAD_LZ4'));
  });

  it('never answers a mutated compressed value with anything but a value or a CodecError (fuzz)', function () {
    this.timeout(20000);
    const values = [];
    for (let k = 0; k < 20; k++) {
      const v = encode(undo(50 + 37 * k, 2 + (k % 6), k + 1));
      if (v[0] === UNDO_LZ4) values.push(v);
    }
    assert.ok(values.length >= 15);
    const random = prng(99);
    const rand = (n) => Math.floor(random() * n);
    let refused = 0;
    const N = 20000;
    for (let i = 0; i < N; i++) {
      const m = Buffer.from(values[rand(values.length)]);
      let bad = m;
      switch (rand(4)) {
        case 0: m[1 + rand(m.length - 1)] ^= 1 << rand(8); break;
        case 1: m[1 + rand(m.length - 1)] = rand(256); break;
        case 2: bad = m.subarray(0, rand(m.length)); break;
        default: m.writeUInt32LE(rand(2 ** 32), 1); break;
      }
      try {
        r.decodeUndo(bad);
      } catch (err) {
        if (!(err instanceof CodecError)) throw new Error(`mutation threw ${err.stack}`);
        refused++;
      }
    }
    assert.ok(refused > N / 4, `${refused} of ${N} refused`);
    // no wall-clock bound here (it failed on a loaded machine): what keeps a mutated size from
    // costing time or memory is the cap on declared sizes, tested above
  });
});
