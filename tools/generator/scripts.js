'use strict';

const { fmix32 } = require('./rng');

/**
 * Output script kinds. A kind is finer than the public class (p2sh splits into the three
 * redeem scripts seen on chain) because each kind is spent with differently sized data.
 */
const KIND = Object.freeze({
  P2PKH: 0,
  P2SH_P2WPKH: 1,
  P2SH_MULTISIG: 2, // 2-of-3
  P2SH_P2WSH: 3, // 2-of-3 inside P2WSH
  P2WPKH: 4,
  P2WSH: 5, // 2-of-3
  P2TR: 6,
  P2PK_C: 7,
  P2PK_U: 8,
  MS_1OF2: 9,
  MS_1OF3: 10,
  NULLDATA: 11,
  COUNT: 12,
});

/** The public class of each kind (what the mix parameter and the stats count). */
const CLASS_OF = Object.freeze(['p2pkh', 'p2sh', 'p2sh', 'p2sh', 'p2wpkh', 'p2wsh', 'p2tr', 'p2pk', 'p2pk', 'multisig', 'multisig', 'nulldata']);
const CLASSES = Object.freeze(['p2wpkh', 'p2tr', 'p2pkh', 'p2sh', 'p2wsh', 'p2pk', 'multisig', 'nulldata']);

/** Whether spending the kind puts data in the witness (and so makes the tx BIP144-serialized). */
const WITNESS_SPEND = Uint8Array.from([0, 1, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0]);

const GOLDEN = 0x9e3779b9;

/**
 * Writes `len` pseudo-random bytes that are a pure function of (id, k, key). For k = 0 the
 * first 4 bytes are fmix32(id ^ key[0]), a bijection of the id: two script ids can never
 * produce the same hash, so "a new script" is new for sure.
 */
function putIdBytes(buf, p, id, k, key, len) {
  const w0 = fmix32(id ^ key[0]);
  let w = k === 0 ? w0 : fmix32(w0 ^ Math.imul(k, 0x61c88647) ^ key[1]);
  const end = p + len;
  for (let j = 1; ; j++) {
    buf[p] = w;
    buf[p + 1] = w >>> 8;
    buf[p + 2] = w >>> 16;
    buf[p + 3] = w >>> 24;
    p += 4;
    if (p >= end) break;
    w = fmix32((w + GOLDEN) ^ key[j & 3]);
  }
  return end;
}

/** A 33-byte compressed public key derived from the id (writes 02|03 + 32 bytes). */
function putIdPubkey(buf, p, id, k, key) {
  putIdBytes(buf, p + 1, id, k, key, 32);
  buf[p] = 2 | (buf[p + 32] & 1);
  return p + 33;
}

/**
 * Writes the scriptPubKey of script `id` (of `kind`), preceded by its length byte.
 * OP_RETURN outputs carry fresh random data (8-80 bytes) from `rng` instead.
 * @param {Buffer} buf
 * @param {number} p
 * @param {number} kind
 * @param {number} id
 * @param {Uint32Array} key per-chain script key (4 words)
 * @param {import('./rng').Rng} rng
 * @returns {number} position after the script
 */
function writeOutputScript(buf, p, kind, id, key, rng) {
  switch (kind) {
    case KIND.P2PKH:
      buf[p] = 25; buf[p + 1] = 0x76; buf[p + 2] = 0xa9; buf[p + 3] = 0x14;
      putIdBytes(buf, p + 4, id, 0, key, 20);
      buf[p + 24] = 0x88; buf[p + 25] = 0xac;
      return p + 26;
    case KIND.P2SH_P2WPKH:
    case KIND.P2SH_MULTISIG:
    case KIND.P2SH_P2WSH:
      buf[p] = 23; buf[p + 1] = 0xa9; buf[p + 2] = 0x14;
      putIdBytes(buf, p + 3, id, 0, key, 20);
      buf[p + 23] = 0x87;
      return p + 24;
    case KIND.P2WPKH:
      buf[p] = 22; buf[p + 1] = 0x00; buf[p + 2] = 0x14;
      return putIdBytes(buf, p + 3, id, 0, key, 20);
    case KIND.P2WSH:
      buf[p] = 34; buf[p + 1] = 0x00; buf[p + 2] = 0x20;
      return putIdBytes(buf, p + 3, id, 0, key, 32);
    case KIND.P2TR:
      buf[p] = 34; buf[p + 1] = 0x51; buf[p + 2] = 0x20;
      return putIdBytes(buf, p + 3, id, 0, key, 32);
    case KIND.P2PK_C:
      buf[p] = 35; buf[p + 1] = 0x21;
      putIdPubkey(buf, p + 2, id, 0, key);
      buf[p + 35] = 0xac;
      return p + 36;
    case KIND.P2PK_U:
      buf[p] = 67; buf[p + 1] = 0x41; buf[p + 2] = 0x04;
      putIdBytes(buf, p + 3, id, 0, key, 64);
      buf[p + 67] = 0xac;
      return p + 68;
    case KIND.MS_1OF2:
    case KIND.MS_1OF3: {
      const n = kind === KIND.MS_1OF2 ? 2 : 3;
      buf[p] = 3 + 34 * n;
      buf[p + 1] = 0x51;
      let q = p + 2;
      for (let k = 0; k < n; k++) {
        buf[q] = 0x21;
        q = putIdPubkey(buf, q + 1, id, k, key);
      }
      buf[q] = 0x50 + n;
      buf[q + 1] = 0xae;
      return q + 2;
    }
    case KIND.NULLDATA: {
      const len = 8 + rng.below(73);
      const push = len <= 75 ? 1 : 2;
      buf[p] = 1 + push + len;
      buf[p + 1] = 0x6a;
      if (push === 1) {
        buf[p + 2] = len;
      } else {
        buf[p + 2] = 0x4c;
        buf[p + 3] = len;
      }
      rng.fill(buf, p + 2 + push, len);
      return p + 2 + push + len;
    }
    default:
      throw new RangeError(`unknown script kind ${kind}`);
  }
}

/**
 * Writes a dummy DER ECDSA signature plus SIGHASH_ALL of realistic length: 71 bytes, or 72
 * when r has its top bit set (wallets without low-R grinding, `highR`). s is low-S.
 * Structure is valid DER; the numbers are random.
 */
function putSig(buf, p, rng, highR) {
  const rlen = highR ? 33 : 32;
  buf[p] = 0x30;
  buf[p + 1] = 4 + rlen + 32;
  buf[p + 2] = 0x02;
  buf[p + 3] = rlen;
  let q = p + 4;
  if (highR) {
    buf[q++] = 0;
    rng.fill(buf, q, 32);
    buf[q] |= 0x80;
  } else {
    rng.fill(buf, q, 32);
    buf[q] = (buf[q] & 0x7f) || 1;
  }
  q += 32;
  buf[q] = 0x02;
  buf[q + 1] = 32;
  rng.fill(buf, q + 2, 32);
  buf[q + 2] = (buf[q + 2] & 0x7f) || 1;
  buf[q + 34] = 0x01;
  return q + 35;
}

/** A random 33-byte compressed key. */
function putKey(buf, p, rng) {
  rng.fill(buf, p + 1, 32);
  buf[p] = 2 | (buf[p + 1] & 1);
  return p + 33;
}

/** A 2-of-3 multisig redeem/witness script (105 bytes) with random keys. */
function putMultisig2of3(buf, p, rng) {
  buf[p] = 0x52;
  let q = p + 1;
  for (let k = 0; k < 3; k++) {
    buf[q] = 0x21;
    q = putKey(buf, q + 1, rng);
  }
  buf[q] = 0x53;
  buf[q + 1] = 0xae;
  return q + 2;
}

/**
 * Writes the scriptSig (length byte + script) that spends an output of `kind`. The
 * signatures, keys and redeem scripts are dummies of real length: nothing checks them, and
 * the sizes are what an index sees on chain.
 * @returns {number} position after the scriptSig
 */
function writeScriptSig(buf, p, kind, rng, highRShare) {
  switch (kind) {
    case KIND.P2PKH: {
      const sig = rng.chance(highRShare) ? 72 : 71;
      buf[p] = sig + 35;
      buf[p + 1] = sig;
      const q = putSig(buf, p + 2, rng, sig === 72);
      buf[q] = 33;
      return putKey(buf, q + 1, rng);
    }
    case KIND.P2SH_P2WPKH:
      buf[p] = 23; buf[p + 1] = 22; buf[p + 2] = 0x00; buf[p + 3] = 0x14;
      rng.fill(buf, p + 4, 20);
      return p + 24;
    case KIND.P2SH_P2WSH:
      buf[p] = 35; buf[p + 1] = 34; buf[p + 2] = 0x00; buf[p + 3] = 0x20;
      rng.fill(buf, p + 4, 32);
      return p + 36;
    case KIND.P2SH_MULTISIG: {
      const s1 = rng.chance(highRShare) ? 72 : 71;
      const s2 = rng.chance(highRShare) ? 72 : 71;
      const len = 1 + (1 + s1) + (1 + s2) + 2 + 105;
      if (len < 0xfd) {
        buf[p++] = len;
      } else { // two high-R signatures: 254 bytes need the 3-byte CompactSize
        buf[p] = 0xfd;
        buf[p + 1] = len;
        buf[p + 2] = 0;
        p += 3;
      }
      buf[p] = 0x00; // CHECKMULTISIG's extra pop
      buf[p + 1] = s1;
      let q = putSig(buf, p + 2, rng, s1 === 72);
      buf[q] = s2;
      q = putSig(buf, q + 1, rng, s2 === 72);
      buf[q] = 0x4c; // OP_PUSHDATA1: the redeem script is over 75 bytes
      buf[q + 1] = 105;
      return putMultisig2of3(buf, q + 2, rng);
    }
    case KIND.P2PK_C:
    case KIND.P2PK_U: {
      const sig = rng.chance(highRShare) ? 72 : 71;
      buf[p] = sig + 1;
      buf[p + 1] = sig;
      return putSig(buf, p + 2, rng, sig === 72);
    }
    case KIND.MS_1OF2:
    case KIND.MS_1OF3: {
      const sig = rng.chance(highRShare) ? 72 : 71;
      buf[p] = sig + 2;
      buf[p + 1] = 0x00;
      buf[p + 2] = sig;
      return putSig(buf, p + 3, rng, sig === 72);
    }
    case KIND.P2WPKH:
    case KIND.P2WSH:
    case KIND.P2TR:
      buf[p] = 0;
      return p + 1;
    default:
      throw new RangeError(`kind ${kind} cannot be spent`);
  }
}

/**
 * Writes the witness (item count + items) for an input spending `kind`; an empty witness for
 * kinds spent by scriptSig alone (a segwit tx still has one witness per input).
 * @returns {number} position after the witness
 */
function writeWitness(buf, p, kind, rng, highRShare, scriptPathShare) {
  switch (kind) {
    case KIND.P2WPKH:
    case KIND.P2SH_P2WPKH: {
      const sig = rng.chance(highRShare) ? 72 : 71;
      buf[p] = 2;
      buf[p + 1] = sig;
      const q = putSig(buf, p + 2, rng, sig === 72);
      buf[q] = 33;
      return putKey(buf, q + 1, rng);
    }
    case KIND.P2WSH:
    case KIND.P2SH_P2WSH: {
      const s1 = rng.chance(highRShare) ? 72 : 71;
      const s2 = rng.chance(highRShare) ? 72 : 71;
      buf[p] = 4;
      buf[p + 1] = 0; // the empty item CHECKMULTISIG pops
      buf[p + 2] = s1;
      let q = putSig(buf, p + 3, rng, s1 === 72);
      buf[q] = s2;
      q = putSig(buf, q + 1, rng, s2 === 72);
      buf[q] = 105;
      return putMultisig2of3(buf, q + 1, rng);
    }
    case KIND.P2TR:
      if (rng.chance(scriptPathShare)) {
        // script path: signature, leaf script <key> OP_CHECKSIG, control block (one leaf)
        buf[p] = 3;
        buf[p + 1] = 64;
        rng.fill(buf, p + 2, 64);
        let q = p + 66;
        buf[q] = 34;
        buf[q + 1] = 0x20;
        rng.fill(buf, q + 2, 32);
        buf[q + 34] = 0xac;
        q += 35;
        buf[q] = 33;
        rng.fill(buf, q + 1, 33);
        buf[q + 1] = 0xc0 | (buf[q + 1] & 1);
        return q + 34;
      }
      // key path: one 64-byte Schnorr signature (SIGHASH_DEFAULT)
      buf[p] = 1;
      buf[p + 1] = 64;
      rng.fill(buf, p + 2, 64);
      return p + 66;
    default:
      buf[p] = 0;
      return p + 1;
  }
}

/**
 * Upper bound of the bytes one input takes (outpoint 36 + sequence 4 + scriptSig and witness
 * with their lengths; the largest, P2SH 2-of-3, is 255 + 1 and P2SH-P2WSH 36 + 255): used to
 * size buffers before writing.
 */
const MAX_INPUT_BYTES = 600;
/** Upper bound of one output: value 8 + length byte + the longest script (1-of-3, 105). */
const MAX_OUTPUT_BYTES = 8 + 1 + 105;

module.exports = {
  KIND, CLASS_OF, CLASSES, WITNESS_SPEND, MAX_INPUT_BYTES, MAX_OUTPUT_BYTES,
  writeOutputScript, writeScriptSig, writeWitness,
};
