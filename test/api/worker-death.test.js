'use strict';

const assert = require('node:assert/strict');
const http = require('node:http');
const net = require('node:net');
const { syncedFixture, HAL } = require('./helpers');
const { startCli } = require('../helpers/cli');
const { waitFor } = require('../helpers/chains');
const { childrenOf } = require('../helpers/procs');


/**
 * GET url; resolves once the request is on its way (connected, written) with the promise of
 * its answer (status, or the error that ended it).
 */
function sent(url) {
  return new Promise((resolveSent) => {
    const answer = new Promise((resolve) => {
      const req = http.get(url, { agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode }));
      });
      req.on('error', (err) => {
        resolve({ error: err.code || err.message });
        resolveSent({ answer, req }); // refused before it was sent
      });
      req.on('finish', () => resolveSent({ answer, req }));
    });
  });
}

describe('serve: a worker that dies never leaves a client waiting on its connection', function () {
  this.timeout(60000);
  let fixture;
  let serve;

  before(async () => {
    fixture = await syncedFixture(200);
  });
  const stopServe = async () => {
    if (serve && serve.exitCode === null && serve.signalCode === null) {
      serve.kill('SIGKILL');
      await serve.done;
    }
    serve = null;
  };
  afterEach(stopServe);
  after(async () => {
    if (fixture) await fixture.cleanup();
  });

  it('the only worker, stopped with a request on its way, then killed: the client is told at once (a reset), not left waiting', async () => {
    serve = startCli(['serve', '--datadir', fixture.datadir, '--workers', '1', '--port', '0', '--grace-ms', '1000']);
    const url = (await serve.waitFor(/listening on (http:\/\/\S+)/))[1];
    const [worker] = await waitFor(() => childrenOf(serve.pid).length === 1 && childrenOf(serve.pid), 30000, 'the worker');
    // Stopped, the worker takes no connection. Under node's round robin the primary accepted
    // this one and sent it to the worker, which died before taking it: the primary kept its
    // copy open and the client waited for ever. With the kernel handing connections out, the
    // connection waits in the listening socket, which closes with its last worker: a reset.
    process.kill(worker, 'SIGSTOP');
    const { answer, req } = await sent(`${url}/api/v1/address/${HAL}`);
    process.kill(worker, 'SIGKILL');
    await waitFor(() => childrenOf(serve.pid).some((p) => p !== worker), 30000, 'the replacement worker');
    // the bound only ends a hung request; the outcome is what the test is about
    const timer = setTimeout(() => req.destroy(new Error('no answer 30 s after the replacement started')), 30000);
    const got = await answer;
    clearTimeout(timer);
    assert.deepEqual(got, { error: 'ECONNRESET' });
  });

  it('two workers, both stopped with a request on its way, one killed: the other takes the request and answers it', async () => {
    serve = startCli(['serve', '--datadir', fixture.datadir, '--workers', '2', '--port', '0', '--grace-ms', '1000']);
    const url = (await serve.waitFor(/listening on (http:\/\/\S+)/))[1];
    const workers = await waitFor(() => childrenOf(serve.pid).length === 2 && childrenOf(serve.pid), 30000, 'the workers');
    for (const w of workers) process.kill(w, 'SIGSTOP');
    const { answer, req } = await sent(`${url}/api/v1/address/${HAL}`);
    process.kill(workers[0], 'SIGKILL');
    process.kill(workers[1], 'SIGCONT');
    const timer = setTimeout(() => req.destroy(new Error('no answer within 30 s')), 30000);
    const got = await answer;
    clearTimeout(timer);
    assert.deepEqual(got, { status: 200 });
  });

  it('--port 0 and --electrum-port 0: every worker killed at once, the replacements listen on the ports the first ones got', async () => {
    serve = startCli(['serve', '--datadir', fixture.datadir, '--workers', '2', '--port', '0', '--electrum-port', '0', '--grace-ms', '1000']);
    const url = (await serve.waitFor(/listening on (http:\/\/\S+)/))[1];
    const electrumPort = Number((await serve.waitFor(/electrum tcp 127\.0\.0\.1:(\d+)/))[1]);
    const first = await waitFor(() => childrenOf(serve.pid).length === 2 && childrenOf(serve.pid), 30000, 'the workers');
    for (const w of first) process.kill(w, 'SIGKILL');
    const next = await waitFor(() => {
      const now = childrenOf(serve.pid).filter((p) => !first.includes(p));
      return now.length === 2 && now.every((p) => serve.lines.some((l) => l.includes(`worker ${p} listening`))) && now;
    }, 30000, 'two replacement workers listening');
    assert.equal(next.length, 2);
    const { answer } = await sent(`${url}/api/v1/address/${HAL}`);
    assert.deepEqual(await answer, { status: 200 });
    const reply = await new Promise((resolve, reject) => {
      const c = net.connect(electrumPort, '127.0.0.1', () => c.write('{"id":1,"method":"server.version","params":["t","1.4"]}\n'));
      c.once('data', (d) => { c.destroy(); resolve(JSON.parse(d)); });
      c.once('error', reject);
    });
    assert.equal(reply.result[1], '1.4');
  });
});
