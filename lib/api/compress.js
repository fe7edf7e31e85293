'use strict';

const zlib = require('node:zlib');

/**
 * Compressed answers: the seed's threshold-and-flag idea over HTTP. Answers of at least
 * `minBytes` (default 1 KiB) go out gzip- or brotli-encoded when the client's Accept-Encoding
 * allows it, and the Content-Encoding header is the flag; smaller ones go out as they are,
 * since a few hundred bytes of JSON save little and cost a compressor call each.
 *
 * Levels come from bench/compression.js on the merged-history answer (500 KB of JSON: keys
 * repeated per entry around hex txids, which no codec takes below half): brotli quality 1
 * and gzip level 3 sit at the knee, where more effort stops buying bytes. Brotli q1 is 2.8x
 * smaller for ~2 ms of CPU per 500 KB, q4 5 % smaller again for 3x the CPU, q11 (brotli's
 * default) 20 % smaller for 400x; gzip level 3 costs two thirds of zlib's default (6) for 2 %
 * more bytes. Compression runs on libuv's thread pool, off the event loop.
 */

const DEFAULTS = Object.freeze({ minBytes: 1024, encodings: ['br', 'gzip'] });
const LEVELS = Object.freeze({
  br: { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1, [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT } },
  gzip: { level: 3 },
});
const ENCODINGS = Object.freeze(['br', 'gzip']);

/**
 * The encoding to answer with: the client's most preferred (highest q) among `offered`,
 * ties going to the order of `offered`; null when only identity is acceptable to both.
 * `*` stands for any encoding the header does not name; q=0 refuses.
 * @param {string|undefined} header the request's Accept-Encoding
 * @param {string[]} offered encodings the server may use, preferred first
 * @returns {string|null}
 */
function negotiate(header, offered) {
  if (!header || !offered.length) return null;
  const q = new Map();
  for (const part of header.split(',')) {
    const [token, ...params] = part.trim().toLowerCase().split(';');
    if (!token) continue;
    let weight = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/.exec(p);
      if (m) weight = Number(m[1]);
    }
    if (Number.isFinite(weight)) q.set(token === 'x-gzip' ? 'gzip' : token, weight);
  }
  let best = null;
  let bestQ = 0;
  for (const enc of offered) {
    const w = q.has(enc) ? q.get(enc) : q.has('*') ? q.get('*') : 0;
    if (w > bestQ) {
      best = enc;
      bestQ = w;
    }
  }
  return best;
}

/**
 * Compresses a body on the thread pool.
 * @param {Buffer} body
 * @param {'br'|'gzip'} encoding
 * @returns {Promise<Buffer>}
 */
function compress(body, encoding) {
  // One output buffer the size of the input (most answers shrink): with zlib's default 16 KiB
  // a 500 KB answer takes ~30 thread-pool round trips, which cost a third more CPU than the
  // compression itself (the merged-history answer, brotli q1: 3.6 ms of CPU, 2.5 ms so).
  const chunkSize = Math.max(16384, Math.min(body.length, 1 << 20));
  return new Promise((resolve, reject) => {
    const done = (err, out) => (err ? reject(err) : resolve(out));
    if (encoding === 'br') zlib.brotliCompress(body, { ...LEVELS.br, chunkSize }, done);
    else zlib.gzip(body, { ...LEVELS.gzip, chunkSize }, done);
  });
}

/**
 * Validated compression settings.
 * @param {{minBytes?: number, encodings?: string[]}} [opts] encodings [] turns compression off
 * @returns {{minBytes: number, encodings: string[]}}
 */
function compressionConfig(opts = {}) {
  const encodings = opts.encodings || DEFAULTS.encodings;
  for (const e of encodings) if (!ENCODINGS.includes(e)) throw new TypeError(`unknown content encoding "${e}"`);
  return { minBytes: opts.minBytes === undefined ? DEFAULTS.minBytes : opts.minBytes, encodings };
}

module.exports = { negotiate, compress, compressionConfig, DEFAULTS, LEVELS, ENCODINGS };
