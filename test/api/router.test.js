'use strict';

const assert = require('node:assert/strict');
const { Router } = require('../../lib/api/router');

describe('api router', () => {
  const h = (name) => () => name;
  const r = new Router()
    .add('GET', '/api/v1/status', h('status'))
    .add('GET', '/api/v1/address/:address', h('summary'))
    .add('GET', '/api/v1/address/:address/history', h('history'))
    .add('POST', '/api/v1/addresses/history', h('multi'), { body: true })
    .add('GET', '/api/address/:address/txs/chain', h('chain'))
    .add('GET', '/api/address/:address/txs/chain/:last', h('chain-after'))
    .add('GET', '/api/tx/:txid/status', h('tx-status'))
    .add('GET', '/api/tx/:txid', h('tx'))
    .add('GET', '/', h('root'));

  it('matches literals and parameters, decoding percent-escapes in parameters', () => {
    const m = r.match('GET', '/api/v1/address/bc1q%41x/history');
    assert.equal(m.route.handler(), 'history');
    assert.deepEqual(m.params, { address: 'bc1qAx' });
    assert.equal(r.match('GET', '/api/v1/status').route.handler(), 'status');
    assert.equal(r.match('GET', '/').route.handler(), 'root');
    assert.deepEqual(r.match('GET', '/api/address/A/txs/chain/T').params, { address: 'A', last: 'T' });
    assert.equal(r.match('GET', '/api/tx/abc').route.handler(), 'tx');
    assert.equal(r.match('GET', '/api/tx/abc/status').route.handler(), 'tx-status');
    assert.deepEqual(r.match('POST', '/api/v1/addresses/history').route.meta, { body: true });
  });

  it('a literal segment wins over a parameter at the same place', () => {
    const rr = new Router().add('GET', '/a/:x', h('param')).add('GET', '/a/fixed', h('literal'));
    assert.equal(rr.match('GET', '/a/fixed').route.handler(), 'literal');
    assert.equal(rr.match('GET', '/a/other').route.handler(), 'param');
    // backtracks: the literal branch has no deeper route, the parameter branch has
    rr.add('GET', '/a/:x/deep', h('deep'));
    assert.equal(rr.match('GET', '/a/fixed/deep').route.handler(), 'deep');
  });

  it('unknown paths are null; empty segments and trailing slashes match nothing', () => {
    assert.equal(r.match('GET', '/api/v1/nope'), null);
    assert.equal(r.match('GET', '/api/v1/status/'), null);
    assert.equal(r.match('GET', '/api/v1/address//history'), null);
    assert.equal(r.match('GET', '/api/v1/address/x/history/more'), null);
  });

  it('a known path with another method lists the allowed ones (HEAD rides on GET)', () => {
    assert.deepEqual(r.match('POST', '/api/v1/status'), { allowed: ['GET', 'HEAD'] });
    assert.deepEqual(r.match('GET', '/api/v1/addresses/history'), { allowed: ['POST'] });
    assert.equal(r.match('HEAD', '/api/v1/status').route.handler(), 'status');
  });

  it('broken percent-encoding throws URIError; a route defined twice is refused', () => {
    assert.throws(() => r.match('GET', '/api/v1/address/%E0%A4%A'), URIError);
    assert.throws(() => new Router().add('GET', '/x', h('a')).add('GET', '/x', h('b')), /defined twice/);
  });
});
