'use strict';

const assert = require('node:assert/strict');
const { parseWithHex, HEX_MIN } = require('../../lib/node/rpc');
const { prng } = require('../helpers/prng');

/** JSON.parse, with every all-hex string of HEX_MIN digits or more turned into its bytes. */
function reference(text) {
  return JSON.parse(text, (k, v) => (typeof v === 'string' && v.length >= HEX_MIN && v.length % 2 === 0 && /^[0-9a-fA-F]*$/.test(v)
    ? Buffer.from(v, 'hex') : v));
}

describe('parseWithHex: JSON-RPC answers with their long hex strings decoded from the bytes', () => {
  it('a batch of getblock answers: Buffers where the hex was, everything else as JSON.parse gives it', () => {
    const raw = Buffer.from(Array.from({ length: 300 }, (_, i) => i & 0xff));
    const body = Buffer.from(JSON.stringify([
      { jsonrpc: '2.0', result: raw.toString('hex'), error: null, id: 7 },
      { result: null, error: { code: -5, message: 'Block not found' }, id: 8 },
      { result: 'ab'.repeat(10), error: null, id: 9 }, // short: stays a string
    ]));
    const r = parseWithHex(body);
    assert.ok(Buffer.isBuffer(r[0].result) && r[0].result.equals(raw));
    assert.deepEqual(r[1], { result: null, error: { code: -5, message: 'Block not found' }, id: 8 });
    assert.equal(r[2].result, 'ab'.repeat(10));
  });

  it('escaped quotes and backslashes, unicode, strings that are almost hex: the same as JSON.parse (seeded random documents)', () => {
    const rand = prng(12);
    const pick = (a) => a[Math.floor(rand() * a.length)];
    const hexOf = (n) => Array.from({ length: n }, () => '0123456789abcdef'[Math.floor(rand() * 16)]).join('');
    const strings = [
      () => hexOf(2 * Math.floor(80 + rand() * 200)),                   // decoded
      () => hexOf(2 * Math.floor(rand() * 79)),                         // too short
      () => `${hexOf(200)}g${hexOf(10)}`,                               // not all hex
      () => `${hexOf(201)}`,                                            // odd length
      () => `say "${hexOf(170)}" \\ done`,                              // hex inside escaped quotes
      () => `${'\\'.repeat(Math.floor(rand() * 4))}"${hexOf(180)}`,      // backslashes before a quote
      () => `ünïcödé ✓ ${hexOf(190)}`,
      () => '',
    ];
    const value = (depth) => {
      const r = rand();
      if (depth > 2 || r < 0.4) return pick(strings)();
      if (r < 0.5) return Math.floor(rand() * 1e9);
      if (r < 0.55) return null;
      if (r < 0.75) return Array.from({ length: Math.floor(rand() * 4) }, () => value(depth + 1));
      const o = {};
      for (let k = 0; k < 3; k++) o[pick(['result', 'error', 'message', 'id', 'x"y', 'z\\'])] = value(depth + 1);
      return o;
    };
    for (let i = 0; i < 300; i++) {
      const text = JSON.stringify(value(0), null, rand() < 0.3 ? 1 : 0);
      assert.deepEqual(parseWithHex(Buffer.from(text)), reference(text), text.slice(0, 200));
    }
  });

  it('malformed JSON is still an error', () => {
    assert.throws(() => parseWithHex(Buffer.from(`{"result":"${'ab'.repeat(100)}`)), SyntaxError);
    assert.throws(() => parseWithHex(Buffer.from(`[{"result":"${'ab'.repeat(100)}"},]`)), SyntaxError);
  });
});
