'use strict';

/**
 * scriptPubKey classification and the index key of an output.
 *
 * The patterns follow Bitcoin Core's Solver (src/script/solver.cpp), so a script gets the
 * type Core would give it, with two deliberate differences:
 *  - nulldata: every script whose first byte is OP_RETURN. Core calls it nulldata only when
 *    the rest is push-only, but any such script is provably unspendable and Core keeps none
 *    of them in its UTXO set, so none of them is indexed.
 *  - Core's pay-to-anchor (OP_1 <0x4e73>) is a v1 witness program of 2 bytes and is reported
 *    as witness_unknown, which is what it is byte-wise; its address is bc1pfeessrawgf.
 *
 * Decisions a reader may look for:
 *  - P2PK accepts the key sizes/prefixes Core's CPubKey::ValidSize accepts: 33 bytes with
 *    02/03, 65 bytes with 04 or the hybrid 06/07. Like Core's Solver it does not check that
 *    the point is on the curve (bitcore-lib does; an off-curve key can never sign, but the
 *    output exists and its value is somewhere, so it is still counted under its key's hash).
 *    The key's hash is hash160 of the bytes as written, so a hybrid key maps to a P2PKH
 *    address of its own, as it did in Core's ExtractDestination.
 *  - Witness programs (OP_0..OP_16 then one push of 2..40 bytes): v0 with 20 or 32 bytes is
 *    p2wpkh/p2wsh, v1 with 32 is p2tr; v0 of any other length is nonstandard (no address:
 *    BIP173 forbids encoding it); v1 of another length and v2..v16 are witness_unknown and
 *    do have a bech32m address (BIP350).
 *  - Bare multisig follows Core's MatchMultisig: m and n are OP_1..OP_16 or a minimal push
 *    of 17..20, 1 <= m <= n <= 20, n keys of a valid size (any push opcode), then
 *    OP_CHECKMULTISIG. A key of another size makes the script nonstandard.
 */

const { hash160 } = require('./hash');
const { sha256Into } = require('./sha256-small');

const OP_0 = 0x00;
const OP_PUSHDATA1 = 0x4c;
const OP_PUSHDATA2 = 0x4d;
const OP_PUSHDATA4 = 0x4e;
const OP_1 = 0x51;
const OP_16 = 0x60;
const OP_RETURN = 0x6a;
const OP_DUP = 0x76;
const OP_EQUAL = 0x87;
const OP_EQUALVERIFY = 0x88;
const OP_HASH160 = 0xa9;
const OP_CHECKSIG = 0xac;
const OP_CHECKMULTISIG = 0xae;

/** Numeric code of an identity kind, as stored in BlockColumns.idType (0 = not indexed). */
const ADDR_TYPE_CODE = Object.freeze({ p2pkh: 1, p2sh: 2, p2wpkh: 3, p2wsh: 4, p2tr: 5, witness: 6, script: 7 });

/**
 * @typedef {object} ScriptClass
 * @property {'p2pkh'|'p2sh'|'p2wpkh'|'p2wsh'|'p2tr'|'p2pk'|'multisig'|'nulldata'|'witness_unknown'|'nonstandard'} type
 * @property {'p2pkh'|'p2sh'|'p2wpkh'|'p2wsh'|'p2tr'|'witness'|'script'|null} addrType
 *   identity kind: p2pk counts as p2pkh; 'witness' = witness_unknown (bech32m address);
 *   'script' = multisig and nonstandard (script hash only); null = not indexed (nulldata)
 * @property {Buffer|null} hash 20 bytes (p2pkh, p2sh, p2wpkh; hash160 of the key for p2pk) or
 *   32 bytes (p2wsh, p2tr), a view into the script except for p2pk; null for the other kinds
 */

// Results without a hash are the same for every script of their kind: shared and frozen,
// so the hot path allocates nothing for them.
const NULLDATA = Object.freeze({ type: 'nulldata', addrType: null, hash: null });
const NONSTANDARD = Object.freeze({ type: 'nonstandard', addrType: 'script', hash: null });
const MULTISIG = Object.freeze({ type: 'multisig', addrType: 'script', hash: null });
const WITNESS_UNKNOWN = Object.freeze({ type: 'witness_unknown', addrType: 'witness', hash: null });

/**
 * Classifies a scriptPubKey. A pure function of the bytes; runs for every output during sync,
 * so the common types cost one small object and one view, and nothing is hashed except for P2PK.
 * @param {Buffer} s scriptPubKey
 * @returns {ScriptClass}
 */
function classify(s) {
  const n = s.length;
  if (n === 25) {
    if (s[0] === OP_DUP && s[1] === OP_HASH160 && s[2] === 20 && s[23] === OP_EQUALVERIFY && s[24] === OP_CHECKSIG) {
      return { type: 'p2pkh', addrType: 'p2pkh', hash: s.subarray(3, 23) };
    }
  } else if (n === 23) {
    if (s[0] === OP_HASH160 && s[1] === 20 && s[22] === OP_EQUAL) {
      return { type: 'p2sh', addrType: 'p2sh', hash: s.subarray(2, 22) };
    }
  }
  if (n >= 4 && n <= 42 && s[1] + 2 === n) {
    const v = s[0];
    if (v === OP_0) {
      if (n === 22) return { type: 'p2wpkh', addrType: 'p2wpkh', hash: s.subarray(2) };
      if (n === 34) return { type: 'p2wsh', addrType: 'p2wsh', hash: s.subarray(2) };
      return NONSTANDARD;
    }
    if (v >= OP_1 && v <= OP_16) {
      if (v === OP_1 && n === 34) return { type: 'p2tr', addrType: 'p2tr', hash: s.subarray(2) };
      return WITNESS_UNKNOWN;
    }
  }
  if (n === 0) return NONSTANDARD;
  if (s[0] === OP_RETURN) return NULLDATA;
  if (n === 35) {
    if (s[0] === 33 && s[34] === OP_CHECKSIG && (s[1] === 2 || s[1] === 3)) {
      return { type: 'p2pk', addrType: 'p2pkh', hash: hash160(s.subarray(1, 34)) };
    }
  } else if (n === 67) {
    if (s[0] === 65 && s[66] === OP_CHECKSIG && (s[1] === 4 || s[1] === 6 || s[1] === 7)) {
      return { type: 'p2pk', addrType: 'p2pkh', hash: hash160(s.subarray(1, 66)) };
    }
  }
  if (s[n - 1] === OP_CHECKMULTISIG && isMultisig(s)) return MULTISIG;
  return NONSTANDARD;
}

// Position of the data and of the next opcode after the last readOp(): module state instead
// of a returned object, so the multisig matcher allocates nothing.
let opData = 0;
let opLen = 0;
let opNext = 0;

/**
 * Reads one opcode at `pos` the way Core's GetScriptOp does.
 * @returns {number} the opcode, or -1 at the end of the script or when a push runs past it
 */
function readOp(s, pos) {
  if (pos >= s.length) return -1;
  const op = s[pos];
  let at = pos + 1;
  let len = 0;
  if (op < OP_PUSHDATA1) {
    len = op;
  } else if (op === OP_PUSHDATA1) {
    if (at + 1 > s.length) return -1;
    len = s[at];
    at += 1;
  } else if (op === OP_PUSHDATA2) {
    if (at + 2 > s.length) return -1;
    len = s[at] | (s[at + 1] << 8);
    at += 2;
  } else if (op === OP_PUSHDATA4) {
    if (at + 4 > s.length) return -1;
    len = (s[at] | (s[at + 1] << 8) | (s[at + 2] << 16)) + s[at + 3] * 0x1000000;
    at += 4;
  }
  if (at + len > s.length) return -1;
  opData = at;
  opLen = len;
  opNext = at + len;
  return op;
}

/**
 * The key-count number of the last read op (Core's GetScriptNumber for 1..20): OP_1..OP_16,
 * or the only minimal push of 17..20, a one-byte push. 0 when it is neither.
 */
function opNumber(s, op) {
  if (op >= OP_1 && op <= OP_16) return op - OP_1 + 1;
  if (op === 1 && s[opData] >= 17 && s[opData] <= 20) return s[opData];
  return 0;
}

/** CPubKey::ValidSize on the last read push. */
function pushIsKey(s) {
  if (opLen === 33) return s[opData] === 2 || s[opData] === 3;
  if (opLen === 65) return s[opData] === 4 || s[opData] === 6 || s[opData] === 7;
  return false;
}

/** Core's MatchMultisig; the caller has checked that the last byte is OP_CHECKMULTISIG. */
function isMultisig(s) {
  let op = readOp(s, 0);
  const m = op < 0 ? 0 : opNumber(s, op);
  if (m === 0) return false;
  let keys = 0;
  for (;;) {
    op = readOp(s, opNext);
    if (op < 0) return false;
    if (op > OP_PUSHDATA4 || !pushIsKey(s)) break;
    keys++;
  }
  const n = opNumber(s, op);
  return n >= m && n === keys && opNext === s.length - 1;
}

const P2PKH_TEMPLATE = Buffer.from('76a914000000000000000000000000000000000000000088ac', 'hex');
const P2PKH_SCRATCH = Buffer.from(P2PKH_TEMPLATE);

/**
 * The index key of an output: its Electrum script hash, sha256 of the canonical script, in
 * internal byte order. P2PK outputs are keyed as the P2PKH script of their key's hash, so they
 * share rows with that address; OP_RETURN outputs have no key.
 * @param {Buffer} script scriptPubKey
 * @param {ScriptClass} [c=classify(script)] pass it when already at hand, to classify once
 * @returns {Buffer|null} 32 bytes, or null for nulldata
 */
function outputScripthash(script, c = classify(script)) {
  const out = Buffer.allocUnsafe(32);
  return writeOutputScripthash(script, c, out, 0) ? out : null;
}

/**
 * outputScripthash() written into a caller's buffer: the sync's form, one call per output
 * with no allocation.
 * @param {Buffer} script
 * @param {ScriptClass} c classify(script)
 * @param {Uint8Array} out
 * @param {number} at where the 32 bytes go
 * @returns {boolean} false (and nothing written) for nulldata
 */
function writeOutputScripthash(script, c, out, at) {
  if (c.addrType === null) return false;
  if (c.type === 'p2pk') {
    P2PKH_SCRATCH.set(c.hash, 3);
    sha256Into(P2PKH_SCRATCH, out, at);
  } else {
    sha256Into(script, out, at);
  }
  return true;
}

/**
 * An output's own script hash (sha256 of the script as written, internal order) when it is not
 * its index key: only P2PK outputs, whose index key is their key's P2PKH script. Electrum finds
 * an output under its own script hash; the index keeps a P2PK script's own account beside the
 * P2PKH account it counts toward (docs/FORMAT.md, "Two views").
 * @param {Buffer} script
 * @param {ScriptClass} [c=classify(script)]
 * @returns {Buffer|null} 32 bytes, or null when the own script hash is the index key
 */
function p2pkScripthash(script, c = classify(script)) {
  if (c.type !== 'p2pk') return null;
  const out = Buffer.allocUnsafe(32);
  sha256Into(script, out, 0);
  return out;
}

/**
 * @param {Uint8Array} hash 20-byte key hash
 * @returns {Buffer} OP_DUP OP_HASH160 <hash> OP_EQUALVERIFY OP_CHECKSIG
 */
function p2pkhScript(hash) {
  const s = Buffer.from(P2PKH_TEMPLATE);
  s.set(hash, 3);
  return s;
}

/**
 * @param {Uint8Array} hash 20-byte script hash
 * @returns {Buffer} OP_HASH160 <hash> OP_EQUAL
 */
function p2shScript(hash) {
  const s = Buffer.alloc(23);
  s[0] = OP_HASH160;
  s[1] = 20;
  s.set(hash, 2);
  s[22] = OP_EQUAL;
  return s;
}

/**
 * @param {number} version 0..16
 * @param {Uint8Array} program 2..40 bytes
 * @returns {Buffer} OP_version <program>
 */
function witnessScript(version, program) {
  const s = Buffer.alloc(2 + program.length);
  s[0] = version === 0 ? OP_0 : OP_1 + version - 1;
  s[1] = program.length;
  s.set(program, 2);
  return s;
}

/**
 * Witness version of a witness-program script (classify says p2wpkh, p2wsh, p2tr or
 * witness_unknown).
 * @param {Buffer} script
 * @returns {number} 0..16
 */
function witnessVersion(script) {
  return script[0] === OP_0 ? 0 : script[0] - OP_1 + 1;
}

module.exports = {
  classify, outputScripthash, writeOutputScripthash, p2pkScripthash, ADDR_TYPE_CODE,
  p2pkhScript, p2shScript, witnessScript, witnessVersion,
};
