'use strict';

const http = require('node:http');
const { getNetwork } = require('../chain/networks');
const { Router } = require('./router');
const { ApiError, toHttpError } = require('./errors');
const { LIMITS } = require('./validate');
const { json } = require('./reply');
const native = require('./routes/native');
const esplora = require('./routes/esplora');
const insight = require('./routes/insight');

const VERSION = require('../../package.json').version;

/** Reads retried when the index moved under them before giving up with 503. */
const READ_ATTEMPTS = 4;

/**
 * The API of one process over one open store: routes, validation, consistent reads.
 * node:http only — the routes are a few dozen and all JSON, and a framework's per-request
 * layers cost more than this whole file does (bench/api.js measures the router against a
 * bare node:http server).
 */
class ApiApp {
  /**
   * @param {object} opts
   * @param {import('../stores/abstract').AbstractStore} opts.store  open (read-only is enough)
   * @param {string|import('../chain/networks').Network} opts.network the index's network
   * @param {string} opts.storeKind 'lmdb' | 'level' | 'mongo'
   * @param {number} [opts.timeoutMs] answer 503 when a request takes longer
   * @param {(msg: string) => void} [opts.log] where unexpected failures are reported
   */
  constructor(opts) {
    this.store = opts.store;
    this.network = getNetwork(opts.network);
    this.storeKind = opts.storeKind;
    this.version = VERSION;
    this.timeoutMs = opts.timeoutMs || LIMITS.requestTimeoutMs;
    this.log = opts.log || ((msg) => process.stderr.write(`${msg}\n`));
    this.draining = false;
    this.inFlight = 0;
    this.router = new Router();
    native.register(this.router, this);
    esplora.register(this.router, this);
    insight.register(this.router, this);
    // mempool.space serves other networks' Esplora API under /testnet/api, /testnet4/api and
    // /signet/api,
    // and @mempool/mempool.js builds its URLs that way: accept that prefix for our network.
    this.networkPrefix = ['testnet', 'testnet4', 'signet'].includes(this.network.name) ? `/${this.network.name}/api/` : null;
    this.handle = this.handle.bind(this);
  }

  /**
   * Runs `read(tip)` so that what it returns belongs to one committed tip: the tip is read
   * before and after, and the read is repeated when a commit landed in between (a seqlock).
   * Stores promise per-call consistency only; this makes a response of several calls
   * consistent too, on every store, without holding a read transaction across turns.
   * @template T
   * @param {(tip: import('../stores/abstract').Tip|null) => Promise<T>} read
   * @returns {Promise<{tip: import('../stores/abstract').Tip|null, value: T}>}
   */
  async consistent(read) {
    for (let attempt = 1; ; attempt++) {
      const before = await this.store.getTip();
      const value = await read(before);
      const after = await this.store.getTip();
      if (sameTip(before, after)) return { tip: before, value };
      if (attempt === READ_ATTEMPTS) {
        throw new ApiError(503, 'ERR_INDEX_MOVING',
          `the index committed new blocks during each of ${READ_ATTEMPTS} attempts to read a consistent answer; retry`);
      }
    }
  }

  /**
   * Blocks at the given heights (each fetched once).
   * @param {Iterable<number>} heights
   * @returns {Promise<Map<number, {height: number, hash: string, time: number}>>}
   */
  async blocks(heights) {
    const out = new Map();
    for (const h of heights) {
      if (out.has(h)) continue;
      const b = await this.store.getBlock(h);
      // A height the store lists in a history or UTXO row but cannot describe means the
      // index is inconsistent: that is a server failure, never a partial answer.
      if (!b) throw new Error(`store has no block at height ${h} though a row refers to it`);
      out.set(h, { height: b.height, hash: b.hash, time: b.time });
    }
    return out;
  }

  /**
   * The node:http request listener.
   * @param {http.IncomingMessage} req
   * @param {http.ServerResponse} res
   */
  handle(req, res) {
    this.inFlight++;
    let done = false;
    const finish = (reply, extraHeaders) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      this.inFlight--;
      send(res, reply, extraHeaders, this.draining);
      if (this.inFlight === 0 && this.onIdle) this.onIdle();
    };
    const timer = setTimeout(() => {
      finish(json(errorBody('ERR_TIMEOUT', `the request did not complete within ${this.timeoutMs} ms`), 503));
    }, this.timeoutMs);
    this.dispatch(req).then(
      (reply) => finish(reply),
      (err) => {
        const e = toHttpError(err);
        if (e.internal) this.log(`addrindex api: ${req.method} ${req.url}: ${err && err.stack ? err.stack : err}`);
        let headers;
        if (err && err.allowed) headers = { allow: err.allowed.join(', ') };
        // a body too large is not read to its end: close the connection after the answer
        if (e.status === 413) headers = { connection: 'close' };
        finish(json(errorBody(e.code, e.message), e.status), headers);
      });
  }

  /** @returns {Promise<import('./reply').Reply>} */
  async dispatch(req) {
    const url = req.url;
    const q = url.indexOf('?');
    let path = q === -1 ? url : url.slice(0, q);
    if (this.networkPrefix && path.startsWith(this.networkPrefix)) path = path.slice(this.networkPrefix.length - 5);
    let found;
    try {
      found = this.router.match(req.method, path);
    } catch (err) {
      throw new ApiError(400, 'ERR_BAD_PATH', 'the path holds malformed percent-encoding');
    }
    if (!found) throw new ApiError(404, 'ERR_NOT_FOUND', `no route ${req.method} ${truncate(path)} (see /api/v1/openapi.json)`);
    if (found.allowed) {
      const err = new ApiError(405, 'ERR_METHOD_NOT_ALLOWED', `${truncate(path)} answers ${found.allowed.join(', ')}, not ${req.method}`);
      err.allowed = found.allowed;
      throw err;
    }
    const query = q === -1 ? EMPTY_QUERY : new URLSearchParams(url.slice(q + 1));
    const ctx = { params: found.params, query, body: undefined, req };
    if (found.route.meta.body) ctx.body = await readBody(req, LIMITS.bodyBytes);
    return found.route.handler(ctx);
  }

  /**
   * Stops taking new work and resolves when every request in flight has been answered.
   * @returns {Promise<void>}
   */
  drain() {
    this.draining = true;
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => { this.onIdle = resolve; });
  }
}

const EMPTY_QUERY = new URLSearchParams();

function sameTip(a, b) {
  if (!a || !b) return a === b;
  return a.height === b.height && a.hash === b.hash;
}

function errorBody(code, message) {
  return { error: { code, message } };
}

function truncate(s) {
  return s.length > 120 ? `${s.slice(0, 117)}...` : s;
}

/**
 * @param {http.ServerResponse} res
 * @param {import('./reply').Reply} reply
 * @param {object} [extra]
 * @param {boolean} draining tell keep-alive clients to reconnect (to another worker)
 */
function send(res, reply, extra, draining) {
  if (res.headersSent || res.destroyed) return;
  const headers = { 'content-type': reply.type, 'content-length': reply.body.length };
  if (extra) Object.assign(headers, extra);
  if (draining) headers.connection = 'close';
  res.writeHead(reply.status, headers);
  res.end(reply.body);
}

/**
 * The request body as an object: JSON (whatever the content type says, when it starts with
 * "{" — `curl -d` labels JSON as a form), else an urlencoded form (insight's clients post
 * `addrs=a,b`). Larger than `limit` bytes: 413.
 * @returns {Promise<object>}
 */
function readBody(req, limit) {
  return new Promise((resolve, reject) => {
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > limit) {
      req.resume();
      reject(tooLarge(limit));
      return;
    }
    const chunks = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', (err) => { failed = true; reject(err); });
    req.on('end', () => {
      if (failed) return;
      const raw = Buffer.concat(chunks).toString('utf8');
      const trimmed = raw.trimStart();
      if (trimmed.startsWith('{')) {
        let value;
        try {
          value = JSON.parse(raw);
        } catch (err) {
          reject(new ApiError(400, 'ERR_BAD_JSON', `the body is not valid JSON: ${err.message}`));
          return;
        }
        resolve(value);
        return;
      }
      const type = String(req.headers['content-type'] || '');
      if (trimmed.length && type.startsWith('application/x-www-form-urlencoded')) {
        resolve(Object.fromEntries(new URLSearchParams(raw)));
        return;
      }
      reject(new ApiError(400, 'ERR_BAD_BODY', 'the body must be a JSON object (Content-Type: application/json)'));
    });
  });
}

function tooLarge(limit) {
  return new ApiError(413, 'ERR_BODY_TOO_LARGE', `the request body is larger than ${limit} bytes`);
}

/**
 * An http.Server for an app, with the limits a public endpoint needs.
 * @param {ApiApp} app
 * @returns {http.Server}
 */
function createServer(app) {
  const server = http.createServer({ maxHeaderSize: 16384 }, app.handle);
  // slow clients: the whole request must arrive within the request timeout
  server.headersTimeout = Math.min(app.timeoutMs, 10000);
  server.requestTimeout = app.timeoutMs;
  server.keepAliveTimeout = 5000;
  // Requests node refuses before any route sees them (oversized headers, garbage, too slow)
  // get the same JSON error shape as everything else.
  server.on('clientError', (err, socket) => {
    if (!socket.writable || err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const [status, code, message] = err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'ERR_HEADERS_TOO_LARGE', 'the request headers are larger than 16 KiB']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'ERR_REQUEST_TIMEOUT', 'the request did not arrive within the time allowed']
        : [400, 'ERR_BAD_REQUEST', 'the request is not valid HTTP/1.1'];
    const body = JSON.stringify(errorBody(code, message));
    socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
  return server;
}

/**
 * Closes a server gracefully: no new connections, idle keep-alive sockets closed, requests in
 * flight answered (with `Connection: close`); after `graceMs` whatever is left is cut.
 * @param {http.Server} server
 * @param {ApiApp} app
 * @param {number} [graceMs]
 * @returns {Promise<{drained: boolean}>}
 */
async function closeGracefully(server, app, graceMs = 10000) {
  const drained = app.drain();
  const closed = new Promise((resolve) => server.close(() => resolve()));
  // Idle keep-alive sockets go now; busy ones close after their answer (it carries
  // `Connection: close`), so no answer is cut short by destroying its socket.
  server.closeIdleConnections();
  let timer;
  const timedOut = new Promise((resolve) => { timer = setTimeout(() => resolve(false), graceMs); });
  const ok = await Promise.race([Promise.all([drained, closed]).then(() => true), timedOut]);
  clearTimeout(timer);
  if (!ok) server.closeAllConnections();
  await closed;
  return { drained: ok };
}

module.exports = { ApiApp, createServer, closeGracefully };
