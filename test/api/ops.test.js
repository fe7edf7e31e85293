'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const zlib = require('node:zlib');
const { Writable } = require('node:stream');
const { syncedFixture, startServer, request, referenceIndex, writeBlocksDir, HAL, SATOSHI } = require('./helpers');
const { tempDir } = require('../helpers/tmp');
const { runCli } = require('../helpers/cli');
const { metricValue } = require('../helpers/metrics');
const { negotiate } = require('../../lib/api/compress');
const { RateLimiter } = require('../../lib/api/ratelimit');
const { createLogger } = require('../../lib/ops/log');

/** One request over node:http, the body as the raw bytes that came over the wire. */
function raw(url, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(body ? JSON.stringify(body) : undefined);
  });
}

/** A pino destination keeping every JSON line. */
function captureLog() {
  const lines = [];
  const stream = new Writable({
    write(chunk, enc, cb) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l));
      cb();
    },
  });
  return { lines, logger: createLogger({ json: true, level: 'debug', dest: stream }) };
}

describe('api operations: health, readiness, metrics, request ids, compression, rate limit, CORS', function () {
  this.timeout(60000);
  let fixture;
  before(async () => { fixture = await syncedFixture(); });
  after(async () => { if (fixture) await fixture.cleanup(); });

  describe('over the synced 439-block index', () => {
    let srv;
    let log;
    before(async () => {
      log = captureLog();
      srv = await startServer(fixture.datadir, { logger: log.logger });
    });
    after(async () => { if (srv) await srv.close(); });

    it('/health: up; /ready without a node: ready, lag unknown (null) and not checked', async () => {
      const h = await request(`${srv.url}/health`);
      assert.equal(h.status, 200);
      assert.equal(h.json.status, 'up');
      const r = await request(`${srv.url}/ready`);
      assert.equal(r.status, 200);
      assert.deepEqual(r.json, {
        ready: true,
        index: { open: true, tip: { height: 438, hash: '0000000025c6b644f8add734be7e666fa4afa43ca0204d623a0c0b1fd2104c7a' } },
        node: null, lag: null, maxLag: null, reasons: [],
      });
    });

    it('counts requests by route pattern and status, and reads the index tip at each scrape', async () => {
      const before = await request(`${srv.url}/metrics`);
      assert.equal(before.status, 200);
      assert.match(before.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
      const route = { route: '/api/v1/address/:address', method: 'GET', status: '200' };
      const n0 = metricValue(before.text, 'addrindex_http_requests_total', route) || 0;
      for (const a of [HAL, SATOSHI, HAL]) assert.equal((await request(`${srv.url}/api/v1/address/${a}`)).status, 200);
      assert.equal((await request(`${srv.url}/api/v1/address/bogus`)).status, 400);
      assert.equal((await request(`${srv.url}/no/such/route`)).status, 404);
      const after = (await request(`${srv.url}/metrics`)).text;
      assert.equal(metricValue(after, 'addrindex_http_requests_total', route), n0 + 3);
      assert.equal(metricValue(after, 'addrindex_http_requests_total', { ...route, status: '400' }), 1);
      assert.equal(metricValue(after, 'addrindex_http_requests_total', { route: 'none', method: 'GET', status: '404' }), 1);
      // every answered request is in the latency histogram of its route
      assert.equal(metricValue(after, 'addrindex_http_request_duration_seconds_count', { route: route.route, method: 'GET' }), n0 + 4);
      assert.equal(metricValue(after, 'addrindex_index_tip_height'), 438);
      assert.equal(metricValue(after, 'addrindex_index_lag_blocks'), -1);
      assert.ok(metricValue(after, 'addrindex_lmdb_used_bytes') > 0);
    });

    it('request ids: a sane X-Request-Id is echoed, anything else replaced; each request is logged with its id', async () => {
      const given = await request(`${srv.url}/api/v1/address/${HAL}`, { headers: { 'x-request-id': 'lb-7f3a.42' } });
      assert.equal(given.headers.get('x-request-id'), 'lb-7f3a.42');
      const made = await request(`${srv.url}/api/v1/address/${HAL}`, { headers: { 'x-request-id': 'no spaces <allowed>' } });
      const id = made.headers.get('x-request-id');
      assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      const records = log.lines.filter((l) => l.msg === 'request');
      const mine = records.find((l) => l.reqId === id);
      assert.ok(mine, 'the request is in the log under its id');
      assert.deepEqual([mine.level, mine.method, mine.route, mine.status], ['debug', 'GET', '/api/v1/address/:address', 200]);
      assert.ok(records.some((l) => l.reqId === 'lb-7f3a.42'));
    });

    it('answers over 1 KiB are gzip or brotli when accepted, and decode to the plain answer', async () => {
      const body = { addresses: referenceIndex().busiest(20), limit: 1000 };
      const target = `${srv.url}/api/v1/addresses/history`;
      const plain = await raw(target, { method: 'POST', body });
      assert.equal(plain.status, 200);
      assert.equal(plain.headers['content-encoding'], undefined);
      assert.ok(plain.body.length > 1024, `${plain.body.length} bytes`);
      assert.equal(JSON.parse(plain.body).entries.length, new Set(body.addresses.flatMap((a) => referenceIndex().at(a).history.map((e) => e.txid))).size);
      const cases = [
        ['gzip', 'gzip', zlib.gunzipSync],
        ['br', 'br', zlib.brotliDecompressSync],
        ['gzip, deflate, br', 'br', zlib.brotliDecompressSync], // the server prefers brotli on a tie
        ['gzip;q=1.0, br;q=0.5', 'gzip', zlib.gunzipSync],
        ['*', 'br', zlib.brotliDecompressSync],
      ];
      for (const [accept, want, decode] of cases) {
        const r = await raw(target, { method: 'POST', body, headers: { 'accept-encoding': accept } });
        assert.equal(r.headers['content-encoding'], want, accept);
        assert.equal(Number(r.headers['content-length']), r.body.length);
        assert.match(r.headers.vary, /Accept-Encoding/);
        // hex txids are most of it: they compress to about half, the JSON around them to little
        assert.ok(r.body.length < plain.body.length * 0.6, `${accept}: ${r.body.length} of ${plain.body.length} bytes`);
        assert.ok(decode(r.body).equals(plain.body), accept);
      }
      for (const accept of ['identity', 'gzip;q=0, br;q=0', 'deflate']) {
        const r = await raw(target, { method: 'POST', body, headers: { 'accept-encoding': accept } });
        assert.equal(r.headers['content-encoding'], undefined, accept);
        assert.ok(r.body.equals(plain.body), accept);
      }
      // a small answer goes out as it is, whatever the client accepts
      const small = await raw(`${srv.url}/api/v1/address/${HAL}`, { headers: { 'accept-encoding': 'gzip, br' } });
      assert.ok(small.body.length < 1024);
      assert.equal(small.headers['content-encoding'], undefined);
      assert.equal(small.headers.vary, undefined);
      const m = (await request(`${srv.url}/metrics`)).text;
      assert.ok(metricValue(m, 'addrindex_http_sent_bytes_total', { encoding: 'br' }) < metricValue(m, 'addrindex_http_body_bytes_total', { encoding: 'br' }) * 0.6);
    });

    it('CORS is off unless configured: no CORS headers, OPTIONS is 405', async () => {
      const r = await request(`${srv.url}/api/v1/status`, { headers: { origin: 'https://explorer.example' } });
      assert.equal(r.headers.get('access-control-allow-origin'), null);
      const pre = await request(`${srv.url}/api/v1/status`, { method: 'OPTIONS', headers: { origin: 'https://explorer.example', 'access-control-request-method': 'GET' } });
      assert.equal(pre.status, 405);
    });
  });

  it('compression settings: off, or only above a chosen size', async () => {
    const off = await startServer(fixture.datadir, { compression: { encodings: [] } });
    const all = await startServer(fixture.datadir, { compression: { encodings: ['gzip'], minBytes: 0 } });
    try {
      const body = { addresses: [HAL, SATOSHI], limit: 1000 };
      const a = await raw(`${off.url}/api/v1/addresses/history`, { method: 'POST', body, headers: { 'accept-encoding': 'gzip, br' } });
      assert.equal(a.headers['content-encoding'], undefined);
      const b = await raw(`${all.url}/api/v1/address/${HAL}`, { headers: { 'accept-encoding': 'gzip, br' } });
      assert.equal(b.headers['content-encoding'], 'gzip');
      const plain = await raw(`${all.url}/api/v1/address/${HAL}`);
      assert.ok(zlib.gunzipSync(b.body).equals(plain.body));
    } finally {
      await off.close();
      await all.close();
    }
  });

  it('rate limit: the N+1th request of a client in a window is a 429 JSON error; other clients and health checks pass', async () => {
    const srv = await startServer(fixture.datadir, { rateLimit: { limit: 5, windowMs: 3600000, trustProxy: true } });
    try {
      const as = (ip) => ({ headers: { 'x-forwarded-for': `203.0.113.9, ${ip}` } });
      const answers = [];
      for (let i = 0; i < 6; i++) answers.push(await request(`${srv.url}/api/v1/address/${HAL}`, as('10.0.0.1')));
      assert.deepEqual(answers.map((r) => r.status), [200, 200, 200, 200, 200, 429]);
      assert.deepEqual(answers.map((r) => r.headers.get('ratelimit-remaining')), ['4', '3', '2', '1', '0', '0']);
      const refused = answers[5];
      assert.equal(refused.json.error.code, 'ERR_RATE_LIMITED');
      assert.match(refused.json.error.message, /more than 5 requests in 3600 s from this client; retry in \d+ s/);
      const retry = Number(refused.headers.get('retry-after'));
      assert.ok(retry >= 1 && retry <= 3600, String(retry));
      // another client (the address the proxy appended is the client, not what the client claimed)
      assert.equal((await request(`${srv.url}/api/v1/address/${HAL}`, as('10.0.0.2'))).status, 200);
      // a 404 counts too: scanning for routes is not free
      assert.equal((await request(`${srv.url}/nope`, as('10.0.0.1'))).status, 429);
      // monitors are never limited
      for (const p of ['/health', '/ready', '/metrics']) assert.equal((await request(srv.url + p, as('10.0.0.1'))).status, 200, p);
      const m = (await request(`${srv.url}/metrics`)).text;
      assert.equal(metricValue(m, 'addrindex_http_rate_limited_total'), 2);
      assert.equal(metricValue(m, 'addrindex_http_requests_total', { route: '/api/v1/address/:address', method: 'GET', status: '429' }), 1);
    } finally {
      await srv.close();
    }
  });

  it('rate limit windows: fixed, aligned, counts dropped when one ends (a clock under test control)', () => {
    let t = 120000 + 59000;
    const rl = new RateLimiter({ limit: 2, windowMs: 60000, now: () => t });
    assert.deepEqual(['a', 'a', 'a', 'b'].map((c) => rl.take(c).allowed), [true, true, false, true]);
    assert.equal(rl.take('a').resetS, 1);
    t = 180000; // the next window
    assert.deepEqual(rl.take('a'), { allowed: true, limit: 2, remaining: 1, resetS: 60 });
    assert.equal(rl.counts.size, 1);
  });

  it('CORS: "*" for any page; a list answers only its origins, with Vary: Origin; preflights get 204', async () => {
    const any = await startServer(fixture.datadir, { cors: ['*'] });
    const some = await startServer(fixture.datadir, { cors: ['https://explorer.example'] });
    try {
      const a = await request(`${any.url}/api/v1/address/${HAL}`, { headers: { origin: 'https://anywhere.example' } });
      assert.equal(a.headers.get('access-control-allow-origin'), '*');
      assert.match(a.headers.get('access-control-expose-headers'), /x-request-id/);
      const ok = await request(`${some.url}/api/v1/address/${HAL}`, { headers: { origin: 'https://explorer.example' } });
      assert.equal(ok.headers.get('access-control-allow-origin'), 'https://explorer.example');
      assert.equal(ok.headers.get('vary'), 'Origin');
      const other = await request(`${some.url}/api/v1/address/${HAL}`, { headers: { origin: 'https://evil.example' } });
      assert.equal(other.status, 200);
      assert.equal(other.headers.get('access-control-allow-origin'), null);
      const pre = await request(`${some.url}/api/v1/addresses/history`, {
        method: 'OPTIONS',
        headers: { origin: 'https://explorer.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      });
      assert.equal(pre.status, 204);
      assert.equal(pre.headers.get('access-control-allow-origin'), 'https://explorer.example');
      assert.equal(pre.headers.get('access-control-allow-methods'), 'GET, HEAD, POST');
      assert.equal(pre.headers.get('access-control-allow-headers'), 'content-type');
      const refused = await request(`${some.url}/api/v1/addresses/history`, {
        method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
      });
      assert.equal(refused.status, 204);
      assert.equal(refused.headers.get('access-control-allow-origin'), null);
      // a large answer varies by both
      const big = await raw(`${some.url}/api/v1/addresses/history`, {
        method: 'POST', body: { addresses: referenceIndex().busiest(20), limit: 1000 }, headers: { origin: 'https://explorer.example', 'accept-encoding': 'gzip' },
      });
      assert.equal(big.headers.vary, 'Origin, Accept-Encoding');
    } finally {
      await any.close();
      await some.close();
    }
  });

  it('/ready goes from 503 to 200: an empty index, then synced; then behind a node, then caught up', async () => {
    const datadir = tempDir('ready');
    const blocksDir = tempDir('ready-blocks');
    writeBlocksDir(blocksDir, 439);
    // an index with no block yet: created, never synced
    const { openStore } = require('../../lib/stores');
    await (await openStore({ store: 'lmdb', datadir, network: 'main' })).close();
    const srv = await startServer(datadir, { nodeConfigured: true, maxLag: 3 });
    try {
      let r = await request(`${srv.url}/ready`);
      assert.equal(r.status, 503);
      assert.equal(r.json.ready, false);
      assert.deepEqual(r.json.index, { open: true, tip: null });
      assert.deepEqual(r.json.reasons, ['the index holds no block yet', 'the node\'s tip has not been read (yet)']);
      const sync = await runCli(['sync', '--blocks-dir', blocksDir, '--datadir', datadir, '--quiet', '--log-format', 'text']);
      assert.equal(sync.code, 0, sync.stderr);
      r = await request(`${srv.url}/ready`);
      assert.equal(r.status, 503);
      assert.deepEqual(r.json.reasons, ['the node\'s tip has not been read (yet)']);
      srv.app.setNodeTip({ height: 450, hash: 'ab'.repeat(32) });
      r = await request(`${srv.url}/ready`);
      assert.equal(r.status, 503);
      assert.deepEqual([r.json.lag, r.json.maxLag, r.json.reasons], [12, 3, ['the index is 12 blocks behind the node (max 3)']]);
      const status = await request(`${srv.url}/api/v1/status`);
      assert.deepEqual([status.json.sync.sourceTip, status.json.sync.lag], [450, 12]);
      srv.app.setNodeTip({ height: 441, hash: 'cd'.repeat(32) });
      r = await request(`${srv.url}/ready`);
      assert.equal(r.status, 200);
      assert.deepEqual([r.json.ready, r.json.lag, r.json.node.tip.height], [true, 3, 441]);
      assert.equal(metricValue((await request(`${srv.url}/metrics`)).text, 'addrindex_index_lag_blocks'), 3);
      // draining for shutdown: not ready any more
      srv.app.draining = true;
      r = await request(`${srv.url}/ready`);
      assert.equal(r.status, 503);
      assert.deepEqual(r.json.reasons, ['the index is not open (starting or shutting down)']);
      srv.app.draining = false;
    } finally {
      await srv.close();
      fs.rmSync(datadir, { recursive: true, force: true });
      fs.rmSync(blocksDir, { recursive: true, force: true });
    }
  });

  it('negotiates Accept-Encoding by q-value, the server\'s order breaking ties', () => {
    const offered = ['br', 'gzip'];
    assert.equal(negotiate(undefined, offered), null);
    assert.equal(negotiate('', offered), null);
    assert.equal(negotiate('gzip', offered), 'gzip');
    assert.equal(negotiate('GZIP', offered), 'gzip');
    assert.equal(negotiate('x-gzip', offered), 'gzip');
    assert.equal(negotiate('gzip, br', offered), 'br');
    assert.equal(negotiate('br;q=0.1, gzip;q=0.9', offered), 'gzip');
    assert.equal(negotiate('br; q=0, *', offered), 'gzip');
    assert.equal(negotiate('*;q=0', offered), null);
    assert.equal(negotiate('identity, deflate', offered), null);
    assert.equal(negotiate('gzip, br', ['gzip']), 'gzip');
    assert.equal(negotiate('gzip', []), null);
  });
});
