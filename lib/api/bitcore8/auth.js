'use strict';

const crypto = require('node:crypto');

/**
 * The request signatures of bitcore-node v8's wallet routes, checked as bitcore-node checks
 * them (its utils/auth.ts): the message is `METHOD|URL|BODY` — the method, the URL as the
 * client sent it (path and query, still percent-encoded), and JSON.stringify of the parsed
 * body (`{}` for a request without one, as express's body parser leaves it) — hashed with
 * double SHA-256, and the `x-signature` header is a 64-byte compact ECDSA signature (r‖s, hex)
 * of that hash by the wallet's registered secp256k1 key. libsecp256k1, which bitcore-node
 * calls, takes only low-S signatures; so does this. Node's crypto (OpenSSL) does the curve
 * arithmetic: no secp256k1 package.
 */

/** The curve order n, and n/2: an S above it is refused (BIP62's low-S rule, libsecp256k1's). */
const N = BigInt('0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141');
const HALF_N = N >> 1n;

/** DER prefixes of an SPKI holding a secp256k1 point, compressed (33 bytes) or not (65). */
const SPKI_PREFIX = {
  33: Buffer.from('3036301006072a8648ce3d020106052b8104000a032200', 'hex'),
  65: Buffer.from('3056301006072a8648ce3d020106052b8104000a034200', 'hex'),
};

/** Parsed keys by their hex (a wallet's key is checked on every request it signs). */
const keys = new Map();
const MAX_KEYS = 10000;

/**
 * The message a request signs.
 * @param {string} method
 * @param {string} url path and query as sent
 * @param {unknown} body the parsed body (undefined: none)
 * @returns {string}
 */
function signedMessage(method, url, body) {
  return [method, url, JSON.stringify(body === undefined ? {} : body)].join('|');
}

/**
 * Whether `signatureHex` signs `message` with the key `pubKeyHex`. Anything malformed (not a
 * key on the curve, not a 64-byte signature, a high S) is simply not a valid signature.
 * @param {string} message
 * @param {string} pubKeyHex a compressed or uncompressed public key, hex
 * @param {unknown} signatureHex the x-signature header
 * @returns {boolean}
 */
function verifySignature(message, pubKeyHex, signatureHex) {
  if (typeof signatureHex !== 'string') return false;
  const sig = Buffer.from(signatureHex, 'hex');
  if (sig.length !== 64) return false;
  const r = BigInt(`0x${sig.toString('hex', 0, 32)}`);
  const s = BigInt(`0x${sig.toString('hex', 32, 64)}`);
  if (r === 0n || r >= N || s === 0n || s > HALF_N) return false;
  const key = publicKey(pubKeyHex);
  if (!key) return false;
  // ECDSA over sha256(sha256(message)): node hashes what it is given once more
  const once = crypto.createHash('sha256').update(message, 'utf8').digest();
  try {
    return crypto.verify('sha256', once, { key, dsaEncoding: 'ieee-p1363' }, sig);
  } catch {
    return false;
  }
}

/** @returns {crypto.KeyObject|null} null: not a secp256k1 public key */
function publicKey(hex) {
  if (typeof hex !== 'string') return null;
  let key = keys.get(hex);
  if (key !== undefined) return key;
  key = null;
  const raw = /^[0-9a-fA-F]+$/.test(hex) ? Buffer.from(hex, 'hex') : null;
  const prefix = raw && SPKI_PREFIX[raw.length];
  const first = raw && raw[0];
  if (prefix && ((raw.length === 33 && (first === 2 || first === 3)) || (raw.length === 65 && first === 4))) {
    try {
      key = crypto.createPublicKey({ key: Buffer.concat([prefix, raw]), format: 'der', type: 'spki' });
    } catch {
      key = null; // not a point of the curve
    }
  }
  if (keys.size >= MAX_KEYS) keys.clear();
  keys.set(hex, key);
  return key;
}

module.exports = { signedMessage, verifySignature };
