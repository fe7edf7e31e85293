'use strict';

const assert = require('node:assert/strict');
const bitcore = require('bitcore-lib');
const { NodeClient } = require('../../lib/node/client');
const { resolveEndpoint } = require('../../lib/node/endpoint');
const { NodeSource } = require('../../lib/sources/node');
const { CombinedSource } = require('../../lib/sources/combined');
const { BlkWriter } = require('../../tools/generator');
const { useBtcd } = require('../helpers/btcd');
const { nodeWallet } = require('../helpers/node-chain');
const { tempDir: tmpDir } = require('../helpers/tmp');

const { minerA, minerB } = nodeWallet();

/** Every block a source yields for from..to, as [height, hash, prev, raw hex]. */
async function readAll(source, from, to) {
  const out = [];
  for await (const b of source.blocks(from, to)) out.push(b);
  return out;
}

/** A blocks dir holding these raw blocks, in order. */
async function blocksDir(raws) {
  const dir = tmpDir('node-blocks');
  const w = new BlkWriter({ dir, network: 'regtest' });
  for (const raw of raws) w.write(raw);
  await w.close();
  return dir;
}

const hashOf = (raw) => bitcore.Block.fromBuffer(raw).hash;

describe('NodeSource and CombinedSource against btcd', function () {
  this.timeout(60000);
  const btcd = useBtcd([{ miningAddress: minerA }, { miningAddress: minerB }]);
  const sources = [];
  const source = (node, opts = {}) => {
    const client = NodeClient.fromEndpoint(resolveEndpoint({ rpcUrl: node.url, network: 'regtest', env: {} }), { retryMs: 2000 });
    const s = new NodeSource({ client, network: 'regtest', ...opts });
    sources.push(s);
    return s;
  };
  after(() => Promise.all(sources.map((s) => s.close())));

  it('scan learns the best chain; blocks() gives the node\'s bytes in order; a rescan costs one request when nothing changed', async () => {
    const [a] = btcd.nodes;
    await a.generate(150);
    const want = await a.rawBlocks(0);
    // small requests, so the 151 blocks take many, several in flight
    const src = source(a, { requestBytes: 2000, inflight: 3 });
    const first = await src.scan();
    assert.deepEqual(first, { tip: { height: 150, hash: hashOf(want[150]) }, changed: true });
    for (const h of [0, 1, 75, 150]) assert.equal(src.hashAt(h), hashOf(want[h]));
    assert.equal(src.hashAt(151), null);

    const got = await readAll(src, 0, 150);
    assert.equal(got.length, 151);
    got.forEach((b, h) => {
      assert.equal(b.height, h);
      assert.ok(b.raw.equals(want[h]), `height ${h}`);
      assert.equal(b.hash, hashOf(want[h]));
      assert.equal(b.prev, h ? hashOf(want[h - 1]) : '00'.repeat(32));
    });
    assert.ok(src.stats().fetch.requests > 10, `${src.stats().fetch.requests} getblock requests`);
    assert.deepEqual((await readAll(src, 148, 150)).map((b) => b.height), [148, 149, 150]);
    await assert.rejects(readAll(src, 0, 151), { code: 'ERR_RANGE' });

    const r0 = src.stats().rpc.requests;
    assert.equal((await src.scan()).changed, false);
    assert.equal(src.stats().rpc.requests - r0, 1);

    // three new blocks: only their headers are fetched
    const h0 = src.stats().headers;
    const added = await a.generate(3);
    assert.deepEqual(await src.scan(), { tip: { height: 153, hash: added[2] }, changed: true });
    assert.equal(src.stats().headers - h0, 3);
    assert.deepEqual((await readAll(src, 151, 153)).map((b) => b.hash), added);
  });

  it('a reorg between scan and read: the scanned chain is read whole and checked; the next scan has the fork', async () => {
    const [a, b] = btcd.nodes;
    const shared = (await a.tip()).height;
    await b.submitBlocks(await a.rawBlocks(1));
    assert.deepEqual(await b.tip(), await a.tip());
    const branchA = await a.generate(2); // shared+1, shared+2 on A
    const beforeReorg = await a.rawBlocks(0);
    const src = source(a);
    await src.scan();
    assert.equal(src.tip().hash, branchA[1]);

    const branchB = await b.generate(3); // a longer branch on B: A follows it once it has it
    await a.submitBlocks(await b.rawBlocks(shared + 1));
    assert.equal((await a.tip()).hash, branchB[2]);

    // the read still gives the scanned chain, block by block linked (A keeps stale blocks)
    const got = await readAll(src, shared - 1, shared + 2);
    assert.deepEqual(got.map((x) => x.hash), [hashOf(beforeReorg[shared - 1]), hashOf(beforeReorg[shared]), ...branchA]);

    const r = await src.scan();
    assert.deepEqual(r.tip, { height: shared + 3, hash: branchB[2] });
    assert.equal(src.hashAt(shared), hashOf(beforeReorg[shared]), 'below the fork: unchanged');
    assert.deepEqual([1, 2, 3].map((k) => src.hashAt(shared + k)), branchB);

    // a blocks dir still holding A's old branch: it serves up to the fork, the node the rest
    const dir = await blocksDir(beforeReorg);
    const client = NodeClient.fromEndpoint(resolveEndpoint({ rpcUrl: a.url, network: 'regtest', env: {} }), { retryMs: 2000 });
    const both = new CombinedSource({ dir, client, network: 'regtest' });
    try {
      await both.scan();
      assert.equal(both.split, shared);
      assert.deepEqual(both.tip(), { height: shared + 3, hash: branchB[2] });
      const all = await readAll(both, 0, shared + 3);
      assert.deepEqual(all.map((x) => x.hash), [...beforeReorg.slice(0, shared + 1).map(hashOf), ...branchB]);
      assert.deepEqual(both.stats().fromDir, shared + 1);
      assert.deepEqual(both.stats().fromNode, 3);
      // the guess from the dir spared the node most header requests
      assert.ok(both.stats().node.headers <= 3, `${both.stats().node.headers} headers fetched`);
    } finally {
      await both.close();
    }
  });

  it('a block of the scanned chain that the node no longer has: ERR_SOURCE_CHANGED (SyncService rescans)', async () => {
    const [a] = btcd.nodes;
    const src = source(a);
    await src.scan();
    const tip = src.tip();
    const keep = await a.rawBlocks(1, 100);
    await a.restart({ keepChain: false }); // btcd starts over from genesis
    await a.submitBlocks(keep);
    await assert.rejects(readAll(src, 95, tip.height), (err) => {
      assert.equal(err.code, 'ERR_SOURCE_CHANGED');
      assert.match(err.message, /no longer has block 101 .*its best chain changed/);
      return true;
    });
    const r = await src.scan();
    assert.deepEqual(r.tip, { height: 100, hash: hashOf(keep[99]) });
    assert.equal(src.hashAt(101), null);
  });

  it('a node of another network: the scan stops with ERR_NODE_NETWORK', async () => {
    const [a] = btcd.nodes;
    const client = NodeClient.fromEndpoint(resolveEndpoint({ rpcUrl: a.url, network: 'testnet', env: {} }), { retryMs: 0 });
    const src = new NodeSource({ client, network: 'testnet' });
    try {
      await assert.rejects(src.scan(), { code: 'ERR_NODE_NETWORK' });
    } finally {
      await src.close();
    }
  });
});
