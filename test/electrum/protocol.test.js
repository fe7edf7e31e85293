'use strict';

const assert = require('node:assert/strict');
const { LineFramer } = require('../../lib/electrum/framing');
const { parseLine, resultText, errorText, notificationText } = require('../../lib/electrum/jsonrpc');
const { bindParams } = require('../../lib/electrum/params');
const { negotiate } = require('../../lib/electrum/version');
const { RPC } = require('../../lib/electrum/errors');
const { prng } = require('../helpers/prng');

const SH = '8b01df4e368ea28f8dc0423bcf7a4923e3a12d307c875e47a0cfbf90b5c39161';

describe('electrum: framing', () => {
  it('splits lines across any chunking, drops CR and empty lines', () => {
    const text = Buffer.from('{"a":1}\r\n\n{"b":2}\n[1,2]\n{"tail":');
    const rnd = prng(7);
    for (let round = 0; round < 50; round++) {
      const f = new LineFramer(1000);
      const lines = [];
      for (let at = 0; at < text.length;) {
        const n = 1 + Math.floor(rnd() * 6);
        const r = f.push(text.subarray(at, at + n));
        assert.equal(r.oversized, false);
        lines.push(...r.lines.map(String));
        at += n;
      }
      assert.deepEqual(lines, ['{"a":1}', '{"b":2}', '[1,2]']);
      assert.equal(f.size, 8); // '{"tail":' waits for its newline
    }
  });

  it('reports a line longer than the bound, finished or not, after the lines before it', () => {
    const f = new LineFramer(10);
    assert.deepEqual(f.push(Buffer.from('0123456789\n')).lines.map(String), ['0123456789']);
    const r = f.push(Buffer.from('ok\n0123456789AB\n'));
    assert.deepEqual(r.lines.map(String), ['ok']);
    assert.equal(r.oversized, true);
    const g = new LineFramer(10);
    assert.equal(g.push(Buffer.from('012345')).oversized, false);
    assert.equal(g.push(Buffer.from('6789A')).oversized, true);
    assert.equal(g.size, 0); // nothing of it is kept
  });
});

describe('electrum: JSON-RPC messages', () => {
  it('parses a request, a notification and a batch', () => {
    assert.deepEqual(parseLine('{"jsonrpc":"2.0","id":7,"method":"server.ping"}', 10),
      { batch: false, calls: [{ id: 7, notification: false, method: 'server.ping', params: [] }] });
    assert.deepEqual(parseLine('{"method":"m","params":{"a":1}}', 10).calls[0],
      { id: null, notification: true, method: 'm', params: { a: 1 } });
    const b = parseLine('[{"id":"x","method":"a","params":[1]},{"id":null,"method":"b"}]', 10);
    assert.equal(b.batch, true);
    assert.deepEqual(b.calls.map((c) => [c.id, c.method, c.notification]), [['x', 'a', false], [null, 'b', false]]);
  });

  it('garbage is a parse error, wrong shapes are invalid requests with the id when readable', () => {
    const code = (fn) => { try { fn(); } catch (e) { return e.rpcCode; } return null; };
    assert.equal(code(() => parseLine('{"id":1,', 10)), RPC.PARSE_ERROR);
    assert.equal(code(() => parseLine('\xff\xfe', 10)), RPC.PARSE_ERROR);
    assert.equal(code(() => parseLine('[]', 10)), RPC.INVALID_REQUEST);
    assert.equal(code(() => parseLine('42', 10)), RPC.INVALID_REQUEST);
    assert.equal(code(() => parseLine(JSON.stringify(Array(11).fill({ id: 1, method: 'a' })), 10)), RPC.INVALID_REQUEST);
    const [noMethod, badId, badVersion, badParams, notObject] = parseLine(
      '[{"id":3},{"id":{},"method":"a"},{"id":4,"jsonrpc":"1.0","method":"a"},{"id":5,"method":"a","params":"x"},7]', 10).calls;
    assert.deepEqual([noMethod.id, noMethod.error.rpcCode], [3, RPC.INVALID_REQUEST]);
    assert.deepEqual([badId.id, badId.error.rpcCode], [null, RPC.INVALID_REQUEST]);
    assert.deepEqual([badVersion.id, badVersion.error.rpcCode], [4, RPC.INVALID_REQUEST]);
    assert.deepEqual([badParams.id, badParams.error.rpcCode], [5, RPC.INVALID_PARAMS]);
    assert.deepEqual([notObject.id, notObject.error.rpcCode], [null, RPC.INVALID_REQUEST]);
  });

  it('writes responses and notifications as single-line JSON', () => {
    assert.deepEqual(JSON.parse(resultText(1, { a: [1] })), { jsonrpc: '2.0', id: 1, result: { a: [1] } });
    assert.deepEqual(JSON.parse(resultText('q', null)), { jsonrpc: '2.0', id: 'q', result: null });
    assert.deepEqual(JSON.parse(errorText(null, { rpcCode: -32700, message: 'm\nx' })),
      { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'm\nx' } });
    const n = notificationText('blockchain.scripthash.subscribe', [SH, null]);
    assert.ok(!n.includes('\n'));
    assert.deepEqual(JSON.parse(n), { jsonrpc: '2.0', method: 'blockchain.scripthash.subscribe', params: [SH, null] });
  });
});

describe('electrum: parameters', () => {
  const spec = [{ name: 'height', type: 'uint' }, { name: 'cp_height', type: 'uint', default: 0 }];

  it('binds positional and named arguments, with defaults', () => {
    assert.deepEqual(bindParams('m', spec, [5]), [5, 0]);
    assert.deepEqual(bindParams('m', spec, [5, '8']), [5, 8]);
    assert.deepEqual(bindParams('m', spec, { cp_height: 8, height: 5 }), [5, 8]);
    assert.deepEqual(bindParams('m', spec, { height: 5, cp_height: null }), [5, 0]);
    assert.deepEqual(bindParams('m', [{ name: 's', type: 'scripthash' }], [SH]),
      [Buffer.from(SH, 'hex').reverse()]);
  });

  it('wrong arity or names are INVALID_PARAMS, wrong values BAD_REQUEST with ElectrumX wording', () => {
    const err = (fn) => { try { fn(); } catch (e) { return [e.rpcCode, e.message]; } return null; };
    assert.equal(err(() => bindParams('m', spec, []))[0], RPC.INVALID_PARAMS);
    assert.equal(err(() => bindParams('m', spec, [1, 2, 3]))[0], RPC.INVALID_PARAMS);
    assert.equal(err(() => bindParams('m', spec, { heigth: 1 }))[0], RPC.INVALID_PARAMS);
    assert.deepEqual(bindParams('m', spec, [1, 2, 3], true), [1, 2]);
    assert.deepEqual(err(() => bindParams('m', spec, [-1])), [RPC.BAD_REQUEST, '-1 should be a non-negative integer']);
    assert.deepEqual(err(() => bindParams('m', spec, [1.5])), [RPC.BAD_REQUEST, '1.5 should be a non-negative integer']);
    assert.deepEqual(err(() => bindParams('m', spec, ['1e3'])), [RPC.BAD_REQUEST, '1e3 should be a non-negative integer']);
    assert.deepEqual(err(() => bindParams('m', [{ name: 's', type: 'scripthash' }], [SH.slice(1)])),
      [RPC.BAD_REQUEST, `${SH.slice(1)} is not a valid script hash`]);
    assert.equal(err(() => bindParams('m', [{ name: 'v', type: 'bool' }], ['true']))[0], RPC.BAD_REQUEST);
    assert.equal(err(() => bindParams('m', [{ name: 'h', type: 'hex' }], ['abc']))[0], RPC.BAD_REQUEST);
  });
});

describe('electrum: version negotiation', () => {
  it('answers the highest version both speak, 1.4 to 1.4.2', () => {
    assert.deepEqual(negotiate('1.4'), { version: '1.4' });
    assert.deepEqual(negotiate(undefined), { version: '1.4' });
    assert.deepEqual(negotiate(['1.4', '1.6']), { version: '1.4.2' });
    assert.deepEqual(negotiate(['1.2', '1.4.1']), { version: '1.4.1' });
    assert.deepEqual(negotiate('1.4.0'), { version: '1.4.0' });
  });

  it('refuses what it cannot speak', () => {
    for (const v of ['1.3', '1.6', ['1.5', '1.6'], ['1.0', '1.2'], 'x', ['1.4'], 14, ['1.6', '1.4']]) {
      assert.ok(negotiate(v).error, JSON.stringify(v));
    }
  });
});
