'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { writeChain, appendBranch, ChainGenerator } = require('../../tools/generator');
const { parseBlock } = require('../../lib/chain/block');
const { NETWORKS } = require('../../lib/chain/networks');
const { UsageError } = require('../../lib/errors');
const { tempDir, removeDir } = require('../helpers/tmp');
const { readDirRecords, longestChain } = require('./helpers');

const KEY = Buffer.from('5c13a07e22e9f481', 'hex');
const SHAPE = { txsPerBlock: 12, coinbaseMaturity: 5, maxFileSize: 40000 };
const MAGIC = NETWORKS.regtest.magic;
const GENESIS = NETWORKS.regtest.genesis;

/** The best chain of a dir as an independent reader sees it (test/generator/helpers.js). */
function dirChain(dir) {
  return longestChain(readDirRecords(dir, MAGIC), GENESIS);
}

describe('generator: writeChain and appendBranch', function () {
  this.timeout(60000);
  let tmp;
  beforeEach(() => {
    tmp = tempDir('gen-write');
  });
  afterEach(() => removeDir(tmp));

  it('writes the same chain as ChainGenerator, block by block, in order', async () => {
    const s = await writeChain({ dir: tmp, seed: 21, blocks: 25, ...SHAPE });
    const g = new ChainGenerator({ seed: 21, txsPerBlock: 12, coinbaseMaturity: 5 });
    const expect = Array.from({ length: 26 }, () => g.nextBlock());
    const records = readDirRecords(tmp, MAGIC);
    assert.deepEqual(records.map((r) => r.hash), expect.map((b) => b.hash));
    records.forEach((r, i) => assert.ok(r.raw.equals(expect[i].raw)));
    assert.deepEqual(s.hashes, expect.map((b) => b.hash));
    assert.deepEqual(s.tip, { height: 25, hash: expect[25].hash });
    assert.equal(s.blocks, 26);
    assert.equal(s.txs, expect.reduce((n, b) => n + b.txCount, 0));
    assert.equal(s.bytes, fs.readdirSync(tmp).reduce((n, f) => n + fs.statSync(path.join(tmp, f)).size, 0));
    assert.ok(s.files > 1);
  });

  it('txs: stops at the first block that brings the chain to that many transactions', async () => {
    const s = await writeChain({ dir: tmp, seed: 21, txs: 200, ...SHAPE });
    assert.ok(s.txs >= 200);
    const records = readDirRecords(tmp, MAGIC);
    const last = parseBlock(records[records.length - 1].raw).txs.length;
    assert.ok(s.txs - last < 200);
  });

  it('with stale branches, shuffled order, xor and padding: the best chain is summary.hashes', async () => {
    const s = await writeChain({
      dir: tmp, seed: 22, blocks: 60, ...SHAPE,
      stale: [{ atHeight: 10, length: 1 }, { atHeight: 30, length: 4, seed: 'side' }, { atHeight: 55, length: 3 }],
      shuffle: { window: 8 }, xorKey: KEY, padEnd: 4096,
    });
    const records = readDirRecords(tmp, MAGIC);
    assert.equal(records.length, 61 + 8, 'every best and stale block is in the files');
    assert.equal(s.staleBlocks, 8);
    assert.deepEqual(dirChain(tmp), s.hashes);
    assert.equal(s.hashes.length, 61);
    // the stale blocks fork where asked and are not on the best chain
    const best = new Set(s.hashes);
    const stale = records.filter((r) => !best.has(r.hash));
    const forkParents = new Set(stale.map((r) => r.prev).filter((p) => best.has(p)));
    assert.deepEqual([...forkParents].map((p) => s.hashes.indexOf(p)).sort((a, b) => a - b), [9, 29, 54]);
    // headers-first order: some block is stored before its parent
    const pos = new Map(records.map((r, i) => [r.hash, i]));
    assert.ok(records.some((r, i) => pos.has(r.prev) && pos.get(r.prev) > i), 'a child precedes its parent');
    assert.equal(records[0].hash, GENESIS);
    // obfuscated on disk, zero padding left in the clear
    const lastFile = fs.readdirSync(tmp).filter((n) => n.startsWith('blk')).sort().pop();
    const disk = fs.readFileSync(path.join(tmp, lastFile));
    assert.ok(disk.subarray(disk.length - 4096).every((b) => b === 0));
    assert.notEqual(disk.readUInt32BE(0), MAGIC);
    for (const r of records) parseBlock(r.raw);
  });

  it('truncateLast cuts the last record: it is lost, and the summary is what is left', async () => {
    const s = await writeChain({ dir: tmp, seed: 23, blocks: 40, ...SHAPE, stale: [{ atHeight: 20, length: 2 }], truncateLast: 50 });
    assert.equal(s.lost.length, 1);
    assert.deepEqual(dirChain(tmp), s.hashes);
    assert.equal(s.tip.height, 39);
    assert.ok(!s.hashes.includes(s.lost[0]));
    // with shuffling the cut record can be any block: the chain stops below it
    const t = tempDir('gen-shuffled');
    try {
      const u = await writeChain({ dir: t, seed: 23, blocks: 40, ...SHAPE, shuffle: { window: 16 }, truncateLast: 50 });
      assert.deepEqual(dirChain(t), u.hashes);
      assert.equal(u.lost.length, 1);
    } finally {
      removeDir(t);
    }
  });

  it('appendBranch: a longer branch from forkHeight becomes the best chain (reorgs of depth 1, 6, 100)', async () => {
    const s = await writeChain({ dir: tmp, seed: 24, blocks: 110, ...SHAPE, xorKey: KEY, padEnd: 1000 });
    let tip = s;
    for (const depth of [1, 6, 100]) {
      const forkHeight = tip.tip.height - depth;
      const a = await appendBranch({ dir: tmp, seed: 24, forkHeight, branchSeed: `reorg-${depth}`, blocks: depth + 1, ...SHAPE });
      assert.equal(a.tip.height, tip.tip.height + 1);
      assert.deepEqual(dirChain(tmp), a.hashes, `after the reorg of depth ${depth}`);
      assert.deepEqual(a.hashes.slice(0, forkHeight + 1), s.hashes.slice(0, forkHeight + 1), 'shares the prefix');
      assert.notEqual(a.hashes[forkHeight + 1], tip.hashes[forkHeight + 1], 'differs after the fork');
      tip = a;
    }
  });

  it('appendBranch: a branch only as long as the chain leaves the first one best', async () => {
    const s = await writeChain({ dir: tmp, seed: 25, blocks: 30, ...SHAPE });
    const a = await appendBranch({ dir: tmp, seed: 25, forkHeight: 26, branchSeed: 'tie', blocks: 4, ...SHAPE });
    assert.equal(a.tip.height, 30);
    assert.deepEqual(dirChain(tmp), s.hashes);
  });

  it('rejects stale branches that would not stay stale, an existing dir, and a fork the dir lacks', async () => {
    // heights 8-10 would tie with the tip at 10
    await assert.rejects(writeChain({ dir: tmp, seed: 1, blocks: 10, stale: [{ atHeight: 8, length: 3 }] }), UsageError);
    await writeChain({ dir: tmp, seed: 26, blocks: 10, ...SHAPE });
    await assert.rejects(writeChain({ dir: tmp, seed: 26, blocks: 10, ...SHAPE }), UsageError);
    await assert.rejects(appendBranch({ dir: tmp, seed: 27, forkHeight: 5, branchSeed: 'x', blocks: 6, ...SHAPE }),
      (e) => e.code === 'ERR_FORK_NOT_FOUND');
  });

  describe('read back through lib/sources/blocksdir.js', () => {
    let BlocksDirSource;
    before(function () {
      try {
        ({ BlocksDirSource } = require('../../lib/sources/blocksdir'));
      } catch (err) {
        if (err.code === 'MODULE_NOT_FOUND') this.skip();
        throw err;
      }
    });

    async function readAll(dir) {
      const src = new BlocksDirSource({ dir, network: 'regtest' });
      try {
        await src.scan();
        const hashes = [];
        for await (const b of src.blocks(0)) {
          assert.equal(b.height, hashes.length);
          assert.equal(parseBlock(b.raw).hash, b.hash);
          hashes.push(b.hash);
        }
        return hashes;
      } finally {
        await src.close();
      }
    }

    const STALE = [{ atHeight: 12, length: 2 }, { atHeight: 40, length: 5 }];
    for (const [label, extra] of [
      ['stale, shuffle, xor, padding', { padEnd: 8192 }],
      ['stale, shuffle, xor, truncated last file', { truncateLast: 700 }],
      ['stale, shuffle, xor, truncated last file, then padding shorter than the cut', { truncateLast: 3000, padEnd: 1000 }],
    ]) {
      it(`${label}: yields exactly summary.hashes, and the new best chain after appendBranch`, async () => {
        const s = await writeChain({ dir: tmp, seed: 28, blocks: 60, ...SHAPE, stale: STALE, shuffle: { window: 12 }, xorKey: KEY, ...extra });
        assert.deepEqual(await readAll(tmp), s.hashes);
        const a = await appendBranch({ dir: tmp, seed: 28, forkHeight: s.tip.height - 6, branchSeed: 'reader', blocks: 8, ...SHAPE });
        assert.deepEqual(await readAll(tmp), a.hashes);
      });
    }
  });
});
