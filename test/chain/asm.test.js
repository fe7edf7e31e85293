'use strict';

const assert = require('node:assert/strict');
const bitcore = require('bitcore-lib');
const { esploraAsm, coreAsm } = require('../../lib/chain/asm');
const { parseTransaction } = require('../../lib/chain/tx');
const { referenceBlocks } = require('../helpers/reference');

const h = (hex) => Buffer.from(hex, 'hex');

// rust-bitcoin 0.28.0 src/blockdata/script.rs, test `script_asm`: what Esplora prints.
const RUST_VECTORS = [
  ['6363636363686868686800', 'OP_IF OP_IF OP_IF OP_IF OP_IF OP_ENDIF OP_ENDIF OP_ENDIF OP_ENDIF OP_ENDIF OP_0'],
  ['2102715e91d37d239dea832f1460e91e368115d8ca6cc23a7da966795abad9e3b699ac',
    'OP_PUSHBYTES_33 02715e91d37d239dea832f1460e91e368115d8ca6cc23a7da966795abad9e3b699 OP_CHECKSIG'],
  ['0047304402202457e78cc1b7f50d0543863c27de75d07982bde8359b9e3316adec0aec165f2f02200203fd331c4e4a4a02f48cf1c291e2c0d6b2f7078a784b5b3649fca41f8794d401004cf1552103244e602b46755f24327142a0517288cebd159eccb6ccf41ea6edf1f601e9af952103bbbacc302d19d29dbfa62d23f37944ae19853cf260c745c2bea739c95328fcb721039227e83246bd51140fe93538b2301c9048be82ef2fb3c7fc5d78426ed6f609ad210229bf310c379b90033e2ecb07f77ecf9b8d59acb623ab7be25a0caed539e2e6472103703e2ed676936f10b3ce9149fa2d4a32060fb86fa9a70a4efe3f21d7ab90611921031e9b7c6022400a6bb0424bbcde14cff6c016b91ee3803926f3440abf5c146d05210334667f975f55a8455d515a2ef1c94fdfa3315f12319a14515d2a13d82831f62f57ae',
    'OP_0 OP_PUSHBYTES_71 304402202457e78cc1b7f50d0543863c27de75d07982bde8359b9e3316adec0aec165f2f02200203fd331c4e4a4a02f48cf1c291e2c0d6b2f7078a784b5b3649fca41f8794d401 OP_0 OP_PUSHDATA1 552103244e602b46755f24327142a0517288cebd159eccb6ccf41ea6edf1f601e9af952103bbbacc302d19d29dbfa62d23f37944ae19853cf260c745c2bea739c95328fcb721039227e83246bd51140fe93538b2301c9048be82ef2fb3c7fc5d78426ed6f609ad210229bf310c379b90033e2ecb07f77ecf9b8d59acb623ab7be25a0caed539e2e6472103703e2ed676936f10b3ce9149fa2d4a32060fb86fa9a70a4efe3f21d7ab90611921031e9b7c6022400a6bb0424bbcde14cff6c016b91ee3803926f3440abf5c146d05210334667f975f55a8455d515a2ef1c94fdfa3315f12319a14515d2a13d82831f62f57ae'],
  ['01', 'OP_PUSHBYTES_1 <push past end>'],
  ['0201', 'OP_PUSHBYTES_2 <push past end>'],
  ['4c', '<unexpected end>'],
  ['4c0201', 'OP_PUSHDATA1 <push past end>'],
  ['4d', '<unexpected end>'],
  ['4dffff01', 'OP_PUSHDATA2 <push past end>'],
  ['4effffffff01', 'OP_PUSHDATA4 <push past end>'],
];

// Bitcoin Core 0.12.1 qa/rpc-tests/decodescript.py (bitpay's v0.12.1-bitcore-4 tree): what
// insight-api 0.4.3 shows through bitcore's bitcoind.
const SIG = '304502207fa7a6d1e0ee81132a269ad84e68d695483745cde8b541e3bf630749894e342a022100c1f7ab20e13e22fb95281a870f3dcf38d782e53023ee313d741ad0cfbc0c509001';
const PUB = '03b0da749730dc9b4b1f4a14d6902877a92541f5368778853d9c4a0cb7802dcfb2';
const PKH = '11695b6cd891484c2d49ec5aa738ec2b2f897777';
const IMPOSTER = '48304502207fa7a6d1e0ee81132a269ad84e68d695483745cde8b541e3bf630749894e342a022100c1f7ab20e13e22fb95281a870f3dcf38d782e53023ee313d741ad0cfbc0c509001';
const DECODESCRIPT = [
  [`48${SIG}`, SIG],
  [`48${SIG}21${PUB}`, `${SIG} ${PUB}`],
  [`0048${SIG}48${SIG}`, `0 ${SIG} ${SIG}`],
  ['5100', '1 0'],
  [`21${PUB}ac`, `${PUB} OP_CHECKSIG`],
  [`76a914${PKH}88ac`, `OP_DUP OP_HASH160 ${PKH} OP_EQUALVERIFY OP_CHECKSIG`],
  [`5221${PUB}21${PUB}21${PUB}53ae`, `2 ${PUB} ${PUB} ${PUB} 3 OP_CHECKMULTISIG`],
  [`a914${PKH}87`, `OP_HASH160 ${PKH} OP_EQUAL`],
  [`6a${IMPOSTER}`, `OP_RETURN ${IMPOSTER.slice(2)}`],
  [`6321${PUB}ad670320a107b1756821${PUB}ac`,
    `OP_IF ${PUB} OP_CHECKSIGVERIFY OP_ELSE 500000 OP_CHECKLOCKTIMEVERIFY OP_DROP OP_ENDIF ${PUB} OP_CHECKSIG`],
];
// decoderawtransaction cases of the same file: scriptSigs, with the sighash type decoded.
const TX_P2PKH = '0100000001696a20784a2c70143f634e95227dbdfdf0ecd51647052e70854512235f5986ca010000008a47304402207174775824bec6c2700023309a168231ec80b82c6069282f5133e6f11cbb04460220570edc55c7c5da2ca687ebd0372d3546ebc3f810516a002350cac72dfe192dfb014104d3f898e6487787910a690410b7a917ef198905c27fb9d3b0a42da12aceae0544fc7088d239d9a48f2828a15a09e84043001f27cc80d162cb95404e1210161536ffffffff0100e1f505000000001976a914eb6c6e0cdb2d256a32d97b8df1fc75d1920d9bca88ac00000000';
const TX_P2SH = '01000000018d1f5635abd06e2c7e2ddf58dc85b3de111e4ad6e0ab51bb0dcf5e84126d927300000000fdfe0000483045022100ae3b4e589dfc9d48cb82d41008dc5fa6a86f94d5c54f9935531924602730ab8002202f88cf464414c4ed9fa11b773c5ee944f66e9b05cc1e51d97abc22ce098937ea01483045022100b44883be035600e9328a01b66c7d8439b74db64187e76b99a68f7893b701d5380220225bf286493e4c4adcf928c40f785422572eb232f84a0b83b0dea823c3a19c75014c695221020743d44be989540d27b1b4bbbcfd17721c337cb6bc9af20eb8a32520b393532f2102c0120a1dda9e51a938d39ddd9fe0ebc45ea97e1d27a7cbd671d5431416d3dd87210213820eb3d5f509d7438c9eeecb4157b2f595105e7cd564b3cdbb9ead3da41eed53aeffffffff02611e0000000000001976a914dc863734a218bfe83ef770ee9d41a27f824a6e5688acee2a02000000000017a9142a5edea39971049a540474c6a99edf0aa4074c588700000000';
const TX_IMPOSTER = '01000000015ded05872fdbda629c7d3d02b194763ce3b9b1535ea884e3c8e765d42e316724020000006b48304502204c10d4064885c42638cbff3585915b322de33762598321145ba033fc796971e2022100bb153ad3baa8b757e30a2175bd32852d2e1cb9080f84d7e32fcdfd667934ef1b012103163c0ff73511ea1743fb5b98384a2ff09dd06949488028fd819f4d83f56264efffffffff0200000000000000000b6a0930060201000201000180380100000000001976a9141cabd296e753837c086da7a45a6c2fe0d49d7b7b88ac00000000';

/**
 * Script chunks as bitcore-lib tokenizes them, or null when it cannot read the script to its
 * end. bitcore reads a tapscript OP_SUCCESSx as swallowing the rest of the script; in these
 * legacy and witness v0 scripts the rest is tokenized again.
 */
function chunks(script) {
  let s;
  try {
    s = bitcore.Script.fromBuffer(script);
  } catch {
    return null;
  }
  const out = [];
  for (const c of s.chunks) {
    if (c.buf && c.opcodenum > 0x4e) {
      out.push({ opcodenum: c.opcodenum });
      const rest = chunks(c.buf);
      if (rest === null) return null;
      out.push(...rest);
    } else {
      if (c.buf && c.buf.length !== c.len) return null;
      out.push(c);
    }
  }
  return out;
}

// Opcode names from bitcore-lib's table, with the reference's own spellings where they differ.
const bitcoreName = (op) => bitcore.Opcode.reverseMap[op];
function rustName(op) {
  if (op === 0) return 'OP_0';
  if (op <= 75) return `OP_PUSHBYTES_${op}`;
  if (op === 0x4f) return 'OP_PUSHNUM_NEG1';
  if (op >= 0x51 && op <= 0x60) return `OP_PUSHNUM_${op - 0x50}`;
  if (op === 0xb1) return 'OP_CLTV';
  if (op === 0xb2) return 'OP_CSV';
  if (op >= 0xbb && op <= 0xfe) return `OP_RETURN_${op}`;
  return bitcoreName(op);
}
function coreName(op) {
  if (op === 0x4f) return '-1';
  if (op >= 0x51 && op <= 0x60) return String(op - 0x50);
  if (op === 0xb1) return 'OP_CHECKLOCKTIMEVERIFY';
  if (op >= 0xba && op <= 0xfe) return 'OP_UNKNOWN';
  return bitcoreName(op);
}

/** Esplora's asm rebuilt from bitcore-lib's chunks. */
function rustFromChunks(cs) {
  return cs.map((c) => (c.buf && c.buf.length ? `${rustName(c.opcodenum)} ${c.buf.toString('hex')}` : rustName(c.opcodenum))).join(' ');
}

/** insight's asm rebuilt from bitcore-lib's chunks, its number and signature rules included. */
function coreFromChunks(cs, script, sighash) {
  const decode = sighash && !(script.length && script[0] === 0x6a);
  return cs.map((c) => {
    if (c.opcodenum > 0x4e) return coreName(c.opcodenum);
    const data = c.buf || Buffer.alloc(0);
    if (data.length <= 4) return bitcore.crypto.BN.fromScriptNumBuffer(data, false).toString(10);
    const type = data[data.length - 1];
    if (decode && bitcore.crypto.Signature.isTxDER(data) && bitcore.crypto.Signature.prototype.hasDefinedHashtype.call({ nhashtype: type })) {
      const name = ['', 'ALL', 'NONE', 'SINGLE'][type & 0x1f] + (type & 0x80 ? '|ANYONECANPAY' : '');
      return `${data.subarray(0, -1).toString('hex')}[${name}]`;
    }
    return data.toString('hex');
  }).join(' ');
}

describe('script asm', () => {
  describe('Esplora (rust-bitcoin 0.28)', () => {
    for (const [hex, want] of RUST_VECTORS) {
      it(`rust-bitcoin's own vector ${hex.length > 24 ? `${hex.slice(0, 24)}…` : hex || '(empty)'}`, () => {
        assert.equal(esploraAsm(h(hex)), want);
      });
    }

    it('names the opcodes rust-bitcoin names its own way, and the unnamed ones', () => {
      assert.equal(esploraAsm(h('4f50b1b2ba')), 'OP_PUSHNUM_NEG1 OP_RESERVED OP_CLTV OP_CSV OP_CHECKSIGADD');
      assert.equal(esploraAsm(h('bbfeff')), 'OP_RETURN_187 OP_RETURN_254 OP_INVALIDOPCODE');
      assert.equal(esploraAsm(h('b0b3b96051')), 'OP_NOP1 OP_NOP4 OP_NOP10 OP_PUSHNUM_16 OP_PUSHNUM_1');
      assert.equal(esploraAsm(h('4c00')), 'OP_PUSHDATA1');
      assert.equal(esploraAsm(h('')), '');
      // the marker for a cut length follows the last opcode with no space (the reference writes
      // it before its separator)
      assert.equal(esploraAsm(h('764c')), 'OP_DUP<unexpected end>');
    });
  });

  describe('insight (Bitcoin Core 0.12.1 ScriptToAsmStr)', () => {
    for (const [hex, want] of DECODESCRIPT) {
      it(`decodescript.py: ${want.length > 40 ? `${want.slice(0, 40)}…` : want}`, () => {
        assert.equal(coreAsm(h(hex)), want);
      });
    }

    it('decoderawtransaction.py: scriptSigs with their sighash types decoded, never inside OP_RETURN data', () => {
      const sig1 = parseTransaction(h(TX_P2PKH), { detail: true }).details[0].script;
      assert.equal(coreAsm(sig1, true),
        '304402207174775824bec6c2700023309a168231ec80b82c6069282f5133e6f11cbb04460220570edc55c7c5da2ca687ebd0372d3546ebc3f810516a002350cac72dfe192dfb[ALL] 04d3f898e6487787910a690410b7a917ef198905c27fb9d3b0a42da12aceae0544fc7088d239d9a48f2828a15a09e84043001f27cc80d162cb95404e1210161536');
      const p2sh = parseTransaction(h(TX_P2SH), { detail: true });
      assert.equal(p2sh.hash, '8e3730608c3b0bb5df54f09076e196bc292a8e39a78e73b44b6ba08c78f5cbb0');
      assert.equal(coreAsm(p2sh.details[0].script, true),
        '0 3045022100ae3b4e589dfc9d48cb82d41008dc5fa6a86f94d5c54f9935531924602730ab8002202f88cf464414c4ed9fa11b773c5ee944f66e9b05cc1e51d97abc22ce098937ea[ALL] 3045022100b44883be035600e9328a01b66c7d8439b74db64187e76b99a68f7893b701d5380220225bf286493e4c4adcf928c40f785422572eb232f84a0b83b0dea823c3a19c75[ALL] 5221020743d44be989540d27b1b4bbbcfd17721c337cb6bc9af20eb8a32520b393532f2102c0120a1dda9e51a938d39ddd9fe0ebc45ea97e1d27a7cbd671d5431416d3dd87210213820eb3d5f509d7438c9eeecb4157b2f595105e7cd564b3cdbb9ead3da41eed53ae');
      assert.equal(coreAsm(p2sh.outputs[0].script), 'OP_DUP OP_HASH160 dc863734a218bfe83ef770ee9d41a27f824a6e56 OP_EQUALVERIFY OP_CHECKSIG');
      assert.equal(coreAsm(p2sh.outputs[1].script), 'OP_HASH160 2a5edea39971049a540474c6a99edf0aa4074c58 OP_EQUAL');
      assert.equal(coreAsm(parseTransaction(h(TX_IMPOSTER)).outputs[0].script), 'OP_RETURN 300602010002010001');
      // the same test's rewritten scriptSigs: SIGHASH_NONE|ANYONECANPAY, and OP_RETURN data shaped like a signature
      const der = '3045022100ae3b4e589dfc9d48cb82d41008dc5fa6a86f94d5c54f9935531924602730ab8002202f88cf464414c4ed9fa11b773c5ee944f66e9b05cc1e51d97abc22ce098937ea';
      assert.equal(coreAsm(h(`48${der}82`), true), `${der}[NONE|ANYONECANPAY]`);
      assert.equal(coreAsm(h(`0048${der}0148${der}82`), true), `0 ${der}[ALL] ${der}[NONE|ANYONECANPAY]`);
      assert.equal(coreAsm(h('6a143011020701010101010101020601010101010101'), true), 'OP_RETURN 3011020701010101010101020601010101010101');
    });

    it('numbers, unknown opcodes and unreadable scripts as Core prints them', () => {
      assert.equal(coreAsm(h('4f00010001810180028080028000')), '-1 0 0 -1 0 -128 128');
      assert.equal(coreAsm(h('04ffffff7f04ffffffff')), '2147483647 -2147483647');
      assert.equal(coreAsm(h('b1b2babbff')), 'OP_CHECKLOCKTIMEVERIFY OP_NOP3 OP_UNKNOWN OP_UNKNOWN OP_INVALIDOPCODE');
      assert.equal(coreAsm(h('7602ff')), 'OP_DUP [error]');
      assert.equal(coreAsm(h('4c')), '[error]');
    });
  });

  it('every script of every fixture: both spellings agree with bitcore-lib\'s tokenization', function () {
    this.timeout(120000);
    let compared = 0;
    let skipped = 0;
    const check = (script, sighash) => {
      const cs = chunks(script);
      if (cs === null) {
        skipped++;
        return;
      }
      assert.equal(esploraAsm(script), rustFromChunks(cs), script.toString('hex'));
      assert.equal(coreAsm(script, sighash), coreFromChunks(cs, script, sighash), script.toString('hex'));
      compared++;
    };
    for (const b of referenceBlocks()) {
      for (const tx of b.ref.transactions) {
        for (const o of tx.outputs) check(o.script.toBuffer(), false);
        for (const i of tx.inputs) {
          check(i._scriptBuffer, true);
          for (const w of i.witnesses || []) check(w, false);
        }
      }
    }
    assert.ok(compared > 40000, `${compared} scripts compared, ${skipped} unreadable`);
  });
});

describe('script asm from the hex a caller already has', () => {
  it('gives the same strings as from the bytes alone, for every script of the fixtures', () => {
    for (const b of referenceBlocks()) {
      for (const tx of b.ref.transactions) {
        for (const script of [...tx.outputs.map((o) => o.script.toBuffer()), ...tx.inputs.map((i) => i._scriptBuffer)]) {
          const hex = script.toString('hex');
          assert.equal(esploraAsm(script, hex), esploraAsm(script));
          assert.equal(coreAsm(script, true, hex), coreAsm(script, true));
        }
      }
    }
  });
});
