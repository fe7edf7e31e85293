'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { ApiError } = require('./errors');

/** Where insight-ui is served, and the API it is pointed at. */
const PREFIX = '/insight';
const API_PREFIX = '/insight-api';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.png': 'image/png',
  '.gif': 'image/gif',
  '.jpg': 'image/jpeg',
  '.ico': 'image/x-icon',
  '.svg': 'image/svg+xml',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.eot': 'application/vnd.ms-fontobject',
  '.otf': 'font/otf',
  '.mp3': 'audio/mpeg',
};

/**
 * insight-ui 0.4.0 (the npm package, a prebuilt AngularJS app: static files only) served at
 * /insight/ by `addrindex serve --explorer`, as its own bitcore-node service serves it: any
 * page a browser navigates to gets index.html (the app routes in the browser, HTML5 mode),
 * with its API prefix set to /insight-api and its base to /insight/; everything else is a
 * file of its `public/` folder. Files are read once and kept (about 10 MB).
 */
class Explorer {
  /** @param {{dir?: string}} [opts] dir: insight-ui's public folder (default: the dependency's) */
  constructor({ dir } = {}) {
    this.dir = dir || path.join(path.dirname(require.resolve('insight-ui/package.json')), 'public');
    /** @type {Map<string, Buffer>} relative path → bytes */
    this.files = new Map();
    this.index = null;
  }

  /** Whether a path is the explorer's. */
  owns(pathname) {
    return pathname === PREFIX || pathname.startsWith(`${PREFIX}/`);
  }

  /**
   * The answer to a GET or HEAD under /insight.
   * @param {import('node:http').IncomingMessage} req
   * @param {string} pathname still percent-encoded
   * @returns {import('./reply').Reply & {headers?: Record<string, string>}}
   */
  serve(req, pathname) {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      const err = new ApiError(405, 'ERR_METHOD_NOT_ALLOWED', `${PREFIX}/ answers GET, HEAD, not ${req.method}`);
      err.allowed = ['GET', 'HEAD'];
      throw err;
    }
    if (pathname === PREFIX) return { status: 301, type: null, body: Buffer.alloc(0), headers: { location: `${PREFIX}/` } };
    const accept = String(req.headers.accept || '');
    // insight-ui's rule: a page load (HTML accepted, not an XHR) is the app itself
    if (accept.includes('text/html') && req.headers['x-requested-with'] !== 'XMLHttpRequest') return this.page();
    let rel;
    try {
      // insight-ui asks `base.href + '/sound/…'`, a double slash, which Express's static files take
      rel = decodeURIComponent(pathname.slice(PREFIX.length + 1)).replace(/^\/+/, '');
    } catch {
      throw new ApiError(400, 'ERR_BAD_PATH', 'the path holds malformed percent-encoding');
    }
    if (rel === '' || rel === 'index.html') return this.page();
    const body = this.file(rel);
    if (!body) throw new ApiError(404, 'ERR_NOT_FOUND', `insight-ui has no file ${rel.slice(0, 100)}`);
    const type = TYPES[path.extname(rel).toLowerCase()] || 'application/octet-stream';
    return { status: 200, type, body, headers: { 'cache-control': 'public, max-age=3600' } };
  }

  /** index.html with the API prefix and base this server uses (insight-ui's own substitutions). */
  page() {
    if (!this.index) {
      const html = fs.readFileSync(path.join(this.dir, 'index.html'), 'utf8')
        .replace(/apiPrefix = '\/api'/, `apiPrefix = '${API_PREFIX}'`)
        .replace(/<base href="\/"/, `<base href="${PREFIX}/"`);
      this.index = Buffer.from(html);
    }
    return { status: 200, type: TYPES['.html'], body: this.index, headers: { 'cache-control': 'no-cache' } };
  }

  /** A file of the public folder, or null; never one outside it. */
  file(rel) {
    if (this.files.has(rel)) return this.files.get(rel);
    const full = path.resolve(this.dir, rel);
    let body = null;
    if (full.startsWith(this.dir + path.sep) && !rel.includes('\0')) {
      try {
        if (fs.statSync(full).isFile()) body = fs.readFileSync(full);
      } catch {
        body = null;
      }
    }
    // only files are kept: paths that name none are not remembered (any client can make up those)
    if (body) this.files.set(rel, body);
    return body;
  }
}

module.exports = { Explorer, PREFIX, API_PREFIX };
