'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { BlkWriter, ChainGenerator } = require('../../tools/generator');
const { NETWORKS } = require('../../lib/chain/networks');
const { UsageError } = require('../../lib/errors');
const { tempDir, removeDir } = require('../helpers/tmp');
const { readDirRecords } = require('./helpers');

const KEY = Buffer.from('9a3e01c4f05b7d22', 'hex');

function someBlocks(n, seed = 1) {
  const g = new ChainGenerator({ seed, txsPerBlock: 15, coinbaseMaturity: 3 });
  return Array.from({ length: n }, () => g.nextBlock());
}

describe('generator: BlkWriter', () => {
  let tmp;
  beforeEach(() => {
    tmp = tempDir('gen-blkwriter');
  });
  afterEach(() => removeDir(tmp));

  it('frames records as Bitcoin Core does: magic bytes, little-endian size, block', async () => {
    const blocks = someBlocks(3);
    const w = new BlkWriter({ dir: tmp });
    const at = blocks.map((b) => w.write(b.raw));
    await w.close();
    const file = fs.readFileSync(path.join(tmp, 'blk00000.dat'));
    assert.equal(file.subarray(0, 4).toString('hex'), 'fabfb5da'); // regtest's on-disk magic
    let pos = 0;
    blocks.forEach((b, i) => {
      assert.equal(file.readUInt32LE(pos + 4), b.raw.length);
      assert.ok(file.subarray(pos + 8, pos + 8 + b.raw.length).equals(b.raw));
      assert.deepEqual(at[i], { file: 0, offset: pos + 8, end: pos + 8 + b.raw.length });
      pos += 8 + b.raw.length;
    });
    assert.equal(file.length, pos);
    assert.ok(!fs.existsSync(path.join(tmp, 'xor.dat')));
  });

  it('uses the network magic it is given', async () => {
    const w = new BlkWriter({ dir: tmp, network: 'main' });
    w.write(someBlocks(1)[0].raw);
    await w.close();
    assert.equal(fs.readFileSync(path.join(tmp, 'blk00000.dat')).subarray(0, 4).toString('hex'), 'f9beb4d9');
  });

  it('starts a new file when a record would pass maxFileSize', async () => {
    const blocks = someBlocks(40);
    const w = new BlkWriter({ dir: tmp, maxFileSize: 20000 });
    for (const b of blocks) w.write(b.raw);
    await w.close();
    const names = fs.readdirSync(tmp).sort();
    assert.ok(names.length > 3, `${names.length} files`);
    assert.equal(names[1], 'blk00001.dat');
    for (const n of names) {
      const size = fs.statSync(path.join(tmp, n)).size;
      const records = readDirRecords(tmp, NETWORKS.regtest.magic).filter((r) => r.file === n);
      assert.ok(size <= 20000 || records.length === 1, `${n}: ${size} bytes in ${records.length} records`);
    }
    assert.deepEqual(readDirRecords(tmp, NETWORKS.regtest.magic).map((r) => r.hash), blocks.map((b) => b.hash));
  });

  it('obfuscates with an xor key: xor.dat holds it, byte p is XORed with key[p % 8]', async () => {
    const blocks = someBlocks(12);
    const plain = tempDir('gen-plain');
    try {
      const a = new BlkWriter({ dir: plain, maxFileSize: 30000 });
      const b = new BlkWriter({ dir: tmp, maxFileSize: 30000, xorKey: KEY });
      for (const blk of blocks) {
        a.write(blk.raw);
        b.write(blk.raw);
      }
      a.pad(100);
      b.pad(100);
      await a.close();
      await b.close();
      assert.ok(fs.readFileSync(path.join(tmp, 'xor.dat')).equals(KEY));
      const names = fs.readdirSync(plain).sort();
      assert.ok(names.length > 1);
      for (const n of names) {
        const clear = fs.readFileSync(path.join(plain, n));
        const obf = fs.readFileSync(path.join(tmp, n));
        assert.equal(obf.length, clear.length);
        const padStart = n === names[names.length - 1] ? clear.length - 100 : clear.length;
        for (let p = 0; p < padStart; p++) assert.equal(obf[p], clear[p] ^ KEY[p % 8], `${n} byte ${p}`);
        // preallocated zeros stay zeros on disk, as Core leaves them
        assert.ok(obf.subarray(padStart).every((x) => x === 0));
      }
      assert.deepEqual(readDirRecords(tmp, NETWORKS.regtest.magic).map((r) => r.hash), blocks.map((x) => x.hash));
    } finally {
      removeDir(plain);
    }
  });

  it('appends to an existing dir: continues the last file after its last whole record, reusing xor.dat', async () => {
    const blocks = someBlocks(12);
    const blkFiles = () => fs.readdirSync(tmp).filter((n) => n.startsWith('blk')).sort();
    const w1 = new BlkWriter({ dir: tmp, maxFileSize: 15000, xorKey: KEY });
    for (const b of blocks.slice(0, 5)) w1.write(b.raw);
    w1.pad(3000);
    await w1.close();

    // zero padding at the end: overwritten, as Core reuses its preallocated space
    const w2 = new BlkWriter({ dir: tmp, maxFileSize: 15000 });
    assert.equal(w2.fileName, blkFiles().pop());
    for (const b of blocks.slice(5, 8)) w2.write(b.raw);
    await w2.close();
    assert.deepEqual(readDirRecords(tmp, NETWORKS.regtest.magic).map((r) => r.hash), blocks.slice(0, 8).map((b) => b.hash));

    // a record cut off by a crash: dropped, the next block written where it started
    const cut = readDirRecords(tmp, NETWORKS.regtest.magic).pop();
    fs.truncateSync(path.join(tmp, cut.file), cut.offset + 40);
    const w3 = new BlkWriter({ dir: tmp, maxFileSize: 15000 });
    assert.equal(w3.fileName, cut.file);
    for (const b of blocks.slice(8)) w3.write(b.raw);
    await w3.close();
    const expect = blocks.map((b) => b.hash).filter((h) => h !== cut.hash);
    assert.deepEqual(readDirRecords(tmp, NETWORKS.regtest.magic).map((r) => r.hash), expect);
  });

  it('refuses an xor key that does not match the dir', async () => {
    const w = new BlkWriter({ dir: tmp, xorKey: KEY });
    w.write(someBlocks(1)[0].raw);
    await w.close();
    assert.throws(() => new BlkWriter({ dir: tmp, xorKey: Buffer.alloc(8, 1) }), UsageError);
    const other = tempDir('gen-clear');
    try {
      const c = new BlkWriter({ dir: other });
      c.write(someBlocks(1)[0].raw);
      await c.close();
      assert.throws(() => new BlkWriter({ dir: other, xorKey: KEY }), UsageError);
    } finally {
      removeDir(other);
    }
  });
});
