'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { openFile } = require('../../lib/sources/rawfile');
const { BlkFile, readRecords } = require('../../lib/sources/blkfile');
const { parseBlock } = require('../../lib/chain/block');
const { NETWORKS } = require('../../lib/chain/networks');
const { SourceError } = require('../../lib/errors');
const { MAINNET_439, KNOWN_HASHES, fixturePath, readFixture } = require('../helpers/fixtures');
const { BLOCKS, HASHES, frame, xorAt, rejectsWith } = require('./blk-helpers');
const { tempDir } = require('../helpers/tmp');

async function all(file, opts) {
  const out = [];
  for await (const rec of openFile(file, opts)) out.push(rec);
  return out;
}

describe('openFile (raw block or blocks file)', () => {

  it('a blocks file: every record in file order, with the offset of its block', async () => {
    const recs = await all(MAINNET_439, { network: 'main' });
    assert.equal(recs.length, 439);
    let offset = 0;
    recs.forEach((r, h) => {
      assert.ok(r.raw.equals(BLOCKS[h]));
      assert.equal(r.offset, offset + 8);
      offset += 8 + r.raw.length;
    });
    assert.equal(parseBlock(recs[438].raw).hash, HASHES[438]);
  });

  it('a raw block: one record at offset 0, the whole file', async () => {
    for (const [rel, network] of [['mainnet/block482683.raw', 'main'], ['testnet/block1087400.raw', 'testnet']]) {
      const recs = await all(fixturePath(rel), { network });
      assert.equal(recs.length, 1);
      assert.equal(recs[0].offset, 0);
      assert.ok(recs[0].raw.equals(readFixture(rel)));
      assert.equal(parseBlock(recs[0].raw).hash, KNOWN_HASHES[rel]);
    }
  });

  it('a testnet blocks file with --network testnet', async () => {
    const dir = tempDir('src');
    const file = path.join(dir, 'blk00000.dat');
    const raws = ['testnet/block1087400.raw', 'testnet/block928828.raw'].map(readFixture);
    fs.writeFileSync(file, Buffer.concat(raws.map((r) => frame(r, NETWORKS.testnet))));
    const recs = await all(file, { network: 'testnet' });
    assert.equal(recs.length, 2);
    recs.forEach((r, i) => assert.ok(r.raw.equals(raws[i])));
  });

  it('zero padding ends a blocks file', async () => {
    const dir = tempDir('src');
    const file = path.join(dir, 'blk00000.dat');
    fs.writeFileSync(file, Buffer.concat([fs.readFileSync(MAINNET_439), Buffer.alloc(20000)]));
    assert.equal((await all(file)).length, 439);
    // a few zero bytes, shorter than a record header, too
    fs.writeFileSync(file, Buffer.concat([fs.readFileSync(MAINNET_439), Buffer.alloc(5)]));
    assert.equal((await all(file)).length, 439);
  });

  it('blocks bigger than the read chunk and chunk boundaries inside records', async () => {
    const dir = tempDir('src');
    const file = path.join(dir, 'blk00000.dat');
    const raws = [readFixture('mainnet/block426884.raw'), ...BLOCKS.slice(0, 30), readFixture('mainnet/block300025.raw')];
    fs.writeFileSync(file, Buffer.concat(raws.map((r) => frame(r))));
    for (const chunkSize of [100, 1000, 4096, 8 << 20]) {
      const blk = await BlkFile.open(file);
      const got = [];
      for await (const rec of readRecords(blk, { network: NETWORKS.main, chunkSize })) got.push(rec.raw);
      await blk.close();
      assert.equal(got.length, raws.length, `chunk ${chunkSize}`);
      got.forEach((r, i) => assert.ok(r.equals(raws[i]), `chunk ${chunkSize} block ${i}`));
    }
  });

  it('an obfuscated blk file next to its xor.dat, or with an explicit key', async () => {
    const dir = tempDir('src');
    const key = Buffer.from('0102030405060708', 'hex');
    const file = path.join(dir, 'blk00000.dat');
    fs.writeFileSync(file, xorAt(Buffer.from(fs.readFileSync(MAINNET_439)), key, 0));
    // no xor.dat yet: the bytes are no known magic, and as a raw block the file is just garbage
    const plain = await all(file, { xorKey: null });
    assert.equal(plain.length, 1);
    assert.throws(() => parseBlock(plain[0].raw));
    assert.equal((await all(file, { xorKey: key })).length, 439);
    fs.writeFileSync(path.join(dir, 'xor.dat'), key);
    const recs = await all(file);
    assert.equal(recs.length, 439);
    recs.forEach((r, h) => assert.ok(r.raw.equals(BLOCKS[h])));
  });

  it('a file of another network is refused, naming that network', async () => {
    const err = await rejectsWith(all(MAINNET_439, { network: 'testnet' }), SourceError, 'ERR_WRONG_NETWORK');
    assert.match(err.message, /is a main blocks file/);
    assert.match(err.message, /--network main/);
    const dir = tempDir('src');
    const file = path.join(dir, 'blk00000.dat');
    fs.writeFileSync(file, frame(BLOCKS[0], NETWORKS.regtest));
    const err2 = await rejectsWith(all(file, { network: 'main' }), SourceError, 'ERR_WRONG_NETWORK');
    assert.match(err2.message, /regtest/);
    assert.equal(err2.details.network, 'regtest');
  });

  it('missing files, directories and tiny or huge non-block files give typed errors', async () => {
    await rejectsWith(all('/nonexistent/blk00000.dat'), SourceError, 'ERR_NO_FILE');
    await rejectsWith(all(tempDir('src')), SourceError, 'ERR_NO_FILE');
    const dir = tempDir('src');
    const tiny = path.join(dir, 'tiny');
    fs.writeFileSync(tiny, Buffer.from([1, 2, 3]));
    await rejectsWith(all(tiny), SourceError, 'ERR_NOT_A_BLOCK_FILE');
    const short = path.join(dir, 'short');
    fs.writeFileSync(short, Buffer.alloc(60, 7));
    await rejectsWith(all(short), SourceError, 'ERR_NOT_A_BLOCK_FILE');
    const huge = path.join(dir, 'huge');
    fs.writeFileSync(huge, Buffer.alloc(4000001, 1));
    const err = await rejectsWith(all(huge), SourceError, 'ERR_NOT_A_BLOCK_FILE');
    assert.match(err.message, /larger than any block/);
  });
});
