'use strict';

const assert = require('node:assert/strict');
const { varintLength, writeVarint, readVarint, MAX_VARINT } = require('../../lib/codec/varint');
const { Reader, Writer } = require('../../lib/codec/io');
const { CodecError } = require('../../lib/errors');
const { prng } = require('../helpers/prng');

const read = (bytes) => new Reader(Buffer.from(bytes), 'test').varint();
const codec = (code) => (err) => err instanceof CodecError && err.code === code;

describe('codec: varints', () => {
  it('round-trips every length boundary up to 2^53 - 1, in the fewest bytes', () => {
    const values = [0, 1, 127, 128, 255, 300, 16383, 16384, 2 ** 21 - 1, 2 ** 21, 2 ** 28 - 1, 2 ** 28, 2 ** 31 - 1, 2 ** 31,
      2 ** 32 - 1, 2 ** 32, 2 ** 35 - 1, 2 ** 35, 2 ** 40, 2 ** 42 - 1, 2 ** 49 - 1, 2 ** 49, MAX_VARINT - 1, MAX_VARINT];
    const random = prng(53);
    for (let i = 0; i < 2000; i++) values.push(Math.floor(random() * 2 ** (1 + Math.floor(random() * 53))));
    const buf = Buffer.alloc(8);
    for (const v of values) {
      const end = writeVarint(buf, 0, v);
      assert.equal(end, varintLength(v), `length of ${v}`);
      let bits = 1;
      while (2 ** bits <= v) bits++;
      assert.equal(end, Math.max(1, Math.ceil(bits / 7)), `minimal length of ${v}`);
      const r = new Reader(buf, 'test', 0, end);
      assert.equal(r.varint(), v);
      assert.equal(r.pos, end);
    }
  });

  it('reads the LEB128 bytes it is documented to', () => {
    assert.equal(read([0x00]), 0);
    assert.equal(read([0x7f]), 127);
    assert.equal(read([0x80, 0x01]), 128);
    assert.equal(read([0xac, 0x02]), 300);
    assert.equal(read([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f]), MAX_VARINT);
  });

  it('refuses hostile bytes with a CodecError, never a wrong value', () => {
    assert.throws(() => read([]), codec('ERR_TRUNCATED'));
    assert.throws(() => read([0x80]), codec('ERR_TRUNCATED'));
    assert.throws(() => read([0xff, 0xff, 0xff]), codec('ERR_TRUNCATED'));
    // a ninth byte
    assert.throws(() => read([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]), codec('ERR_VARINT_OVERFLOW'));
    assert.throws(() => read(new Array(1000).fill(0xff)), codec('ERR_VARINT_OVERFLOW'));
    // 2^53 and above in eight bytes
    assert.throws(() => read([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10]), codec('ERR_VARINT_OVERFLOW'));
    assert.throws(() => read([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]), codec('ERR_VARINT_OVERFLOW'));
    // a second spelling of a value
    assert.throws(() => read([0x80, 0x00]), codec('ERR_VARINT_NONCANONICAL'));
    assert.throws(() => read([0x81, 0x80, 0x00]), codec('ERR_VARINT_NONCANONICAL'));
  });

  it('stops at the end of its value, not the end of the buffer', () => {
    const r = new Reader(Buffer.from([0x80, 0x01]), 'test', 0, 1);
    assert.throws(() => r.varint(), codec('ERR_TRUNCATED'));
    assert.throws(() => readVarint({ buf: Buffer.from([0x85]), pos: 0, end: 1, what: 'x' }), codec('ERR_TRUNCATED'));
  });

  it('refuses to encode what it could not decode', () => {
    const w = new Writer(16);
    for (const bad of [-1, 1.5, MAX_VARINT + 1, 2 ** 60, NaN, Infinity]) {
      assert.throws(() => w.varint(bad), codec('ERR_VARINT_RANGE'), String(bad));
    }
  });

  it('Writer: values survive arena changes', () => {
    const w = new Writer(64);
    const views = [];
    for (let i = 0; i < 500; i++) {
      w.begin();
      w.varint(i * 1000003);
      w.bytes(Buffer.alloc(i % 70, i & 0xff));
      views.push(w.end());
    }
    views.forEach((v, i) => {
      const r = new Reader(v, 'test');
      assert.equal(r.varint(), i * 1000003);
      assert.deepEqual(v.subarray(r.pos), Buffer.alloc(i % 70, i & 0xff));
    });
  });
});
