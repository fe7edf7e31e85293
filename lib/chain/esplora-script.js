'use strict';

/**
 * Output scripts as Esplora names them: `scriptpubkey_type`, `scriptpubkey_address` and the
 * `inner_redeemscript` / `inner_witnessscript` of an input. Written from mempool/electrs
 * (src/rest.rs `TxOutValue::new`, src/util/script.rs `get_innerscripts`), the newest Esplora
 * source readable here, over rust-bitcoin 0.28's Script predicates and `Address::from_script`.
 *
 * These differ on purpose from lib/chain/script.js, which classifies the way Bitcoin Core does
 * for the index: Esplora's p2pk checks the push length and OP_CHECKSIG but not the key's
 * first byte; its bare multisig is mempool.space's loose `OP_m … OP_n OP_CHECKMULTISIG`
 * shape with keys unchecked; and every witness program has an address, a version 0 program
 * of an odd length included (rust-bitcoin 0.28 encodes it; BIP173 would not).
 *
 * Bare multisig is `multisig`, as mempool.space answers, not Blockstream's `unknown`: the
 * Blockstream electrs source available here (2021) predates taproot and names neither
 * `v1_p2tr` nor `anchor`, so the one complete and readable reference for today's type list is
 * mempool's, and a client given `multisig` loses nothing a client given `unknown` had.
 */

const { getNetwork } = require('./networks');
const { base58Address, segwitAddress } = require('./address');

const OP_0 = 0x00;
const OP_PUSHDATA1 = 0x4c;
const OP_PUSHDATA2 = 0x4d;
const OP_PUSHDATA4 = 0x4e;
const OP_1 = 0x51;
const OP_15 = 0x5f;
const OP_16 = 0x60;
const OP_RETURN = 0x6a;
const OP_CHECKSIG = 0xac;
const OP_CHECKMULTISIG = 0xae;

// First bytes that make a script provably unspendable for rust-bitcoin (opcodes classified as
// ReturnOp or IllegalOp in a legacy script): OP_RESERVED, OP_VER, OP_VERIF, OP_VERNOTIF, the
// disabled splice/bitwise/arithmetic opcodes, OP_RESERVED1/2, and 0xba..0xff.
const UNSPENDABLE_FIRST = new Uint8Array(256);
for (const op of [0x50, 0x62, 0x65, 0x66, 0x7e, 0x7f, 0x80, 0x81, 0x83, 0x84, 0x85, 0x86, 0x89, 0x8a,
  0x8d, 0x8e, 0x95, 0x96, 0x97, 0x98, 0x99]) UNSPENDABLE_FIRST[op] = 1;
for (let op = 0xba; op <= 0xff; op++) UNSPENDABLE_FIRST[op] = 1;

const isP2pkh = (s) => s.length === 25 && s[0] === 0x76 && s[1] === 0xa9 && s[2] === 20 && s[23] === 0x88 && s[24] === OP_CHECKSIG;
const isP2sh = (s) => s.length === 23 && s[0] === 0xa9 && s[1] === 20 && s[22] === 0x87;
const isV0Wpkh = (s) => s.length === 22 && s[0] === OP_0 && s[1] === 20;
const isV0Wsh = (s) => s.length === 34 && s[0] === OP_0 && s[1] === 32;
const isV1Tr = (s) => s.length === 34 && s[0] === OP_1 && s[1] === 32;

/** rust-bitcoin's is_witness_program: a version opcode, then one push of 2..40 bytes, nothing else. */
function isWitnessProgram(s) {
  const n = s.length;
  if (n < 4 || n > 42) return false;
  const v = s[0];
  return (v === OP_0 || (v >= OP_1 && v <= OP_16)) && s[1] >= 2 && s[1] <= 40 && n - 2 === s[1];
}

/**
 * Esplora's `scriptpubkey_type`.
 * @param {Uint8Array} s scriptPubKey
 * @returns {'empty'|'op_return'|'p2pk'|'p2pkh'|'p2sh'|'v0_p2wpkh'|'v0_p2wsh'|'v1_p2tr'|'anchor'|'provably_unspendable'|'multisig'|'unknown'}
 */
function esploraType(s) {
  const n = s.length;
  if (n === 0) return 'empty';
  if (s[0] === OP_RETURN) return 'op_return';
  if ((n === 67 && s[0] === 65 && s[66] === OP_CHECKSIG) || (n === 35 && s[0] === 33 && s[34] === OP_CHECKSIG)) return 'p2pk';
  if (isP2pkh(s)) return 'p2pkh';
  if (isP2sh(s)) return 'p2sh';
  if (isV0Wpkh(s)) return 'v0_p2wpkh';
  if (isV0Wsh(s)) return 'v0_p2wsh';
  if (isV1Tr(s)) return 'v1_p2tr';
  if (n === 4 && s[0] === OP_1 && s[1] === 2 && s[2] === 0x4e && s[3] === 0x73) return 'anchor';
  if (UNSPENDABLE_FIRST[s[0]]) return 'provably_unspendable';
  if (n >= 37 && s[n - 1] === OP_CHECKMULTISIG && s[n - 2] >= OP_1 && s[n - 2] <= OP_15 && s[0] >= OP_1 && s[0] <= s[n - 2]) {
    return 'multisig';
  }
  return 'unknown';
}

/**
 * Esplora's `scriptpubkey_address` (rust-bitcoin 0.28 `Address::from_script`): P2PKH, P2SH and
 * every witness program; null for everything else, P2PK included.
 * @param {Uint8Array} s scriptPubKey
 * @param {string|import('./networks').Network} network
 * @returns {string|null}
 */
function esploraAddress(s, network) {
  const net = getNetwork(network);
  if (isP2pkh(s)) return base58Address(net.p2pkh, s.subarray(3, 23));
  if (isP2sh(s)) return base58Address(net.p2sh, s.subarray(2, 22));
  if (isWitnessProgram(s)) return segwitAddress(net.hrp, s[0] === OP_0 ? 0 : s[0] - OP_1 + 1, s.subarray(2));
  return null;
}

/**
 * The last instruction of a script when it is a push (rust-bitcoin `instructions().last()`
 * matching `Ok(PushBytes)`): the redeemScript of a P2SH spend. null when the script is empty,
 * ends in an opcode, or cannot be read to its end.
 * @param {Uint8Array} s
 * @returns {Buffer|null}
 */
function lastPush(s) {
  const buf = Buffer.isBuffer(s) ? s : Buffer.from(s.buffer, s.byteOffset, s.length);
  let last = null;
  let pos = 0;
  while (pos < buf.length) {
    const op = buf[pos];
    let len;
    let at;
    if (op <= 75) {
      len = op;
      at = pos + 1;
    } else if (op === OP_PUSHDATA1 || op === OP_PUSHDATA2 || op === OP_PUSHDATA4) {
      const w = op === OP_PUSHDATA1 ? 1 : op === OP_PUSHDATA2 ? 2 : 4;
      if (buf.length - pos - 1 < w) return null;
      len = w === 1 ? buf[pos + 1] : w === 2 ? buf.readUInt16LE(pos + 1) : buf.readUInt32LE(pos + 1);
      at = pos + 1 + w;
    } else {
      last = null;
      pos++;
      continue;
    }
    if (buf.length - at < len) return null;
    last = buf.subarray(at, at + len);
    pos = at + len;
  }
  return last;
}

/**
 * The scripts an input reveals about the output it spends (Esplora's `inner_redeemscript_asm`
 * and `inner_witnessscript_asm`): the redeemScript of a P2SH spend; the witnessScript of a
 * P2WSH or P2SH-P2WSH spend (the last witness item); the tapscript of a P2TR script-path spend
 * (the item before the control block, an annex skipped). mempool/electrs `get_innerscripts`.
 * @param {Uint8Array} prevScript the spent output's scriptPubKey
 * @param {Uint8Array} scriptSig
 * @param {Buffer[]} witness
 * @returns {{redeem: Buffer|null, witness: Buffer|null}}
 */
function innerScripts(prevScript, scriptSig, witness) {
  const redeem = isP2sh(prevScript) ? lastPush(scriptSig) : null;
  let inner = null;
  const taproot = isV1Tr(prevScript);
  if (isV0Wsh(prevScript) || taproot || (redeem !== null && isV0Wsh(redeem))) {
    const n = witness.length;
    if (taproot) {
      if (n > 0) {
        const last = witness[n - 1];
        const back = n >= 2 && last.length > 0 && last[0] === 0x50 ? 3 : 2;
        if (n >= back) inner = witness[n - back];
      }
    } else if (n > 0) {
      inner = witness[n - 1];
    }
  }
  return { redeem, witness: inner };
}

module.exports = { esploraType, esploraAddress, innerScripts, isWitnessProgram };
