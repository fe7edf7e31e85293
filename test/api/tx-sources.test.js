'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { syncedFixture, startServer, request, referenceIndex, TX170 } = require('./helpers');
const { mainnet439Blocks } = require('../helpers/fixtures');
const { makeChain, addBranch, openIndex, syncInto } = require('../helpers/chains');
const { readDirRecords, longestChain } = require('../generator/helpers');
const { tempDir } = require('../helpers/tmp');
const { parseBlock } = require('../../lib/chain/block');
const { getNetwork } = require('../../lib/chain/networks');

const REGTEST = getNetwork('regtest');

/** Frames raw blocks as Bitcoin Core's blk files hold them. */
function blkFile(raws) {
  return Buffer.concat(raws.flatMap((raw) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(getNetwork('main').magic, 0);
    head.writeUInt32LE(raw.length, 4);
    return [head, raw];
  }));
}

describe('api: transactions and blocks across a reorg', function () {
  this.timeout(120000);

  it('the reverted blocks\' spenders and locators are gone; every answer equals a fresh index of the final chain', async () => {
    const seed = 'tx-reorg';
    const shape = { txsPerBlock: 12 };
    const chain = await makeChain({ seed, blocks: 16, ...shape });
    const live = path.join(tempDir('reorg-live'), 'index');
    const store = await openIndex(live);
    let srv;
    let fresh;
    let freshStore;
    try {
      await syncInto(chain.dir, store);
      srv = await startServer(live, { network: 'regtest', blocksDir: chain.dir });
      const get = (p) => request(srv.url + p);
      const oldTip = (await get('/api/blocks/tip/hash')).text;
      // the old branch above the fork: its transactions and the outputs they spent
      const forkHeight = 11;
      const reverted = [];
      for (let h = forkHeight + 1; h <= 16; h++) {
        const hash = (await get(`/api/block-height/${h}`)).text;
        reverted.push({ hash, txids: (await get(`/api/block/${hash}/txids`)).json });
      }
      const spentAbove = [];
      for (const b of reverted) {
        for (const txid of b.txids.slice(1)) {
          for (const v of (await get(`/api/tx/${txid}`)).json.vin) spentAbove.push(`${v.txid}:${v.vout}`);
        }
      }
      assert.ok(spentAbove.length > 10);

      // a heavier branch from height 11: the last five blocks are replaced by six others
      await addBranch({ dir: chain.dir, seed, forkHeight, branchSeed: 'other', blocks: 6, ...shape });
      const r = await syncInto(chain.dir, store);
      assert.equal(r.tip.height, 17);
      assert.equal(r.reorgs.length, 1);

      freshStore = await openIndex(path.join(tempDir('reorg-fresh'), 'index'));
      await syncInto(chain.dir, freshStore);
      fresh = await startServer(freshStore.opts.datadir, { network: 'regtest', blocksDir: chain.dir });
      const both = async (p) => {
        const [a, b] = await Promise.all([get(p), request(fresh.url + p)]);
        assert.equal(a.status, b.status, `${p}: ${a.text.slice(0, 200)}`);
        assert.equal(a.text, b.text, p);
        return a;
      };

      // the branch's blocks are read where they lie (appended to the blk file), checked
      const records = readDirRecords(chain.dir, REGTEST.magic);
      const best = longestChain(records, REGTEST.genesis);
      assert.equal(best.length, 18);
      const byHash = new Map(records.map((x) => [x.hash, x.raw]));
      const finalTxids = new Set();
      for (let h = 0; h < best.length; h++) {
        const raw = await fetch(`${srv.url}/api/block/${best[h]}/raw`);
        assert.deepEqual(Buffer.from(await raw.arrayBuffer()), byHash.get(best[h]), `height ${h}`);
        for (const p of ['', '/status', '/txids', '/txs']) await both(`/api/block/${best[h]}${p}`);
        for (const t of parseBlock(byHash.get(best[h])).txs) finalTxids.add(t.hash);
      }
      // every transaction of the final chain: the same transaction, prevouts, fee and spenders
      for (const txid of finalTxids) {
        for (const p of ['', '/outspends', '/merkle-proof']) await both(`/api/tx/${txid}${p}`);
        await both(`/insight-api/tx/${txid}`);
        await both(`/api/v1/tx/${txid}?full=1`);
      }
      // the reverted transactions are gone, and so are the spends they made
      let gone = 0;
      for (const b of reverted) {
        assert.equal((await both(`/api/block/${b.hash}`)).status, 404);
        assert.deepEqual((await both(`/api/block/${b.hash}/status`)).json, { in_best_chain: false, height: null, next_best: null });
        for (const txid of b.txids) {
          if (finalTxids.has(txid)) continue;
          assert.equal((await both(`/api/tx/${txid}`)).status, 404);
          gone++;
        }
      }
      assert.ok(gone > 30);
      let unspentAgain = 0;
      for (const op of spentAbove) {
        const [txid, vout] = op.split(':');
        const s = (await both(`/api/tx/${txid}/outspend/${vout}`)).json;
        if (!s.spent) unspentAgain++;
        else assert.ok(s.status.block_height <= forkHeight || best.includes(s.status.block_hash));
      }
      assert.ok(unspentAgain > 0, 'outputs the reverted blocks spent are unspent again');
      assert.notEqual((await get('/api/blocks/tip/hash')).text, oldTip);
      await both('/api/blocks');
      await both(`/api/blocks/${forkHeight + 3}`);
    } finally {
      if (srv) await srv.close();
      if (fresh) await fresh.close();
      if (freshStore) await freshStore.close();
      await store.close();
    }
  });
});

describe('api: a blk file that no longer holds what the index recorded', function () {
  this.timeout(60000);
  let fixture;
  let ref;
  let before;

  beforeEach(async () => {
    fixture = await syncedFixture();
    ref = referenceIndex();
    const srv = await startServer(fixture.datadir);
    before = new Map();
    try {
      for (const txid of ref.txids) before.set(txid, (await request(`${srv.url}/api/tx/${txid}`)).text);
    } finally {
      await srv.close();
    }
  });
  afterEach(async () => { if (fixture) await fixture.cleanup(); });

  /** Every transaction again: the same answer as before, or 503 ERR_BLOCK_UNAVAILABLE. */
  async function rightOr503(url) {
    const counts = { same: 0, unavailable: 0 };
    for (const txid of ref.txids) {
      const r = await request(`${url}/api/tx/${txid}`);
      if (r.status === 200) {
        assert.equal(r.text, before.get(txid), txid);
        counts.same++;
      } else {
        assert.equal(r.status, 503, `${txid}: ${r.text}`);
        assert.equal(r.json.error.code, 'ERR_BLOCK_UNAVAILABLE');
        assert.doesNotMatch(r.text, /blk\d{5}\.dat|\/tmp\//); // no file names or paths
        counts.unavailable++;
      }
    }
    return counts;
  }

  it('reindexed in another order: blocks that moved answer 503, the one that stayed answers right, none another', async () => {
    const raws = mainnet439Blocks();
    // a reindex that wrote heights 300-438 right after genesis: every other block moved
    const order = [raws[0], ...raws.slice(300), ...raws.slice(1, 300)];
    fs.writeFileSync(path.join(fixture.blocksDir, 'blk00000.dat'), blkFile(order));
    const srv = await startServer(fixture.datadir);
    try {
      const counts = await rightOr503(srv.url);
      assert.equal(counts.same, 1); // the genesis coinbase, still at its place
      assert.equal(counts.unavailable, ref.txids.length - 1);
      const block = await request(`${srv.url}/api/block/${ref.blockHashes[170]}/raw`);
      assert.equal(block.status, 503);
      // what the index itself holds still answers
      assert.equal((await request(`${srv.url}/api/block/${ref.blockHashes[170]}`)).status, 200);
      assert.equal((await request(`${srv.url}/api/tx/${TX170}/status`)).status, 200);
      assert.equal((await request(`${srv.url}/api/tx/${TX170}/outspends`)).status, 503);
    } finally {
      await srv.close();
    }
  });

  it('one byte of a transaction changed in place: it answers 503, and so does its spender; the rest as before', async () => {
    const file = path.join(fixture.blocksDir, 'blk00000.dat');
    const buf = fs.readFileSync(file);
    const raw = mainnet439Blocks()[170];
    const at = buf.indexOf(raw) + parseBlock(raw).txs[1].offset + 50; // inside TX170's signature
    buf[at] ^= 1;
    fs.writeFileSync(file, buf);
    const srv = await startServer(fixture.datadir);
    try {
      const counts = await rightOr503(srv.url);
      const spendsTx170 = ref.txs.filter((t) => ref.blocks[t.height].transactions[t.position].inputs.some((i) => i.prevTxId.toString('hex') === TX170));
      assert.ok(spendsTx170.length >= 1);
      // TX170 and the transaction spending its change; block 170's coinbase, whose own bytes are
      // intact, is still read alone and checked by its txid and the block's header
      assert.equal(counts.unavailable, 1 + spendsTx170.length);
      assert.equal(counts.same, ref.txids.length - counts.unavailable);
      assert.equal((await request(`${srv.url}/api/tx/${TX170}`)).status, 503);
      assert.equal((await request(`${srv.url}/api/block/${ref.blockHashes[170]}/txs`)).status, 503); // the whole block fails its merkle root
    } finally {
      await srv.close();
    }
  });
});
