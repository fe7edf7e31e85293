'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { BlocksDirSource } = require('../../lib/sources/blocksdir');
const { parseBlock } = require('../../lib/chain/block');
const { describeOutput } = require('../../lib/chain/describe');
const { toDisplayHex } = require('../../lib/chain/hash');
const { NETWORKS } = require('../../lib/chain/networks');
const { SourceError } = require('../../lib/errors');
const {
  BLOCKS, HASHES, frame, hashOf, forge, blkName, writeDir, xorAt, rng, shuffle, split, collect, rejectsWith,
} = require('./blk-helpers');
const { tempDir } = require('../helpers/tmp');

const TIP = BLOCKS.length - 1; // 438
const FIRST_PAYMENT = 'f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16';

/** Opens a source on dir, scans, and checks it yields exactly `hashes` from height 0. */
async function expectChain(source, hashes) {
  const got = await collect(source);
  assert.deepEqual(got.map((b) => b.hash), hashes);
  got.forEach((b, h) => {
    assert.equal(b.height, h);
    if (h > 0) assert.equal(b.prev, hashes[h - 1]);
    assert.equal(hashOf(b.raw), b.hash);
    assert.equal(source.hashAt(h), b.hash);
  });
  assert.deepEqual(source.tip(), { height: hashes.length - 1, hash: hashes[hashes.length - 1] });
  return got;
}

describe('BlocksDirSource', () => {
  let sources = [];
  const open = (dir, opts = {}) => {
    const s = new BlocksDirSource({ dir, network: 'main', ...opts });
    sources.push(s);
    return s;
  };
  afterEach(async () => {
    await Promise.all(sources.map((s) => s.close()));
    sources = [];
  });

  describe('the first 439 mainnet blocks, in order', () => {
    let dir;
    before(() => {
      dir = tempDir('src');
      writeDir(dir, [BLOCKS]);
      // Core keeps undo data and other files beside the blk files; none of it is a block.
      fs.writeFileSync(path.join(dir, 'rev00000.dat'), Buffer.from('not blocks at all'));
      fs.writeFileSync(path.join(dir, 'blk00000.dat.bak'), Buffer.from('ignored'));
      fs.mkdirSync(path.join(dir, 'index'));
    });

    it('come out with heights 0-438, hashes linking, bytes as stored', async () => {
      const s = open(dir);
      const res = await s.scan();
      assert.equal(res.added, 439);
      assert.equal(res.changed, true);
      const got = await expectChain(s, HASHES);
      assert.equal(got[0].hash, NETWORKS.main.genesis);
      got.forEach((b, h) => assert.ok(b.raw.equals(BLOCKS[h])));
      assert.deepEqual(s.stats(), {
        files: 1, blocks: 439, connected: 439, orphans: 0, recordsRead: 439, scans: 1, obfuscated: false,
      });
      assert.equal(s.heightOf(HASHES[170]), 170);
      assert.equal(s.heightOf('00'.repeat(32)), null);
      assert.equal(s.hashAt(439), null);
      assert.equal(s.hashAt(-1), null);
    });

    it('height 170 pays 10 BTC to 1Q2TWHE3GMdB6BZKafqwxXtWAWgFt5Jvm3 (P2PK)', async () => {
      const s = open(dir);
      await s.scan();
      const [b] = await collect(s, 170, 170);
      assert.equal(b.height, 170);
      const block = parseBlock(b.raw);
      const tx = block.txs.find((t) => t.hash === FIRST_PAYMENT);
      assert.ok(tx, 'the first payment is in block 170');
      assert.equal(toDisplayHex(tx.inputs[0].txid), '0437cd7f8525ceed2324359c2d0ba26006d92d856a9c20fa0241106ee5a597c9');
      assert.equal(tx.outputs[0].value, 10e8);
      const script = tx.outputs[0].script;
      // <65-byte uncompressed key> OP_CHECKSIG
      assert.equal(script.length, 67);
      assert.equal(script[0], 0x41);
      assert.equal(script[66], 0xac);
      assert.deepEqual(describeOutput(script, NETWORKS.main).address, '1Q2TWHE3GMdB6BZKafqwxXtWAWgFt5Jvm3');
      assert.equal(describeOutput(script, NETWORKS.main).type, 'p2pk');
      assert.equal(tx.outputs[1].value, 40e8);
    });

    it('blocks(from, to) reads a sub-range; heights out of range are refused', async () => {
      const s = open(dir);
      await s.scan();
      const got = await collect(s, 100, 105);
      assert.deepEqual(got.map((b) => b.height), [100, 101, 102, 103, 104, 105]);
      assert.deepEqual(got.map((b) => b.hash), HASHES.slice(100, 106));
      assert.deepEqual(await collect(s, 438), [await collect(s, 438, 438)].flat().map((b) => b));
      assert.deepEqual(await collect(s, 5, 4), []);
      await rejectsWith(collect(s, 0, 439), SourceError, 'ERR_RANGE');
      await rejectsWith(collect(s, -1, 3), SourceError, 'ERR_RANGE');
      await rejectsWith(collect(open(dir)), SourceError, 'ERR_NOT_SCANNED');
    });

    it('a second scan with nothing new reads nothing', async () => {
      const s = open(dir);
      await s.scan();
      const res = await s.scan();
      assert.equal(res.added, 0);
      assert.equal(res.changed, false);
      assert.equal(s.stats().recordsRead, 439);
    });

    it('small read-ahead windows and few open files give the same blocks', async () => {
      const s = open(dir, { readAhead: 1000, maxOpenFiles: 1 });
      await s.scan();
      await expectChain(s, HASHES);
    });
  });

  it('blocks split over several files in shuffled order (children before parents)', async () => {
    const dir = tempDir('src');
    const order = shuffle(BLOCKS.map((_, h) => h), 7);
    // make sure the test means what it says: genesis is not first, and many blocks precede their parent
    assert.notEqual(order[0], 0);
    const pos = new Map(order.map((h, i) => [h, i]));
    const early = order.filter((h) => h > 0 && pos.get(h) < pos.get(h - 1)).length;
    assert.ok(early > 150, `${early} children before their parent`);
    const files = split(order.map((h) => BLOCKS[h]), 5);
    writeDir(dir, files);
    for (const readAhead of [8 << 20, 4096]) {
      const s = open(dir, { readAhead });
      await s.scan();
      const got = await expectChain(s, HASHES);
      got.forEach((b, h) => assert.ok(b.raw.equals(BLOCKS[h])));
      assert.equal(s.stats().files, 5);
      assert.equal(s.stats().orphans, 0);
    }
  });

  it('zero padding at file ends (Core preallocates) is the end of each file', async () => {
    const dir = tempDir('src');
    writeDir(dir, split(BLOCKS, 3), { padding: 70000 });
    const s = open(dir);
    await s.scan();
    await expectChain(s, HASHES);
  });

  it('records later written over a last file\'s padding are picked up', async () => {
    const dir = tempDir('src');
    const file = path.join(dir, blkName(0));
    const head = Buffer.concat(BLOCKS.slice(0, 200).map((b) => frame(b)));
    const rest = Buffer.concat(BLOCKS.slice(200).map((b) => frame(b)));
    fs.writeFileSync(file, Buffer.concat([head, Buffer.alloc(rest.length + 16384)]));
    const s = open(dir);
    await s.scan();
    assert.deepEqual(s.tip(), { height: 199, hash: HASHES[199] });
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, rest, 0, rest.length, head.length);
    fs.closeSync(fd);
    const res = await s.scan();
    assert.equal(res.added, 239);
    await expectChain(s, HASHES);
    assert.equal(s.stats().recordsRead, 439);
  });

  describe('Bitcoin Core 28+ obfuscation (xor.dat)', () => {
    const key = Buffer.from('a1b2c3d4e5f60718', 'hex');

    it('de-obfuscates every file, with padding left zero on disk', async () => {
      const dir = tempDir('src');
      const written = writeDir(dir, split(shuffle(BLOCKS, 3), 3), { xorKey: key, padding: 5000 });
      // the files really are obfuscated: no main magic anywhere at a record start
      assert.notEqual(written[0].readUInt32BE(0), NETWORKS.main.magic);
      const s = open(dir, { readAhead: 3000 });
      await s.scan();
      await expectChain(s, HASHES);
      assert.equal(s.stats().obfuscated, true);
    });

    it('padding obfuscated along with the data is also the end of a file', async () => {
      const dir = tempDir('src');
      writeDir(dir, split(BLOCKS, 2), { xorKey: key, padding: 5000, xorPadding: true });
      const s = open(dir);
      await s.scan();
      await expectChain(s, HASHES);
    });

    it('without xor.dat the files are refused with a hint', async () => {
      const dir = tempDir('src');
      writeDir(dir, [BLOCKS], { xorKey: key });
      fs.rmSync(path.join(dir, 'xor.dat'));
      const err = await rejectsWith(open(dir).scan(), SourceError, 'ERR_BAD_MAGIC');
      assert.match(err.message, /blk00000\.dat/);
      assert.match(err.message, /xor\.dat/);
    });

    it('an all-zero key means the files are stored in the clear', async () => {
      const dir = tempDir('src');
      writeDir(dir, [BLOCKS]);
      fs.writeFileSync(path.join(dir, 'xor.dat'), Buffer.alloc(8));
      const s = open(dir);
      await s.scan();
      await expectChain(s, HASHES);
      assert.equal(s.stats().obfuscated, false);
    });

    it('the word-wise XOR equals the byte-wise definition at any offset and alignment', () => {
      const { xorInPlace } = require('../../lib/sources/xor');
      const r = rng(11);
      const base = Buffer.from(Array.from({ length: 300 }, () => Math.floor(r() * 256)));
      for (let start = 0; start < 9; start++) {
        for (const fileOffset of [0, 1, 5, 7, 8, 13, 2 ** 32 + 3]) {
          for (const len of [0, 1, 3, 4, 7, 8, 9, 31, 100, 291 - start]) {
            const a = Buffer.from(base).subarray(start, start + len);
            const b = Buffer.from(a);
            xorInPlace(a, key, fileOffset);
            xorAt(b, key, fileOffset);
            assert.ok(a.equals(b), `start ${start} offset ${fileOffset} len ${len}`);
          }
        }
      }
    });
  });

  describe('a last file still being written', () => {
    const all = Buffer.concat(BLOCKS.map((b) => frame(b)));
    const recordStart = (h) => BLOCKS.slice(0, h).reduce((n, b) => n + 8 + b.length, 0);
    const records = (from, to) => Buffer.concat(BLOCKS.slice(from, to).map((b) => frame(b)));

    for (const [what, cut] of [['in the record header', 3], ['in the block header', 8 + 40], ['in the block body', 8 + 80 + 20]]) {
      it(`cut ${what}: stops at the last whole block, then resumes`, async () => {
        const dir = tempDir('src');
        const file = path.join(dir, blkName(0));
        const at = recordStart(300) + cut;
        fs.writeFileSync(file, all.subarray(0, at));
        const s = open(dir);
        const first = await s.scan();
        assert.equal(first.added, 300);
        await expectChain(s, HASHES.slice(0, 300));
        fs.appendFileSync(file, all.subarray(at));
        const second = await s.scan();
        assert.equal(second.added, 139);
        assert.equal(second.changed, true);
        await expectChain(s, HASHES);
        assert.equal(s.stats().recordsRead, 439);
      });
    }

    it('new files are picked up by a later scan', async () => {
      const dir = tempDir('src');
      writeDir(dir, [BLOCKS.slice(0, 250)]);
      const s = open(dir);
      await s.scan();
      assert.equal(s.tip().height, 249);
      fs.writeFileSync(path.join(dir, blkName(1)), Buffer.concat(BLOCKS.slice(250, 400).map((b) => frame(b))));
      fs.writeFileSync(path.join(dir, blkName(2)), Buffer.concat(BLOCKS.slice(400).map((b) => frame(b))).subarray(0, 100));
      await s.scan();
      assert.equal(s.tip().height, 399);
      fs.appendFileSync(path.join(dir, blkName(2)), Buffer.concat(BLOCKS.slice(400).map((b) => frame(b))).subarray(100));
      await s.scan();
      await expectChain(s, HASHES);
      assert.equal(s.stats().recordsRead, 439);
    });

    it('a record in preallocated space with its body still partly zeros is not read yet', async () => {
      const dir = tempDir('src');
      const file = path.join(dir, blkName(0));
      const rec = frame(BLOCKS[170]); // two transactions: the first payment
      const partial = Buffer.from(rec);
      partial.fill(0, 8 + 80 + 30);
      fs.writeFileSync(file, Buffer.concat([records(0, 170), partial, Buffer.alloc(1 << 16)]));
      const s = open(dir);
      const first = await s.scan();
      assert.equal(first.added, 170);
      await expectChain(s, HASHES.slice(0, 170));
      assert.equal(s.stats().blocks, 170);
      const fd = fs.openSync(file, 'r+');
      const rest = Buffer.concat([rec, records(171, 439)]);
      fs.writeSync(fd, rest, 0, rest.length, recordStart(170));
      fs.closeSync(fd);
      const second = await s.scan();
      assert.equal(second.added, 269);
      await expectChain(s, HASHES);
      assert.equal(s.stats().recordsRead, 439);
    });

    it('a record whose header is still zeros is not read yet', async () => {
      const dir = tempDir('src');
      const file = path.join(dir, blkName(0));
      const rec = frame(BLOCKS[100]);
      const blank = Buffer.from(rec);
      blank.fill(0, 8); // magic and size written, block not yet
      fs.writeFileSync(file, Buffer.concat([...BLOCKS.slice(0, 100).map((b) => frame(b)), blank]));
      const s = open(dir);
      await s.scan();
      assert.equal(s.tip().height, 99);
      assert.equal(s.stats().blocks, 100);
      const fd = fs.openSync(file, 'r+');
      fs.writeSync(fd, rec, 0, rec.length, recordStart(100));
      fs.closeSync(fd);
      fs.appendFileSync(file, Buffer.concat(BLOCKS.slice(101).map((b) => frame(b))));
      await s.scan();
      await expectChain(s, HASHES);
    });
  });

  describe('forks', () => {
    // Competing blocks made from real ones: a new coinbase, a recomputed merkle root, a new prev.
    const sib438 = forge(BLOCKS[438], HASHES[437], 1);
    const sib439 = forge(BLOCKS[437], hashOf(sib438), 2);

    it('forged blocks are valid blocks (merkle root checks) with the asked-for parent', () => {
      for (const [raw, prev] of [[sib438, HASHES[437]], [sib439, hashOf(sib438)]]) {
        const b = parseBlock(raw);
        assert.equal(b.prev, prev);
        assert.ok(!HASHES.includes(b.hash));
      }
    });

    it('a 1-block stale sibling seen after the real block is left out', async () => {
      const dir = tempDir('src');
      writeDir(dir, [BLOCKS, [sib438]]);
      const s = open(dir);
      await s.scan();
      await expectChain(s, HASHES);
      assert.equal(s.stats().blocks, 440);
      assert.equal(s.heightOf(hashOf(sib438)), null);
    });

    it('equal work: the tip seen first wins', async () => {
      const dir = tempDir('src');
      writeDir(dir, [[...BLOCKS.slice(0, 438), sib438, BLOCKS[438]]]);
      const s = open(dir);
      await s.scan();
      await expectChain(s, [...HASHES.slice(0, 438), hashOf(sib438)]);
    });

    it('a competing branch that becomes heavier takes over (reorg across scans)', async () => {
      const dir = tempDir('src');
      writeDir(dir, [BLOCKS]);
      const s = open(dir);
      await s.scan();
      await expectChain(s, HASHES);

      fs.writeFileSync(path.join(dir, blkName(1)), frame(sib438));
      const r1 = await s.scan();
      assert.equal(r1.added, 1);
      assert.equal(r1.changed, false);
      await expectChain(s, HASHES);

      fs.appendFileSync(path.join(dir, blkName(1)), frame(sib439));
      const r2 = await s.scan();
      assert.equal(r2.changed, true);
      const branch = [...HASHES.slice(0, 438), hashOf(sib438), hashOf(sib439)];
      assert.deepEqual(r2.tip, { height: 439, hash: branch[439] });
      await expectChain(s, branch);
      assert.equal(s.hashAt(438), hashOf(sib438));
      assert.equal(s.heightOf(HASHES[438]), null);
      const tail = await collect(s, 437);
      assert.deepEqual(tail.map((b) => b.hash), branch.slice(437));
      for (const b of tail) parseBlock(b.raw); // merkle-checked
    });

    it('a shorter stale branch and an orphan inside shuffled files are left out', async () => {
      const dir = tempDir('src');
      const s201 = forge(BLOCKS[201], HASHES[200], 5);
      const s202 = forge(BLOCKS[202], hashOf(s201), 6);
      const orphan = forge(BLOCKS[300], 'ab'.repeat(32), 7);
      const dup = BLOCKS[50]; // Core can store a block twice
      const mixed = shuffle([...BLOCKS, s201, s202, orphan, dup], 99);
      writeDir(dir, split(mixed, 4), { padding: 100 });
      const s = open(dir, { readAhead: 2048 });
      await s.scan();
      await expectChain(s, HASHES);
      assert.equal(s.stats().blocks, 442);
      assert.equal(s.stats().orphans, 1);
      assert.equal(s.stats().recordsRead, 443);
    });

    it('locate(hash) and chainWork(hash): any scanned block\'s place (a reader reads it back) and work from genesis; null for the unknown and the unlinked', async () => {
      const { BlockReader } = require('../../lib/sources/blockreader');
      const { blockProof } = require('../../lib/sources/header-index');
      const dir = tempDir('src');
      const orphan = forge(BLOCKS[300], 'ab'.repeat(32), 7);
      writeDir(dir, [BLOCKS, [sib438, orphan]]);
      const s = open(dir);
      await s.scan();
      const reader = new BlockReader({ dir, network: 'main' });
      try {
        let work = 0n;
        for (let h = 0; h <= TIP; h++) {
          work += blockProof(BLOCKS[h].readUInt32LE(72));
          if (h % 73 && h !== TIP) continue;
          assert.equal(s.chainWork(HASHES[h]), work);
          const { raw } = await reader.read(HASHES[h], s.locate(HASHES[h]));
          assert.ok(raw.equals(BLOCKS[h]));
        }
        // a stale block off the best chain lies somewhere too, with its own branch's work
        const { raw } = await reader.read(hashOf(sib438), s.locate(hashOf(sib438)));
        assert.ok(raw.equals(sib438));
        assert.equal(s.chainWork(hashOf(sib438)), s.chainWork(HASHES[438]));
        assert.ok(s.locate(hashOf(orphan)));
        assert.equal(s.chainWork(hashOf(orphan)), null);
        assert.equal(s.locate('00'.repeat(32)), null);
        assert.equal(s.chainWork('not a hash'), null);
      } finally {
        await reader.close();
      }
    });

    it('a longer branch hidden in an earlier file wins over the blocks seen first', async () => {
      const dir = tempDir('src');
      // blocks 0..437 in file 1, the fork (438', 439') in file 0, real 438 in file 2
      writeDir(dir, [[sib439, sib438], BLOCKS.slice(0, 438), [BLOCKS[438]]]);
      const s = open(dir);
      await s.scan();
      await expectChain(s, [...HASHES.slice(0, 438), hashOf(sib438), hashOf(sib439)]);
    });
  });

  it('a block file rewritten after the scan is reported, not misread', async () => {
    const dir = tempDir('src');
    writeDir(dir, [BLOCKS]);
    const s = open(dir);
    await s.scan();
    writeDir(dir, [shuffle(BLOCKS, 1)]);
    const err = await rejectsWith(collect(s), SourceError, 'ERR_BLOCK_CHANGED');
    assert.match(err.message, /blk00000\.dat/);
  });

  it('concurrent scans share one pass', async () => {
    const dir = tempDir('src');
    writeDir(dir, [BLOCKS]);
    const s = open(dir);
    const [a, b] = await Promise.all([s.scan(), s.scan()]);
    assert.equal(a, b);
    assert.equal(s.stats().recordsRead, 439);
  });

  it('a closed source refuses to work', async () => {
    const dir = tempDir('src');
    writeDir(dir, [BLOCKS]);
    const s = open(dir);
    await s.scan();
    await s.close();
    await rejectsWith(s.scan(), SourceError, 'ERR_SOURCE_CLOSED');
    await rejectsWith(collect(s), SourceError, 'ERR_SOURCE_CLOSED');
  });

  it('testnet: reads a testnet-framed dir from testnet genesis only', async () => {
    const dir = tempDir('src');
    fs.writeFileSync(path.join(dir, blkName(0)), frame(BLOCKS[0], NETWORKS.testnet));
    const s = open(dir, { network: 'testnet' });
    const err = await rejectsWith(s.scan(), SourceError, 'ERR_NO_GENESIS');
    assert.match(err.message, /testnet genesis/);
    assert.match(err.message, /wrong --network/);
  });
});

describe('chain work', () => {
  const { blockProof, HeaderIndex } = require('../../lib/sources/header-index');

  it('blockProof matches Bitcoin Core for known targets', () => {
    assert.equal(blockProof(0x1d00ffff), 0x100010001n); // mainnet difficulty 1
    assert.equal(blockProof(0x207fffff), 2n); // regtest
    // 0x1b0404cb is difficulty 16307.420938523983 (the Bitcoin wiki's example): proof = difficulty x proof(1)
    const ratio = Number(blockProof(0x1b0404cb)) / Number(blockProof(0x1d00ffff));
    assert.ok(Math.abs(ratio - 16307.420938523983) < 1e-6, String(ratio));
    assert.equal(blockProof(0x1d80ffff), 0n); // negative
    assert.equal(blockProof(0x1d000000), 0n); // zero
    assert.equal(blockProof(0xff00ffff), 0n); // overflows 256 bits
  });

  it('cumulative work is exact far past 2^53, and more work beats more blocks', () => {
    const ix = new HeaderIndex('00'.repeat(32));
    const h = (n) => Buffer.alloc(32, n);
    ix.add(h(0), h(0), 0x1d00ffff, 0, 0, 100);
    // branch a: 3 easy blocks; branch b: 1 block at a much higher difficulty
    ix.add(h(1), h(0), 0x1d00ffff, 0, 0, 100);
    ix.add(h(2), h(1), 0x1d00ffff, 0, 0, 100);
    ix.add(h(3), h(2), 0x1d00ffff, 0, 0, 100);
    ix.settle();
    assert.equal(ix.tipHeight, 3);
    ix.add(h(9), h(0), 0x17034219, 0, 0, 100);
    assert.equal(ix.settle(), true);
    assert.equal(ix.tipHeight, 1);
    assert.equal(ix.workOf(ix.best), 0x100010001n + blockProof(0x17034219));
    assert.ok(ix.workOf(ix.best) > 2n ** 64n);
  });
});
