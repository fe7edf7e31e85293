'use strict';

const { LineFramer } = require('./framing');
const { parseLine, resultText, errorText, notificationText } = require('./jsonrpc');
const { bindParams } = require('./params');
const { negotiate } = require('./version');
const { RPC, RpcError, badRequest } = require('./errors');
const { METHODS } = require('./methods');
const { AddrIndexError } = require('../errors');

/** Answers written as one group at most, when requests are pipelined. */
const CORK_LINES = 64;

/** Marks the place of an oversized line in the queue: answered in turn, then the connection closes. */
const OVERSIZED = Symbol('oversized');

/**
 * One client connection (TCP or TLS): lines in, answers out, in order. Lines are answered
 * one after another (the calls of a batch together); what the client sends meanwhile waits
 * in a queue, and the socket is paused while the queue is long. Every write first checks the
 * client's unread backlog: above the bound the client has stopped reading and is dropped.
 */
class Session {
  /**
   * @param {import('node:net').Socket} socket
   * @param {import('./server').ElectrumApp} app
   */
  constructor(socket, app) {
    this.socket = socket;
    this.app = app;
    this.limits = app.limits;
    this.framer = new LineFramer(this.limits.maxLineBytes);
    /** @type {Array<Buffer|symbol>} */
    this.queue = [];
    this.queuedBytes = 0;
    this.oversized = false;
    this.busy = false;
    this.paused = false;
    this.closed = false;
    this.protocolErrors = 0;
    /** negotiated protocol version; 1.4 until server.version says otherwise */
    this.version = '1.4';
    this.versionSeen = false;
    this.clientName = '';
    /** @type {Set<string>} script hashes (hex) this session is subscribed to */
    this.subs = new Set();
    this.headersSubscribed = false;
    this.ctx = { app, session: this };
    socket.setNoDelay(true);
    // the timer restarts with every read or write: a subscribed client that hears notifications stays
    socket.setTimeout(this.limits.idleMs, () => this.destroy());
    socket.on('data', (chunk) => this.onData(chunk));
    socket.on('error', () => {}); // 'close' follows; a reset client is nobody else's problem
    socket.on('close', () => this.onClose());
  }

  get remote() {
    return `${this.socket.remoteAddress}:${this.socket.remotePort}`;
  }

  onData(chunk) {
    if (this.closed) return;
    const { lines, oversized } = this.framer.push(chunk);
    for (const line of lines) {
      this.queue.push(line);
      this.queuedBytes += line.length;
    }
    if (oversized) {
      this.oversized = true;
      this.queue.push(OVERSIZED);
      this.socket.pause(); // nothing after it is read
      this.paused = true;
    } else if (!this.paused && this.backlogged()) {
      this.socket.pause();
      this.paused = true;
    }
    this.pump();
  }

  backlogged() {
    return this.queue.length > this.limits.maxPendingLines || this.queuedBytes > this.limits.maxPendingBytes;
  }

  async pump() {
    if (this.busy) return;
    this.busy = true;
    // answers to pipelined requests leave in groups (one write call for many small answers)
    let corked = 0;
    try {
      while (this.queue.length && !this.closed) {
        if (corked === 0) this.socket.cork();
        if (++corked === CORK_LINES) {
          corked = 0;
          this.socket.uncork();
        }
        const line = this.queue.shift();
        if (line === OVERSIZED) {
          this.send(errorText(null, new RpcError(RPC.INVALID_REQUEST,
            `request too large: a line of more than ${this.limits.maxLineBytes} bytes; closing the connection`)));
          this.end();
          return;
        }
        this.queuedBytes -= line.length;
        await this.handleLine(line);
        if (this.paused && !this.closed && !this.oversized && this.queue.length <= this.limits.maxPendingLines >> 1
          && this.queuedBytes <= this.limits.maxPendingBytes >> 1) {
          this.paused = false;
          this.socket.resume();
        }
      }
    } finally {
      if (corked) this.socket.uncork();
      this.busy = false;
    }
  }

  /** @param {Buffer} line */
  async handleLine(line) {
    let parsed;
    try {
      parsed = parseLine(line, this.limits.maxBatch);
    } catch (err) {
      this.protocolError(err);
      return;
    }
    if (!parsed.batch) {
      const out = await this.answer(parsed.calls[0]);
      if (out !== null) this.send(out);
      return;
    }
    // One after another, with a budget: the answers of one batch (a thousand histories, say)
    // could otherwise grow without bound before the send bound sees any of them.
    const parts = [];
    let size = 0;
    for (const call of parsed.calls) {
      const out = size > this.limits.maxSendBytes && !call.notification
        ? errorText(call.id, badRequest(`batch answer too large: its answers pass ${this.limits.maxSendBytes} bytes; ask for fewer at a time`))
        : await this.answer(call);
      if (out === null) continue;
      parts.push(out);
      size += out.length;
    }
    if (parts.length) this.send(`[${parts.join(',')}]`);
  }

  /**
   * @param {import('./jsonrpc').Call} call
   * @returns {Promise<string|null>} the response text, null for a notification
   */
  async answer(call) {
    if (call.error) {
      // counted like unparsable lines: a client sending nothing but these is cut off too
      if (++this.protocolErrors > this.limits.maxProtocolErrors) setImmediate(() => this.end());
      return errorText(call.id, call.error);
    }
    // a notification asks for no answer, and the protocol defines none a client sends
    if (call.notification) return null;
    const method = METHODS.get(call.method);
    if (!method) return errorText(call.id, new RpcError(RPC.METHOD_NOT_FOUND, `unknown method "${shorten(call.method)}"`));
    try {
      const args = bindParams(call.method, method.params, call.params, method.ignoreExtra);
      const result = await method.handler(this.ctx, ...args);
      return resultText(call.id, result);
    } catch (err) {
      const e = this.toRpcError(err, call.method);
      if (e.disconnect) setImmediate(() => this.end());
      return errorText(call.id, e);
    }
  }

  toRpcError(err, method) {
    if (err instanceof RpcError) return err;
    if (err instanceof AddrIndexError && err.code === 'ERR_INDEX_MOVING') {
      return new RpcError(RPC.INTERNAL_ERROR, 'the index is committing new blocks faster than this answer could be read; retry');
    }
    if (err instanceof AddrIndexError && err.code === 'ERR_MEMPOOL_VIEW_GONE') {
      // the mempool snapshot this answer began with was replaced too long ago (lib/core/mempool.js)
      return new RpcError(RPC.INTERNAL_ERROR, 'the answer outlived the mempool snapshot it began with; retry');
    }
    if (err instanceof AddrIndexError && (err.code === 'ERR_STORE_CLOSED' || err.code === 'ERR_CLOSED')) {
      return new RpcError(RPC.INTERNAL_ERROR, 'the server is shutting down; retry');
    }
    this.app.log(`electrum: ${method} from ${this.remote}: ${err && err.stack ? err.stack : err}`);
    return new RpcError(RPC.INTERNAL_ERROR, 'internal error (logged by the server)');
  }

  /** server.version: once per connection; a version it cannot speak ends the connection. */
  negotiate(clientName, requested, serverVersion) {
    if (this.versionSeen) throw badRequest('server.version already sent');
    this.versionSeen = true;
    this.clientName = typeof clientName === 'string' ? clientName.slice(0, 100) : '';
    const got = negotiate(requested);
    if (got.error) throw badRequest(got.error, { disconnect: true });
    this.version = got.version;
    return [serverVersion, got.version];
  }

  protocolError(err) {
    this.protocolErrors++;
    this.send(errorText(null, err));
    if (this.protocolErrors > this.limits.maxProtocolErrors) {
      this.send(errorText(null, new RpcError(RPC.INVALID_REQUEST,
        `more than ${this.limits.maxProtocolErrors} malformed messages; closing the connection`)));
      this.end();
    }
  }

  /**
   * Queues one message. A client whose unread backlog is over the bound has stopped reading:
   * it is disconnected rather than buffered for.
   * @param {string} text one line of JSON
   */
  send(text) {
    if (this.closed) return;
    if (this.socket.writableLength > this.limits.maxSendBytes) {
      this.app.log(`electrum: dropping ${this.remote}: more than ${this.limits.maxSendBytes} bytes of answers unread`);
      this.app.stats.dropped++;
      this.destroy();
      return;
    }
    this.socket.write(`${text}\n`);
  }

  /** @param {string} method @param {unknown[]} params */
  notify(method, params) {
    this.send(notificationText(method, params));
  }

  /** Closes after what is queued has been written. */
  end() {
    if (this.closed) return;
    this.closed = true;
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.socket.end();
  }

  destroy() {
    this.closed = true;
    this.queue.length = 0;
    this.socket.destroy();
  }

  onClose() {
    this.closed = true;
    this.queue.length = 0;
    this.app.removeSession(this);
  }
}

function shorten(s) {
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

module.exports = { Session };
