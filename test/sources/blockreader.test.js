'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { BlocksDirSource } = require('../../lib/sources/blocksdir');
const { BlockReader, estimateCost } = require('../../lib/sources/blockreader');
const { parseBlock } = require('../../lib/chain/block');
const { NETWORKS } = require('../../lib/chain/networks');
const { SourceError } = require('../../lib/errors');
const { BLOCKS, HASHES, blkName, writeDir, xorAt, split, shuffle, collect, rejectsWith } = require('./blk-helpers');
const { tempDir } = require('../helpers/tmp');

const KEY = Buffer.from('5a17c3e80f9d2b44', 'hex');

/** The locators a blocks-dir source yields for every block of `dir`, by hash. */
async function locatorsOf(dir) {
  const src = new BlocksDirSource({ dir, network: 'main' });
  try {
    await src.scan();
    const byHash = new Map();
    for (const b of await collect(src)) byHash.set(b.hash, b.locator);
    return byHash;
  } finally {
    await src.close();
  }
}

describe('BlocksDirSource locators and BlockReader', () => {
  let readers = [];
  const open = (opts) => {
    const r = new BlockReader({ network: 'main', ...opts });
    readers.push(r);
    return r;
  };
  afterEach(async () => {
    await Promise.all(readers.map((r) => r.close()));
    readers = [];
  });

  for (const xor of [false, true]) {
    describe(xor ? 'an obfuscated blocks dir (xor.dat)' : 'a plain blocks dir', () => {
      let dir;
      let locators;
      let files;
      before(async () => {
        dir = tempDir('src');
        // three files, blocks shuffled within them as headers-first download leaves them
        const parts = split(BLOCKS, 3).map((p, i) => shuffle(p, 40 + i));
        files = writeDir(dir, parts, xor ? { xorKey: KEY } : {});
        locators = await locatorsOf(dir);
      });

      it('blocks() gives each block its file, offset and length: the bytes there are the block, after its record header', () => {
        assert.equal(locators.size, BLOCKS.length);
        for (let h = 0; h < BLOCKS.length; h++) {
          const loc = locators.get(HASHES[h]);
          const bytes = Buffer.from(files[loc.file].subarray(loc.offset - 8, loc.offset + loc.length));
          if (xor) xorAt(bytes, KEY, loc.offset - 8);
          assert.equal(bytes.readUInt32BE(0), NETWORKS.main.magic);
          assert.equal(bytes.readUInt32LE(4), loc.length);
          assert.ok(bytes.subarray(8).equals(BLOCKS[h]), `height ${h}`);
        }
      });

      it('reads every block by hash and locator, parsed and checked, and serves a second read from its cache', async () => {
        const r = open({ dir });
        for (let h = 0; h < BLOCKS.length; h++) {
          const got = await r.read(HASHES[h], locators.get(HASHES[h]));
          assert.equal(got.block.hash, HASHES[h]);
          assert.ok(got.raw.equals(BLOCKS[h]));
          assert.equal(got.from, 'file');
        }
        assert.equal(r.stats.fileReads, BLOCKS.length);
        const again = await r.read(HASHES[170], locators.get(HASHES[170]));
        assert.equal(again.block.txs[1].hash, 'f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16');
        assert.equal(r.stats.hits, 1);
        assert.equal(r.stats.fileReads, BLOCKS.length);
      });
    });
  }

  describe('cache and concurrency', () => {
    let dir;
    let locators;
    before(async () => {
      dir = tempDir('src');
      writeDir(dir, [BLOCKS]);
      locators = await locatorsOf(dir);
    });

    it('the cache stays within its byte budget, least recently used out first', async () => {
      const cost = estimateCost(parseBlock(BLOCKS[1]));
      const r = open({ dir, maxBytes: cost * 3 + 10 });
      for (const h of [1, 2, 3]) await r.read(HASHES[h], locators.get(HASHES[h]));
      await r.read(HASHES[1], locators.get(HASHES[1])); // 1 is now the most recent
      await r.read(HASHES[4], locators.get(HASHES[4])); // evicts 2
      assert.ok(r.cachedBytes <= r.maxBytes);
      assert.deepEqual([...r.cache.keys()], [HASHES[3], HASHES[1], HASHES[4]]);
      const reads = r.stats.fileReads;
      await r.read(HASHES[2], locators.get(HASHES[2]));
      assert.equal(r.stats.fileReads, reads + 1);
    });

    it('a block larger than the whole budget is served but not kept', async () => {
      const r = open({ dir, maxBytes: 100 });
      const got = await r.read(HASHES[170], locators.get(HASHES[170]));
      assert.equal(got.block.txs.length, 2);
      assert.equal(r.cache.size, 0);
      assert.equal(r.cachedBytes, 0);
    });

    it('concurrent reads of different blocks of one blk file open it once (no handle left for the garbage collector)', async () => {
      const r = open({ dir });
      const blk = path.join(dir, blkName(0));
      const openOnBlk = () => fs.readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return fs.readlinkSync(`/proc/self/fd/${fd}`) === blk;
        } catch {
          return false;
        }
      }).length;
      const before = openOnBlk();
      const heights = [11, 12, 13, 14, 15, 16, 17, 18];
      const all = await Promise.all(heights.map((h) => r.read(HASHES[h], locators.get(HASHES[h]))));
      all.forEach((got, i) => assert.equal(got.block.hash, HASHES[heights[i]]));
      assert.equal(r.stats.fileReads, heights.length);
      assert.equal(openOnBlk() - before, 1);
      await r.close();
      assert.equal(openOnBlk(), before);
    });

    it('concurrent reads of one block share one read', async () => {
      const r = open({ dir });
      const all = await Promise.all(Array.from({ length: 8 }, () => r.read(HASHES[9], locators.get(HASHES[9]))));
      assert.equal(r.stats.fileReads, 1);
      for (const got of all) assert.equal(got, all[0]);
    });
  });

  describe('a blk file that no longer holds what sync recorded', () => {
    let dir;
    let locators;
    beforeEach(async () => {
      dir = tempDir('src');
      writeDir(dir, [BLOCKS.slice(0, 200), BLOCKS.slice(200)]);
      locators = await locatorsOf(dir);
    });

    const fromFixtures = (hash) => BLOCKS[HASHES.indexOf(hash)];

    it('rewritten (reindexed into another order): a typed error naming the mismatch, never another block', async () => {
      writeDir(dir, [shuffle(BLOCKS.slice(0, 200), 5), BLOCKS.slice(200)]);
      const r = open({ dir });
      let mismatches = 0;
      for (let h = 0; h < 200; h++) {
        try {
          const got = await r.read(HASHES[h], locators.get(HASHES[h]));
          assert.ok(got.raw.equals(BLOCKS[h])); // same place by chance: still the right block
        } catch (err) {
          assert.ok(err instanceof SourceError && err.code === 'ERR_BLOCK_UNAVAILABLE', err.message);
          assert.equal(err.details.reasons[0].code, 'ERR_BLOCK_MISMATCH');
          mismatches++;
        }
      }
      assert.ok(mismatches > 150, `${mismatches} mismatches`);
      assert.equal(r.stats.mismatches, mismatches);
    });

    it('rewritten: the node fallback serves the block, checked the same way', async () => {
      writeDir(dir, [shuffle(BLOCKS.slice(0, 200), 5), BLOCKS.slice(200)]);
      const asked = [];
      const r = open({ dir, fetchFromNode: async (hash) => { asked.push(hash); return fromFixtures(hash).toString('hex'); } });
      const got = await r.read(HASHES[57], locators.get(HASHES[57]));
      assert.equal(got.from, 'node');
      assert.ok(got.raw.equals(BLOCKS[57]));
      assert.deepEqual(asked, [HASHES[57]]);
      assert.equal(r.stats.nodeReads, 1);
    });

    it('a node answering with other bytes is refused too', async () => {
      writeDir(dir, [shuffle(BLOCKS.slice(0, 200), 5), BLOCKS.slice(200)]);
      const r = open({ dir, fetchFromNode: async () => BLOCKS[58] });
      const err = await rejectsWith(r.read(HASHES[57], locators.get(HASHES[57])), SourceError, 'ERR_BLOCK_UNAVAILABLE');
      assert.deepEqual(err.details.reasons.map((x) => x.code), ['ERR_BLOCK_MISMATCH', 'ERR_BLOCK_MISMATCH']);
    });

    it('same header, altered transactions: the merkle root catches it', async () => {
      const file = path.join(dir, blkName(0));
      const bytes = fs.readFileSync(file);
      const loc = locators.get(HASHES[170]);
      bytes[loc.offset + loc.length - 10] ^= 1; // inside the last transaction
      fs.writeFileSync(file, bytes);
      const r = open({ dir });
      const err = await rejectsWith(r.read(HASHES[170], loc), SourceError, 'ERR_BLOCK_UNAVAILABLE');
      assert.equal(err.details.reasons[0].code, 'ERR_MERKLE_MISMATCH');
    });

    it('pruned (file gone), truncated, or a node that fails: typed errors with every reason', async () => {
      fs.unlinkSync(path.join(dir, blkName(1)));
      const file0 = path.join(dir, blkName(0));
      fs.truncateSync(file0, 5000);
      const r = open({ dir, fetchFromNode: async () => { throw Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' }); } });
      const gone = await rejectsWith(r.read(HASHES[300], locators.get(HASHES[300])), SourceError, 'ERR_BLOCK_UNAVAILABLE');
      assert.deepEqual(gone.details.reasons.map((x) => x.code), ['ERR_NO_FILE', 'ECONNREFUSED']);
      const cut = await rejectsWith(r.read(HASHES[150], locators.get(HASHES[150])), SourceError, 'ERR_BLOCK_UNAVAILABLE');
      assert.equal(cut.details.reasons[0].code, 'ERR_TRUNCATED_RECORD');
      assert.match(cut.message, /connection refused/);
    });

    it('no locator (a node-synced index) goes to the node; a bad hash or locator is refused', async () => {
      const r = open({ dir, fetchFromNode: async (hash) => fromFixtures(hash) });
      assert.equal((await r.read(HASHES[3])).from, 'node');
      await rejectsWith(r.read('xyz'), SourceError, 'ERR_BAD_HASH');
      await rejectsWith(r.read(HASHES[3].toUpperCase()), SourceError, 'ERR_BAD_HASH');
      const noNode = open({ dir });
      const err = await rejectsWith(noNode.read(HASHES[4], { file: 0, offset: -1, length: 10 }), SourceError, 'ERR_BLOCK_UNAVAILABLE');
      assert.equal(err.details.reasons[0].code, 'ERR_BAD_LOCATOR');
      const none = await rejectsWith(noNode.read(HASHES[4]), SourceError, 'ERR_BLOCK_UNAVAILABLE');
      assert.equal(none.details.reasons[0].code, 'ERR_NO_LOCATOR');
    });
  });

  describe('readTx: one transaction from its place in its block', () => {
    const FIXTURES = path.join(__dirname, '..', 'fixtures', 'mainnet');
    const raws = ['block300025.raw', 'block426884.raw', 'block482683.raw'].map((f) => fs.readFileSync(path.join(FIXTURES, f)));
    let dir;
    let locs;
    let blocks;
    beforeEach(() => {
      dir = tempDir('src');
      // real blocks framed as Core writes them; the reader needs no chain, only places
      const parts = [];
      locs = [];
      let pos = 0;
      for (const raw of raws) {
        const head = Buffer.alloc(8);
        head.writeUInt32BE(NETWORKS.main.magic, 0);
        head.writeUInt32LE(raw.length, 4);
        parts.push(head, raw);
        locs.push({ file: 0, offset: pos + 8, length: raw.length });
        pos += 8 + raw.length;
      }
      fs.writeFileSync(path.join(dir, blkName(0)), Buffer.concat(parts));
      blocks = raws.map((r) => parseBlock(r));
    });

    it('every transaction of three real blocks, each read alone and checked by its txid', async () => {
      const r = open({ dir });
      let n = 0;
      for (let b = 0; b < blocks.length; b++) {
        for (const t of blocks[b].txs) {
          const got = await r.readTx(t.hash, blocks[b].hash, locs[b], { offset: t.offset, length: t.size });
          assert.equal(got.from, 'tx');
          assert.equal(got.tx.hash, t.hash);
          assert.ok(got.tx.raw.equals(t.raw));
          assert.equal(got.tx.coinbase, t.coinbase);
          n++;
        }
      }
      assert.equal(r.stats.txReads, n);
      assert.equal(r.stats.fileReads, 0);
    });

    it('a wrong place, a wrong length, another block or a missing file: the whole block is read and checked instead', async () => {
      const r = open({ dir });
      const t = blocks[2].txs[5];
      const wrong = await r.readTx(t.hash, blocks[2].hash, locs[2], { offset: t.offset + 1, length: t.size });
      assert.equal(wrong.from, 'file');
      assert.ok(wrong.tx.raw.equals(t.raw));
      r.clear();
      const short = await r.readTx(t.hash, blocks[2].hash, locs[2], { offset: t.offset, length: t.size - 1 });
      assert.ok(short.tx.raw.equals(t.raw));
      assert.equal(r.stats.txMisses, 2);
      // a place holding the right transaction, but inside another block than the one asked for
      // (the same transaction confirmed in a stale block, say): the header check refuses it
      const t0 = blocks[0].txs[4];
      const elsewhere = await rejectsWith(r.readTx(t0.hash, blocks[1].hash, locs[0], { offset: t0.offset, length: t0.size }), SourceError, 'ERR_BLOCK_UNAVAILABLE');
      assert.equal(elsewhere.details.reasons[0].code, 'ERR_BLOCK_MISMATCH');
      // a file gone: the node stands in
      const other = blocks[1].txs[3];
      fs.writeFileSync(path.join(dir, blkName(0)), Buffer.alloc(0));
      const r2 = open({ dir, fetchFromNode: async (hash) => raws[blocks.findIndex((x) => x.hash === hash)] });
      const moved = await r2.readTx(other.hash, blocks[1].hash, locs[1], { offset: other.offset, length: other.size });
      assert.equal(moved.from, 'node');
      assert.ok(moved.tx.raw.equals(other.raw));
    });

    it('a cached block answers by position, checked by txid; a wrong position falls back to the search', async () => {
      const r = open({ dir });
      await r.read(blocks[1].hash, locs[1]);
      const hits = r.stats.hits;
      for (const [i, t] of blocks[1].txs.entries()) {
        const got = await r.readTx(t.hash, blocks[1].hash, locs[1], { offset: t.offset, length: t.size, position: i });
        assert.equal(got.tx.hash, t.hash);
        assert.ok(got.tx.raw.equals(t.raw));
      }
      assert.equal(r.stats.hits - hits, blocks[1].txs.length);
      const t = blocks[1].txs[9];
      const wrong = await r.readTx(t.hash, blocks[1].hash, locs[1], { offset: t.offset, length: t.size, position: 8 });
      assert.ok(wrong.tx.raw.equals(t.raw));
      assert.equal(r.stats.txReads + r.stats.fileReads, 1); // the first read of the block only
    });

    it('a header checked at a place is not read again for a while; a rewritten place is found out by the txid and forgotten', async () => {
      const r = open({ dir });
      for (const t of blocks[1].txs.slice(0, 20)) await r.readTx(t.hash, blocks[1].hash, locs[1], { offset: t.offset, length: t.size });
      assert.equal(r.stats.headerReads, 1);
      assert.equal(r.stats.txReads, 20);
      // the file rewritten under the reader: block 1's place now holds block 2's bytes
      const file = path.join(dir, blkName(0));
      const buf = fs.readFileSync(file);
      raws[2].copy(buf, locs[1].offset, 0, Math.min(raws[2].length, locs[1].length));
      fs.writeFileSync(file, buf);
      const t = blocks[1].txs[30];
      const err = await rejectsWith(r.readTx(t.hash, blocks[1].hash, locs[1], { offset: t.offset, length: t.size }), SourceError, 'ERR_BLOCK_UNAVAILABLE');
      assert.equal(err.details.reasons[0].code, 'ERR_BLOCK_MISMATCH');
      assert.equal(r.headers.size, 0);
      // with no memory at all, every read checks the header
      const strict = open({ dir, headerTtlMs: 0 });
      const t0 = blocks[0].txs[3];
      for (let i = 0; i < 3; i++) await strict.readTx(t0.hash, blocks[0].hash, locs[0], { offset: t0.offset, length: t0.size });
      assert.equal(strict.stats.headerReads, 3);
    });

    it('a transaction the checked block does not hold is an error, not another transaction', async () => {
      const r = open({ dir });
      const t = blocks[0].txs[7];
      await rejectsWith(r.readTx(t.hash, blocks[1].hash, locs[1], { offset: t.offset, length: t.size }), SourceError, 'ERR_TX_NOT_IN_BLOCK');
    });
  });
});
