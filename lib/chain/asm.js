'use strict';

/**
 * Script disassembly ("asm") in the two spellings the compatible APIs answer with. Each is a
 * pure function of the script bytes, written from the reference's source, and each keeps its
 * reference's behaviour on malformed scripts (a push running past the end), because such
 * scripts exist on chain and the reference servers print them.
 *
 * esploraAsm — rust-bitcoin 0.28's `Script` Debug form without its `Script(…)` wrapper, which is
 *   what Esplora prints (mempool/electrs `ScriptToAsm`, Blockstream electrs `get_script_asm`):
 *   every opcode named (`OP_PUSHBYTES_20 <hex>`, `OP_PUSHNUM_1`, `OP_CLTV`, `OP_CSV`,
 *   `OP_CHECKSIGADD`, `OP_RETURN_187`…`OP_RETURN_254` for opcodes without a name, `OP_0`);
 *   `<push past end>` and `<unexpected end>` where the bytes run out.
 *
 * coreAsm — Bitcoin Core 0.12.1's ScriptToAsmStr, which insight-api 0.4.3 answers with: it takes
 *   `scriptSig.asm` / `scriptPubKey.asm` from bitcore's bitcoind (a Core 0.12.1 fork) through
 *   bitcore-node 3.1's getDetailedTransaction, not from bitcore-lib. Pushes of up to 4 bytes
 *   print as decimal numbers, OP_0..OP_16 and OP_1NEGATE as `0`..`16` and `-1`, unnamed opcodes
 *   as `OP_UNKNOWN`, and a script that cannot be read further ends in `[error]`. With
 *   `sighash` (what Core does for a scriptSig) a push that is a strict DER signature with a
 *   defined hash type prints as `<hex of the DER part>[ALL]` (or `[NONE|ANYONECANPAY]`, …).
 */

const OP_PUSHDATA1 = 0x4c;
const OP_PUSHDATA2 = 0x4d;
const OP_PUSHDATA4 = 0x4e;
const OP_RETURN = 0x6a;

// Opcodes 0x61..0xaf, named alike by both references (without the OP_ prefix).
const SHARED = (
  'NOP VER IF NOTIF VERIF VERNOTIF ELSE ENDIF VERIFY RETURN TOALTSTACK FROMALTSTACK 2DROP 2DUP 3DUP ' +
  '2OVER 2ROT 2SWAP IFDUP DEPTH DROP DUP NIP OVER PICK ROLL ROT SWAP TUCK CAT SUBSTR LEFT RIGHT SIZE ' +
  'INVERT AND OR XOR EQUAL EQUALVERIFY RESERVED1 RESERVED2 1ADD 1SUB 2MUL 2DIV NEGATE ABS NOT 0NOTEQUAL ' +
  'ADD SUB MUL DIV MOD LSHIFT RSHIFT BOOLAND BOOLOR NUMEQUAL NUMEQUALVERIFY NUMNOTEQUAL LESSTHAN ' +
  'GREATERTHAN LESSTHANOREQUAL GREATERTHANOREQUAL MIN MAX WITHIN RIPEMD160 SHA1 SHA256 HASH160 HASH256 ' +
  'CODESEPARATOR CHECKSIG CHECKSIGVERIFY CHECKMULTISIG CHECKMULTISIGVERIFY'
).split(' ');

function nameTable(overrides) {
  const t = new Array(256);
  for (let i = 0; i < SHARED.length; i++) t[0x61 + i] = `OP_${SHARED[i]}`;
  t[0xb0] = 'OP_NOP1';
  for (let i = 0xb3; i <= 0xb9; i++) t[i] = `OP_NOP${i - 0xb0 + 1}`;
  t[0xff] = 'OP_INVALIDOPCODE';
  overrides(t);
  return t;
}

/** rust-bitcoin 0.28 `opcodes::All` Debug names. */
const RUST_NAMES = nameTable((t) => {
  t[0] = 'OP_0'; // bytes_to_asm_fmt special-cases it; Debug alone would say OP_PUSHBYTES_0
  for (let i = 1; i <= 75; i++) t[i] = `OP_PUSHBYTES_${i}`;
  t[OP_PUSHDATA1] = 'OP_PUSHDATA1';
  t[OP_PUSHDATA2] = 'OP_PUSHDATA2';
  t[OP_PUSHDATA4] = 'OP_PUSHDATA4';
  t[0x4f] = 'OP_PUSHNUM_NEG1';
  t[0x50] = 'OP_RESERVED';
  for (let i = 0x51; i <= 0x60; i++) t[i] = `OP_PUSHNUM_${i - 0x50}`;
  t[0xb1] = 'OP_CLTV';
  t[0xb2] = 'OP_CSV';
  t[0xba] = 'OP_CHECKSIGADD';
  for (let i = 0xbb; i <= 0xfe; i++) t[i] = `OP_RETURN_${i}`;
});

/** Bitcoin Core 0.12.1 GetOpName, for the opcodes that are not pushes. */
const CORE_NAMES = nameTable((t) => {
  t[0x4f] = '-1';
  t[0x50] = 'OP_RESERVED';
  for (let i = 0x51; i <= 0x60; i++) t[i] = String(i - 0x50);
  t[0xb1] = 'OP_CHECKLOCKTIMEVERIFY';
  t[0xb2] = 'OP_NOP3'; // 0.12.1 predates the OP_CHECKSEQUENCEVERIFY name
  for (let i = 0xba; i <= 0xfe; i++) t[i] = 'OP_UNKNOWN';
});

/**
 * Esplora's asm of a script (rust-bitcoin 0.28 `Script::bytes_to_asm`).
 * @param {Uint8Array} script
 * @param {string} [hex] the script's hex when the caller has it: pushes are cut from it
 *   instead of being encoded again
 * @returns {string}
 */
function esploraAsm(script, hex) {
  const n = script.length;
  const buf = Buffer.isBuffer(script) ? script : Buffer.from(script.buffer, script.byteOffset, n);
  let out = '';
  let pos = 0;
  while (pos < n) {
    const op = buf[pos++];
    let len = 0;
    if (op <= 75) {
      len = op;
    } else if (op === OP_PUSHDATA1 || op === OP_PUSHDATA2 || op === OP_PUSHDATA4) {
      const w = op === OP_PUSHDATA1 ? 1 : op === OP_PUSHDATA2 ? 2 : 4;
      // the reference writes this marker before the separator: it follows the last opcode directly
      if (n - pos < w) return `${out}<unexpected end>`;
      len = w === 1 ? buf[pos] : w === 2 ? buf.readUInt16LE(pos) : buf.readUInt32LE(pos);
      pos += w;
    }
    if (out.length) out += ' ';
    out += RUST_NAMES[op];
    if (len > 0) {
      if (len > n - pos) return `${out} <push past end>`;
      out += ` ${hex === undefined ? buf.toString('hex', pos, pos + len) : hex.slice(2 * pos, 2 * (pos + len))}`;
      pos += len;
    }
  }
  return out;
}

const SIGHASH_NAMES = ['', 'ALL', 'NONE', 'SINGLE'];

/**
 * insight's asm of a script (Bitcoin Core 0.12.1 ScriptToAsmStr).
 * @param {Uint8Array} script
 * @param {boolean} [sighash=false] decode signature hash types, as Core does for a scriptSig
 * @param {string} [hex] the script's hex when the caller has it (as for esploraAsm)
 * @returns {string}
 */
function coreAsm(script, sighash = false, hex = undefined) {
  const n = script.length;
  const buf = Buffer.isBuffer(script) ? script : Buffer.from(script.buffer, script.byteOffset, n);
  // Core never decodes inside a script that starts with OP_RETURN: data there may look like a signature
  const decode = sighash && !(n > 0 && buf[0] === OP_RETURN);
  let out = '';
  let pos = 0;
  while (pos < n) {
    if (out.length) out += ' ';
    const op = buf[pos++];
    if (op > OP_PUSHDATA4) {
      out += CORE_NAMES[op];
      continue;
    }
    let len = op;
    if (op >= OP_PUSHDATA1) {
      const w = op === OP_PUSHDATA1 ? 1 : op === OP_PUSHDATA2 ? 2 : 4;
      if (n - pos < w) return `${out}[error]`;
      len = w === 1 ? buf[pos] : w === 2 ? buf.readUInt16LE(pos) : buf.readUInt32LE(pos);
      pos += w;
    }
    if (n - pos < len) return `${out}[error]`;
    const start = pos;
    pos += len;
    if (len <= 4) {
      out += scriptNum(buf, start, len);
    } else if (decode && isStrictSignature(buf, start, len)) {
      const type = buf[pos - 1];
      const name = SIGHASH_NAMES[type & 0x7f] + (type & 0x80 ? '|ANYONECANPAY' : '');
      out += `${hex === undefined ? buf.toString('hex', start, pos - 1) : hex.slice(2 * start, 2 * pos - 2)}[${name}]`;
    } else {
      out += hex === undefined ? buf.toString('hex', start, pos) : hex.slice(2 * start, 2 * pos);
    }
  }
  return out;
}

/** CScriptNum of up to 4 bytes, minimal encoding not required: little-endian, sign bit on top. */
function scriptNum(buf, start, len) {
  if (len === 0) return '0';
  let v = 0;
  for (let i = 0; i < len; i++) v += buf[start + i] * 2 ** (8 * i);
  const top = buf[start + len - 1];
  if (top & 0x80) v = -(v - 0x80 * 2 ** (8 * (len - 1)));
  return String(v);
}

/**
 * Core's CheckSignatureEncoding under SCRIPT_VERIFY_STRICTENC: strict DER (BIP66) followed by a
 * defined hash type (ALL, NONE or SINGLE, with or without ANYONECANPAY).
 */
function isStrictSignature(buf, start, size) {
  if (size < 9 || size > 73) return false;
  const s = (i) => buf[start + i];
  if (s(0) !== 0x30 || s(1) !== size - 3) return false;
  const lenR = s(3);
  if (5 + lenR >= size) return false;
  const lenS = s(5 + lenR);
  if (lenR + lenS + 7 !== size) return false;
  if (s(2) !== 0x02 || lenR === 0 || (s(4) & 0x80)) return false;
  if (lenR > 1 && s(4) === 0x00 && !(s(5) & 0x80)) return false;
  if (s(lenR + 4) !== 0x02 || lenS === 0 || (s(lenR + 6) & 0x80)) return false;
  if (lenS > 1 && s(lenR + 6) === 0x00 && !(s(lenR + 7) & 0x80)) return false;
  const type = s(size - 1) & 0x7f;
  return type >= 1 && type <= 3;
}

module.exports = { esploraAsm, coreAsm };
