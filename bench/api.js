#!/usr/bin/env node
'use strict';

/**
 * REST API benchmark, the client in this process and the servers in others:
 *
 *   1. the seed's cluster experiment: an index where 2,100 addresses have exactly two
 *      transactions each; one POST /api/v1/addresses/history asks for their merged,
 *      chain-ordered history in one page. Single-request latency (sequential, keep-alive),
 *      then 200 such requests at once on 200 connections, timed until the last completes.
 *      Targets (2 cores, 2 workers): p50 <= 10 ms; all 200 within 1 s.
 *   2. address summary requests/s (autocannon, rotating over the 2,100 addresses) against a
 *      bare node:http server answering a fixed JSON body of the same size, in the same
 *      cluster layout, in the same run (bare, API, bare again: the ratio uses the mean of
 *      the two bare runs). Targets: >= 50 % of bare, p99 < 5 ms.
 *   3. transactions and blocks (issue 13), on the generated 1M-transaction chain
 *      (bench/gen-chain.js's, seed 1) synced into LMDB and served by `addrindex serve`:
 *      GET /api/tx/:txid p50 warm over 2,000 txids spread over the chain (target <= 2 ms) and
 *      its requests/s (autocannon; target >= 3,000 on 2 workers); GET /api/address/:a/txs of
 *      100 addresses with >= 25 transactions, each asked once on a fresh server whose blk
 *      files were just dropped from the page cache (cold; target <= 20 ms) and then again
 *      (warm; target <= 5 ms); the index bytes of block locators, transaction offsets and
 *      spenders as a share of the raw block bytes, split by a row walk (target <= 5 %); and
 *      the TxNum -> txid table's worth: the index without the txids, and the merged history
 *      and /txs read both ways side by side (bench/lib/txid-paths.js).
 *
 * The index: a generated regtest chain (seed "api-bench", 150 blocks of 100 transactions,
 * mainnet-like shape), synced with the SyncService; the 2,100 addresses are every fifth of
 * those with exactly two transactions, in order of first appearance.
 *
 *   node bench/api.js [--workers 2] [--duration 10] [--connections 32] [--json FILE]
 *                     [--tx-txs 1000000] [--tx-seed 1] [--chain-dir DIR] [--only wallet|tx]
 *
 * --chain-dir keeps the generated chain there and reuses it on the next run (same --tx-txs and
 * --tx-seed); the index is synced anew each run.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const http = require('node:http');
const { parseArgs } = require('node:util');
const { printTable } = require('./lib/table');
const { buildWalletIndex, API_CHAIN: CHAIN } = require('./lib/wallet-index');
const { startProcess, stopProcess, once, percentile, cannonGet } = require('./lib/http');
const { txBench, printTxBench } = require('./lib/tx-bench');

const ROOT = path.join(__dirname, '..');
const { values: args } = parseArgs({
  options: {
    workers: { type: 'string', default: '2' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    addresses: { type: 'string', default: '2100' },
    json: { type: 'string', default: path.join(__dirname, 'results', 'api.json') },
    'tx-txs': { type: 'string', default: '1000000' },
    'tx-seed': { type: 'string', default: '1' },
    'chain-dir': { type: 'string' },
    only: { type: 'string' },
  },
});
const WORKERS = Number(args.workers);
const DURATION = Number(args.duration);
const CONNECTIONS = Number(args.connections);
const N_ADDRESSES = Number(args.addresses);
const buildIndex = (tmp, count) => buildWalletIndex({ tmp, chain: CHAIN, count });

async function multiHistory(url, addresses) {
  const body = JSON.stringify({ addresses, limit: 5000 });
  const target = `${url}/api/v1/addresses/history`;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const check = await new Promise((resolve, reject) => {
    const req = http.request(target, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let s = '';
      res.on('data', (c) => { s += c; });
      res.on('end', () => resolve(JSON.parse(s)));
    });
    req.on('error', reject);
    req.end(body);
  });
  if (check.next !== null) throw new Error('the merged history did not fit one page');
  for (let i = 0; i < 20; i++) await once(agent, target, 'POST', body); // warm-up
  const lat = [];
  let bytes = 0;
  for (let i = 0; i < 200; i++) {
    const r = await once(agent, target, 'POST', body);
    lat.push(r.ms);
    bytes = r.bytes;
  }
  agent.destroy();
  lat.sort((a, b) => a - b);
  // 200 at once: each on its own new connection, all sent in the same tick
  const bursts = [];
  for (let round = 0; round < 3; round++) {
    const t0 = process.hrtime.bigint();
    const all = await Promise.all(Array.from({ length: 200 }, () => once(false, target, 'POST', body)));
    bursts.push({ totalMs: Number(process.hrtime.bigint() - t0) / 1e6, slowestMs: Math.max(...all.map((r) => r.ms)) });
  }
  return {
    entries: check.entries.length, responseBytes: bytes, requestBytes: Buffer.byteLength(body),
    p50: percentile(lat, 50), p90: percentile(lat, 90), p99: percentile(lat, 99), bursts,
  };
}

/** Requests/s of GETs rotating over `paths` (autocannon), with this run's settings. */
function cannon(url, paths) {
  return cannonGet(url, paths, { connections: CONNECTIONS, duration: DURATION });
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'addrindex-bench-api-'));
  const servers = [];
  try {
    const wallet = args.only === 'tx' ? null : await walletBench(tmp, servers);
    const tx = args.only === 'wallet' ? null : await txBench({
      tmp, servers, workers: WORKERS, duration: DURATION, connections: CONNECTIONS,
      txs: Number(args['tx-txs']), seed: args['tx-seed'], chainDir: args['chain-dir'],
    });
    const result = {
      date: new Date().toISOString(),
      machine: { cpus: os.cpus().length, model: os.cpus()[0].model, node: process.version, loadavg: os.loadavg() },
      settings: { workers: WORKERS, connections: CONNECTIONS, durationS: DURATION, chain: CHAIN, addresses: N_ADDRESSES },
      ...(wallet ? wallet.result : {}),
      ...(tx ? { transactions: tx } : {}),
      targets: { ...(wallet ? wallet.targets : {}), ...(tx ? tx.targets : {}) },
    };
    if (wallet) wallet.print();
    if (tx) printTxBench(tx);
    console.log('\ntargets');
    for (const [k, t] of Object.entries(result.targets)) console.log(`  ${t.met ? 'met    ' : 'MISSED '} ${k}: ${t.shown} (${t.target})`);
    if (args.json) {
      fs.mkdirSync(path.dirname(args.json), { recursive: true });
      fs.writeFileSync(args.json, `${JSON.stringify(result, null, 2)}\n`);
      console.log(`\nwritten to ${path.relative(process.cwd(), args.json)}`);
    }
  } finally {
    for (const s of servers) await stopProcess(s).catch(() => {});
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** 1 and 2: the wallet index, its merged history and the summary beside bare node:http. */
async function walletBench(tmp, servers) {
  process.stderr.write(`building the index (${CHAIN.blocks} blocks x ${CHAIN.txsPerBlock} txs, seed ${CHAIN.seed}) ...\n`);
  const t0 = Date.now();
  const idx = await buildIndex(tmp, N_ADDRESSES);
  process.stderr.write(`  ${idx.txs} txs, ${idx.withTwo} addresses with exactly 2 txs, ${Date.now() - t0} ms\n`);

  const api = await startProcess([path.join(ROOT, 'bin', 'addrindex.js'), 'serve', '--datadir', idx.datadir, '--workers', String(WORKERS), '--port', '0']);
  servers.push(api);
  const summaryPaths = idx.addresses.map((a) => `/api/v1/address/${a}`);
  const sample = await once(false, api.url + summaryPaths[0], 'GET');
  const bodyFile = path.join(tmp, 'body.json');
  fs.writeFileSync(bodyFile, await new Promise((resolve, reject) => {
    http.get(api.url + summaryPaths[0], (res) => {
      let s = '';
      res.on('data', (c) => { s += c; });
      res.on('end', () => resolve(s));
    }).on('error', reject);
  }));
  const bare = await startProcess([path.join(__dirname, 'lib', 'bare-server.js'), String(WORKERS), bodyFile]);
  servers.push(bare);

  process.stderr.write(`multi-address history of ${idx.addresses.length} addresses ...\n`);
  const multi = await multiHistory(api.url, idx.addresses);

  process.stderr.write(`summary vs bare node:http, ${CONNECTIONS} connections, ${DURATION} s each ...\n`);
  const bare1 = await cannon(bare.url, ['/']);
  const summary = await cannon(api.url, summaryPaths);
  const bare2 = await cannon(bare.url, ['/']);
  const bareRps = (bare1.rps + bare2.rps) / 2;

  const result = {
    multiHistory: multi,
    summary: { api: summary, bare1, bare2, ratio: summary.rps / bareRps, sampleBytes: sample.bytes },
  };
  const ms = (v) => `${Number(v).toFixed(2)} ms`;
  const targets = {
    multiP50: { target: '<= 10 ms', value: multi.p50, shown: ms(multi.p50), met: multi.p50 <= 10 },
    burst200: { target: '<= 1000 ms', value: Math.min(...multi.bursts.map((b) => b.totalMs)), shown: ms(Math.min(...multi.bursts.map((b) => b.totalMs))), met: multi.bursts.every((b) => b.totalMs <= 1000) },
    summaryRatio: { target: '>= 50 %', value: summary.rps / bareRps, shown: `${(100 * summary.rps / bareRps).toFixed(1)} %`, met: summary.rps / bareRps >= 0.5 },
    summaryP99: { target: '< 5 ms', value: summary.p99, shown: ms(summary.p99), met: summary.p99 < 5 },
  };
  const print = () => {
    console.log(`\nmerged history of ${idx.addresses.length} addresses x 2 txs: ${multi.entries} entries, ` +
      `${(multi.responseBytes / 1024).toFixed(0)} KiB answer, ${(multi.requestBytes / 1024).toFixed(0)} KiB request`);
    printTable([
      { measure: 'one request, p50', ms: multi.p50.toFixed(2), target: '<= 10' },
      { measure: 'one request, p90', ms: multi.p90.toFixed(2), target: '' },
      { measure: 'one request, p99', ms: multi.p99.toFixed(2), target: '' },
      ...multi.bursts.map((b, i) => ({ measure: `200 at once, round ${i + 1}: all done`, ms: b.totalMs.toFixed(0), target: '<= 1000' })),
    ]);
    console.log(`\naddress summary vs bare node:http (${WORKERS} workers each, ${CONNECTIONS} connections, ${DURATION} s)`);
    printTable([
      { server: 'bare node:http (before)', 'req/s': bare1.rps.toFixed(0), 'p50 ms': bare1.p50, 'p99 ms': bare1.p99 },
      { server: 'GET /api/v1/address/:a', 'req/s': summary.rps.toFixed(0), 'p50 ms': summary.p50, 'p99 ms': summary.p99 },
      { server: 'bare node:http (after)', 'req/s': bare2.rps.toFixed(0), 'p50 ms': bare2.p50, 'p99 ms': bare2.p99 },
    ]);
    console.log(`\nsummary / bare = ${(100 * summary.rps / bareRps).toFixed(1)} %`);
  };
  for (const srv of [api, bare]) {
    await stopProcess(srv);
    servers.splice(servers.indexOf(srv), 1);
  }
  return { result, targets, print };
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
