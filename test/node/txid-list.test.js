'use strict';

const assert = require('node:assert/strict');
const { parseWithTxidLists, TxidList } = require('../../lib/node/txid-list');
const { prng } = require('../helpers/prng');

/**
 * JSON.parse, with every non-empty array of strings of 64 bytes written without an escape as
 * a TxidList's ids() shows it: each hex one in lower case, any other null.
 */
function reference(text) {
  const plain = (s) => typeof s === 'string' && Buffer.byteLength(s) === 64 && JSON.stringify(s).length === s.length + 2;
  return JSON.parse(text, (k, v) => (Array.isArray(v) && v.length && v.every(plain)
    ? { txids: v.map((s) => (/^[0-9a-fA-F]{64}$/.test(s) ? s.toLowerCase() : null)) } : v));
}

/** A parsed value with its TxidLists as reference() shows them. */
function shown(v) {
  if (v instanceof TxidList) return { txids: v.ids() };
  if (Array.isArray(v)) return v.map(shown);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shown(x)]));
  return v;
}

describe("parseWithTxidLists: getrawmempool answers with their txids left in the reply's bytes", () => {
  it("a poll's batch: the list as offsets of its txids' digits, each read and checked when asked; the best block hash a string", () => {
    const ids = ['00'.repeat(31) + 'ff', 'Ab'.repeat(32), '0123456789abcdef'.repeat(4)];
    const best = 'cd'.repeat(32);
    const body = Buffer.from(JSON.stringify([{ result: ids, error: null, id: 1 }, { result: best, error: null, id: 2 }], null, 1));
    const [a, b] = parseWithTxidLists(body);
    assert.ok(a.result instanceof TxidList);
    assert.equal(a.result.length, 3);
    assert.deepEqual(a.result.ids(), ids.map((s) => s.toLowerCase()));
    // where each txid's digits are in the reply
    assert.equal(a.result.body.latin1Slice(a.result.offsets[1], a.result.offsets[1] + 64), ids[1]);
    // 64 characters that are not all hex digits: no txid (the caller says so)
    const [bad] = parseWithTxidLists(Buffer.from(JSON.stringify([{ result: [ids[0], `${'z'.repeat(63)}0`], error: null, id: 1 }])));
    assert.deepEqual(bad.result.ids(), [ids[0].toLowerCase(), null]);
    assert.deepEqual(b, { result: best, error: null, id: 2 });
    // an empty mempool stays an empty array
    assert.deepEqual(parseWithTxidLists(Buffer.from('{"result":[],"error":null,"id":3}')), { result: [], error: null, id: 3 });
  });

  it('arrays holding anything else, brackets and quotes inside strings, whitespace: the same as JSON.parse (seeded random documents)', () => {
    const rand = prng(31);
    const pick = (a) => a[Math.floor(rand() * a.length)];
    const hexOf = (n) => Array.from({ length: n }, () => '0123456789abcdefABCDEF'[Math.floor(rand() * 22)]).join('');
    const strings = [
      () => hexOf(64),
      () => hexOf(63),
      () => hexOf(65),
      () => `${hexOf(30)}g${hexOf(33)}`,
      () => `${hexOf(30)}\\${hexOf(33)}`,
      () => `${hexOf(30)}"${hexOf(33)}`,
      () => `${hexOf(30)}ü${hexOf(32)}`,
      () => `["${hexOf(64)}"]`,
      () => `[ "${hexOf(64)}", "${hexOf(64)}" ]`,
      () => `x\\"[${hexOf(64)}`,
      () => '',
    ];
    const value = (depth) => {
      const r = rand();
      if (depth > 2 || r < 0.3) return pick(strings)();
      if (r < 0.4) return Math.floor(rand() * 1e9);
      if (r < 0.45) return null;
      if (r < 0.6) return Array.from({ length: Math.floor(rand() * 5) }, () => hexOf(64));
      if (r < 0.65) return Array.from({ length: 1 + Math.floor(rand() * 4) }, () => pick(strings)());
      if (r < 0.8) return Array.from({ length: Math.floor(rand() * 4) }, () => value(depth + 1));
      const o = {};
      for (let k = 0; k < 3; k++) o[pick(['result', 'error', 'id', 'x[y', 'z\\'])] = value(depth + 1);
      return o;
    };
    for (let i = 0; i < 400; i++) {
      const text = JSON.stringify(value(0), null, pick([0, 1, '\t']));
      assert.deepEqual(shown(parseWithTxidLists(Buffer.from(text))), reference(text), text.slice(0, 200));
    }
  });

  it('malformed JSON is still an error', () => {
    assert.throws(() => parseWithTxidLists(Buffer.from(`{"result":["${'ab'.repeat(32)}"`)), SyntaxError);
    assert.throws(() => parseWithTxidLists(Buffer.from(`{"result":["${'ab'.repeat(32)}",]}`)), SyntaxError);
  });
});
