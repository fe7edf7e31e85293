'use strict';

const assert = require('node:assert/strict');
const path = require('node:path');
const { BlocksDirSource } = require('../../lib/sources/blocksdir');
const { parseColumns } = require('../../lib/chain/columns');
const { toDisplayHex } = require('../../lib/chain/hash');
const { buildDeltas } = require('../../lib/sync/delta');
const { makeChain, openIndex } = require('../helpers/chains');
const { tempDir } = require('../helpers/tmp');

/** Every best-chain block of a dir, parsed: [{height, cols}]. */
async function parsedChain(dir) {
  const source = new BlocksDirSource({ dir, network: 'regtest' });
  try {
    await source.scan();
    const out = [];
    for await (const b of source.blocks(0)) out.push({ height: b.height, cols: parseColumns(b.raw) });
    return out;
  } finally {
    await source.close();
  }
}

/**
 * What each input spends, by the plainest means: a Map from "txid:vout" to the output, filled
 * block by block in chain order (the genesis coinbase left out, as Bitcoin Core does).
 */
function naiveSpends(blocks) {
  const outputs = new Map();
  const spends = [];
  let txNum = 0;
  for (const { height, cols } of blocks) {
    const perBlock = [];
    for (let t = 0; t < cols.txCount; t++, txNum++) {
      for (let i = cols.inStart[t]; i < cols.inStart[t + 1]; i++) {
        const key = `${cols.prevouts.toString('hex', 36 * i, 36 * i + 32)}:${cols.prevouts.readUInt32LE(36 * i + 32)}`;
        const o = outputs.get(key);
        assert.ok(o, `input ${key} spends a known output`);
        outputs.delete(key);
        perBlock.push(o);
      }
      if (height === 0) continue;
      for (let o = cols.outStart[t]; o < cols.outStart[t + 1]; o++) {
        outputs.set(`${cols.txids.toString('hex', 32 * t, 32 * t + 32)}:${o - cols.outStart[t]}`, {
          value: cols.values[o], scripthash: cols.scripthashes.toString('hex', 32 * o, 32 * o + 32), height, txNum,
        });
      }
    }
    spends.push(perBlock);
  }
  return spends;
}

describe('buildDeltas: prevouts from the batch, then the store', function () {
  this.timeout(60000);
  let chain;
  let blocks;

  before(async () => {
    chain = await makeChain({ seed: 'delta-1', blocks: 60 });
    blocks = await parsedChain(chain.dir);
  });

  it('resolves every input as a plain outpoint map does, whatever the batch boundaries', async () => {
    const expected = naiveSpends(blocks);
    const store = await openIndex(path.join(tempDir('delta'), 'index'));
    try {
      let inBatch = 0;
      let fromStore = 0;
      // uneven batches: 1, 2, … blocks, so spends cross batch boundaries in every way
      for (let h = 0, size = 1; h < blocks.length; h += size, size = (size % 7) + 1) {
        const tip = await store.getTip();
        const batch = blocks.slice(h, h + size);
        const deltas = await buildDeltas(batch, store, tip ? tip.nextTxNum : 0);
        deltas.forEach((d, k) => {
          assert.equal(d.height, batch[k].height);
          const want = expected[d.height];
          assert.equal(d.spent.values.length, want.length);
          want.forEach((o, i) => {
            assert.equal(d.spent.values[i], o.value);
            assert.equal(d.spent.scripthashes.toString('hex', 32 * i, 32 * i + 32), o.scripthash);
            assert.equal(d.spent.heights[i], o.height);
            assert.equal(d.spent.txNums[i], o.txNum);
            if (o.height >= batch[0].height) inBatch++;
            else fromStore++;
          });
        });
        await store.apply(deltas);
      }
      assert.ok(inBatch > 100 && fromStore > 100, `both paths exercised (${inBatch} in batch, ${fromStore} from the store)`);
    } finally {
      await store.close();
    }
  });

  it('an input whose output is neither in the batch nor in the store: ERR_MISSING_PREVOUT naming it', async () => {
    const store = await openIndex(path.join(tempDir('delta-missing'), 'index'));
    try {
      await store.apply(await buildDeltas(blocks.slice(0, 30), store, 0));
      const tip = await store.getTip();
      // block 40 spends outputs of blocks 30-39, which the store has never seen
      await assert.rejects(buildDeltas(blocks.slice(40, 41), store, tip.nextTxNum), (err) => {
        assert.equal(err.code, 'ERR_MISSING_PREVOUT');
        assert.equal(err.details.height, 40);
        assert.match(err.details.txid, /^[0-9a-f]{64}$/);
        assert.match(err.details.prevout, /^[0-9a-f]{64}:\d+$/);
        assert.match(err.message, /addrindex verify/);
        return true;
      });
    } finally {
      await store.close();
    }
  });

  it('the same output spent twice in one batch: ERR_DOUBLE_SPEND, from the batch and from the store', async () => {
    const store = await openIndex(path.join(tempDir('delta-double'), 'index'));
    try {
      await store.apply(await buildDeltas(blocks.slice(0, 20), store, 0));
      const tip = await store.getTip();
      // block 20 twice: the copy spends again what the first spent (store outputs, and
      // outputs created earlier in block 20 itself)
      const twice = [blocks[20], { height: 21, cols: blocks[20].cols }];
      await assert.rejects(buildDeltas(twice, store, tip.nextTxNum), (err) => {
        assert.equal(err.code, 'ERR_DOUBLE_SPEND');
        assert.equal(err.details.height, 21);
        return true;
      });
      // the same with only store outputs: two different blocks spending one stored output
      const c = blocks[20].cols;
      const first = c.inStart[1];
      const storeSpent = naiveSpends(blocks)[20].findIndex((o, i) => o.height < 20 && i >= first);
      assert.ok(storeSpent >= 0);
      const prevout = c.prevouts.subarray(36 * storeSpent, 36 * storeSpent + 36);
      const other = blocks[21].cols;
      const forged = { ...other, prevouts: Buffer.from(other.prevouts) };
      prevout.copy(forged.prevouts, 36 * other.inStart[1]);
      await assert.rejects(buildDeltas([blocks[20], { height: 21, cols: forged }], store, tip.nextTxNum), (err) => {
        assert.equal(err.code, 'ERR_DOUBLE_SPEND');
        assert.equal(err.details.prevout, `${toDisplayHex(prevout.subarray(0, 32))}:${prevout.readUInt32LE(32)}`);
        return true;
      });
    } finally {
      await store.close();
    }
  });
});
