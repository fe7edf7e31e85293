'use strict';

/**
 * CORS for browser explorers, off unless origins are configured (`serve --cors-origin`).
 *
 * `*` lets any page read the API (it is public, read-only and uses no cookies, so no
 * credentials mode is offered). A list of origins answers each listed origin with itself and
 * says `Vary: Origin`, so a shared cache keeps one copy per origin.
 */

/** Headers a browser page may read besides the CORS-safelisted ones. */
const EXPOSED = 'x-request-id, ratelimit-limit, ratelimit-remaining, ratelimit-reset, retry-after';
const METHODS = 'GET, HEAD, POST';
/** How long a browser may cache a preflight answer (seconds). */
const MAX_AGE = '600';

class Cors {
  /** @param {string[]} origins '*' or exact origins such as 'https://explorer.example' */
  constructor(origins) {
    this.any = origins.includes('*');
    this.origins = new Set(origins.filter((o) => o !== '*').map((o) => o.replace(/\/+$/, '')));
  }

  /**
   * Headers for an answer to a request from `origin` (its Origin header).
   * @param {string|undefined} origin
   * @returns {Record<string, string>}
   */
  headers(origin) {
    if (this.any) return { 'access-control-allow-origin': '*', 'access-control-expose-headers': EXPOSED };
    const h = { vary: 'Origin' };
    if (origin && this.origins.has(origin)) {
      h['access-control-allow-origin'] = origin;
      h['access-control-expose-headers'] = EXPOSED;
    }
    return h;
  }

  /**
   * The preflight answer's headers (OPTIONS with Access-Control-Request-Method).
   * @param {import('node:http').IncomingMessage} req
   * @returns {Record<string, string>}
   */
  preflight(req) {
    const h = this.headers(req.headers.origin);
    if (!h['access-control-allow-origin']) return h;
    h['access-control-allow-methods'] = METHODS;
    const asked = req.headers['access-control-request-headers'];
    if (asked) h['access-control-allow-headers'] = String(asked).slice(0, 1024);
    h['access-control-max-age'] = MAX_AGE;
    return h;
  }
}

/**
 * @param {import('node:http').IncomingMessage} req
 * @returns {boolean} a CORS preflight request
 */
function isPreflight(req) {
  return req.method === 'OPTIONS' && req.headers.origin !== undefined && req.headers['access-control-request-method'] !== undefined;
}

module.exports = { Cors, isPreflight };
