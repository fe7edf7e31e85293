'use strict';

const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const bitcore = require('bitcore-lib');
const {
  classify, outputScripthash, writeOutputScripthash, ADDR_TYPE_CODE, p2pkhScript, p2shScript, witnessScript,
} = require('../../lib/chain/script');
const { sha256Into } = require('../../lib/chain/sha256-small');
const { parseColumns, transferList } = require('../../lib/chain/columns');
const { ParsePool } = require('../../lib/chain/parse-pool');
const { parseBlock } = require('../../lib/chain/block');
const { describeOutput } = require('../../lib/chain/describe');
const { readFixture, mainnet439Blocks } = require('../helpers/fixtures');

const hex = (h) => Buffer.from(h, 'hex');
const sha256 = (b) => crypto.createHash('sha256').update(b).digest();
const hash160 = (b) => crypto.createHash('ripemd160').update(sha256(b)).digest();
const fill = (n, byte) => Buffer.alloc(n, byte);

// The generator point G: a real key in its three encodings.
const G_X = '79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798';
const G_Y = '483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8';
const KEY33 = hex(`02${G_X}`); // y is even
const KEY65 = hex(`04${G_X}${G_Y}`);
const HYBRID65 = hex(`06${G_X}${G_Y}`); // 06 = hybrid with even y

const push = (data) => Buffer.concat([Buffer.from([data.length]), data]);
const op = (...codes) => Buffer.from(codes);
const OP_N = (n) => 0x50 + n;
const CHECKMULTISIG = 0xae;

function multisig(m, keys, n = keys.length) {
  return Buffer.concat([op(OP_N(m)), ...keys.map(push), op(OP_N(n), CHECKMULTISIG)]);
}

describe('script classification', () => {
  const h20 = fill(20, 0xab);
  const h32 = fill(32, 0xcd);

  it('recognises the standard single-key and script-hash forms, with views for hashes', () => {
    const cases = [
      [Buffer.concat([hex('76a914'), h20, hex('88ac')]), 'p2pkh', 'p2pkh', h20],
      [Buffer.concat([hex('a914'), h20, hex('87')]), 'p2sh', 'p2sh', h20],
      [Buffer.concat([hex('0014'), h20]), 'p2wpkh', 'p2wpkh', h20],
      [Buffer.concat([hex('0020'), h32]), 'p2wsh', 'p2wsh', h32],
      [Buffer.concat([hex('5120'), h32]), 'p2tr', 'p2tr', h32],
    ];
    for (const [script, type, addrType, hash] of cases) {
      const c = classify(script);
      assert.equal(c.type, type);
      assert.equal(c.addrType, addrType);
      assert.ok(c.hash.equals(hash), type);
      // zero-copy: the hash is a view into the script
      assert.equal(c.hash.buffer, script.buffer, `${type} hash is a view`);
      assert.equal(outputScripthash(script).toString('hex'), sha256(script).toString('hex'));
    }
  });

  it('P2PK with compressed, uncompressed and hybrid keys counts under hash160 of the key', () => {
    for (const key of [KEY33, KEY65, HYBRID65]) {
      const script = Buffer.concat([push(key), op(0xac)]);
      const c = classify(script);
      assert.equal(c.type, 'p2pk');
      assert.equal(c.addrType, 'p2pkh');
      assert.ok(c.hash.equals(hash160(key)));
      // the index key is the P2PKH script's, not the P2PK script's
      const p2pkh = Buffer.concat([hex('76a914'), hash160(key), hex('88ac')]);
      assert.ok(outputScripthash(script).equals(sha256(p2pkh)));
      assert.ok(outputScripthash(script).equals(outputScripthash(p2pkh)));
    }
    // bitcore-lib agrees that these are pay-to-pubkey scripts (it also checks the point)
    assert.ok(bitcore.Script.fromBuffer(Buffer.concat([push(KEY65), op(0xac)])).isPublicKeyOut());
  });

  it('P2PK-shaped scripts with a wrong key prefix or length are nonstandard', () => {
    const bad = [
      Buffer.concat([push(hex(`04${G_X}`)), op(0xac)]), // 33 bytes with an uncompressed prefix
      Buffer.concat([push(hex(`02${G_X}${G_Y}`)), op(0xac)]), // 65 bytes with a compressed prefix
      Buffer.concat([push(hex(`05${G_X}${G_Y}`)), op(0xac)]), // unknown prefix
      Buffer.concat([push(KEY33.subarray(0, 32)), op(0xac)]), // 32 bytes
      Buffer.concat([hex('4c21'), KEY33, op(0xac)]), // OP_PUSHDATA1: Core matches only the direct push
      Buffer.concat([push(KEY33), op(0xad)]), // CHECKSIGVERIFY
    ];
    for (const s of bad) assert.equal(classify(s).type, 'nonstandard', s.toString('hex'));
  });

  it('witness programs: v0 of other lengths is nonstandard, v1 non-32 and v2..16 are witness_unknown', () => {
    const unknown = [
      hex('51024e73'), // pay-to-anchor (v1, 2 bytes)
      Buffer.concat([hex('5128'), fill(40, 1)]), // v1, 40 bytes
      Buffer.concat([hex('5114'), h20]), // v1, 20 bytes
      Buffer.concat([hex('5210'), fill(16, 2)]), // v2
      hex('6002751e'), // v16, 2 bytes
      Buffer.concat([hex('6020'), h32]), // v16, 32 bytes
    ];
    for (const s of unknown) {
      const c = classify(s);
      assert.deepEqual([c.type, c.addrType, c.hash], ['witness_unknown', 'witness', null], s.toString('hex'));
      assert.ok(outputScripthash(s).equals(sha256(s)));
    }
    const nonstandard = [
      Buffer.concat([hex('0010'), fill(16, 3)]), // v0, 16 bytes
      Buffer.concat([hex('0028'), fill(40, 3)]), // v0, 40 bytes
      Buffer.concat([hex('0014'), fill(19, 3)]), // push length says 20, 19 follow
      Buffer.concat([hex('0015'), fill(21, 3)]), // v0, 21 bytes
      hex('5101aa'), // program of 1 byte
      Buffer.concat([hex('5129'), fill(41, 4)]), // program of 41 bytes
      Buffer.concat([hex('4f20'), h32]), // OP_1NEGATE is not a version
      Buffer.concat([hex('6120'), h32]), // OP_NOP is not a version
    ];
    for (const s of nonstandard) assert.equal(classify(s).type, 'nonstandard', s.toString('hex'));
  });

  it('bare multisig follows Bitcoin Core: m <= n <= 20, valid key sizes, exact key count', () => {
    const ok = [
      multisig(1, [KEY33]),
      multisig(2, [KEY33, KEY65, HYBRID65]),
      multisig(3, [KEY33, KEY33, KEY33]),
      multisig(16, new Array(16).fill(KEY33)),
      // keys through a non-minimal push are still keys to Core's GetOp
      Buffer.concat([op(OP_N(1)), hex('4c21'), KEY33, op(OP_N(1), CHECKMULTISIG)]),
      // 17..20 keys: the count is a minimal one-byte push
      Buffer.concat([hex('0111'), ...new Array(17).fill(KEY33).map(push), hex('0111'), op(CHECKMULTISIG)]),
      Buffer.concat([op(OP_N(2)), ...new Array(20).fill(KEY33).map(push), hex('0114'), op(CHECKMULTISIG)]),
    ];
    for (const s of ok) {
      const c = classify(s);
      assert.deepEqual([c.type, c.addrType, c.hash], ['multisig', 'script', null], s.toString('hex'));
      assert.ok(outputScripthash(s).equals(sha256(s)));
    }
    const bad = [
      multisig(2, [KEY33]), // m > n
      multisig(1, [KEY33, KEY33], 3), // n does not match the keys
      multisig(1, [KEY33, KEY33.subarray(0, 32)]), // a 32-byte "key"
      multisig(1, [KEY33, hex(`20${G_X}`)]), // 33 bytes with a non-key prefix (Counterparty-style data)
      Buffer.concat([op(0x00), push(KEY33), op(OP_N(1), CHECKMULTISIG)]), // m = 0
      Buffer.concat([hex('0101'), push(KEY33), op(OP_N(1), CHECKMULTISIG)]), // 1 as a non-minimal push
      Buffer.concat([hex('0115'), ...new Array(21).fill(KEY33).map(push), hex('0115'), op(CHECKMULTISIG)]), // 21 keys
      Buffer.concat([multisig(1, [KEY33]), op(CHECKMULTISIG)]), // trailing opcode
      Buffer.concat([op(OP_N(1)), hex('4c'), op(CHECKMULTISIG)]), // truncated push
      op(OP_N(1), OP_N(1), CHECKMULTISIG), // no keys
      op(CHECKMULTISIG),
    ];
    for (const s of bad) assert.equal(classify(s).type, 'nonstandard', s.toString('hex'));
  });

  it('every script that starts with OP_RETURN is nulldata and has no index key', () => {
    for (const s of [op(0x6a), hex('6a04deadbeef'), hex('6aac'), Buffer.concat([hex('6a4c50'), fill(80, 7)])]) {
      const c = classify(s);
      assert.deepEqual([c.type, c.addrType, c.hash], ['nulldata', null, null]);
      assert.equal(outputScripthash(s), null);
    }
  });

  it('empty and other scripts are nonstandard, keyed by their own sha256', () => {
    for (const s of [Buffer.alloc(0), op(0xac), op(0x51), hex('00'), hex('76a91488ac')]) {
      const c = classify(s);
      assert.deepEqual([c.type, c.addrType, c.hash], ['nonstandard', 'script', null], s.toString('hex'));
      assert.ok(outputScripthash(s).equals(sha256(s)));
    }
    assert.equal(outputScripthash(Buffer.alloc(0)).toString('hex'), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('one-byte changes never turn a standard script into another type with the same hash', () => {
    // near-misses of each pattern: the type must drop to nonstandard (or a different, correct type)
    const p2pkh = Buffer.concat([hex('76a914'), h20, hex('88ac')]);
    for (const at of [0, 1, 2, 23, 24]) {
      const s = Buffer.from(p2pkh);
      s[at] ^= 0x01;
      assert.equal(classify(s).type, 'nonstandard', `p2pkh byte ${at}`);
    }
    const p2sh = Buffer.concat([hex('a914'), h20, hex('87')]);
    for (const at of [0, 1, 22]) {
      const s = Buffer.from(p2sh);
      s[at] ^= 0x01;
      assert.equal(classify(s).type, 'nonstandard', `p2sh byte ${at}`);
    }
    assert.equal(classify(p2pkh.subarray(0, 24)).type, 'nonstandard');
    assert.equal(classify(Buffer.concat([p2sh, op(0)])).type, 'nonstandard');
  });

  it('builders produce the scripts classify recognises', () => {
    assert.equal(classify(p2pkhScript(h20)).type, 'p2pkh');
    assert.equal(classify(p2shScript(h20)).type, 'p2sh');
    assert.equal(classify(witnessScript(0, h20)).type, 'p2wpkh');
    assert.equal(classify(witnessScript(0, h32)).type, 'p2wsh');
    assert.equal(classify(witnessScript(1, h32)).type, 'p2tr');
    assert.equal(witnessScript(16, hex('751e')).toString('hex'), '6002751e');
  });

  it('ADDR_TYPE_CODE gives every identity kind a distinct non-zero code', () => {
    assert.deepEqual({ ...ADDR_TYPE_CODE }, { p2pkh: 1, p2sh: 2, p2wpkh: 3, p2wsh: 4, p2tr: 5, witness: 6, script: 7 });
  });
});

describe('sha256 of short scripts', () => {
  it('equals node:crypto for every length 0..200 (one block up to 55 bytes, node:crypto beyond)', () => {
    const out = Buffer.alloc(40, 0xee);
    for (let len = 0; len <= 200; len++) {
      for (let k = 0; k < 4; k++) {
        const data = k === 0 ? Buffer.alloc(len, 0xff) : crypto.randomBytes(len);
        sha256Into(data, out, 5);
        assert.equal(out.subarray(5, 37).toString('hex'), sha256(data).toString('hex'), `length ${len}`);
      }
    }
    // the bytes around the 32 written are untouched
    assert.equal(out.subarray(0, 5).toString('hex'), 'eeeeeeeeee');
    assert.equal(out.subarray(37).toString('hex'), 'eeeeee');
  });

  it('FIPS 180-2 examples', () => {
    const out = Buffer.alloc(32);
    sha256Into(Buffer.from('abc'), out, 0);
    assert.equal(out.toString('hex'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    sha256Into(Buffer.from('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq'), out, 0); // 56 bytes: two blocks
    assert.equal(out.toString('hex'), '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1');
  });

  it('writeOutputScripthash writes what outputScripthash returns, and nothing for nulldata', () => {
    const out = Buffer.alloc(64);
    const p2pk = Buffer.concat([push(KEY65), op(0xac)]);
    assert.equal(writeOutputScripthash(p2pk, classify(p2pk), out, 32), true);
    assert.ok(out.subarray(32).equals(outputScripthash(p2pk)));
    assert.equal(writeOutputScripthash(hex('6a00'), classify(hex('6a00')), out, 0), false);
    assert.ok(out.subarray(0, 32).equals(Buffer.alloc(32)));
  });
});

describe('the height-170 payment (first person-to-person transaction)', () => {
  it('pays two P2PK outputs; the 10 BTC one is keyed as 1Q2TWHE3GMdB6BZKafqwxXtWAWgFt5Jvm3', () => {
    const block = parseBlock(mainnet439Blocks()[170]);
    const tx = block.txs.find((t) => t.hash === 'f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16');
    assert.deepEqual(tx.outputs.map((o) => classify(o.script).type), ['p2pk', 'p2pk']);
    const script = tx.outputs[0].script;
    const key = script.subarray(1, 66);
    assert.equal(key.length, 65);
    const p2pkh = Buffer.concat([hex('76a914'), hash160(key), hex('88ac')]);
    assert.ok(outputScripthash(script).equals(sha256(p2pkh)));
    const d = describeOutput(script, 'main');
    assert.deepEqual(d, {
      type: 'p2pk',
      address: '1Q2TWHE3GMdB6BZKafqwxXtWAWgFt5Jvm3',
      scripthash: Buffer.from(sha256(p2pkh)).reverse().toString('hex'),
    });
  });
});

describe('describeOutput', () => {
  it('gives type, address and display-order script hash', () => {
    const script = hex('0014751e76e8199196d454941c45d1b3a323f1433bd6');
    assert.deepEqual(describeOutput(script, 'main'), {
      type: 'p2wpkh',
      address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4',
      scripthash: Buffer.from(sha256(script)).reverse().toString('hex'),
    });
    assert.equal(describeOutput(script, 'regtest').address, 'bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080');
    assert.deepEqual(describeOutput(hex('6a04deadbeef'), 'main'), { type: 'nulldata', address: null, scripthash: null });
    const ms = multisig(1, [KEY33]);
    assert.deepEqual(describeOutput(ms, 'testnet'), {
      type: 'multisig', address: null, scripthash: Buffer.from(sha256(ms)).reverse().toString('hex'),
    });
  });
});

describe('BlockColumns identities and script hashes', () => {
  const EXPECTED_TYPES = {
    'mainnet/block300025.raw': ['p2pkh', 'multisig', 'nonstandard'],
    'mainnet/block426884.raw': ['p2pkh', 'p2sh', 'nulldata'],
    'testnet/block928831.raw': ['p2pkh', 'p2sh', 'p2wpkh', 'p2wsh', 'nulldata', 'nonstandard'],
  };
  for (const [rel, types] of Object.entries(EXPECTED_TYPES)) {
    it(`${rel}: scripthashes match outputScripthash, zero where not indexed`, () => {
      const raw = readFixture(rel);
      const cols = parseColumns(raw);
      const block = parseBlock(raw);
      let o = 0;
      const seen = new Set();
      for (const tx of block.txs) {
        for (const out of tx.outputs) {
          const c = classify(out.script);
          const got = cols.scripthashes.subarray(32 * o, 32 * o + 32);
          const want = outputScripthash(out.script);
          seen.add(c.type);
          if (want === null) {
            assert.equal(cols.idType[o], 0);
            assert.ok(got.equals(Buffer.alloc(32)));
          } else {
            assert.equal(cols.idType[o], ADDR_TYPE_CODE[c.addrType]);
            assert.ok(got.equals(want), `output ${o}`);
          }
          const len = c.hash ? c.hash.length : 0;
          assert.equal(cols.idLen[o], len);
          if (len) assert.ok(cols.idHash.subarray(32 * o, 32 * o + len).equals(c.hash));
          o++;
        }
      }
      assert.equal(cols.scripthashes.length, 32 * o);
      assert.deepEqual([...seen].sort(), [...types].sort());
      // each transaction's place: the bytes there are the transaction (hashing to its txid)
      block.txs.forEach((tx, i) => {
        assert.ok(raw.subarray(cols.txOffsets[i], cols.txOffsets[i + 1]).equals(tx.raw), `tx ${i}`);
      });
      assert.equal(cols.txOffsets[block.txs.length], raw.length);
      assert.ok(transferList(cols).includes(cols.txOffsets.buffer));
      // a block parsed at an offset inside a larger buffer (a blk file window) has the same places
      const framed = Buffer.concat([Buffer.alloc(13), raw]);
      assert.deepEqual(parseColumns(framed.subarray(13)).txOffsets, cols.txOffsets);
      const { toColumns } = require('../../lib/chain/columns');
      assert.deepEqual(toColumns(parseBlock(framed, { offset: 13 })).txOffsets, cols.txOffsets);
      assert.ok(transferList(cols).includes(cols.scripthashes.buffer));
      // an ArrayBuffer of its own, so transferring it detaches nothing else
      assert.equal(cols.scripthashes.byteOffset, 0);
      assert.equal(cols.scripthashes.buffer.byteLength, cols.scripthashes.length);
    });
  }

  it('scripthashes cross to the main thread from a parse worker intact', async () => {
    const raw = readFixture('testnet/block928831.raw');
    const pool = new ParsePool({ threads: 1 });
    try {
      const cols = await pool.parse(raw);
      // structured clone delivers Uint8Arrays, not Buffers: compare the bytes
      const got = cols.scripthashes;
      assert.ok(Buffer.from(got.buffer, got.byteOffset, got.byteLength).equals(parseColumns(raw).scripthashes));
    } finally {
      await pool.close();
    }
  });
});
