'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const bitcore = require('bitcore-lib');
const { syncedFixture, startServer, request, referenceIndex, HAL, SATOSHI, TX170 } = require('./helpers');
const { check, KNOWN } = require('./schema-check');
const { openStore } = require('../../lib/stores');

const DOC = path.join(__dirname, '..', '..', 'docs', 'openapi.json');
/** 65 bytes of base64 that sign nothing: /messages/verify answers false */
const UNSIGNED = Buffer.alloc(65, 1).toString('base64');
const METHODS = ['get', 'post', 'put', 'delete', 'patch', 'head', 'options'];

function sha(address) {
  const script = bitcore.Script.buildPublicKeyHashOut(new bitcore.Address(address)).toBuffer();
  return crypto.createHash('sha256').update(script).digest();
}

describe('api: docs/openapi.json checked against the live server', function () {
  let fixture;
  let srv;
  let doc;
  let ops;
  let writable;

  // a bitcore v8 wallet, for the routes whose requests it signs (x-signed)
  const walletKey = new bitcore.PrivateKey(bitcore.crypto.Hash.sha256(Buffer.from('openapi wallet')).toString('hex'));
  const walletPub = walletKey.toPublicKey().toString();
  /** x-signature of a request, as bitcore-client makes it */
  const sign = (method, url, body) => {
    const hash = bitcore.crypto.Hash.sha256sha256(Buffer.from([method, url, JSON.stringify(body === undefined ? {} : body)].join('|')));
    const sig = bitcore.crypto.ECDSA.sign(hash, walletKey, 'big');
    return Buffer.concat([sig.r.toBuffer({ size: 32 }), sig.s.toBuffer({ size: 32 })]).toString('hex');
  };
  const send = (o, url, body, extra = {}) => {
    const headers = typeof body === 'string' ? { 'content-type': 'text/plain' } : {};
    if (o.op['x-signed']) headers['x-signature'] = sign(o.method, new URL(srv.url + url).pathname + new URL(srv.url + url).search, body);
    return request(srv.url + url, { method: o.method, body, headers, ...extra });
  };

  before(async () => {
    doc = JSON.parse(fs.readFileSync(DOC, 'utf8'));
    ops = [];
    for (const [p, item] of Object.entries(doc.paths)) {
      for (const m of METHODS) if (item[m]) ops.push({ path: p, method: m.toUpperCase(), op: item[m] });
    }
    fixture = await syncedFixture();
    // writable: the wallet routes write (serve's workers send those writes to their primary)
    writable = await openStore({ store: 'lmdb', datadir: fixture.datadir, network: 'main' });
    srv = await startServer(fixture.datadir, { store: writable });
    const made = await request(`${srv.url}/api/BTC/mainnet/wallet`, { method: 'POST', body: { name: 'openapi', pubKey: walletPub } });
    assert.equal(made.status, 200, made.text);
  });
  after(async () => {
    if (srv) await srv.close();
    if (writable) await writable.close();
    if (fixture) await fixture.cleanup();
  });

  /** A concrete request for an operation, with values the fixture holds. */
  function concrete({ path: p, op }, override = {}) {
    const sat = referenceIndex().at(SATOSHI).history;
    const values = {
      address: SATOSHI, addr: SATOSHI, addrs: `${HAL},${SATOSHI}`, txid: TX170, height: '170',
      last_seen_txid: sat[sat.length - 3].txid, blockhash: referenceIndex().blockHashes[170], vout: '1', index: '1',
      start_index: '0', start_height: '170',
      network: 'mainnet', blockId: '170', blockHash: referenceIndex().blockHashes[170], time: '2009-01-12T10:00:00Z', input: '170',
      target: '2', limit: '2', pgnum: '1', pubKey: walletPub,
      hash: p.startsWith('/api/v1/') ? Buffer.from(sha(SATOSHI)).reverse().toString('hex') : sha(SATOSHI).toString('hex'),
      ...override,
    };
    let url = p.replace(/\{(\w+)\}/g, (_, name) => encodeURIComponent(values[name]));
    const names = new Set((op.parameters || []).filter((x) => x.in === 'query').map((x) => x.name));
    if (names.has('blockHeight')) url += '?blockHeight=170&limit=2';
    else if (names.has('limit')) url += '?limit=2';
    else if (names.has('from')) url += '?from=0&to=2';
    else if (names.has('signature')) url += `?address=${HAL}&signature=${encodeURIComponent(UNSIGNED)}&message=x`;
    else if (names.has('address')) url += `?address=${SATOSHI}`;
    else if (names.has('full')) url += '?full=1';
    let body;
    const reqSchema = op.requestBody && op.requestBody.content['application/json'] && op.requestBody.content['application/json'].schema;
    if (op.requestBody && op.requestBody.content['text/plain']) {
      body = referenceIndex().blocks[170].transactions[1].toBuffer().toString('hex');
    } else if (op.requestBody) {
      const name = reqSchema && reqSchema.$ref ? reqSchema.$ref.split('/').pop() : '';
      if (name === 'InsightMessageVerifyRequest') body = { address: HAL, signature: UNSIGNED, message: 'x' };
      else if (name === 'InsightTxSendRequest') body = { rawtx: referenceIndex().blocks[170].transactions[1].toBuffer().toString('hex') };
      else if (name === 'BitcoreTxSendRequest') body = { rawTx: referenceIndex().blocks[170].transactions[1].toBuffer().toString('hex') };
      else if (name === 'BitcoreWalletRequest') body = { name: 'another', pubKey: new bitcore.PrivateKey().toPublicKey().toString() };
      else if (name === 'BitcoreImportRequest') body = [{ address: SATOSHI }, { address: HAL }];
      else if (name.startsWith('Addresses')) body = { addresses: [HAL, SATOSHI], ...(name.includes('History') ? { limit: 2 } : {}) };
      else if (name.startsWith('Scripthashes')) body = { scripthashes: [Buffer.from(sha(HAL)).reverse().toString('hex')] };
      else body = { addrs: `${HAL},${SATOSHI}` };
    }
    return { url, body };
  }

  /** Checks an answer against the operation's documented responses; returns the problems. */
  function conforms(op, res) {
    const spec = op.responses[String(res.status)];
    if (!spec) return [`status ${res.status} is not documented (${Object.keys(op.responses).join(', ')})`];
    const resolved = spec.$ref ? spec.$ref.replace(/^#\//, '').split('/').reduce((o, k) => o[k], doc) : spec;
    const type = (res.headers.get('content-type') || '').split(';')[0];
    const media = resolved.content && resolved.content[type];
    if (!media) return [`content type ${type} is not documented for ${res.status}`];
    const value = type === 'application/json' ? JSON.parse(res.text) : res.text;
    return check(value, media.schema, doc);
  }

  it('documents exactly the routes the server has', () => {
    const served = srv.app.router.routes.map((r) => `${r.method} ${r.pattern.replace(/:(\w+)/g, '{$1}')}`).sort();
    const documented = ops.map((o) => `${o.method} ${o.path}`).sort();
    assert.deepEqual(documented, served);
  });

  it('uses only schema keywords the checker understands, and every $ref resolves', () => {
    const problems = [];
    const walk = (node, at) => {
      if (!node || typeof node !== 'object') return;
      if (node.$ref && !node.$ref.replace(/^#\//, '').split('/').reduce((o, k) => (o ? o[k] : undefined), doc)) problems.push(`${at}: ${node.$ref}`);
      if (!Array.isArray(node) && (/\.schema(\.|$)/.test(at) || at.startsWith('.components.schemas.'))) {
        for (const k of Object.keys(node)) if (!KNOWN.has(k)) problems.push(`${at}: keyword "${k}"`);
      }
      for (const [k, v] of Object.entries(node)) {
        if (k === 'properties') for (const [pk, pv] of Object.entries(v)) walk(pv, `${at}.properties.${pk}`);
        else if (k !== 'enum' && k !== 'required' && k !== 'default' && typeof v === 'object') walk(v, `${at}.${k}`);
      }
    };
    walk(doc, '');
    assert.deepEqual(problems, []);
  });

  it('every operation answers as documented (status, content type, body schema)', async () => {
    const seen = [];
    for (const o of ops) {
      const { url, body } = concrete(o);
      const res = await send(o, url, body);
      const problems = conforms(o.op, res);
      assert.deepEqual(problems, [], `${o.method} ${url}: ${res.text.slice(0, 200)}`);
      // this server has no node: what needs one says so (test/api/node-serve.test.js has btcd)
      if (o.op['x-needs-node']) assert.deepEqual([res.status, res.json.error.code], [503, 'ERR_NO_NODE'], `${o.method} ${url}`);
      else assert.equal(res.status, 200, `${o.method} ${url} answered ${res.status}`);
      seen.push(res.status);
    }
    assert.ok(seen.length >= 60);
  });

  it('error answers are documented for their route and match the Error schema', async () => {
    let checked = 0;
    for (const o of ops) {
      const params = (o.op.parameters || []).filter((x) => x.in === 'path').map((x) => x.name);
      const bad = { address: 'bogus', addr: 'bogus', addrs: 'bogus', txid: 'zz', hash: 'zz', height: 'x', blockhash: 'zz' };
      if (params.some((n) => bad[n])) {
        const { url, body } = concrete(o, Object.fromEntries(params.filter((n) => bad[n]).map((n) => [n, bad[n]])));
        const res = await send(o, url, body);
        assert.equal(res.status, 400, `${o.method} ${url}`);
        assert.deepEqual(conforms(o.op, res), [], `${o.method} ${url}`);
        checked++;
      }
      // the other method on every path: 405
      const other = o.method === 'GET' ? 'POST' : 'GET';
      if (!doc.paths[o.path][other.toLowerCase()]) {
        const { url } = concrete(o);
        const res = await request(srv.url + url, { method: other, ...(other === 'POST' ? { body: {} } : {}) });
        assert.equal(res.status, 405, `${other} ${url}`);
        assert.deepEqual(conforms(o.op, res), []);
        checked++;
      }
      if (o.op.requestBody) {
        const { url } = concrete(o);
        const res = await request(srv.url + url, { method: 'POST', body: `{"x": "${'a'.repeat(1 << 20)}"}` });
        assert.equal(res.status, 413);
        assert.deepEqual(conforms(o.op, res), []);
        checked++;
      }
    }
    const missing = await request(`${srv.url}/api/v1/tx/${'00'.repeat(32)}`);
    assert.equal(missing.status, 404);
    assert.deepEqual(conforms(doc.paths['/api/v1/tx/{txid}'].get, missing), []);
    assert.ok(checked > 40);
  });
});
