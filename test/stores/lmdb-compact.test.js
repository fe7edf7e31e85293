'use strict';

const assert = require('node:assert/strict');
const path = require('node:path');
const { open } = require('lmdb');
const { copyRows } = require('../../lib/stores/lmdb-compact');
const { tempDir } = require('../helpers/tmp');
const { prng } = require('../helpers/prng');

const COPY = { pageSize: 4096, mapSize: 2 ** 28 };

function openBinary(dir) {
  return open({ path: dir, encoding: 'binary', keyEncoding: 'binary', pageSize: 4096, useWritemap: true, mapSize: 2 ** 28 });
}

describe('lmdb compaction: the copy written on a thread of its own', () => {
  it('copies every row in key order, chunks of many rows and a row larger than a chunk among them', async () => {
    const rand = prng(22);
    const src = openBinary(tempDir('compact-src'));
    const rows = new Map();
    src.transactionSync(() => {
      for (let i = 0; i < 60000; i++) {
        const key = Buffer.alloc(1 + Math.floor(rand() * 40));
        for (let k = 0; k < key.length; k++) key[k] = Math.floor(rand() * 256);
        const value = Buffer.alloc(Math.floor(rand() * 300), i & 0xff);
        rows.set(key.toString('hex'), value);
        src.putSync(key, value);
      }
      // 9 MiB: more than a chunk (8 MiB), so it travels alone, and the chunks go on after it
      const big = Buffer.alloc(9 * 2 ** 20);
      for (let k = 0; k < big.length; k += 4096) big[k] = Math.floor(rand() * 256);
      rows.set('80', big);
      src.putSync(Buffer.from('80', 'hex'), big);
    });
    const to = path.join(tempDir('compact-copy'), 'copy');
    const r = await copyRows(src, { path: to, ...COPY });
    assert.equal(r.rows, rows.size);
    assert.equal(r.entries, rows.size);
    const copy = openBinary(to);
    const want = [...src.getRange({})].map(({ key, value }) => [Buffer.from(key).toString('hex'), Buffer.from(value).toString('hex')]);
    const got = [...copy.getRange({})].map(({ key, value }) => [Buffer.from(key).toString('hex'), Buffer.from(value).toString('hex')]);
    assert.equal(got.length, rows.size);
    assert.deepEqual(got, want);
    for (const [key, value] of got) assert.equal(value, rows.get(key).toString('hex'));
    await copy.close();
    await src.close();
  });

  it('fails with ERR_COMPACT, naming the row, when a row would not append (out of key order)', async () => {
    const rows = [{ key: Buffer.from('a'), value: Buffer.from('1') }, { key: Buffer.from('c'), value: Buffer.from('2') }, { key: Buffer.from('b'), value: Buffer.from('3') }];
    // chunks after the failed one, sent while the writer answers the ones before: the failure is what comes back
    const filler = Buffer.alloc(3 * 2 ** 20, 1);
    for (const k of 'defghijk') rows.push({ key: Buffer.from(k), value: filler });
    const to = path.join(tempDir('compact-bad'), 'copy');
    await assert.rejects(copyRows({ getRange: () => rows }, { path: to, ...COPY }), (err) => {
      assert.equal(err.code, 'ERR_COMPACT');
      assert.match(err.message, /row 2 of the copy is not above the one before it/);
      return true;
    });
  });
});
