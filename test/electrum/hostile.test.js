'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const tls = require('node:tls');
const { execFileSync } = require('node:child_process');
const { syncedFixture, referenceIndex, SATOSHI } = require('../api/helpers');
const { startElectrum, connectClient, rawClient, toElectrum } = require('./helpers');
const { tempDir } = require('../helpers/tmp');

// the height-9 coinbase's P2PK script (its key's address is SATOSHI): what Electrum finds it under
const SATOSHI_P2PK = referenceIndex('script').p2pkOf(SATOSHI);
const SATOSHI_SH = toElectrum(SATOSHI_P2PK);

/** A self-signed certificate for 127.0.0.1, made by openssl. */
function selfSignedCert() {
  const dir = tempDir('electrum-tls');
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'pipe' });
  } catch (err) {
    throw new Error(`the TLS test makes its certificate with openssl, which failed or is not installed: ${err.message}`);
  }
  const out = { cert: fs.readFileSync(cert), key: fs.readFileSync(key), certFile: cert, keyFile: key };
  fs.rmSync(dir, { recursive: true, force: true });
  return out;
}

describe('electrum: bad input, slow readers, limits and TLS', function () {
  this.timeout(60000);
  let fixture;
  let srv;
  let tight;
  const cert = selfSignedCert();

  before(async () => {
    fixture = await syncedFixture();
    srv = await startElectrum(fixture.datadir, { blocksDir: fixture.blocksDir, tls: cert });
    // a second server with small bounds, to reach each of them cheaply
    tight = await startElectrum(fixture.datadir, {
      blocksDir: fixture.blocksDir, limits: { maxLineBytes: 4096, maxSendBytes: 64 * 1024, maxHistory: 5, maxBatch: 4, maxProtocolErrors: 3, maxSubscriptions: 2 },
    });
  });
  after(async () => {
    if (srv) await srv.close();
    if (tight) await tight.close();
    if (fixture) await fixture.cleanup();
  });

  it('garbage and malformed messages get JSON-RPC errors, and the connection keeps answering', async () => {
    const c = await rawClient(srv.port);
    c.send('this is not json\n');
    assert.deepEqual(await c.next(), { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error: the line is not valid JSON' } });
    c.send(Buffer.from([0xff, 0xfe, 0x00, 0x0a]));
    assert.equal((await c.next()).error.code, -32700);
    c.send('[]\n');
    assert.equal((await c.next()).error.code, -32600);
    c.send('{"id":9,"params":[]}\n');
    assert.deepEqual((await c.next()), { jsonrpc: '2.0', id: 9, error: { code: -32600, message: 'invalid request: "method" must be a non-empty string' } });
    c.send('{"id":10,"method":"server.ping","params":"x"}\n');
    assert.equal((await c.next()).error.code, -32602);
    assert.deepEqual(await c.call('server.ping'), { jsonrpc: '2.0', id: 1, result: null });
    c.socket.end();
  });

  it('unknown methods, wrong arity and names are -32601/-32602; wrong values are ElectrumX\'s BAD_REQUEST (1)', async () => {
    const c = await rawClient(srv.port);
    assert.deepEqual((await c.call('blockchain.address.get_balance', [SATOSHI])).error,
      { code: -32601, message: 'unknown method "blockchain.address.get_balance"' });
    assert.equal((await c.call('blockchain.scripthash.get_balance', [])).error.code, -32602);
    assert.equal((await c.call('blockchain.scripthash.get_balance', [SATOSHI_SH, 1])).error.code, -32602);
    assert.equal((await c.call('blockchain.scripthash.get_balance', { script_hash: SATOSHI_SH })).error.code, -32602);
    assert.deepEqual((await c.call('blockchain.scripthash.get_balance', [SATOSHI])).error,
      { code: 1, message: `${SATOSHI} is not a valid script hash` });
    assert.deepEqual((await c.call('blockchain.block.header', [-1])).error, { code: 1, message: '-1 should be a non-negative integer' });
    assert.deepEqual((await c.call('blockchain.transaction.get_merkle', ['zz', 1])).error, { code: 1, message: 'zz should be a transaction hash' });
    assert.equal((await c.call('blockchain.transaction.id_from_pos', [1, 0, 'yes'])).error.code, 1);
    // named parameters, as the protocol names them
    const byName = await c.call('blockchain.scripthash.get_balance', { scripthash: SATOSHI_SH });
    assert.equal(byName.result.confirmed, referenceIndex('script').at(SATOSHI_P2PK).summary.balance);
    c.socket.end();
  });

  it('server.version: only once; a version it cannot speak is refused and the connection closed', async () => {
    const c = await rawClient(srv.port);
    assert.deepEqual((await c.call('server.version', ['x', ['1.4', '1.6'], 'extra', 9])).result.slice(1), ['1.4.2']);
    assert.deepEqual((await c.call('server.version', ['x', '1.4'])).error, { code: 1, message: 'server.version already sent' });
    c.socket.end();
    const d = await rawClient(srv.port);
    const refused = await d.call('server.version', ['x', '1.6']);
    assert.equal(refused.error.code, 1);
    assert.match(refused.error.message, /unsupported protocol version: "1\.6" \(this server speaks 1\.4 to 1\.4\.2\)/);
    await d.closed;
  });

  it('batches: items answered in order, errors in place, notifications unanswered, bounds enforced', async () => {
    const c = await rawClient(tight.port);
    c.send(`${JSON.stringify([
      { jsonrpc: '2.0', id: 'a', method: 'server.ping' },
      { jsonrpc: '2.0', method: 'server.ping' },
      { jsonrpc: '2.0', id: 'b', method: 'no.such' },
      { jsonrpc: '2.0', id: 'c', method: 'blockchain.block.header', params: [0] },
    ])}\n`);
    const got = await c.next();
    assert.deepEqual(got.map((r) => r.id), ['a', 'b', 'c']);
    assert.equal(got[1].error.code, -32601);
    assert.equal(got[2].result.length, 160);
    c.send(`${JSON.stringify([{ method: 'server.ping' }])}\n`); // only a notification: no answer at all
    c.send(`${JSON.stringify(Array.from({ length: 5 }, (_, i) => ({ id: i, method: 'server.ping' })))}\n`);
    assert.deepEqual((await c.next()).error, { code: -32600, message: 'invalid request: a batch of 5 requests; at most 4 are answered' });
    // answers of one batch past the send bound (64 KiB here): the rest get an error, not an answer
    c.send(`${JSON.stringify(Array.from({ length: 3 }, (_, i) => ({ id: i, method: 'blockchain.block.headers', params: [0, 439] })))}\n`);
    const big = await c.next();
    assert.equal(big[0].result.count, 439);
    for (const r of big.slice(1)) assert.deepEqual(r.error, { code: 1, message: 'batch answer too large: its answers pass 65536 bytes; ask for fewer at a time' });
    c.socket.end();
  });

  it('a history or unspent list over --electrum-max-history gets "history too large", not the list', async () => {
    const c = await connectClient(tight.port);
    for (const call of [() => c.blockchainScripthash_getHistory(SATOSHI_SH), () => c.blockchainScripthash_subscribe(SATOSHI_SH)]) {
      await assert.rejects(call(), (e) => e.code === 1 && /^history too large: more than 5 transactions/.test(e.message));
    }
    // no address of these blocks has more than one unspent output: a bound of 0 is what one passes
    const limits = tight.app.limits;
    tight.app.limits = { ...limits, maxHistory: 0 };
    try {
      await assert.rejects(c.blockchainScripthash_listunspent(SATOSHI_SH), (e) => e.code === 1 && /too many unspent outputs: more than 0/.test(e.message));
    } finally {
      tight.app.limits = limits;
    }
    const sref = referenceIndex('script');
    const small = sref.scripthashes().find((sh) => sref.at(sh).history.length === 2);
    assert.equal((await c.blockchainScripthash_getHistory(toElectrum(small))).length, 2);
    c.close();
  });

  it('subscriptions per connection are bounded; unsubscribe frees a place', async () => {
    const c = await rawClient(tight.port);
    const shs = referenceIndex('script').busiest(40).map(toElectrum);
    const few = [];
    for (const sh of shs) {
      const r = await c.call('blockchain.scripthash.get_history', [sh]);
      if (!r.error) few.push(sh);
      if (few.length === 3) break;
    }
    assert.equal(few.length, 3);
    assert.ok(!(await c.call('blockchain.scripthash.subscribe', [few[0]])).error);
    assert.ok(!(await c.call('blockchain.scripthash.subscribe', [few[1]])).error);
    assert.ok(!(await c.call('blockchain.scripthash.subscribe', [few[1]])).error); // again: no new place taken
    assert.match((await c.call('blockchain.scripthash.subscribe', [few[2]])).error.message, /subscription limit of 2/);
    assert.equal((await c.call('blockchain.scripthash.unsubscribe', [few[0]])).result, true);
    assert.equal((await c.call('blockchain.scripthash.unsubscribe', [few[0]])).result, false);
    assert.ok(!(await c.call('blockchain.scripthash.subscribe', [few[2]])).error);
    c.socket.end();
    await c.closed;
  });

  it('an oversized line gets an error and the connection is closed; too many malformed lines too', async () => {
    const c = await rawClient(tight.port);
    assert.equal((await c.call('server.ping')).result, null);
    c.send(`{"id":1,"method":"server.ping","params":["${'a'.repeat(5000)}`);
    const err = await c.next();
    assert.deepEqual(err, { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'request too large: a line of more than 4096 bytes; closing the connection' } });
    await c.closed;
    const d = await rawClient(tight.port);
    for (let i = 0; i < 4; i++) d.send('garbage\n');
    for (let i = 0; i < 4; i++) assert.equal((await d.next()).error.code, -32700);
    assert.match((await d.next()).error.message, /more than 3 malformed messages/);
    await d.closed;
  });

  it('a client that stops reading is dropped at the send bound while other connections keep answering', async () => {
    const other = await connectClient(tight.port);
    const slow = await rawClient(tight.port);
    slow.socket.pause(); // reads nothing from now on
    const line = `${JSON.stringify({ id: 1, method: 'blockchain.block.headers', params: [0, 439] })}\n`;
    // each answer is ~70 KB: far more than the socket buffers and the 64 KiB bound hold
    for (let i = 0; i < 400; i++) slow.send(line);
    let answered = 0;
    const dropped = tight.app.stats.dropped;
    while (tight.app.stats.dropped === dropped) {
      assert.equal((await other.request('blockchain.block.header', [answered % 439])).length, 160);
      answered++;
    }
    slow.socket.resume(); // a paused socket would never see the server's close
    await slow.closed;
    assert.match(tight.logs.join('\n'), /dropping 127\.0\.0\.1:\d+: more than 65536 bytes of answers unread/);
    assert.deepEqual(await other.blockchainHeaders_subscribe(), { hex: referenceIndex().blocks[438].header.toBuffer().toString('hex'), height: 438 });
    other.close();
  });

  it('a client sending faster than it is answered is paused, not buffered, and loses no request', async () => {
    const held = await startElectrum(fixture.datadir, { blocksDir: fixture.blocksDir, limits: { maxPendingLines: 8, maxPendingBytes: 2048 } });
    try {
      const c = await rawClient(held.port);
      const n = 3000;
      c.send(Array.from({ length: n }, (_, i) => `${JSON.stringify({ id: i, method: 'blockchain.block.header', params: [i % 439] })}\n`).join(''));
      const raw = referenceIndex().blocks.map((b) => b.header.toBuffer().toString('hex'));
      for (let i = 0; i < n; i++) assert.deepEqual(await c.next(), { jsonrpc: '2.0', id: i, result: raw[i % 439] });
      const [session] = held.app.sessions;
      assert.ok(session.queuedBytes === 0 && session.queue.length === 0);
      c.socket.end();
    } finally {
      await held.close();
    }
  });

  it('a connection that stays silent is closed (the idle bound, 10 minutes by default)', async () => {
    const idle = await startElectrum(fixture.datadir, { blocksDir: fixture.blocksDir, limits: { idleMs: 200 } });
    try {
      const c = await rawClient(idle.port);
      assert.equal((await c.call('server.ping')).result, null);
      await c.closed; // nothing more sent: the server closes it
      while (idle.app.sessions.size) await new Promise((r) => setImmediate(r)); // and forgets it
    } finally {
      await idle.close();
    }
  });

  it('TLS with a self-signed certificate: the real client over SSL, and the certificate is the one configured', async () => {
    const c = await connectClient(srv.tlsPort, 'tls');
    assert.equal((await c.server_version('tls-test', '1.4'))[1], '1.4');
    assert.equal((await c.blockchainScripthash_getBalance(SATOSHI_SH)).confirmed, referenceIndex('script').at(SATOSHI_P2PK).summary.balance);
    c.close();
    // trusting only that certificate: the handshake succeeds, so the server presents it
    const socket = tls.connect({ port: srv.tlsPort, host: '127.0.0.1', ca: cert.cert });
    await new Promise((resolve, reject) => { socket.once('secureConnect', resolve); socket.once('error', reject); });
    assert.ok(socket.authorized);
    socket.end(`${JSON.stringify({ id: 1, method: 'server.ping' })}\n`);
    const answer = await new Promise((resolve) => { let s = ''; socket.on('data', (d) => { s += d; }); socket.on('end', () => resolve(s)); });
    assert.deepEqual(JSON.parse(answer), { jsonrpc: '2.0', id: 1, result: null });
    // a plain-TCP client on the TLS port fails alone
    const plain = await rawClient(srv.tlsPort);
    plain.send('{"id":1,"method":"server.ping"}\n');
    await plain.closed;
    assert.equal((await (await rawClient(srv.port)).call('server.ping')).result, null);
  });
});
