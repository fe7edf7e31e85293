'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { BlocksDirSource } = require('../../lib/sources/blocksdir');
const { openFile } = require('../../lib/sources/rawfile');
const { parseBlock } = require('../../lib/chain/block');
const { NETWORKS } = require('../../lib/chain/networks');
const { SourceError, AddrIndexError } = require('../../lib/errors');
const { BLOCKS, frame, hashOf, blkName, rng, collect, rejectsWith } = require('./blk-helpers');
const { tempDir } = require('../helpers/tmp');

/** A one-file dir holding `bytes` as blk00000.dat (and any `more` files after it). */
function dirWith(bytes, ...more) {
  const dir = tempDir('src');
  [bytes, ...more].forEach((b, n) => fs.writeFileSync(path.join(dir, blkName(n)), b));
  return dir;
}

function records(from, to) {
  return Buffer.concat(BLOCKS.slice(from, to).map((b) => frame(b)));
}

/** A record header with any size field, followed by `body` bytes. */
function recordWithSize(size, body = Buffer.alloc(0)) {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(NETWORKS.main.magic, 0);
  head.writeUInt32LE(size >>> 0, 4);
  return Buffer.concat([head, body]);
}

describe('block sources on hostile input', () => {
  let sources = [];
  const scan = (dir, network = 'main') => {
    const s = new BlocksDirSource({ dir, network });
    sources.push(s);
    return s.scan().then(() => s);
  };
  afterEach(async () => {
    await Promise.all(sources.map((s) => s.close()));
    sources = [];
  });

  describe('blocks directory', () => {
    it('a missing directory, or a file where the directory should be', async () => {
      const err = await rejectsWith(scan('/nonexistent/blocks'), SourceError, 'ERR_NO_BLOCKS_DIR');
      assert.match(err.message, /\/nonexistent\/blocks: no such directory/);
      const file = path.join(tempDir('src'), 'file');
      fs.writeFileSync(file, 'x');
      await rejectsWith(scan(file), SourceError, 'ERR_NO_BLOCKS_DIR');
      assert.throws(() => new BlocksDirSource({}), (e) => e.code === 'ERR_NO_BLOCKS_DIR');
    });

    it('an empty directory, or one with only undo and other files', async () => {
      const dir = tempDir('src');
      const err = await rejectsWith(scan(dir), SourceError, 'ERR_NO_BLOCK_FILES');
      assert.match(err.message, /no blk\*\.dat files/);
      fs.writeFileSync(path.join(dir, 'rev00000.dat'), records(0, 3));
      fs.writeFileSync(path.join(dir, 'blk0.dat'), records(0, 3));
      await rejectsWith(scan(dir), SourceError, 'ERR_NO_BLOCK_FILES');
    });

    it('blk files without the genesis block, or with no whole block yet', async () => {
      const err = await rejectsWith(scan(dirWith(records(1, 439))), SourceError, 'ERR_NO_GENESIS');
      assert.match(err.message, new RegExp(`main genesis block ${NETWORKS.main.genesis} is not among the 438 blocks`));
      const err2 = await rejectsWith(scan(dirWith(Buffer.alloc(0))), SourceError, 'ERR_NO_GENESIS');
      assert.match(err2.message, /no whole block yet/);
    });

    it('another network\'s files: the error names the network', async () => {
      const err = await rejectsWith(scan(dirWith(records(0, 10)), 'testnet'), SourceError, 'ERR_WRONG_NETWORK');
      assert.match(err.message, /blk00000\.dat is a main blocks file/);
      const regtest = Buffer.concat(BLOCKS.slice(0, 3).map((b) => frame(b, NETWORKS.regtest)));
      const err2 = await rejectsWith(scan(dirWith(regtest)), SourceError, 'ERR_WRONG_NETWORK');
      assert.match(err2.message, /regtest/);
    });

    it('a file of random bytes', async () => {
      const r = rng(5);
      const junk = Buffer.from(Array.from({ length: 5000 }, () => 1 + Math.floor(r() * 255)));
      const err = await rejectsWith(scan(dirWith(junk)), SourceError, 'ERR_BAD_MAGIC');
      assert.equal(err.details.offset, 0);
    });

    it('a wrong magic in the middle of a file names the file and the offset', async () => {
      const good = records(0, 10);
      const bad = Buffer.from(records(10, 20));
      bad.writeUInt32BE(0xdeadbeef, 0);
      const err = await rejectsWith(scan(dirWith(records(0, 5), Buffer.concat([good, bad]))), SourceError, 'ERR_BAD_MAGIC');
      assert.match(err.message, new RegExp(`blk00001\\.dat: bad record magic deadbeef at offset ${good.length} `));
      assert.equal(err.details.offset, good.length);
      assert.ok(err.details.file.endsWith('blk00001.dat'));
    });

    it('zeros are padding only where a magic would be: garbage after them is not read', async () => {
      const s = await scan(dirWith(Buffer.concat([records(0, 10), Buffer.alloc(64), records(10, 20)])));
      assert.equal(s.tip().height, 9);
    });

    it('absurd record sizes: 0, below a header, above 4,000,000, 0xffffffff', async () => {
      for (const size of [0, 80, 4000001, 0xffffffff]) {
        const err = await rejectsWith(scan(dirWith(Buffer.concat([records(0, 3), recordWithSize(size, Buffer.alloc(100))]))),
          SourceError, 'ERR_BAD_RECORD_SIZE');
        assert.match(err.message, new RegExp(`claims a ${size}-byte block`));
        assert.equal(err.details.offset, records(0, 3).length);
      }
    });

    it('a size pointing past the end: corrupt in a finished file, unfinished in the last', async () => {
      const cut = Buffer.concat([records(0, 3), recordWithSize(5000, Buffer.alloc(100, 1))]);
      const err = await rejectsWith(scan(dirWith(cut, records(3, 6))), SourceError, 'ERR_TRUNCATED_RECORD');
      assert.match(err.message, /blk00000\.dat: record at offset \d+ is cut off/);
      // the last file may still be being written: stop before the record, no error
      const s = await scan(dirWith(cut));
      assert.equal(s.tip().height, 2);
      // stray non-zero bytes too short for a record header after a finished file's records
      const stray = Buffer.concat([records(0, 3), Buffer.from([0xf9, 0xbe])]);
      await rejectsWith(scan(dirWith(stray, records(3, 6))), SourceError, 'ERR_TRUNCATED_RECORD');
    });

    it('an xor.dat of the wrong length', async () => {
      const dir = dirWith(records(0, 3));
      fs.writeFileSync(path.join(dir, 'xor.dat'), Buffer.from([1, 2, 3, 4, 5]));
      const err = await rejectsWith(scan(dir), SourceError, 'ERR_BAD_XOR_KEY');
      assert.match(err.message, /5 bytes/);
    });
  });

  describe('mutated files never give garbage', function () {
    this.timeout(30000);
    const clean = records(0, 25);
    const r = rng(2024);
    const variants = [];
    for (let i = 0; i < 250; i++) {
      const b = Buffer.from(clean);
      const kind = i % 3;
      if (kind === 0) {
        for (let k = 1 + Math.floor(r() * 3); k > 0; k--) b[Math.floor(r() * b.length)] = Math.floor(r() * 256);
        variants.push(b);
      } else if (kind === 1) {
        variants.push(b.subarray(0, Math.floor(r() * b.length)));
      } else {
        const at = Math.floor(r() * b.length);
        const junk = Buffer.from(Array.from({ length: 1 + Math.floor(r() * 16) }, () => Math.floor(r() * 256)));
        variants.push(Buffer.concat([b.subarray(0, at), junk, b.subarray(at)]));
      }
    }

    const REAL_TXIDS = new Map(BLOCKS.map((b) => {
      const block = parseBlock(b);
      return [block.merkleRoot.toString('hex'), block.txs.map((t) => t.hash)];
    }));
    const typed = (err) => {
      if (!(err instanceof AddrIndexError) || !err.code) throw err;
    };

    it('openFile + parseBlock: typed error or the real blocks', async () => {
      const dir = tempDir('src');
      const file = path.join(dir, 'blk00000.dat');
      let failures = 0;
      for (const v of variants) {
        fs.writeFileSync(file, v);
        try {
          for await (const rec of openFile(file)) {
            const block = parseBlock(rec.raw);
            // header fields other than the merkle root may change; the transactions may not
            const real = REAL_TXIDS.get(block.merkleRoot.toString('hex'));
            assert.deepEqual(block.txs.map((t) => t.hash), real);
          }
        } catch (err) {
          typed(err);
          failures++;
        }
      }
      assert.ok(failures > 100, `${failures} of ${variants.length} mutations rejected`);
    });

    it('BlocksDirSource + parseBlock: typed error or a linked chain of real blocks', async () => {
      let failures = 0;
      const dir = tempDir('src');
      for (const v of variants) {
        fs.writeFileSync(path.join(dir, blkName(0)), v);
        const s = new BlocksDirSource({ dir });
        try {
          await s.scan();
          const got = await collect(s);
          got.forEach((b, h) => {
            assert.equal(b.height, h);
            assert.equal(hashOf(b.raw), b.hash);
            if (h > 0) assert.equal(b.prev, got[h - 1].hash);
          });
          for (const b of got) parseBlock(b.raw);
        } catch (err) {
          typed(err);
          failures++;
        } finally {
          await s.close();
        }
      }
      assert.ok(failures > 50, `${failures} of ${variants.length} mutations rejected`);
    });
  });
});
