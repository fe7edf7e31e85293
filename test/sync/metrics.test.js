'use strict';

const assert = require('node:assert/strict');
const path = require('node:path');
const { makeChain, addBranch, tipOf, waitFor } = require('../helpers/chains');
const { startCli } = require('../helpers/cli');
const { tempDir } = require('../helpers/tmp');
const { metricValue } = require('../helpers/metrics');

describe('sync --follow --metrics-port: Prometheus metrics and the JSON log of a sync', function () {
  this.timeout(90000);

  it('counts blocks, txs, batches and reorgs as they happen; tips and lag; JSON records on stdout', async () => {
    const seed = 'metrics-1';
    const chain = await makeChain({ seed, blocks: 30, txsPerBlock: 10 });
    const datadir = path.join(tempDir('metrics'), 'index');
    const child = startCli(['sync', '--blocks-dir', chain.dir, '--datadir', datadir, '--network', 'regtest',
      '--follow', '--poll-ms', '50', '--threads', '1', '--batch-blocks', '8', '--metrics-port', '0', '--log-format', 'json']);
    const scrape = async () => {
      const [, url] = child.output.stderr.match(/metrics on (http:\/\/\S+)/);
      const res = await fetch(url);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
      return res.text();
    };
    try {
      await waitFor(() => /metrics on http/.test(child.output.stderr), 20000, 'the metrics URL');
      await waitFor(async () => (await tipOf(datadir) || {}).hash === chain.tip.hash, 30000, 'the initial sync');
      let m = await scrape();
      assert.equal(metricValue(m, 'addrindex_sync_blocks_total'), 31);
      assert.equal(metricValue(m, 'addrindex_sync_txs_total'), chain.txs);
      // the blocks' bytes: the files' bytes less each record's 8-byte magic and size
      assert.equal(metricValue(m, 'addrindex_sync_bytes_total'), chain.bytes - 8 * 31);
      // 31 blocks in batches of at most 8 (the first ones smaller: the slow start)
      const batches = metricValue(m, 'addrindex_sync_batch_seconds_count');
      assert.ok(batches >= 4 && batches <= 31, String(batches));
      assert.equal(metricValue(m, 'addrindex_sync_commit_seconds_count'), batches);
      assert.ok(metricValue(m, 'addrindex_sync_commit_seconds_sum') <= metricValue(m, 'addrindex_sync_batch_seconds_sum'));
      assert.equal(metricValue(m, 'addrindex_index_tip_height'), 30);
      assert.equal(metricValue(m, 'addrindex_node_tip_height'), 30);
      assert.equal(metricValue(m, 'addrindex_index_lag_blocks'), 0);
      assert.equal(metricValue(m, 'addrindex_sync_caught_up'), 1);
      assert.equal(metricValue(m, 'addrindex_sync_reorgs_total'), 0);
      assert.ok(metricValue(m, 'addrindex_sync_txs_per_second') > 0);
      // exposed for the node source, which feeds it; the blocks dir has no calls to fail
      assert.match(m, /^# TYPE addrindex_node_errors_total counter$/m);
      assert.ok(metricValue(m, 'addrindex_lmdb_used_bytes') > 0);
      assert.equal(metricValue(m, 'addrindex_sync_prefetched_batches'), 0); // no reads ahead: off by default

      // 10 more blocks, then a heavier branch from 37: a 3-deep reorg
      const more = await addBranch({ dir: chain.dir, seed, forkHeight: 30, branchSeed: 'more', blocks: 10, txsPerBlock: 10 });
      await waitFor(async () => (await tipOf(datadir) || {}).hash === more.tip.hash, 30000, 'tip 40');
      const reorg = await addBranch({
        dir: chain.dir, seed, forkHeight: 37, branchSeed: 'reorg', blocks: 5, txsPerBlock: 10, branches: [{ atHeight: 31, seed: 'more' }],
      });
      await waitFor(async () => (await tipOf(datadir) || {}).hash === reorg.tip.hash, 30000, 'the reorg to tip 42');
      m = await scrape();
      assert.equal(metricValue(m, 'addrindex_index_tip_height'), 42);
      assert.equal(metricValue(m, 'addrindex_node_tip_height'), 42);
      // 31 + 10 blocks applied, 3 reverted, the branch's 5 applied
      assert.equal(metricValue(m, 'addrindex_sync_reorgs_total'), 1);
      assert.equal(metricValue(m, 'addrindex_sync_reverted_blocks_total'), 3);
      assert.equal(metricValue(m, 'addrindex_sync_blocks_total'), 31 + 10 + 5);
    } finally {
      child.kill('SIGTERM');
    }
    const res = await child.done;
    assert.equal(res.code, 0, res.stderr);
    // --log-format json: the JSON log on stdout
    const records = res.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    assert.ok(records.every((r) => typeof r.level === 'string' && r.time && r.pid === child.pid));
    assert.ok(records.some((r) => r.msg === 'at the source\'s tip' && r.height === 42));
    const last = records[records.length - 1];
    assert.equal(last.msg, 'synced');
    assert.equal(last.tip.height, 42);
    // and no readable copy of it: stderr says only where the metrics are
    assert.doesNotMatch(res.stderr, /synced \d+ blocks/);
    assert.equal(res.stdout.split('\n').filter((l) => l && !l.startsWith('{')).length, 0);
  });

  it('--metrics-port on a port in use: a clear error, no datadir created', async () => {
    const net = require('node:net');
    const blocker = net.createServer();
    await new Promise((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    try {
      const chain = await makeChain({ seed: 'metrics-2', blocks: 3, txsPerBlock: 2 });
      const datadir = path.join(tempDir('metrics-port'), 'index');
      const r = await startCli(['sync', '--blocks-dir', chain.dir, '--datadir', datadir, '--network', 'regtest',
        '--metrics-port', String(blocker.address().port), '--log-format', 'text']).done;
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /^addrindex: cannot serve metrics on 127\.0\.0\.1:\d+: .*EADDRINUSE.* \[ERR_LISTEN\]\n$/m);
      assert.equal(r.stdout, '');
      assert.ok(!require('node:fs').existsSync(datadir), 'no datadir was created');
    } finally {
      blocker.close();
    }
  });
});
