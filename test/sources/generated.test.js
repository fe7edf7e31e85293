'use strict';

// The reader against chains from tools/generator: the generator reports the best chain it wrote
// (its own bookkeeping, independent of lib/sources), and the reader must find exactly that.

const assert = require('node:assert/strict');
const { BlocksDirSource } = require('../../lib/sources/blocksdir');
const { parseBlock } = require('../../lib/chain/block');
const { writeChain, appendBranch } = require('../../tools/generator');
const { collect } = require('./blk-helpers');
const { tempDir } = require('../helpers/tmp');

// Small blocks of real transactions (maturity 1 so spending starts at once), many small files.
const SHAPE = { txsPerBlock: 12, coinbaseMaturity: 1, maxFileSize: 40000 };

describe('BlocksDirSource on generated chains', function () {
  this.timeout(20000);
  let sources = [];
  const open = (dir) => {
    const s = new BlocksDirSource({ dir, network: 'regtest' });
    sources.push(s);
    return s;
  };
  afterEach(async () => {
    await Promise.all(sources.map((s) => s.close()));
    sources = [];
  });

  /** Scans and checks the reader yields exactly `hashes`, every block merkle-checked; returns tx count. */
  async function expectChain(s, hashes) {
    await s.scan();
    assert.deepEqual(s.tip(), { height: hashes.length - 1, hash: hashes[hashes.length - 1] });
    const got = await collect(s);
    assert.deepEqual(got.map((b) => b.hash), hashes);
    let txs = 0;
    for (const b of got) txs += parseBlock(b.raw).txs.length;
    return txs;
  }

  it('shuffled order, several files, xor.dat, stale branches and zero padding', async () => {
    const dir = tempDir('src');
    const sum = await writeChain({
      dir, seed: 'sources-1', blocks: 150, ...SHAPE,
      shuffle: { window: 25 },
      xorKey: Buffer.from('9a8b7c6d5e4f3021', 'hex'),
      stale: [{ atHeight: 40, length: 3 }, { atHeight: 90, length: 1 }, { atHeight: 120, length: 2 }],
      padEnd: 4096,
    });
    assert.ok(sum.files > 2 && sum.staleBlocks === 6);
    const s = open(dir);
    const txs = await expectChain(s, sum.hashes);
    assert.equal(txs, sum.txs);
    assert.equal(s.stats().blocks, sum.blocks + sum.staleBlocks);
    assert.equal(s.stats().obfuscated, true);
  });

  for (const padEnd of [0, 100000]) {
    it(`a truncated last file${padEnd ? ' then zero padding over the cut' : ''}: the cut blocks are left out`, async () => {
      const dir = tempDir('src');
      const sum = await writeChain({ dir, seed: 'sources-2', blocks: 80, ...SHAPE, shuffle: { window: 10 }, truncateLast: 700, padEnd });
      assert.ok(sum.lost.length >= 1);
      const s = open(dir);
      await expectChain(s, sum.hashes);
      for (const h of sum.lost) assert.equal(s.heightOf(h), null);
    });
  }

  it('a truncated last file, then the node writes on: the next scan resumes at the cut', async () => {
    const dir = tempDir('src');
    const seed = 'sources-4';
    const sum = await writeChain({ dir, seed, blocks: 70, ...SHAPE, truncateLast: 500 });
    const s = open(dir);
    await expectChain(s, sum.hashes);
    const read = s.stats().recordsRead;
    // the writer overwrites the cut record, as Core does after a restart
    const br = await appendBranch({ dir, seed, forkHeight: sum.tip.height, branchSeed: 'on', blocks: 5, ...SHAPE });
    await expectChain(s, br.hashes);
    assert.equal(s.stats().recordsRead, read + 5);
  });

  it('appended branches: a shorter one changes nothing, a longer one reorgs', async () => {
    const dir = tempDir('src');
    const seed = 'sources-3';
    const sum = await writeChain({ dir, seed, blocks: 60, ...SHAPE });
    const s = open(dir);
    await expectChain(s, sum.hashes);

    await appendBranch({ dir, seed, forkHeight: 55, branchSeed: 'short', blocks: 3, ...SHAPE });
    const r1 = await s.scan();
    assert.equal(r1.added, 3);
    assert.equal(r1.changed, false);
    await expectChain(s, sum.hashes);

    const br = await appendBranch({ dir, seed, forkHeight: 50, branchSeed: 'long', blocks: 15, ...SHAPE });
    const r2 = await s.scan();
    assert.equal(r2.added, 15);
    assert.equal(r2.changed, true);
    await expectChain(s, br.hashes);
    assert.equal(s.hashAt(50), sum.hashes[50]);
    assert.notEqual(s.hashAt(51), sum.hashes[51]);
    assert.equal(s.heightOf(sum.hashes[60]), null);
    assert.equal(s.stats().recordsRead, 61 + 3 + 15);
  });
});
