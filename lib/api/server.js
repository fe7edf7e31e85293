'use strict';

const http = require('node:http');
const { randomUUID } = require('node:crypto');
const { getNetwork } = require('../chain/networks');
const { Router } = require('./router');
const { ApiError, toHttpError } = require('./errors');
const { LIMITS } = require('./validate');
const { json } = require('./reply');
const { negotiate, compress, compressionConfig } = require('./compress');
const { RateLimiter } = require('./ratelimit');
const { Cors, isPreflight } = require('./cors');
const { Metrics } = require('../ops/metrics');
const { watchIndex, watchMempool } = require('../ops/index-metrics');
const { HttpMetrics } = require('../ops/http-metrics');
const { createLogger } = require('../ops/log');
const { BlockReader } = require('../sources/blockreader');
const { TxData, indexBlockBytes } = require('./txdata');
const { ChainWork } = require('./chainwork');
const { JsonCache } = require('./json-cache');
const { MempoolReader, viewsFrom } = require('../mempool/reader');
const { readConsistent, movedRows } = require('../core/consistent');
const native = require('./routes/native');
const esplora = require('./routes/esplora');
const insight = require('./routes/insight');
const insightStatus = require('./routes/insight-status');
const insightBlocks = require('./routes/insight-blocks');
const { Explorer } = require('./explorer');
const { BlockTimes } = require('../bitcore/timestamps');
const bitcore8 = require('./routes/bitcore8');
const ops = require('./routes/ops');

const VERSION = require('../../package.json').version;

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
   * @param {(msg: string) => void} [opts.log] where unexpected failures are reported (readable text)
   * @param {import('pino').Logger} [opts.logger] the JSON log (every request at debug, with its id)
   * @param {import('../ops/metrics').Metrics} [opts.metrics] scope 'api' (default: a registry of its own)
   * @param {() => Promise<string>} [opts.scrape] what GET /metrics answers (default: this
   *   process's metrics; a cluster worker asks the primary for every worker's, merged)
   * @param {boolean} [opts.nodeConfigured] a node's tip is fed through setNodeTip() (for /ready)
   * @param {'rpc'|'blocks-dir'} [opts.nodeSource] where that tip is read (for /api/v1/status)
   * @param {number} [opts.maxLag] /ready: most blocks the index may be behind the node
   * @param {{minBytes?: number, encodings?: string[]}} [opts.compression] see compress.js
   * @param {{limit: number, windowMs: number, trustProxy?: boolean}} [opts.rateLimit] per client; none by default
   * @param {string[]} [opts.cors] allowed origins ('*' for any); none by default
   * @param {boolean} [opts.indexKeepsBlocks] the index keeps its blocks' bytes (synced with
   *   --txstore): they are read from it first
   * @param {string|null} [opts.blocksDir] where transactions and blocks are read: the blocks dir
   *   the index was synced from (its locators point into it); null: nowhere but the node
   * @param {((hash: string) => Promise<Buffer|string>)|null} [opts.fetchFromNode] the node
   *   fallback for a block the blocks dir cannot give (`getblock HASH 0`): the node issue's
   *   `serve --rpc-url` plugs in here
   * @param {number} [opts.blockCacheBytes] the block reader's cache of parsed blocks (default 64 MiB)
   * @param {number} [opts.txJsonCacheBytes] Esplora transaction JSON kept (default 32 MiB)
   * @param {() => (import('../core/mempool').MempoolView|null)} [opts.mempool] where mempool
   *   views come from instead of the store's snapshot (tests; an embedder keeping its own): each
   *   is used only with the tip it names. Default: the snapshot the follower writes into the
   *   index (lib/mempool/reader.js)
   * @param {import('../mempool/reader').MempoolReader} [opts.mempoolReader] the reader of the
   *   index's snapshot to share (its decoded snapshot) with the host's other readers of the store
   * @param {import('../node/serve-node').ServeNode|null} [opts.node] the node behind the server
   *   (serve --rpc-url): broadcast, fee estimates; null: those routes answer 503
   * @param {boolean} [opts.explorer] serve insight-ui at /insight/ (serve --explorer); a browser
   *   asking for / is sent there
   * @param {{pollMs?: number, websocketOnly?: boolean}|null} [opts.live] insight's socket.io live
   *   feed (lib/api/live.js); started by start(), attached to a server by createServer()
   * @param {{createWallet: Function, addWalletAddresses: Function}} [opts.walletWriter] where the
   *   bitcore v8 wallet routes write (lib/cluster/wallet-writes.js in a worker); default the store
   */
  constructor(opts) {
    this.store = opts.store;
    this.network = getNetwork(opts.network);
    this.storeKind = opts.storeKind;
    this.version = VERSION;
    this.timeoutMs = opts.timeoutMs || LIMITS.requestTimeoutMs;
    this.log = opts.log || ((msg) => process.stderr.write(`${msg}\n`));
    this.logger = opts.logger || createLogger({ json: false });
    this.metrics = opts.metrics || new Metrics({ scope: 'api', processMetrics: false });
    this.scrape = opts.scrape || (() => this.metrics.text());
    this.node = { configured: Boolean(opts.nodeConfigured), source: opts.nodeSource || (opts.node ? 'rpc' : 'blocks-dir'), tip: null };
    this.maxLag = opts.maxLag === undefined ? null : opts.maxLag;
    this.compression = compressionConfig(opts.compression);
    this.limiter = opts.rateLimit ? new RateLimiter(opts.rateLimit) : null;
    this.cors = opts.cors && opts.cors.length ? new Cors(opts.cors) : null;
    this.httpMetrics = new HttpMetrics(this.metrics);
    watchIndex(this.metrics, this.store, () => this.node.tip);
    this.blocksDir = opts.blocksDir || null;
    this.keepsBlocks = Boolean(opts.indexKeepsBlocks);
    this.hasNode = Boolean(opts.fetchFromNode);
    this.reader = new BlockReader({
      dir: this.blocksDir, network: this.network, maxBytes: opts.blockCacheBytes, fetchFromNode: opts.fetchFromNode || null,
      fromIndex: opts.indexKeepsBlocks ? indexBlockBytes(this.store) : null,
    });
    /** @type {import('./txdata').MempoolViews} */
    this.mempool = opts.mempool ? viewsFrom(opts.mempool) : opts.mempoolReader || new MempoolReader(this.store);
    watchMempool(this.metrics, this.store, this.mempool);
    this.nodeClient = opts.node || null;
    /** who writes bitcore v8 wallets: the store itself, or (a cluster worker) the primary */
    this.walletWriter = opts.walletWriter || this.store;
    this.txdata = new TxData({ store: this.store, reader: this.reader, mempool: this.mempool });
    this.chainwork = new ChainWork(this.store);
    /** Esplora transaction JSON, which never changes for a txid in a given block */
    this.txJson = new JsonCache(opts.txJsonCacheBytes);
    this.draining = false;
    this.inFlight = 0;
    this.router = new Router();
    native.register(this.router, this);
    esplora.register(this.router, this);
    insight.register(this.router, this);
    insightStatus.register(this.router, this);
    insightBlocks.register(this.router, this);
    bitcore8.register(this.router, this);
    ops.register(this.router, this);
    this.explorer = opts.explorer ? new Explorer() : null;
    /** the patched node's logical timestamps over the index (insight's /blocks by date) */
    this.blockTimes = new BlockTimes(this.store);
    this.live = null;
    if (opts.live) {
      const { LiveFeed } = require('./live');
      this.live = new LiveFeed(this, opts.live);
    }
    // mempool.space serves other networks' Esplora API under /testnet/api, /testnet4/api and
    // /signet/api,
    // and @mempool/mempool.js builds its URLs that way: accept that prefix for our network.
    this.networkPrefix = ['testnet', 'testnet4', 'signet'].includes(this.network.name) ? `/${this.network.name}/api/` : null;
    this.handle = this.handle.bind(this);
  }

  /**
   * Runs `read(tip)` so that what it returns belongs to one committed tip (lib/core/consistent.js:
   * the tip read before and after, the read repeated when a commit landed in between). A read
   * that finds rows of two states itself (ERR_INDEX_MOVED, see txdata.js) is repeated the same
   * way; one that keeps moving is a 503 ERR_INDEX_MOVING.
   * @template T
   * @param {(tip: import('../stores/abstract').Tip|null) => Promise<T>} read
   * @returns {Promise<{tip: import('../stores/abstract').Tip|null, value: T}>}
   */
  consistent(read) {
    return readConsistent(this.store, read, { retry: movedRows });
  }

  /**
   * consistent(), with the mempool view that goes with the tip the read began at (null when
   * none does: the answer is then confirmed data alone). One rule for every reader:
   * lib/mempool/reader.js.
   * @template T
   * @param {(tip: import('../stores/abstract').Tip|null, view: import('../core/mempool').MempoolView|null) => Promise<T>} read
   * @returns {Promise<{tip: import('../stores/abstract').Tip|null, view: import('../core/mempool').MempoolView|null, value: T}>}
   */
  async withMempool(read) {
    const { tip, value } = await this.consistent(async (t) => {
      const view = await this.mempool.at(t);
      return { view, value: await read(t, view) };
    });
    return { tip, view: value.view, value: value.value };
  }

  /**
   * The node behind the server, or a 503 saying there is none.
   * @param {string} what what needed it, for the message
   * @returns {import('../node/serve-node').ServeNode}
   */
  requireNode(what) {
    if (!this.nodeClient) throw new ApiError(503, 'ERR_NO_NODE', `${what} needs a node: this server was started without one (serve --rpc-url)`);
    return this.nodeClient;
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

  /** Starts what runs beside the requests: the live feed's watcher, the explorer's table of block times. */
  async start() {
    if (this.live) await this.live.start();
    // the explorer's home asks for the newest blocks at once: their table is built now, not then
    if (this.explorer) this.blockTimes.update().catch((err) => this.log(`addrindex api: reading the blocks' times: ${err && err.stack ? err.stack : err}`));
  }

  /** Closes what the app opened itself (the live feed, the block reader's files); the store is the caller's. */
  async close() {
    if (this.live) await this.live.close();
    await this.reader.close();
  }

  /**
   * A block asked of a server that has nowhere to read blocks from (no blocks dir, no node, an
   * index without its blocks): retrying cannot help, so the answer says what to change.
   * @returns {{status: number, code: string, message: string, internal: boolean}|null}
   */
  noBlockSource(err) {
    if (!err || err.code !== 'ERR_BLOCK_UNAVAILABLE' || this.blocksDir || this.keepsBlocks || this.hasNode) return null;
    return {
      status: 503, code: 'ERR_NO_BLOCK_SOURCE', internal: false,
      message: 'this server has nowhere to read whole blocks and transactions from: start `addrindex serve` with --blocks-dir DIR ' +
        '(the node\'s blocks dir) or --rpc-url URL (a node to ask), or build the index with `addrindex sync --txstore` (it then keeps them)',
    };
  }

  /** The node's tip as last read (a cluster worker gets it from the primary). */
  setNodeTip(tip) {
    this.node.tip = tip ? { height: tip.height, hash: tip.hash } : null;
  }

  /**
   * The node:http request listener.
   * @param {http.IncomingMessage} req
   * @param {http.ServerResponse} res
   */
  handle(req, res) {
    // the live feed's long-polling requests outlast the request timeout and write their own
    // answers: they bypass the JSON machinery
    if (this.live) {
      const q = req.url.indexOf('?');
      const pathname = q === -1 ? req.url : req.url.slice(0, q);
      if (this.live.owns(pathname)) {
        this.live.handleRequest(req, res, pathname);
        return;
      }
    }
    const started = process.hrtime.bigint();
    // per request: the route it matched (for metrics) and headers every answer carries
    const state = { id: requestId(req), route: null, headers: null };
    state.headers = { 'x-request-id': state.id };
    if (this.cors) Object.assign(state.headers, this.cors.headers(req.headers.origin));
    this.inFlight++;
    let done = false;
    const finish = (reply, extraHeaders) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (extraHeaders) Object.assign(state.headers, extraHeaders);
      const settled = () => {
        this.inFlight--;
        if (this.inFlight === 0 && this.onIdle) this.onIdle();
      };
      // the answer is out (or its socket gone); only its accounting failed
      const failed = (err) => this.log(`addrindex api: after answering ${req.method} ${req.url} [${state.id}]: ${err && err.stack ? err.stack : err}`);
      let compressing;
      try {
        compressing = this.respond(req, res, reply, state, started);
      } catch (err) {
        failed(err);
      }
      if (compressing) compressing.catch(failed).finally(settled);
      else settled();
    };
    const timer = setTimeout(() => {
      this.logger.warn({ reqId: state.id, method: req.method, url: req.url, ms: this.timeoutMs }, 'request timed out');
      finish(json(errorBody('ERR_TIMEOUT', `the request did not complete within ${this.timeoutMs} ms`), 503));
    }, this.timeoutMs);
    if (this.cors && isPreflight(req)) {
      state.route = 'preflight';
      finish(NO_CONTENT, this.cors.preflight(req));
      return;
    }
    // insight-api answers every request of its own with open CORS headers, and OPTIONS with
    // 204, whatever it asks (unless --cors-origin chose a policy for every route)
    if (!this.cors && req.url.startsWith(INSIGHT_PREFIX)) {
      Object.assign(state.headers, INSIGHT_CORS);
      if (req.method === 'OPTIONS') {
        state.route = 'preflight';
        finish(NO_CONTENT);
        return;
      }
    }
    this.dispatch(req, state).then(
      (reply) => finish(reply, reply.headers),
      (err) => {
        const e = this.noBlockSource(err) || toHttpError(err);
        if (e.internal) {
          this.log(`addrindex api: ${req.method} ${req.url} [${state.id}]: ${err && err.stack ? err.stack : err}`);
          this.logger.error({ reqId: state.id, method: req.method, url: req.url, err }, 'internal error');
        }
        let headers = err && err.headers ? err.headers : undefined;
        if (err && err.allowed) headers = { allow: err.allowed.join(', ') };
        // a body too large is not read to its end: close the connection after the answer
        if (e.status === 413) headers = { connection: 'close' };
        finish(json(errorBody(e.code, e.message), e.status), headers);
      });
  }

  /**
   * Writes an answer, compressed when it is large enough and the client accepts it, then
   * counts it and logs it.
   * @param {http.IncomingMessage} req
   * @param {http.ServerResponse} res
   * @param {import('./reply').Reply} reply
   * @param {{id: string, route: string|null, headers: object}} state
   * @param {bigint} started
   * @returns {Promise<void>|undefined} a promise only while compressing: most answers are
   *   small, and go out without one
   */
  respond(req, res, reply, state, started) {
    const headers = state.headers;
    if (this.compression.encodings.length && reply.body.length >= this.compression.minBytes) {
      headers.vary = headers.vary ? `${headers.vary}, Accept-Encoding` : 'Accept-Encoding';
      const chosen = negotiate(req.headers['accept-encoding'], this.compression.encodings);
      if (chosen) {
        return compress(reply.body, chosen).then(
          (body) => {
            headers['content-encoding'] = chosen;
            this.deliver(req, res, reply, { status: reply.status, type: reply.type, body }, chosen, state, started);
          },
          (err) => {
            // the plain answer is still right; only the bytes saved are lost
            this.logger.error({ reqId: state.id, err }, 'compression failed');
            this.deliver(req, res, reply, reply, 'identity', state, started);
          });
      }
    }
    this.deliver(req, res, reply, reply, 'identity', state, started);
    return undefined;
  }

  /** Sends `sent` (the answer `reply`, encoded or not), counts it and logs it. */
  deliver(req, res, reply, sent, encoding, state, started) {
    send(res, sent, state.headers, this.draining);
    const route = state.route || 'none';
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const body = sent.body;
    this.httpMetrics.record(route, req.method, reply.status, seconds, encoding, reply.body.length, body.length);
    if (this.logger.isLevelEnabled('debug')) {
      this.logger.debug({
        reqId: state.id, method: req.method, url: req.url, route, status: reply.status,
        ms: Math.round(seconds * 1e5) / 100, bytes: body.length, encoding,
      }, 'request');
    }
  }

  /**
   * Counts a request against its client's rate limit; past it, a 429 to throw.
   * @param {http.IncomingMessage} req
   * @param {{headers: object}} state
   */
  rateLimit(req, state) {
    const r = this.limiter.take(this.limiter.clientOf(req));
    state.headers['ratelimit-limit'] = String(r.limit);
    state.headers['ratelimit-remaining'] = String(r.remaining);
    state.headers['ratelimit-reset'] = String(r.resetS);
    if (r.allowed) return;
    this.metrics.httpRateLimited.inc();
    const err = new ApiError(429, 'ERR_RATE_LIMITED',
      `more than ${r.limit} requests in ${this.limiter.windowMs / 1000} s from this client; retry in ${r.resetS} s`);
    err.headers = { 'retry-after': String(r.resetS) };
    throw err;
  }

  /** @returns {Promise<import('./reply').Reply>} */
  async dispatch(req, state) {
    const url = req.url;
    const q = url.indexOf('?');
    let path = q === -1 ? url : url.slice(0, q);
    if (this.networkPrefix && path.startsWith(this.networkPrefix)) path = path.slice(this.networkPrefix.length - 5);
    if (this.explorer) {
      if (this.explorer.owns(path)) {
        state.route = 'explorer';
        const reply = this.explorer.serve(req, path);
        if (reply.headers) Object.assign(state.headers, reply.headers);
        return reply;
      }
      // a person opening the server's address in a browser gets the explorer, clients the JSON index
      if (path === '/' && req.method === 'GET' && String(req.headers.accept || '').includes('text/html')) {
        state.route = 'explorer';
        state.headers.location = '/insight/';
        return { status: 302, type: null, body: Buffer.alloc(0) };
      }
    }
    // insight-api's Express router takes a path with one trailing slash as the path without
    // (insight-ui asks /addr/ADDR/?noTxList=1)
    if (path.length > INSIGHT_PREFIX.length && path.startsWith(INSIGHT_PREFIX) && path.endsWith('/')) path = path.slice(0, -1);
    // bitcore-node v8 (express) takes a trailing slash as none, and its clients send one
    // (bitcore-wallet-service asks for /tx/?blockHash=)
    if (path.startsWith('/api/BTC/') && path.endsWith('/')) path = path.slice(0, -1);
    let found;
    try {
      found = this.router.match(req.method, path);
    } catch (err) {
      throw new ApiError(400, 'ERR_BAD_PATH', 'the path holds malformed percent-encoding');
    }
    if (found && found.route) state.route = found.route.pattern;
    // health checks and scrapes are never limited: a monitor must see a busy server
    if (this.limiter && !(found && found.route && found.route.meta.ops)) this.rateLimit(req, state);
    if (!found) throw new ApiError(404, 'ERR_NOT_FOUND', `no route ${req.method} ${truncate(path)} (see /api/v1/openapi.json)`);
    if (found.allowed) {
      const err = new ApiError(405, 'ERR_METHOD_NOT_ALLOWED', `${truncate(path)} answers ${found.allowed.join(', ')}, not ${req.method}`);
      err.allowed = found.allowed;
      throw err;
    }
    const query = q === -1 ? EMPTY_QUERY : new URLSearchParams(url.slice(q + 1));
    const ctx = { params: found.params, query, body: undefined, req };
    if (found.route.meta.body === 'text') ctx.body = await readText(req, LIMITS.bodyBytes);
    else if (found.route.meta.body === 'raw') ctx.body = await readRaw(req, LIMITS.bodyBytes);
    else if (found.route.meta.body) ctx.body = await readBody(req, LIMITS.bodyBytes);
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
const INSIGHT_PREFIX = '/insight-api/';
/** insight-api 0.4.3's CORS headers, on every answer of its own routes. */
const INSIGHT_CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, HEAD, PUT, POST, OPTIONS',
  'access-control-allow-headers': 'Origin, X-Requested-With, Content-Type, Accept, Content-Length, Cache-Control, cf-connecting-ip',
};
const NO_CONTENT = { status: 204, type: null, body: Buffer.alloc(0) };

/**
 * The request's id: the client's (or the proxy's) X-Request-Id when it is a sane token, so
 * one id follows a request through every hop; otherwise a new UUID. Echoed in the answer.
 */
function requestId(req) {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && /^[A-Za-z0-9._:-]{1,64}$/.test(given) ? given : randomUUID();
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
  const headers = reply.type ? { 'content-type': reply.type, 'content-length': reply.body.length } : { 'content-length': reply.body.length };
  if (extra) Object.assign(headers, extra);
  if (draining) headers.connection = 'close';
  res.writeHead(reply.status, headers);
  res.end(reply.body);
}

/**
 * The request body as text, whatever its content type (Esplora's POST /tx takes the raw hex,
 * which clients send as text/plain or, axios among them, labelled as a form). Larger than
 * `limit` bytes: 413.
 * @returns {Promise<string>}
 */
function readText(req, limit) {
  return readRaw(req, limit).then((buf) => buf.toString('utf8'));
}

/**
 * The request body's bytes, at most `limit` of them (else 413).
 * @returns {Promise<Buffer>}
 */
function readRaw(req, limit) {
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
    req.on('end', () => { if (!failed) resolve(Buffer.concat(chunks)); });
  });
}

/**
 * The request body as an object: JSON (whatever the content type says, when it starts with
 * "{" — `curl -d` labels JSON as a form), else an urlencoded form (insight's clients post
 * `addrs=a,b`). Larger than `limit` bytes: 413.
 * @returns {Promise<object>}
 */
async function readBody(req, limit) {
  const raw = (await readRaw(req, limit)).toString('utf8');
  const trimmed = raw.trimStart();
  if (trimmed.startsWith('{')) {
    try {
      return JSON.parse(raw);
    } catch (err) {
      throw new ApiError(400, 'ERR_BAD_JSON', `the body is not valid JSON: ${err.message}`);
    }
  }
  const type = String(req.headers['content-type'] || '');
  if (trimmed.length && type.startsWith('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(raw));
  throw new ApiError(400, 'ERR_BAD_BODY', 'the body must be a JSON object (Content-Type: application/json)');
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
  // websocket connections of the live feed; any other upgrade is refused
  server.on('upgrade', (req, socket, head) => {
    if (!app.live || !app.live.handleUpgrade(req, socket, head)) socket.destroy();
  });
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
  // websocket connections keep the server open until they close: the feed closes them first
  if (app.live) await app.live.close();
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
  await app.close();
  return { drained: ok };
}

module.exports = { ApiApp, createServer, closeGracefully };
