'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { Writer } = require('../../lib/codec/io');
const r = require('../../lib/codec/records');
const { FUNDED, SPENT, posting } = require('../../lib/codec/postings');
const { CodecError } = require('../../lib/errors');
const layout = require('../../lib/stores/layout');
const { decodeRecord } = require('../../lib/stores/walk');
const { openStore } = require('../../lib/stores');
const { generatedChain, mainnetChain, p2pkChain, syncBlocks } = require('../stores/data');
const { tempDir } = require('../helpers/tmp');

const w = new Writer();
const hash = (n) => Buffer.alloc(32, n);
const isCodec = (err) => err instanceof CodecError && /^ERR_/.test(err.code);

/** An account with n history entries (the last ones in the tail) and u inline UTXOs. */
function account(n, u) {
  const a = new r.Account();
  a.received = 5e15;
  a.sent = 5e15 - 3;
  a.txCount = n;
  a.fundedCount = u + 7;
  a.spentCount = 7;
  a.firstHeight = 100;
  a.lastHeight = 900000;
  a.tailLen = n - r.sealedCount(n);
  a.reserveTail(a.tailLen);
  for (let i = 0; i < a.tailLen; i++) a.tail[i] = posting(1e9 + 3 * i, 1 + (i % 3));
  if (r.utxosInline(u)) {
    a.reserveUtxos(u);
    for (let i = 0; i < u; i++) {
      a.utxoTx[i] = 1e9 + Math.floor(i / 2);
      a.utxoVout[i] = (i % 2) * 300;
      a.utxoValue[i] = 546 + i;
    }
    a.utxoLen = u;
  }
  return a;
}

/** The account with two P2PK parts and three "both" entries (lib/core/p2pk.js). */
function withParts(a) {
  a.parts = { p2pk: [{ sh: hash(21), first: 1e9 }, { sh: hash(22), first: 1e9 + 6 }], both: [posting(1e9 + 3, FUNDED), posting(1e9 + 9, SPENT), posting(2 ** 39, FUNDED | SPENT)] };
  return a;
}

function plainAccount(a) {
  return {
    ...r.accountSummary(a),
    tail: [...a.tail.subarray(0, a.tailLen)],
    utxos: [...a.utxoTx.subarray(0, a.utxoLen)].map((t, i) => [t, a.utxoVout[i], a.utxoValue[i]]),
    // a part is stored by its hashX (the first 12 bytes of its script hash)
    parts: a.parts && { p2pk: a.parts.p2pk.map((p) => ({ sh: p.sh.subarray(0, 12), first: p.first })), both: a.parts.both },
  };
}

/** One encoded sample of every record kind, with its key. */
function samples() {
  const out = [];
  const add = (key, value) => out.push({ key, value: Buffer.from(value) });
  add(layout.META_KEY, r.encodeMeta(w, { schemaVersion: 1, network: 'testnet', txstore: true }));
  // a block's bytes: a short one stays raw, a long repetitive one is compressed
  const shortBlock = Buffer.concat([Buffer.alloc(80, 1), Buffer.from('01' + 'ab'.repeat(60), 'hex')]);
  add(layout.bodyKey(3), r.encodeBody(w, shortBlock));
  add(layout.bodyKey(4), r.encodeBody(w, Buffer.concat([Buffer.alloc(80, 1), Buffer.alloc(4000, 0x76)])));
  add(layout.TIP_KEY, r.encodeTip(w, { height: 840000, hash: hash(7), nextTxNum: 2 ** 40 - 1 }));
  add(layout.blockKey(5), r.encodeBlock(w, { hash: hash(9), header: Buffer.alloc(80, 7), firstTxNum: 123456789, txCount: 3000, size: 1500000, weight: 3993000 }));
  add(layout.locatorKey(5), r.encodeLocator(w, { file: 4125, offset: 98765432 }));
  add(layout.blockHashKey(hash(9)), r.encodeBlockHeight(w, 840000));
  const txids = Buffer.alloc(32 * 64, 0x5a);
  add(layout.txidsKey(56), r.encodeTxids(w, null, txids, 0, 40, Array.from({ length: 40 }, (_, i) => 81 + 250 * i), 0));
  add(layout.txKey(hash(1), 0), r.encodeTxNums(w, [5, 2 ** 33 + 5]));
  r.writeOutputsHead(w, 3);
  r.writeOutput(w, -1, 0, 0, hash(2), 0);
  r.writeOutput(w, 0, 7, 2.1e15, hash(3), 0, hash(13));
  r.writeOutput(w, 7, 70000, 546, hash(4), 0);
  r.writeSpentHead(w, 2);
  r.writeSpent(w, -1, 1, 77, 78, 0);
  r.writeSpent(w, 1, 5, 77, 2 ** 39, -1);
  add(layout.outputsKey(77), w.end());
  r.writeOutputsHead(w, 0);
  r.writeSpentHead(w, 1);
  r.writeSpent(w, -1, 0, 80, 90, 3);
  add(layout.outputsKey(80), w.end());
  add(layout.touchedKey(9), r.encodeTouched(w, { both: Buffer.concat([hash(1), hash(2)]), addressOnly: hash(3) }));
  for (const [n, u] of [[1, 0], [64, 16], [65, 1], [200, 17]]) add(layout.accountKey(hash(n), 0), r.encodeAccount(w, account(n, u)));
  add(layout.accountKey(hash(99), 0), r.encodeAccount(w, withParts(account(70, 3))));
  const page = new Float64Array(64);
  for (let i = 0; i < 64; i++) page[i] = posting(5000 + 11 * i, i % 5 === 0 ? FUNDED | SPENT : FUNDED);
  add(layout.pageKey(hash(8), 0, 5000), r.encodePage(w, page, 0));
  add(layout.utxoKey(hash(8), 0, 5000, 300), r.encodeUtxo(w, 99));
  const shs = Buffer.concat([hash(1), hash(2)]);
  add(layout.undoKey(9), r.encodeUndo(w, 2, [1, 2 ** 36], [0, 5], [50e8, 1], shs, 0, [{ position: 0, oldTxNum: 3 }], new Map([[1, hash(14)]])));
  add(layout.undoKey(10), bigUndo());
  return out;
}

/** An undo of 40 spends from 3 script hashes: large and repetitive enough to be stored compressed. */
function bigUndo() {
  const n = 40;
  const shs = Buffer.concat(Array.from({ length: n }, (_, i) => hash(1 + (i % 3))));
  return r.encodeUndo(w, n, Array.from({ length: n }, (_, i) => 1000 + i), new Array(n).fill(1),
    Array.from({ length: n }, (_, i) => 5000 + i), shs, 0, []);
}

/** Whether a varint ends just before byte `len` (the byte before it has no continuation bit). */
function canEndAt(value, len) {
  return (value[len - 1] & 0x80) === 0;
}

/** The format version of the table a key belongs to. */
function versionOf(key) {
  const table = layout.TABLE_OF.get(key[0]);
  return r.VERSION[table === 'history' ? 'page' : table];
}

describe('codec: schema 5 records', () => {
  it('round-trips every kind', () => {
    for (const txstore of [false, true]) {
      assert.deepEqual(r.decodeMeta(r.encodeMeta(w, { schemaVersion: 3, network: 'regtest', txstore })), { schemaVersion: 3, network: 'regtest', txstore });
    }
    // format 1 (no flags byte) still reads, so an older index can say which schema it holds
    assert.deepEqual(r.decodeMeta(Buffer.from('0102057465737434', 'hex')), { schemaVersion: 2, network: 'test4', txstore: false });
    const block = Buffer.concat([Buffer.alloc(80, 9), Buffer.alloc(1000, 0x51)]);
    const body = r.encodeBody(w, block);
    assert.ok(body[0] === 0x81 && body.length < 100, 'compressed');
    assert.deepEqual(r.decodeBody(body, block.subarray(0, 80)), block);
    assert.deepEqual(r.decodeTip(r.encodeTip(w, { height: 0, hash: hash(3), nextTxNum: 1 })), { height: 0, hash: hash(3), nextTxNum: 1 });
    const header = Buffer.alloc(80, 3);
    header.writeUInt32LE(1231006505, 68);
    assert.deepEqual(r.decodeBlock(r.encodeBlock(w, { hash: hash(4), header, firstTxNum: 0, txCount: 1, size: 285, weight: 1140 })), {
      hash: hash(4), header, firstTxNum: 0, txCount: 1, time: 1231006505, size: 285, weight: 1140,
    });
    assert.deepEqual(r.decodeLocator(r.encodeLocator(w, { file: 12, offset: 99999999 })), { file: 12, offset: 99999999 });
    assert.equal(r.decodeBlockHeight(r.encodeBlockHeight(w, 4294967295)), 4294967295);
    const txids = Buffer.from(Array.from({ length: 32 * 70 }, (_, i) => i & 0xff));
    const offs = Array.from({ length: 70 }, (_, i) => 81 + 1000 * i);
    const first = Buffer.from(r.encodeTxids(w, null, txids, 0, 10, offs, 0));
    assert.equal(r.txidsCount(first), 10);
    const N = r.TXIDS_PER_ROW;
    const both = r.encodeTxids(w, first, txids, 320, N - 10, offs, 10);
    assert.equal(r.txidsCount(both), N);
    assert.deepEqual(both.subarray(r.TXIDS_AT, r.TXIDS_AT + 32 * N), txids.subarray(0, 32 * N));
    assert.deepEqual(r.readTxidsRow(both), { count: N, offsets: offs.slice(0, N) });
    // a row of one more than a row holds is refused
    const over = Buffer.from(r.encodeTxids(w, both, txids, 0, 1, offs, 0));
    assert.throws(() => r.txidsCount(over), /is not 57 txids/);
    assert.deepEqual(r.readTxidsRow(r.truncateTxids(w, Buffer.from(both), 7)), { count: 7, offsets: offs.slice(0, 7) });
    assert.deepEqual(r.decodeTouched(r.encodeTouched(w, { both: Buffer.concat([hash(1), hash(2)]), addressOnly: Buffer.alloc(0) })),
      { both: Buffer.concat([hash(1), hash(2)]), addressOnly: Buffer.alloc(0) });
    assert.deepEqual(r.decodeTxNums(r.encodeTxNums(w, [2 ** 40 - 1])), [2 ** 40 - 1]);
    assert.deepEqual(r.decodeTxNums(r.encodeTxNums(w, [0, 1, 70, 2 ** 39])), [0, 1, 70, 2 ** 39]);
    const big = bigUndo();
    assert.equal(big[0], 0x80 | r.VERSION.undo, 'a large repetitive undo is stored LZ4-compressed');
    const u = r.decodeUndo(big);
    assert.equal(u.count, 40);
    assert.deepEqual(u.shs.subarray(32 * 4, 32 * 5), hash(2));
    assert.deepEqual(u.values.slice(0, 3), [5000, 5001, 5002]);
    r.writeOutputsHead(w, 2);
    r.writeOutput(w, -1, 3, 10, hash(5), 0);
    r.writeOutput(w, 3, 4, 0, hash(6), 0, hash(7));
    r.writeSpentHead(w, 2);
    r.writeSpent(w, -1, 0, 42, 43, 0);
    r.writeSpent(w, 0, 9, 42, 2 ** 40 - 1, -1);
    assert.deepEqual(r.decodeOutputs(w.end(), 42), {
      txNum: 42, count: 2, vouts: [3, 4], values: [10, 0], scripthashes: Buffer.concat([hash(5), hash(6)]), p2pk: new Map([[1, hash(7)]]),
      spent: { count: 2, vouts: [0, 9], txNums: [43, 2 ** 40 - 1], vins: [0, -1] },
    });
    for (const [n, u] of [[1, 0], [2, 1], [64, 16], [65, 3], [128, 0], [129, 17], [1000, 100]]) {
      for (const a of [account(n, u), withParts(account(n, u))]) {
        const value = r.encodeAccount(w, a);
        assert.equal(value[0], a.parts ? 2 : 1, 'version 2 only for an account with P2PK parts');
        const back = r.decodeAccount(value, new r.Account());
        assert.deepEqual(plainAccount(back), plainAccount(a), `account ${n}/${u}`);
        assert.equal(back.tailLen, n === 0 ? 0 : ((n - 1) % 64) + 1);
      }
    }
    const page = new Float64Array(70);
    for (let i = 0; i < 70; i++) page[i] = posting(2 ** 39 + i * 1000, 1 + (i % 3));
    const out = new Float64Array(64);
    r.decodePage(r.encodePage(w, page, 3), Math.floor(page[3] / 4), out, 0);
    assert.deepEqual([...out], [...page.subarray(3, 67)]);
    assert.equal(r.decodeUtxo(r.encodeUtxo(w, 2.1e15)), 2.1e15);
    const shs = Buffer.concat([Buffer.alloc(5), hash(1), hash(2)]);
    assert.deepEqual(r.decodeUndo(r.encodeUndo(w, 2, [7, 8], [1, 2 ** 32 - 1], [3, 4], shs, 5, [], new Map([[0, hash(9)]]))), {
      count: 2, txNums: [7, 8], vouts: [1, 2 ** 32 - 1], values: [3, 4], shs: Buffer.concat([hash(1), hash(2)]), p2pk: new Map([[0, hash(9)]]), dups: [],
    });
  });

  it('are compact: the sizes docs/FORMAT.md states', () => {
    assert.equal(r.encodeTxNums(w, [1000000]).length, 4);
    assert.equal(layout.txKey(hash(3), 0).length, 5);
    assert.equal(layout.accountKey(hash(3), 0).length, 13);
    assert.equal(r.encodeUtxo(w, 100000).length, 4);
    // a one-entry account with one inline UTXO: format, 7 counters, 1 posting, 1 UTXO
    const a = account(1, 1);
    a.received = 100000; a.sent = 0; a.fundedCount = 1; a.spentCount = 0; a.firstHeight = a.lastHeight = 800000;
    a.tail[0] = posting(900000000, FUNDED);
    a.utxoTx[0] = 900000000; a.utxoVout[0] = 1; a.utxoValue[0] = 100000;
    assert.equal(r.encodeAccount(w, a).length, 1 + 3 + 1 + 1 + 1 + 1 + 3 + 1 + 5 + 5 + 1 + 3);
  });

  it('refuses unknown format bytes, truncations and trailing bytes of every kind', () => {
    for (const { key, value } of samples()) {
      const kind = layout.TABLE_OF.get(key[0]);
      decodeRecord(key, value);
      const version = versionOf(key);
      const mayCompress = kind === 'undo' || kind === 'outputs' || kind === 'body';
      for (let f = 0; f < 256; f++) {
        if ((f & 0x7f) === version && (f === value[0] || mayCompress)) continue;
        if (kind === 'meta' && f === 1) continue; // the older format, still read (and refused for its trailing flags byte below)
        // both versions of an account are read: one of the other version is refused for its bytes, not its format byte
        if (kind === 'account' && (f === 1 || f === r.ACCOUNT_WITH_PARTS)) continue;
        const bad = Buffer.from(value);
        bad[0] = f;
        assert.throws(() => decodeRecord(key, bad), (err) => isCodec(err) && err.code === 'ERR_UNKNOWN_FORMAT', `${kind} format ${f}`);
      }
      // (an LZ4 block body read as raw is just other bytes: the block row's size and the merkle root catch it)
      if (mayCompress && !(kind === 'body' && value[0] & 0x80)) {
        // the other of raw / compressed: a raw body read as LZ4 or an LZ4 body read as raw
        const bad = Buffer.from(value);
        bad[0] ^= 0x80;
        assert.throws(() => decodeRecord(key, bad), isCodec, `${kind} with its LZ4 flag flipped`);
      }
      for (let len = 0; len < value.length; len++) {
        const cut = value.subarray(0, len);
        if (kind === 'txids' && len > 1 && (len - 1) % 32 === 0) continue; // fewer txids: checked against the TxNum range by readers
        // fewer TxNums: a list of self-delimiting varints; verify finds the txid it lost
        if (kind === 'tx' && len > 1 && canEndAt(value, len)) continue;
        // a raw block body is any bytes: getBlockBytes checks its length against the block row
        if (kind === 'body' && value[0] === 1 && len > 1) continue;
        assert.throws(() => decodeRecord(key, cut), isCodec, `${kind} cut to ${len} of ${value.length}`);
      }
      if (kind !== 'txids' && kind !== 'tx' && !(kind === 'body' && value[0] === 1)) {
        assert.throws(() => decodeRecord(key, Buffer.concat([value, Buffer.from([0])])), isCodec, `${kind} + 1 byte`);
      }
    }
  });

  it('checks counts against the bytes left before allocating', () => {
    // ERR_BAD_COUNT is the check made before allocating (a wall-clock bound here failed under load)
    const huge = (prefix) => Buffer.concat([Buffer.from(prefix), Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f])]);
    assert.throws(() => r.decodeUndo(huge([0x02])), (err) => err.code === 'ERR_BAD_COUNT');
    assert.throws(() => r.decodeOutputs(huge([0x03]), 1), (err) => err.code === 'ERR_BAD_COUNT');
    assert.throws(() => r.decodeMeta(huge([0x01, 0x01])), (err) => err.code === 'ERR_BAD_COUNT');
    // an account claiming 2^53 - 1 entries
    assert.throws(() => r.decodeAccount(Buffer.concat([Buffer.from([0x01, 5, 0]), huge([]).subarray(0), Buffer.from([1, 0, 0, 0])]), new r.Account()), isCodec);
  });

  it('never decodes a mutated real value to anything but a value or a CodecError (fuzz)', async function () {
    this.timeout(60000);
    const dir = tempDir('fuzz');
    try {
      const rows = samples();
      // real rows: the mainnet blocks', a generated chain's, and one whose accounts count P2PK parts
      for (const [network, chain, name] of [['main', mainnetChain(), 'main'], ['regtest', generatedChain(), 'generated'], ['regtest', p2pkChain(), 'p2pk']]) {
        const s = await openStore({ datadir: path.join(dir, name), network, undoDepth: 20 });
        await syncBlocks(s, chain.blocks, 0, chain.blocks.length - 1, [50]);
        for await (const { key, value } of s.kv.range({})) rows.push({ key: Buffer.from(key), value: Buffer.from(value) });
        await s.close();
      }
      // every real row decodes; a quarter of the mutations go to the LZ4-compressed ones
      for (const { key, value } of rows) decodeRecord(key, value);
      const packed = rows.filter((row) => row.value[0] & 0x80);
      assert.ok(packed.length >= 10, `${packed.length} compressed rows`);
      let seed = 12345;
      const rand = (n) => {
        seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
        return seed % n;
      };
      let refused = 0;
      const N = 40000;
      for (let i = 0; i < N; i++) {
        const { key, value } = i % 4 === 0 ? packed[rand(packed.length)] : rows[rand(rows.length)];
        const m = Buffer.from(value);
        let bad = m;
        switch (rand(6)) {
          case 5: if (m.length >= 5) m.writeUInt32LE(rand(2 ** 32) >>> rand(32), 1); break;
          case 0: m[rand(m.length)] ^= 1 << rand(8); break;
          case 1: m[rand(m.length)] = rand(256); break;
          case 2: bad = m.subarray(0, rand(m.length)); break;
          case 3: { const at = rand(m.length + 1); bad = Buffer.concat([m.subarray(0, at), Buffer.from([rand(256)]), m.subarray(at)]); break; }
          default: m.fill(0xff, rand(m.length)); break;
        }
        try {
          decodeRecord(key, bad);
        } catch (err) {
          if (!(err instanceof CodecError)) throw new Error(`${layout.TABLE_OF.get(key[0])} mutation threw ${err.stack}`);
          refused++;
        }
      }
      assert.ok(refused > N / 3, `${refused} of ${N} mutations refused`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
