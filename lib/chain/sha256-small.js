'use strict';

/**
 * SHA-256 (FIPS 180-4) of short messages, written straight into a caller's buffer.
 *
 * Why not node:crypto: the sync hashes every output script (its Electrum script hash), and
 * almost all are 22-34 bytes. For inputs that small, a native digest costs ~0.9 µs here,
 * nearly all of it per-call overhead (digest lookup, context setup, a result Buffer); a
 * message of at most 55 bytes fits in one 64-byte block, and one compression in plain JS
 * costs ~0.35 µs with no allocation. Longer inputs go to node:crypto.
 * Checked against node:crypto for every length in test/chain/script.test.js.
 */

const { sha256 } = require('./hash');

/** The largest message that fits, with its padding and length, in a single block. */
const SINGLE_BLOCK_MAX = 55;

const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

const H0 = 0x6a09e667 | 0;
const H1 = 0xbb67ae85 | 0;
const H2 = 0x3c6ef372 | 0;
const H3 = 0xa54ff53a | 0;
const H4 = 0x510e527f | 0;
const H5 = 0x9b05688c | 0;
const H6 = 0x1f83d9ab | 0;
const H7 = 0x5be0cd19 | 0;

const W = new Int32Array(64);

function put32(out, at, v) {
  out[at] = v >>> 24;
  out[at + 1] = v >>> 16;
  out[at + 2] = v >>> 8;
  out[at + 3] = v;
}

/**
 * One padded block: the message, a 1 bit, zeros, and the bit length in the last word.
 * @param {Uint8Array} data at most 55 bytes
 */
function compressSingle(data, out, at) {
  const n = data.length;
  W.fill(0, 0, 16);
  for (let i = 0; i < n; i++) W[i >> 2] |= data[i] << (24 - 8 * (i & 3));
  W[n >> 2] |= 0x80 << (24 - 8 * (n & 3));
  W[15] = n * 8;
  for (let i = 16; i < 64; i++) {
    const x = W[i - 15];
    const y = W[i - 2];
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
    W[i] = (W[i - 16] + s0 + W[i - 7] + s1) | 0;
  }
  let a = H0; let b = H1; let c = H2; let d = H3;
  let e = H4; let f = H5; let g = H6; let h = H7;
  for (let i = 0; i < 64; i++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[i] + W[i]) | 0;
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g; g = f; f = e; e = (d + t1) | 0;
    d = c; c = b; b = a; a = (t1 + t2) | 0;
  }
  put32(out, at, (a + H0) | 0);
  put32(out, at + 4, (b + H1) | 0);
  put32(out, at + 8, (c + H2) | 0);
  put32(out, at + 12, (d + H3) | 0);
  put32(out, at + 16, (e + H4) | 0);
  put32(out, at + 20, (f + H5) | 0);
  put32(out, at + 24, (g + H6) | 0);
  put32(out, at + 28, (h + H7) | 0);
}

/**
 * Writes SHA-256(data) into out[at .. at+32).
 * @param {Uint8Array} data
 * @param {Uint8Array} out
 * @param {number} at
 */
function sha256Into(data, out, at) {
  if (data.length <= SINGLE_BLOCK_MAX) {
    compressSingle(data, out, at);
  } else {
    out.set(sha256(data), at);
  }
}

module.exports = { sha256Into, SINGLE_BLOCK_MAX };
