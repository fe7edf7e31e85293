'use strict';

const http = require('node:http');
const net = require('node:net');
const { addressScripthash } = require('../../../test/helpers/reference');

/**
 * The soak's readers: loops that ask a server about the watched addresses all the time and
 * keep every answer with what it claims (the tip it names) and when it was asked, for the
 * soak to check against the truth. They count what went wrong on the way: 5xx answers by
 * code, connections refused or cut (a server killed), and how long a reader waited for an
 * answer it could use (retries and a server's restart included).
 */

/** The longest a request may take before the reader gives up on it and counts it. */
const REQUEST_TIMEOUT_MS = 30000;

/** Counters every reader keeps. */
function newStats() {
  return {
    answered: 0, // answers recorded for checking
    moving: 0, // 503 ERR_INDEX_MOVING: allowed, retried
    fivexx: {}, // any other 5xx, by "status code"
    dropped: 0, // refused, reset or cut: the server or its worker was killed
    timeouts: 0,
    longestWaitMs: 0, // first attempt to a usable answer, retries included
    longestRequestMs: 0, // one request to its answer
  };
}

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

/** GET url → {status, body} (body parsed as JSON when it is). */
function getJson(url) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, headers: { 'Accept-Encoding': 'identity' } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body = text;
        try {
          body = JSON.parse(text);
        } catch {
          // an error page that is not JSON is kept as text
        }
        resolve({ status: res.statusCode, body });
      });
      res.on('error', reject);
    });
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
  });
}

/**
 * What both readers share: a loop that picks a watched address, asks until it gets an answer
 * it can use (counting what stood in the way), records it, and picks the next.
 * Subclasses implement ask(address): the record to keep, `{refused: true}` for an error
 * answer (counted by ask), or null while there is no server to ask.
 */
class Reader {
  /**
   * @param {object} opts
   * @param {string} opts.name
   * @param {string[]} opts.addresses
   * @param {() => number} opts.rng
   */
  constructor({ name, addresses, rng }) {
    Object.assign(this, { name, addresses, rng });
    this.stats = newStats();
    this.answers = [];
    this.stopped = false;
    this.done = null;
  }

  start() {
    this.done = this._loop();
    return this;
  }

  async stop() {
    this.stopped = true;
    this.onStop();
    await this.done;
  }

  /** Hands over the answers recorded since the last call. */
  take() {
    const a = this.answers;
    this.answers = [];
    return a;
  }

  onStop() {}

  /** A request failed without an answer (the connection is gone). */
  onDropped() {}

  async _loop() {
    while (!this.stopped) {
      const address = this.addresses[Math.floor(this.rng() * this.addresses.length)];
      const first = Date.now();
      while (!this.stopped) {
        const t0 = Date.now();
        let got = null;
        try {
          got = await this.ask(address);
        } catch (err) {
          if (this.stopped) return;
          if (err.code === 'ETIMEDOUT') this.stats.timeouts++;
          else this.stats.dropped++;
          this.onDropped();
        }
        const t1 = Date.now();
        if (got) this.stats.longestRequestMs = Math.max(this.stats.longestRequestMs, t1 - t0);
        if (got && !got.refused) {
          this.stats.answered++;
          this.stats.longestWaitMs = Math.max(this.stats.longestWaitMs, t1 - first);
          this.answers.push({ reader: this.name, address, ...got, at: t1 });
          break;
        }
        await sleep(20);
      }
    }
  }

  countRefusal(key) {
    this.stats.fivexx[key] = (this.stats.fivexx[key] || 0) + 1;
  }
}

/**
 * A REST reader: GET /api/v1/address/:a of a random watched address, again and again.
 * Each 200 answer is recorded as {address, tip, summary, at}.
 */
class RestReader extends Reader {
  /**
   * @param {object} opts
   * @param {string} opts.name
   * @param {() => string|null} opts.url the server's base URL now (null while it is down)
   * @param {string[]} opts.addresses
   * @param {() => number} opts.rng
   */
  constructor({ url, ...rest }) {
    super(rest);
    this.url = url;
  }

  async ask(address) {
    const base = this.url();
    if (!base) return null;
    const res = await getJson(`${base}/api/v1/address/${address}`);
    if (res.status === 200) return { tip: res.body.tip, summary: res.body };
    const code = res.body && res.body.error ? res.body.error.code : null;
    if (res.status === 503 && code === 'ERR_INDEX_MOVING') this.stats.moving++;
    else this.countRefusal(`${res.status} ${code || JSON.stringify(res.body).slice(0, 80)}`);
    return { refused: true };
  }
}

/**
 * An Electrum reader: one TCP connection (opened again when cut), asking
 * blockchain.scripthash.get_balance of a random watched address, again and again. Each answer
 * is recorded as {address, confirmed, at}; get_balance names no tip, so the soak checks that
 * the balance existed at some tip by then.
 */
class ElectrumReader extends Reader {
  /**
   * @param {object} opts
   * @param {string} opts.name
   * @param {() => number|null} opts.port
   * @param {string[]} opts.addresses
   * @param {() => number} opts.rng
   */
  constructor({ port, ...rest }) {
    super(rest);
    this.port = port;
    this.scripthashes = new Map(this.addresses.map((a) => [a, Buffer.from(addressScripthash(a)).reverse().toString('hex')]));
    this.socket = null;
    this.pending = new Map();
    this.nextId = 1;
  }

  onStop() {
    if (this.socket) this.socket.destroy();
  }

  onDropped() {
    if (this.socket) this.socket.destroy();
    this.socket = null;
  }

  async ask(address) {
    if (!this.socket) {
      const port = this.port();
      if (!port) return null;
      await this._connect(port);
      await this._call('server.version', ['addrindex-soak', '1.4']);
    }
    const msg = await this._call('blockchain.scripthash.get_balance', [this.scripthashes.get(address)]);
    if (!msg.error) return { confirmed: msg.result.confirmed };
    this.countRefusal(`electrum ${msg.error.code} ${String(msg.error.message).slice(0, 60)}`);
    return { refused: true };
  }

  _connect(port) {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      let partial = '';
      socket.setEncoding('utf8');
      socket.on('data', (d) => {
        const lines = (partial + d).split('\n');
        partial = lines.pop();
        for (const line of lines) {
          if (!line) continue;
          const msg = JSON.parse(line);
          const p = this.pending.get(msg.id);
          if (p) {
            this.pending.delete(msg.id);
            p.resolve(msg);
          }
        }
      });
      const fail = (err) => {
        for (const p of this.pending.values()) p.reject(err);
        this.pending.clear();
        if (this.socket === socket) this.socket = null;
      };
      socket.on('error', (err) => fail(err));
      socket.on('close', () => fail(Object.assign(new Error('closed'), { code: 'ECONNRESET' })));
      socket.once('connect', () => {
        this.socket = socket;
        resolve(socket);
      });
      socket.once('error', reject);
    });
  }

  _call(method, params) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' }));
      }, REQUEST_TIMEOUT_MS);
      this.pending.set(id, {
        resolve: (m) => { clearTimeout(timer); resolve(m); },
        reject: (e) => { clearTimeout(timer); reject(e); },
      });
      this.socket.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  }
}

module.exports = { RestReader, ElectrumReader, getJson };
