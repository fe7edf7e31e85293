'use strict';

const net = require('node:net');

/**
 * An optional per-client request limit, as insight-api shipped one: at most `limit` requests
 * per client in each fixed window of `windowMs`; past it, 429 until the window ends.
 *
 * Counts live in the worker process: with W workers a client spreading its requests over
 * several connections can get up to W x limit per window (one keep-alive connection stays on
 * one worker and gets exactly `limit`). Sharing counts through the primary would cost an IPC
 * round trip on every request; a hard global limit belongs in the proxy in front.
 *
 * Fixed windows keep one small entry per client seen in the current window and drop all of
 * them when it ends, so memory is bounded by the clients of one window.
 */
class RateLimiter {
  /**
   * @param {{limit: number, windowMs: number, trustProxy?: boolean, now?: () => number}} opts
   */
  constructor({ limit, windowMs, trustProxy = false, now = Date.now }) {
    if (!(Number.isInteger(limit) && limit > 0)) throw new TypeError('the rate limit must be a positive integer');
    if (!(Number.isInteger(windowMs) && windowMs > 0)) throw new TypeError('the rate window must be a positive number of ms');
    this.limit = limit;
    this.windowMs = windowMs;
    this.trustProxy = trustProxy;
    this.now = now;
    this.windowStart = 0;
    this.counts = new Map();
  }

  /**
   * Counts one request of `client`.
   * @param {string} client
   * @returns {{allowed: boolean, limit: number, remaining: number, resetS: number}}
   *   resetS: whole seconds until the window ends (what Retry-After says)
   */
  take(client) {
    const now = this.now();
    if (now - this.windowStart >= this.windowMs) {
      // windows are aligned to multiples of windowMs, so every worker's ends at the same time
      this.windowStart = now - (now % this.windowMs);
      this.counts.clear();
    }
    const n = (this.counts.get(client) || 0) + 1;
    this.counts.set(client, n);
    const resetS = Math.max(1, Math.ceil((this.windowStart + this.windowMs - now) / 1000));
    return { allowed: n <= this.limit, limit: this.limit, remaining: Math.max(0, this.limit - n), resetS };
  }

  /**
   * Who a request comes from: the peer's address, or with `trustProxy` the address the proxy
   * in front saw (the last X-Forwarded-For entry: the one the proxy appended itself; entries
   * before it are whatever the client claimed).
   * @param {import('node:http').IncomingMessage} req
   * @returns {string}
   */
  clientOf(req) {
    if (this.trustProxy) {
      const xff = req.headers['x-forwarded-for'];
      if (typeof xff === 'string') {
        const last = xff.slice(xff.lastIndexOf(',') + 1).trim();
        if (net.isIP(last)) return last;
      }
    }
    return req.socket.remoteAddress || 'unknown';
  }
}

module.exports = { RateLimiter };
