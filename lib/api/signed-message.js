'use strict';

/**
 * Bitcoin's signed messages (Bitcoin Core's `verifymessage`, bitcore-message's `verify`, what
 * insight-api's POST /messages/verify answers): a 65-byte compact signature, base64, over
 * sha256d("\x18Bitcoin Signed Message:\n" + varint(len) + message). Its first byte says which
 * of the candidate keys signed (recovery id) and whether the key is compressed; the key is
 * recovered from the signature and its P2PKH address compared with the one given.
 *
 * Recovery needs elliptic-curve arithmetic that node:crypto does not expose, so it is written
 * here over BigInt (Jacobian coordinates): a verification costs a few milliseconds, which an
 * explorer's "verify message" form can afford. Public data only: nothing here is secret, so
 * nothing needs to run in constant time.
 */

const { sha256d, hash160 } = require('../chain/hash');
const { base58Address, decodeAddress } = require('../chain/address');
const { getNetwork } = require('../chain/networks');
const { AddrIndexError } = require('../errors');

const P = 0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2fn;
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const G = [
  0x79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798n,
  0x483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8n,
];
const MAGIC = Buffer.from('\x18Bitcoin Signed Message:\n', 'latin1');

const mod = (a, m = P) => ((a % m) + m) % m;

function inverse(a, m = P) {
  let [r0, r1, s0, s1] = [mod(a, m), m, 1n, 0n];
  while (r1) {
    const q = r0 / r1;
    [r0, r1] = [r1, r0 - q * r1];
    [s0, s1] = [s1, s0 - q * s1];
  }
  return mod(s0, m);
}

function powMod(b, e, m = P) {
  let r = 1n;
  b = mod(b, m);
  while (e > 0n) {
    if (e & 1n) r = (r * b) % m;
    b = (b * b) % m;
    e >>= 1n;
  }
  return r;
}

// Jacobian points [X, Y, Z]; Z = 0 is the point at infinity
const INF = [0n, 1n, 0n];

function double([x, y, z]) {
  if (z === 0n || y === 0n) return INF;
  const yy = (y * y) % P;
  const s = (4n * x * yy) % P;
  const m = (3n * x * x) % P;
  const x3 = mod(m * m - 2n * s);
  return [x3, mod(m * (s - x3) - 8n * yy * yy), (2n * y * z) % P];
}

function add(a, b) {
  if (a[2] === 0n) return b;
  if (b[2] === 0n) return a;
  const z1z1 = (a[2] * a[2]) % P;
  const z2z2 = (b[2] * b[2]) % P;
  const u1 = (a[0] * z2z2) % P;
  const u2 = (b[0] * z1z1) % P;
  const s1 = (a[1] * b[2] * z2z2) % P;
  const s2 = (b[1] * a[2] * z1z1) % P;
  if (u1 === u2) return s1 === s2 ? double(a) : INF;
  const h = mod(u2 - u1);
  const r = mod(s2 - s1);
  const hh = (h * h) % P;
  const hhh = (h * hh) % P;
  const x3 = mod(r * r - hhh - 2n * u1 * hh);
  return [x3, mod(r * (u1 * hh - x3) - s1 * hhh), (a[2] * b[2] * h) % P];
}

function multiply(point, k) {
  let r = INF;
  let q = point;
  while (k > 0n) {
    if (k & 1n) r = add(r, q);
    q = double(q);
    k >>= 1n;
  }
  return r;
}

function affine([x, y, z]) {
  if (z === 0n) return null;
  const zi = inverse(z);
  const zi2 = (zi * zi) % P;
  return [(x * zi2) % P, (y * zi2 * zi) % P];
}

function toBytes(n) {
  return Buffer.from(n.toString(16).padStart(64, '0'), 'hex');
}

/**
 * The digest a message is signed over.
 * @param {string} message
 * @returns {Buffer}
 */
function messageHash(message) {
  const body = Buffer.from(message, 'utf8');
  const len = body.length;
  let varint;
  if (len < 0xfd) varint = Buffer.from([len]);
  else if (len <= 0xffff) varint = Buffer.from([0xfd, len & 0xff, len >> 8]);
  else {
    varint = Buffer.alloc(5);
    varint[0] = 0xfe;
    varint.writeUInt32LE(len, 1);
  }
  return sha256d(Buffer.concat([MAGIC, varint, body]));
}

/**
 * The public key a compact signature recovers for a digest, or null when it recovers none.
 * @param {Buffer} digest 32 bytes
 * @param {Buffer} sig 65 bytes: header, r, s
 * @returns {Buffer|null} the key in the form the header names (33 or 65 bytes)
 */
function recoverKey(digest, sig) {
  const header = sig[0];
  if (header < 27 || header > 34) return null;
  const recid = (header - 27) & 3;
  const compressed = header >= 31;
  const r = BigInt(`0x${sig.subarray(1, 33).toString('hex')}`);
  const s = BigInt(`0x${sig.subarray(33, 65).toString('hex')}`);
  if (r === 0n || r >= N || s === 0n || s >= N) return null;
  const x = r + BigInt(recid >> 1) * N;
  if (x >= P) return null;
  // R: the curve point with this x and the parity of y the recovery id names
  const alpha = mod(x * x * x + 7n);
  let y = powMod(alpha, (P + 1n) / 4n);
  if ((y * y) % P !== alpha) return null;
  if ((y & 1n) !== BigInt(recid & 1)) y = P - y;
  const e = BigInt(`0x${digest.toString('hex')}`) % N;
  const ri = inverse(r, N);
  // Q = r⁻¹ (sR − eG)
  const sR = multiply([x, y, 1n], s);
  const eG = multiply([G[0], G[1], 1n], mod(-e, N));
  const q = affine(multiply(add(sR, eG), ri));
  if (!q) return null;
  if (compressed) return Buffer.concat([Buffer.from([q[1] & 1n ? 3 : 2]), toBytes(q[0])]);
  return Buffer.concat([Buffer.from([4]), toBytes(q[0]), toBytes(q[1])]);
}

/**
 * Whether `signature` signs `message` with the key of P2PKH `address`.
 * @param {string} address a P2PKH address of `network`
 * @param {string} signature base64 of a 65-byte compact signature
 * @param {string} message
 * @param {string|import('../chain/networks').Network} network
 * @returns {boolean}
 * @throws {import('../errors').AddressError} an address that is not one of this network
 * @throws {AddrIndexError} ERR_BAD_SIGNATURE: a signature that is not 65 bytes of base64
 */
function verifyMessage(address, signature, message, network) {
  const net = getNetwork(network);
  decodeAddress(address, net.name); // throws with a code for a mistyped or foreign address
  const sig = Buffer.from(signature, 'base64');
  if (sig.length !== 65 || sig.toString('base64') !== signature.replace(/\s/g, '')) {
    throw new AddrIndexError('ERR_BAD_SIGNATURE', 'the signature is not 65 bytes in base64 (a compact signature, as Bitcoin Core\'s signmessage gives it)');
  }
  const key = recoverKey(messageHash(message), sig);
  return key !== null && base58Address(net.p2pkh, hash160(key)) === address;
}

module.exports = { verifyMessage, messageHash, recoverKey };
