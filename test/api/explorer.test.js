'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { syncedFixture, startServer, request, HAL } = require('./helpers');

const UI = path.join(path.dirname(require.resolve('insight-ui/package.json')), 'public');

/**
 * What insight-ui 0.4.0 asks of the server, read from its own sources (the npm package's
 * public/src/js: every `window.apiPrefix + '…'` resource and $http call), answered by
 * addrindex's /insight-api as insight-api 0.4.3's Express app answers it; and insight-ui's
 * files served at /insight/ as its bitcore-node service serves them.
 */
describe('api: what insight-ui asks, and insight-ui itself at /insight/', function () {
  let fixture;
  let srv;

  before(async () => {
    fixture = await syncedFixture();
    srv = await startServer(fixture.datadir, { explorer: true, live: { pollMs: 1000 } });
  });
  after(async () => {
    if (srv) await srv.close();
    if (fixture) await fixture.cleanup();
  });

  /** The API paths insight-ui's sources name, `:param` placeholders kept. */
  function uiRoutes() {
    const dir = path.join(UI, 'src', 'js');
    const found = new Set();
    for (const sub of ['services', 'controllers']) {
      for (const f of fs.readdirSync(path.join(dir, sub))) {
        const src = fs.readFileSync(path.join(dir, sub, f), 'utf8');
        for (const m of src.matchAll(/window\.apiPrefix \+ '([^']+)'/g)) found.add(m[1]);
      }
    }
    return [...found].sort();
  }

  it('every route insight-ui\'s sources name answers, with their trailing slashes', async () => {
    const routes = uiRoutes();
    assert.deepEqual(routes, ['/addr/:addrStr/?noTxList=1', '/block-index/:blockHeight', '/block/:blockHash', '/blocks', '/currency',
      '/messages/verify', '/peer', '/status', '/sync', '/tx/:txId', '/tx/send', '/txs', '/version']);
    const block170 = (await request(`${srv.url}/insight-api/block-index/170`)).json.blockHash;
    const values = { addrStr: HAL, blockHeight: '170', blockHash: block170, txId: 'f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16' };
    for (const r of routes) {
      if (r === '/messages/verify' || r === '/tx/send') continue; // POSTs, below
      const url = r.replace(/:(\w+)/g, (_, n) => values[n]) + (r === '/txs' ? `?block=${block170}` : '');
      const res = await request(`${srv.url}/insight-api${url}`);
      assert.equal(res.status, 200, `${url}: ${res.text.slice(0, 200)}`);
      assert.ok(res.json !== undefined, url);
    }
    // Express takes one trailing slash as none: the same answer
    const [a, b] = await Promise.all([request(`${srv.url}/insight-api/addr/${HAL}/?noTxList=1`), request(`${srv.url}/insight-api/addr/${HAL}?noTxList=1`)]);
    assert.deepEqual(a.json, b.json);
    assert.equal((await request(`${srv.url}/insight-api/addr/${HAL}//`)).status, 404);
    // the POSTs: a verification (false: no key signed this) and a broadcast without a node
    const verify = await request(`${srv.url}/insight-api/messages/verify`, { method: 'POST', body: { address: HAL, signature: Buffer.alloc(65, 1).toString('base64'), message: 'x' } });
    assert.deepEqual(verify.json, { result: false });
    const send = await request(`${srv.url}/insight-api/tx/send`, { method: 'POST', body: { rawtx: '00' } });
    assert.equal(send.status, 400);
  });

  it('insight-api\'s CORS: every answer open to any origin, OPTIONS 204 on any of its paths', async () => {
    const res = await request(`${srv.url}/insight-api/tx/send`, { method: 'OPTIONS', headers: { origin: 'https://wallet.example', 'access-control-request-method': 'POST' } });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    assert.equal(res.headers.get('access-control-allow-methods'), 'GET, HEAD, PUT, POST, OPTIONS');
    assert.equal((await request(`${srv.url}/insight-api/version`)).headers.get('access-control-allow-origin'), '*');
    // the other families keep their own policy (none here)
    assert.equal((await request(`${srv.url}/api/v1/status`)).headers.get('access-control-allow-origin'), null);
  });

  it('/insight/: the app with its API prefix and base, its files byte for byte, the app for any page a browser opens', async () => {
    const redirect = await fetch(`${srv.url}/insight`, { redirect: 'manual' });
    assert.deepEqual([redirect.status, redirect.headers.get('location')], [301, '/insight/']);
    const page = await request(`${srv.url}/insight/`);
    assert.equal(page.status, 200);
    assert.match(page.text, /<base href="\/insight\/" \/>/);
    assert.match(page.text, /window\.apiPrefix = '\/insight-api';/);
    const deep = await request(`${srv.url}/insight/block/00000000d1145790a8694403d4063f323d499e655c83426834d4ce2f8dd4a2ee`, { headers: { accept: 'text/html' } });
    assert.equal(deep.text, page.text);
    for (const f of ['js/main.min.js', 'css/main.min.css', 'img/icons/favicon.ico', 'sound/transaction.mp3']) {
      const res = await fetch(`${srv.url}/insight/${f}`);
      assert.equal(res.status, 200, f);
      assert.ok(Buffer.from(await res.arrayBuffer()).equals(fs.readFileSync(path.join(UI, f))), f);
    }
    // insight-ui asks for its sound with a double slash
    assert.equal((await fetch(`${srv.url}/insight//sound/transaction.mp3`)).status, 200);
    for (const bad of ['/insight/../package.json', '/insight/%2e%2e/package.json', '/insight/nothing.js']) {
      assert.equal((await request(`${srv.url}${bad}`)).status, 404, bad);
    }
    // a browser opening the server is sent to the explorer; a client asking for JSON is not
    const root = await fetch(`${srv.url}/`, { redirect: 'manual', headers: { accept: 'text/html,application/xhtml+xml' } });
    assert.deepEqual([root.status, root.headers.get('location')], [302, '/insight/']);
    assert.equal((await request(`${srv.url}/`)).json.name, 'addrindex');
  });

  it('/socket.io/socket.io.js: a socket.io client insight-ui can load (io.connect)', async () => {
    const res = await request(`${srv.url}/socket.io/socket.io.js`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /javascript/);
    const context = { window: {}, self: {}, navigator: { userAgent: 'node' }, location: { protocol: 'http:', host: '127.0.0.1', port: '' } };
    context.globalThis = context;
    require('node:vm').runInNewContext(res.text, context);
    assert.equal(typeof (context.io || context.window.io || context.self.io).connect, 'function');
  });
});
