'use strict';

const assert = require('node:assert/strict');
const { BlockFetcher } = require('../../lib/node/block-fetcher');
const { NodeClient } = require('../../lib/node/client');
const { resolveEndpoint } = require('../../lib/node/endpoint');
const { fromDisplayHex } = require('../../lib/chain/hash');
const { useBtcd } = require('../helpers/btcd');
const { nodeWallet } = require('../helpers/node-chain');

const { minerA } = nodeWallet();

describe('BlockFetcher: blocks fetched on a worker thread (btcd)', function () {
  this.timeout(60000);
  const btcd = useBtcd([{ miningAddress: minerA }]);
  let node;
  let client;
  let raws; // the helper's own fetch of the chain
  let hashes;

  before(async () => {
    node = btcd.nodes[0];
    await node.generate(200);
    raws = await node.rawBlocks(0);
    const hex = await node.batch(raws.map((_, h) => ['getblockhash', [h]]));
    hashes = Buffer.concat(hex.map(fromDisplayHex));
    client = NodeClient.fromEndpoint(resolveEndpoint({ rpcUrl: node.url, network: 'regtest', env: {} }), { retryMs: 2000 });
  });
  after(() => client.close());

  const opts = { requestBytes: 1500, maxBlocksPerRequest: 16, inflight: 3, aheadBytes: 1 << 20 };

  it('gives every block, in order, byte for byte, over many small requests', async () => {
    const f = new BlockFetcher(client.workerConfig());
    try {
      const got = [];
      for await (const raw of f.stream(hashes, opts)) got.push(raw);
      assert.equal(got.length, raws.length);
      got.forEach((raw, h) => assert.ok(raw.equals(raws[h]), `height ${h}`));
      assert.ok(f.stats().requests > 20, `${f.stats().requests} requests`);
    } finally {
      await f.close();
    }
  });

  it('fetches at most aheadBytes ahead of a caller that stops taking blocks', async () => {
    const f = new BlockFetcher(client.workerConfig());
    const size = raws[150].length; // late blocks are alike: coinbase only
    try {
      const it = f.stream(hashes.subarray(32 * 100), { ...opts, aheadBytes: 10 * size });
      await it.next();
      await new Promise((r) => setTimeout(r, 300));
      // at most aheadBytes of answers not taken, plus the requests in flight (each <= 16 blocks)
      const fetched = f.stats().calls;
      assert.ok(fetched <= 10 + 1 + 3 * 16, `${fetched} blocks fetched ahead`);
      await it.return();
    } finally {
      await f.close();
    }
  });

  it('a block the node does not have ends the stream with its RpcError and position', async () => {
    const f = new BlockFetcher(client.workerConfig());
    const list = Buffer.concat([hashes.subarray(0, 32 * 5), Buffer.alloc(32, 7), hashes.subarray(32 * 5, 32 * 8)]);
    const got = [];
    try {
      await assert.rejects((async () => { for await (const raw of f.stream(list, opts)) got.push(raw); })(), (err) => {
        assert.equal(err.code, 'ERR_NODE_RPC');
        assert.equal(err.rpcCode, -5);
        assert.equal(err.details.index, 5);
        return true;
      });
      assert.equal(got.length, 5, 'the blocks before it were given');
    } finally {
      await f.close();
    }
  });

  it('an abort stops it with ERR_ABORTED; the worker\'s retries before are reported to the main thread', async () => {
    const ac = new AbortController();
    const retries = [];
    // the abort comes once a retry against the dead node was reported
    const f = new BlockFetcher(client.workerConfig(), {
      signal: ac.signal,
      onRetry: (r) => {
        retries.push(r.error.code);
        if (r.error.code === 'ECONNREFUSED') ac.abort();
      },
    });
    try {
      const it = f.stream(hashes, { ...opts, aheadBytes: 2000 });
      await it.next();
      await node.kill(); // nothing answers now: the worker retries until the abort
      const rest = (async () => { for (;;) if ((await it.next()).done) return; })();
      await assert.rejects(rest, { code: 'ERR_ABORTED' });
      // requests in flight at the kill are reset, the next ones refused
      assert.ok(retries.includes('ECONNREFUSED') && retries.every((c) => c === 'ECONNREFUSED' || c === 'ECONNRESET'), JSON.stringify(retries));
    } finally {
      await f.close();
      await node.start();
    }
  });
});
