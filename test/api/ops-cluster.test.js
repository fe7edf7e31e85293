'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { syncedFixture, request, HAL, SATOSHI } = require('./helpers');
const { MAINNET_439 } = require('../helpers/fixtures');
const { waitFor } = require('../helpers/chains');
const { runCli, startCli } = require('../helpers/cli');
const { metricValue } = require('../helpers/metrics');

/** `addrindex serve …` with stdout (the JSON log) and stderr (readable lines) kept apart. */
function serveCli(args) {
  const proc = startCli(['serve', ...args]);
  return { proc, out: proc.output, exited: proc.exited.then((r) => r.code), records: () => proc.output.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l)) };
}

/** A GET on a connection of its own (so the primary hands each to the next worker). */
function getFresh(url, headers = {}) {
  return new Promise((resolve, reject) => {
    http.get(url, { agent: false, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, id: res.headers['x-request-id'] }));
    }).on('error', reject);
  });
}

describe('api operations over `addrindex serve --workers 2`: one /metrics for the cluster, /ready, JSON logs', function () {
  this.timeout(90000);
  let fixture;
  let serve;
  let url;

  before(async () => {
    // the index and the node's blocks dir both end at height 149
    fixture = await syncedFixture(150);
    serve = serveCli(['--datadir', fixture.datadir, '--workers', '2', '--port', '0', '--blocks-dir', fixture.blocksDir,
      '--max-lag', '3', '--poll-ms', '50', '--log-format', 'json', '--log-level', 'debug']);
    await waitFor(() => /listening on (http:\/\/\S+)/.test(serve.out.stderr) || serve.proc.exitCode !== null, 30000, 'serve to listen');
    [, url] = serve.out.stderr.match(/listening on (http:\/\/\S+)/) || [];
    assert.ok(url, serve.out.stderr);
  });
  after(async () => {
    if (serve && serve.proc.exitCode === null) {
      serve.proc.kill('SIGKILL');
      await serve.exited;
    }
    if (fixture) await fixture.cleanup();
  });

  it('stdout is JSON lines only (the banner goes to stderr); the serving record names the URL and both tips', () => {
    const records = serve.records();
    const serving = records.find((r) => r.msg === 'serving');
    assert.equal(serving.url, url);
    assert.equal(serving.level, 'info');
    assert.deepEqual([serving.tip.height, serving.nodeTip.height, serving.workers], [149, 149, 2]);
    assert.equal(records.filter((r) => r.msg === 'worker listening').length, 2);
    assert.match(serve.out.stderr, /addrindex serve: worker \d+ listening/);
  });

  it('/metrics merges both workers: the request count is the sum over the two, by route and status', async () => {
    const n = 24;
    const answers = [];
    for (let i = 0; i < n; i++) answers.push(await getFresh(`${url}/api/v1/address/${i % 2 ? HAL : SATOSHI}`));
    assert.deepEqual(answers.map((a) => a.status), new Array(n).fill(200));
    const bad = await getFresh(`${url}/api/v1/tx/zz`);
    assert.equal(bad.status, 400);
    // which worker answered each request, from the JSON log (every request at debug, with its
    // id; a worker writes the line after the answer, so the last ones may still be on their way)
    await waitFor(() => {
      const ids = new Set(serve.records().map((r) => r.reqId));
      return answers.every((a) => ids.has(a.id));
    }, 10000, 'every request in the log');
    const byId = new Map(serve.records().filter((r) => r.msg === 'request').map((r) => [r.reqId, r]));
    const workers = new Map();
    for (const a of answers) {
      const rec = byId.get(a.id);
      assert.ok(rec, `request ${a.id} is in the log`);
      workers.set(rec.worker, (workers.get(rec.worker) || 0) + 1);
    }
    assert.equal(workers.size, 2, 'both workers answered some of them');
    const text = (await request(`${url}/metrics`)).text;
    assert.equal(metricValue(text, 'addrindex_http_requests_total', { route: '/api/v1/address/:address', method: 'GET', status: '200' }), n);
    assert.equal(metricValue(text, 'addrindex_http_requests_total', { route: '/api/v1/tx/:txid', method: 'GET', status: '400' }), 1);
    assert.equal(metricValue(text, 'addrindex_http_request_duration_seconds_count', { route: '/api/v1/address/:address', method: 'GET' }), n);
    assert.equal(metricValue(text, 'addrindex_metrics_workers_reporting'), 2);
    assert.equal(metricValue(text, 'addrindex_workers'), 2);
    // gauges every worker reads are not summed
    assert.equal(metricValue(text, 'addrindex_index_tip_height'), 149);
    assert.equal(metricValue(text, 'addrindex_node_tip_height'), 149);
    assert.equal(metricValue(text, 'addrindex_index_lag_blocks'), 0);
    // process metrics of the primary and both workers, summed
    assert.ok(metricValue(text, 'process_resident_memory_bytes') > 3 * 20e6);
  });

  it('/ready: 503 when the node moves 289 blocks ahead, 200 once a sync catches up', async () => {
    assert.equal((await request(`${url}/ready`)).status, 200);
    // the node writes the rest of the blocks
    const all = fs.readFileSync(MAINNET_439);
    const blk = path.join(fixture.blocksDir, 'blk00000.dat');
    fs.appendFileSync(blk, all.subarray(fs.statSync(blk).size));
    const behind = await waitFor(async () => {
      const r = await request(`${url}/ready`);
      return r.json.node.tip && r.json.node.tip.height === 438 ? r : null;
    }, 20000, 'the node tip 438 in /ready');
    assert.equal(behind.status, 503);
    assert.deepEqual([behind.json.lag, behind.json.reasons], [289, ['the index is 289 blocks behind the node (max 3)']]);
    assert.equal(metricValue((await request(`${url}/metrics`)).text, 'addrindex_index_lag_blocks'), 289);
    const sync = await runCli(['sync', '--blocks-dir', fixture.blocksDir, '--datadir', fixture.datadir, '--quiet', '--threads', '0']);
    assert.equal(sync.code, 0, sync.stderr);
    const ready = await request(`${url}/ready`);
    assert.equal(ready.status, 200);
    assert.deepEqual([ready.json.ready, ready.json.lag, ready.json.index.tip.height], [true, 0, 438]);
    const status = await request(`${url}/api/v1/status`);
    assert.deepEqual([status.json.sync.sourceTip, status.json.sync.lag], [438, 0]);
  });

  it('a node that cannot be read is counted by error code; a killed worker counts as a restart', async () => {
    const moved = `${fixture.blocksDir}-away`;
    fs.renameSync(fixture.blocksDir, moved);
    try {
      await waitFor(async () => metricValue((await request(`${url}/metrics`)).text, 'addrindex_node_errors_total', { code: 'ERR_NO_BLOCKS_DIR' }) > 0,
        20000, 'a node error to be counted');
    } finally {
      fs.renameSync(moved, fixture.blocksDir);
    }
    assert.ok(serve.records().some((r) => r.level === 'warn' && r.code === 'ERR_NO_BLOCKS_DIR'));
    const pids = serve.records().filter((r) => r.msg === 'worker listening').map((r) => r.worker);
    process.kill(pids[0], 'SIGKILL');
    await waitFor(() => serve.records().filter((r) => r.msg === 'worker listening').length === 3, 20000, 'a replacement worker');
    const text = (await request(`${url}/metrics`)).text;
    assert.equal(metricValue(text, 'addrindex_worker_restarts_total'), 1);
    assert.equal(metricValue(text, 'addrindex_workers'), 2);
    assert.equal(metricValue(text, 'addrindex_metrics_workers_reporting'), 2);
    assert.ok(serve.records().some((r) => r.level === 'warn' && r.msg === 'worker died; starting a replacement' && r.signal === 'SIGKILL'));
  });

  it('SIGTERM: exits 0, the JSON log ends with "stopped"', async () => {
    serve.proc.kill('SIGTERM');
    assert.equal(await serve.exited, 0, serve.out.stderr);
    const records = serve.records();
    assert.equal(records[records.length - 1].msg, 'stopped');
  });
});
