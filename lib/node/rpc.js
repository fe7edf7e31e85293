'use strict';

const http = require('node:http');
const { NodeError, RpcError } = require('../errors');
const { redact } = require('./endpoint');
const { parseWithTxidLists } = require('./txid-list');

/** JSON-RPC error codes a node answers while it cannot serve yet, to be retried. */
const RPC_IN_WARMUP = -28;

/** Transport failures that a node restarting or going away causes, worth retrying. */
const RETRY_SOCKET_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ECONNABORTED',
]);

/**
 * @typedef {object} RpcCall
 * @property {string} method
 * @property {Array<any>} [params]
 */

/**
 * @typedef {{result: any}|{error: RpcError}} Settled  one batch item: the node's result, or its
 *   JSON-RPC error
 */

/**
 * A JSON-RPC client for a Bitcoin node over HTTP (Bitcoin Core, btcd): single calls and
 * batches (one HTTP request holding many calls, answered in one response), Basic auth,
 * keep-alive connections, a timeout on a silent node, and retries with exponential backoff
 * while the node is unreachable, restarting (Core's "warming up"), or too busy (HTTP 503).
 *
 * What it throws, all with a stable code:
 * - `RpcError` ERR_NODE_RPC: the node answered the call with a JSON-RPC error (`rpcCode`);
 * - `NodeError` ERR_NODE_UNAVAILABLE: no answer within `retryMs` of retrying;
 * - `NodeError` ERR_NODE_AUTH: HTTP 401/403, the credentials (or this host) refused;
 * - `NodeError` ERR_NODE_PROTOCOL: the answer is not JSON-RPC (another server on the port);
 * - `NodeError` ERR_ABORTED: `signal` aborted while waiting.
 *
 * Every call is retried as a whole, so only calls that are safe to repeat belong here (reads,
 * and `sendrawtransaction`, whose repeat the node answers with "already known").
 */
class RpcClient {
  /**
   * @param {object} opts
   * @param {string} opts.url             http://HOST:PORT/PATH (credentials in it are used and masked)
   * @param {(reload?: boolean) => {user: string, pass: string}} [opts.credentials]  overrides the URL's
   * @param {boolean} [opts.reloadable=false] the credentials come from a file the node rewrites
   *   when it restarts (Core's cookie): after a 401 or a failed attempt, call `credentials(true)`
   * @param {string} [opts.display]       how the node is named in messages (default: the URL, masked)
   * @param {number} [opts.timeoutMs=30000] a request whose connection stays silent this long fails (and is retried)
   * @param {number} [opts.retryMs=60000] how long a failing request is retried before ERR_NODE_UNAVAILABLE (0: never)
   * @param {number} [opts.maxDelayMs=5000] the longest pause between two attempts (they start at 100 ms and double)
   * @param {number} [opts.maxSockets=8]  connections at most (btcd allows 10 clients by default)
   * @param {'1.0'|'2.0'} [opts.jsonrpc='2.0'] the version field sent (both nodes answer both)
   * @param {AbortSignal} [opts.signal]   stops waits and requests in flight (ERR_ABORTED)
   * @param {(info: {error: Error, attempt: number, delayMs: number, what: string}) => void} [opts.onRetry]
   */
  constructor(opts) {
    if (!opts || !opts.url) throw new TypeError('RpcClient needs a url');
    const u = new URL(opts.url);
    if (u.protocol !== 'http:') throw new TypeError(`RpcClient speaks http:// only, not ${u.protocol}`);
    const urlCreds = { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) };
    this.credentials = opts.credentials || (() => urlCreds);
    this.reloadable = Boolean(opts.credentials && opts.reloadable);
    this.display = opts.display || redact(opts.url);
    this.host = u.hostname.replace(/^\[|\]$/g, '');
    this.port = Number(u.port) || 80;
    this.path = `${u.pathname || '/'}${u.search}`;
    this.timeoutMs = opts.timeoutMs === undefined ? 30000 : opts.timeoutMs;
    this.retryMs = opts.retryMs === undefined ? 60000 : opts.retryMs;
    this.maxDelayMs = opts.maxDelayMs === undefined ? 5000 : opts.maxDelayMs;
    this.jsonrpc = opts.jsonrpc || '2.0';
    this.signal = opts.signal;
    this.onRetry = opts.onRetry || null;
    this.agent = new http.Agent({ keepAlive: true, maxSockets: opts.maxSockets || 8 });
    this.nextId = 1;
    this.closed = false;
    /** Counters, for logs, tests and benchmarks. */
    this.stats = { requests: 0, calls: 0, retries: 0, bytesIn: 0, bytesOut: 0 };
  }

  /**
   * One call.
   * @param {string} method
   * @param {Array<any>} [params=[]]
   * @param {{retryMs?: number, timeoutMs?: number, binary?: boolean, txidLists?: boolean}} [opts] per-call overrides;
   *   binary: strings of HEX_MIN or more hex digits in the reply come as Buffers (decoded);
   *   txidLists: arrays of txids come as TxidLists (txid-list.js)
   * @returns {Promise<any>} the result
   */
  async call(method, params = [], opts = {}) {
    const id = this.nextId++;
    const body = JSON.stringify({ jsonrpc: this.jsonrpc, id, method, params });
    const reply = await this._request(body, method, 1, opts, (parsed) => {
      if (!isReply(parsed) || (parsed.id !== id && !(parsed.error && parsed.id === null))) {
        throw protocolError(this, method, 'JSON that is not the JSON-RPC reply to it');
      }
      return parsed;
    });
    if (reply.error) throw RpcError.from(method, reply.error);
    return reply.result;
  }

  /**
   * Many calls in one HTTP request; the results in the order of `calls`. Rejects with the
   * first item's RpcError when any item fails (see batchSettled to keep the others).
   * @param {Array<RpcCall|[string, Array<any>?]>} calls
   * @param {{retryMs?: number, timeoutMs?: number, binary?: boolean, txidLists?: boolean}} [opts] as for call()
   * @returns {Promise<any[]>}
   */
  async batch(calls, opts) {
    const settled = await this.batchSettled(calls, opts);
    return settled.map((s) => {
      if (s.error) throw s.error;
      return s.result;
    });
  }

  /**
   * Many calls in one HTTP request; each item's result or JSON-RPC error, in order.
   * Transport failures, auth and protocol errors still reject the whole batch.
   * @param {Array<RpcCall|[string, Array<any>?]>} calls
   * @param {{retryMs?: number, timeoutMs?: number, binary?: boolean, txidLists?: boolean}} [opts] as for call()
   * @returns {Promise<Settled[]>}
   */
  async batchSettled(calls, opts = {}) {
    if (!calls.length) return [];
    const items = calls.map((c) => (Array.isArray(c) ? { method: c[0], params: c[1] || [] } : { method: c.method, params: c.params || [] }));
    const first = this.nextId;
    this.nextId += items.length;
    const body = JSON.stringify(items.map((c, i) => ({ jsonrpc: this.jsonrpc, id: first + i, method: c.method, params: c.params })));
    const what = batchName(items);
    const replies = await this._request(body, what, items.length, opts, (parsed) => {
      if (!Array.isArray(parsed)) {
        // a node that cannot read the batch answers with one error object
        if (parsed && parsed.error) throw RpcError.from(what, parsed.error);
        throw protocolError(this, what, 'a batch was not answered with an array');
      }
      const byIndex = new Array(items.length);
      for (const r of parsed) {
        const k = isReply(r) && Number.isInteger(r.id) ? r.id - first : -1;
        if (k < 0 || k >= items.length || byIndex[k]) throw protocolError(this, what, `a batch reply carries an unknown id ${r && r.id}`);
        byIndex[k] = r;
      }
      for (let k = 0; k < items.length; k++) {
        if (!byIndex[k]) throw protocolError(this, what, `the batch reply lacks the answer to item ${k} (${items[k].method})`);
      }
      return byIndex;
    });
    return replies.map((r, k) => (r.error ? { error: RpcError.from(items[k].method, r.error) } : { result: r.result }));
  }

  /**
   * Sends one request body, retrying what a restarting or busy node causes, and returns the
   * decoded reply (`check` validates its shape; warm-up errors inside it are retried too).
   */
  async _request(body, what, calls, opts, check) {
    const retryMs = opts.retryMs === undefined ? this.retryMs : opts.retryMs;
    const timeoutMs = opts.timeoutMs === undefined ? this.timeoutMs : opts.timeoutMs;
    const started = Date.now();
    let delay = 100;
    let fresh = false; // credentials read anew for this attempt
    for (let attempt = 1; ; attempt++) {
      this._checkOpen(what);
      let failure;
      try {
        const res = await this._post(body, timeoutMs, fresh);
        if (res.status === 401 && this.reloadable && !fresh) {
          fresh = true; // a cookie file rewritten by a node restart: read it once more
          attempt--;
          continue;
        }
        const reply = this._decode(res, what, check, opts);
        const warm = warmingUp(reply);
        if (!warm) {
          this.stats.calls += calls;
          return reply;
        }
        failure = new NodeError('ERR_NODE_UNAVAILABLE', `the node at ${this.display} is starting: ${warm}`, { retryable: true });
      } catch (err) {
        if (this.signal && this.signal.aborted) throw aborted(this, what);
        if (!isRetryable(err)) throw err;
        failure = err;
      }
      const left = retryMs - (Date.now() - started);
      if (left <= 0) throw unavailable(this, what, failure, Date.now() - started, attempt);
      const wait = Math.min(delay, left);
      this.stats.retries++;
      if (this.onRetry) this.onRetry({ error: failure, attempt, delayMs: wait, what });
      await this._sleep(wait, what);
      delay = Math.min(delay * 2, this.maxDelayMs);
      fresh = this.reloadable; // a node that restarted wrote a new cookie
    }
  }

  /** Turns an HTTP answer into the parsed JSON-RPC reply, or a typed error. */
  _decode(res, what, check, { binary, txidLists }) {
    if (res.status === 401 || res.status === 403) {
      throw new NodeError('ERR_NODE_AUTH', res.status === 401
        ? `the node at ${this.display} refused the credentials (HTTP 401): check USER:PASS in the RPC URL, or the cookie file`
        : `the node at ${this.display} refused this client (HTTP 403): check its rpcallowip / rpcwhitelist settings`,
      { status: res.status });
    }
    if (res.status === 503) {
      throw new NodeError('ERR_NODE_UNAVAILABLE', `the node at ${this.display} is busy (HTTP 503: work queue full or too many clients)`,
        { status: 503, retryable: true });
    }
    if (res.status === 502 || res.status === 504) {
      // a proxy in front of a node that is down or restarting
      throw new NodeError('ERR_NODE_UNAVAILABLE', `the proxy at ${this.display} cannot reach the node (HTTP ${res.status})`,
        { status: res.status, retryable: true });
    }
    let parsed;
    try {
      parsed = binary ? parseWithHex(res.body) : txidLists ? parseWithTxidLists(res.body) : JSON.parse(res.body.toString('utf8'));
    } catch {
      // A cut-off answer from a node going down parses no better than another server's page:
      // only a 200 is worth asking again.
      const sample = res.body.toString('utf8', 0, 80).replace(/\s+/g, ' ').trim();
      throw new NodeError('ERR_NODE_PROTOCOL',
        `the server at ${this.display} answered ${what} with HTTP ${res.status} and no JSON-RPC reply` +
        `${sample ? ` ("${sample}${res.body.length > 80 ? '…' : ''}")` : ''}: is this the node's RPC port?`,
        { status: res.status, retryable: res.status === 200 });
    }
    // Core answers JSON-RPC 1.0 errors with HTTP 500 or 404 and the error in the body
    return check(parsed);
  }

  /** One HTTP POST. Resolves with the status and the whole body. */
  _post(body, timeoutMs, reload) {
    let creds;
    try {
      creds = this.credentials(reload);
    } catch (err) {
      return Promise.reject(err);
    }
    const auth = `Basic ${Buffer.from(`${creds.user}:${creds.pass}`).toString('base64')}`;
    const payload = Buffer.from(body);
    this.stats.requests++;
    this.stats.bytesOut += payload.length;
    return new Promise((resolve, reject) => {
      const req = http.request({
        agent: this.agent, host: this.host, port: this.port, path: this.path, method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Content-Length': payload.length, Authorization: auth },
        signal: this.signal,
      }, (res) => {
        const chunks = [];
        let size = 0;
        res.on('data', (c) => {
          chunks.push(c);
          size += c.length;
        });
        res.on('end', () => {
          this.stats.bytesIn += size;
          resolve({ status: res.statusCode, body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size) });
        });
        res.on('error', reject);
        res.on('close', () => {
          // settles nothing when 'end' came first
          if (!res.complete) reject(Object.assign(new Error('the connection closed in the middle of the answer'), { code: 'ECONNRESET' }));
        });
      });
      // a silent connection, not a slow one: the timer restarts with every byte received
      req.setTimeout(timeoutMs, () => {
        req.destroy(Object.assign(new Error(`no answer for ${timeoutMs} ms`), { code: 'ETIMEDOUT' }));
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  _sleep(ms, what) {
    return new Promise((resolve, reject) => {
      const signal = this.signal;
      const timer = setTimeout(done, ms);
      function done() {
        if (signal) signal.removeEventListener('abort', onAbort);
        resolve();
      }
      const onAbort = () => {
        clearTimeout(timer);
        reject(aborted(this, what));
      };
      if (signal) signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  _checkOpen(what) {
    if (this.signal && this.signal.aborted) throw aborted(this, what);
    if (this.closed) throw new NodeError('ERR_NODE_UNAVAILABLE', `the RPC client for ${this.display} is closed (${what})`);
  }

  /** Closes idle connections; the client cannot be used afterwards. */
  close() {
    this.closed = true;
    this.agent.destroy();
  }
}

/** Hex strings at least this long (an 80-byte header's) are decoded by parseWithHex. */
const HEX_MIN = 160;

/**
 * JSON.parse for answers that are mostly hex (raw blocks, transactions): the long hex strings
 * are decoded straight from the response bytes into Buffers, and only the rest — a few
 * bytes per item — goes through JSON.parse. Nothing changes but the form of those strings:
 * they are found by walking the string boundaries (unescaped quotes, jumped to with indexOf),
 * and a string that is not all hex digits stays a string.
 * @param {Buffer} body
 * @returns {any}
 */
function parseWithHex(body) {
  const parts = [];
  const buffers = [];
  let copied = 0;
  for (let pos = 0; ;) {
    const open = body.indexOf(0x22, pos);
    if (open < 0) break;
    let close = open;
    for (;;) {
      close = body.indexOf(0x22, close + 1);
      if (close < 0) return JSON.parse(body.toString('utf8')); // unterminated: let JSON.parse say so
      let slashes = 0;
      while (body[close - 1 - slashes] === 0x5c) slashes++;
      if (slashes % 2 === 0) break;
    }
    if (close - open - 1 >= HEX_MIN) {
      const decoded = Buffer.from(body.toString('latin1', open + 1, close), 'hex');
      // Buffer.from stops at the first character that is not a hex digit
      if (decoded.length * 2 === close - open - 1) {
        parts.push(body.toString('utf8', copied, open + 1), `\\u0000${buffers.length}`);
        buffers.push(decoded);
        copied = close;
      }
    }
    pos = close + 1;
  }
  if (!buffers.length) return JSON.parse(body.toString('utf8'));
  parts.push(body.toString('utf8', copied));
  return JSON.parse(parts.join(''), (key, value) => (
    typeof value === 'string' && value.charCodeAt(0) === 0 && value.length > 1 ? buffers[Number(value.slice(1))] : value));
}

/** A JSON-RPC reply object: a result or an error (1.0 replies carry both keys, one null). */
function isReply(r) {
  return Boolean(r) && typeof r === 'object' && !Array.isArray(r) && ('result' in r || 'error' in r) && 'id' in r;
}

/** The warm-up message when a reply (or any batch item) says the node is still starting. */
function warmingUp(reply) {
  const list = Array.isArray(reply) ? reply : [reply];
  for (const r of list) if (r && r.error && r.error.code === RPC_IN_WARMUP) return r.error.message;
  return null;
}

function isRetryable(err) {
  if (err instanceof NodeError) return Boolean(err.details && err.details.retryable);
  if (err.name === 'AbortError') return false;
  return RETRY_SOCKET_CODES.has(err.code) || err.code === 'ECONNRESET' || /socket hang up/i.test(err.message);
}

function batchName(items) {
  const methods = [...new Set(items.map((c) => c.method))];
  return `a batch of ${items.length} ${methods.length === 1 ? methods[0] : methods.join('/')}`;
}

function protocolError(client, what, why) {
  return new NodeError('ERR_NODE_PROTOCOL', `the server at ${client.display} answered ${what} with ${why}`);
}

function aborted(client, what) {
  return new NodeError('ERR_ABORTED', `stopped waiting for the node at ${client.display} (${what})`);
}

function unavailable(client, what, cause, ms, attempts) {
  if (cause instanceof NodeError && cause.code === 'ERR_NODE_PROTOCOL') return cause;
  const why = cause instanceof NodeError || !cause.code || cause.message.includes(cause.code) ? cause.message : `${cause.code}: ${cause.message}`;
  const tried = attempts > 1 ? ` (${attempts} attempts over ${(ms / 1000).toFixed(1)} s)` : '';
  return new NodeError('ERR_NODE_UNAVAILABLE',
    `the node at ${client.display} did not answer ${what}${tried}: ${why}`,
    { cause: cause.code || cause.name, attempts });
}

module.exports = { RpcClient, parseWithHex, RPC_IN_WARMUP, HEX_MIN };
