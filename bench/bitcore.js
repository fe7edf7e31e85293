#!/usr/bin/env node
'use strict';

/**
 * insight-api 0.4.3 on addrindex's bitcoind service (bitcore-node 3.1.3, `addrindex bitcore`)
 * beside addrindex's own merged-history route, in one run, on the seed's wallet question: 2,100
 * addresses with exactly two transactions each.
 *
 *   - native: POST /api/v1/addresses/history {addresses, limit: 5000}: the whole merged,
 *     chain-ordered history (txids and heights) in one answer (`addrindex serve`, 1 worker);
 *   - insight: POST /insight-api/addrs/txs {addrs, from, to}: one page of insight's (10
 *     transactions, newest first, each in full: inputs with their prevouts, outputs with their
 *     spenders) and the total count, from one process as bitcore-node runs. The 2,100
 *     addresses (~75 KB) do not fit a GET URL, so the POST form insight also serves is used.
 *     Pages go through the history in order, so each request's transactions are new to the
 *     service's per-tip cache of detailed transactions ("cold"); then one page is asked again
 *     and again ("same page").
 *
 * Requests are sequential on a keep-alive connection; native is measured before and after
 * insight and the ratio uses the mean of the two. Target: insight's p50 <= 2x native's.
 *
 * The index: a generated regtest chain (seed "bitcore-bench", 150 blocks of 100 txs) whose
 * outputs are mostly base58 (P2PKH, P2SH; 10 % P2WPKH), since insight 0.4.3 and the patched
 * node it was written for know no bech32; the 2,100 addresses are base58 ones.
 *
 * Then bitcore-node v8's wallet routes (`/api/BTC/regtest/wallet/:pubKey/…`, bench/lib/
 * bitcore8-bench.js) on the generated 1M-transaction chain (bench/gen-chain.js's, seed 1) with
 * `addrindex serve --workers 2`: a wallet of the same 2,100-address question, registered and
 * imported with signed requests, its balance, first page of transactions and unspent coins,
 * beside the native merged history of its addresses. Targets: p50 <= 10 ms, <= 20 ms, <= 50 ms.
 *
 *   node bench/bitcore.js [--addresses 2100] [--requests 200] [--json FILE] [--only insight|v8]
 *                         [--v8-txs 1000000] [--v8-seed 1] [--chain-dir DIR] [--workers 2]
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const http = require('node:http');
const { execFileSync } = require('node:child_process');
const { parseArgs } = require('node:util');
const { printTable } = require('./lib/table');
const { buildWalletIndex } = require('./lib/wallet-index');
const { startProcess, stopProcess, once, percentile } = require('./lib/http');
const { v8Bench } = require('./lib/bitcore8-bench');

const ROOT = path.join(__dirname, '..');
const { values: args } = parseArgs({
  options: {
    addresses: { type: 'string', default: '2100' },
    requests: { type: 'string', default: '200' },
    json: { type: 'string', default: path.join(__dirname, 'results', 'bitcore.json') },
    only: { type: 'string' },
    'v8-txs': { type: 'string', default: '1000000' },
    'v8-seed': { type: 'string', default: '1' },
    'chain-dir': { type: 'string' },
    workers: { type: 'string', default: '2' },
  },
});
const N_ADDRESSES = Number(args.addresses);
const REQUESTS = Number(args.requests);
const CHAIN = {
  seed: 'bitcore-bench', blocks: 150, txsPerBlock: 100,
  mix: { p2pkh: 0.55, p2sh: 0.33, p2wpkh: 0.1, nulldata: 0.02 },
};
const PAGE = 10; // insight's page

/** Runs `n` sequential requests made by `make(i)`; latencies sorted. */
async function measure(n, make) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const lat = [];
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    const [url, body] = make(i);
    const r = await once(agent, url, 'POST', body);
    lat.push(r.ms);
    bytes += r.bytes;
  }
  agent.destroy();
  lat.sort((a, b) => a - b);
  return { p50: percentile(lat, 50), p90: percentile(lat, 90), p99: percentile(lat, 99), meanBytes: Math.round(bytes / n), n };
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'addrindex-bench-bitcore-'));
  const servers = [];
  try {
    const insight = args.only === 'v8' ? null : await insightBench(tmp, servers);
    let v8 = null;
    if (args.only !== 'insight') {
      process.stderr.write('bitcore-node v8 routes, on the generated chain ...\n');
      v8 = await v8Bench({
        tmp, servers, txs: Number(args['v8-txs']), seed: args['v8-seed'], chainDir: args['chain-dir'], count: N_ADDRESSES,
        requests: REQUESTS, workers: Number(args.workers), say: (m) => process.stderr.write(`${m}\n`),
      });
      for (const srv of servers.splice(0)) await stopProcess(srv);
      printV8(v8);
    }
    const result = {
      date: new Date().toISOString(),
      machine: { cpus: os.cpus().length, model: os.cpus()[0].model, node: process.version, load: os.loadavg() },
      ...(insight || {}),
      ...(v8 ? { v8 } : {}),
    };
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

function printV8(r) {
  console.log(`\nbitcore-node v8 routes: a wallet of ${r.addresses} addresses x 2 transactions (${r.transactions} distinct), ` +
    `the generated ${r.chain.txs}-tx chain, ${args.workers} workers; imported in ${r.importMs} ms`);
  const row = (name, m) => ({ route: name, 'p50 ms': m.p50.toFixed(2), 'p90 ms': m.p90.toFixed(2), 'p99 ms': m.p99.toFixed(2), 'KiB/answer': (m.meanBytes / 1024).toFixed(1) });
  printTable([
    row('native merged history, all (before)', r.native1),
    row('/wallet/:pubKey/balance', r.balance),
    row(`/wallet/:pubKey/transactions?limit=${r.page}`, r.firstPage),
    row('/wallet/:pubKey/utxos', r.utxos),
    row('/wallet/:pubKey/transactions (all)', r.allTransactions),
    row('native merged history, all (after)', r.native2),
  ]);
  const f = r.funded;
  console.log(`\na second wallet of ${f.addresses} addresses holding ${f.coins} unspent coins (${f.balance} sat)`);
  printTable([
    row('/wallet/:pubKey/balance', f.balance_),
    row(`/wallet/:pubKey/transactions?limit=${r.page}`, f.firstPage),
    row('/wallet/:pubKey/utxos', f.utxos),
  ]);
  for (const [k, t] of Object.entries(r.targets)) console.log(`  ${t.met ? 'met    ' : 'MISSED '} ${k}: ${t.value.toFixed(2)} ms (${t.target})`);
}

/** insight-api 0.4.3 on the bitcore-node service beside the native route (the first part). */
async function insightBench(tmp, servers) {
  {
    process.stderr.write('installing the bitcore-node host (scripts/install-bitcore.sh, once) ...\n');
    const host = execFileSync('bash', [path.join(ROOT, 'scripts', 'install-bitcore.sh')], { encoding: 'utf8' }).trim().split('\n').pop();
    process.stderr.write(`building the index (${CHAIN.blocks} blocks x ${CHAIN.txsPerBlock} txs, seed ${CHAIN.seed}) ...\n`);
    const t0 = Date.now();
    const idx = await buildWalletIndex({ tmp, chain: CHAIN, count: N_ADDRESSES, accept: (a) => !a.startsWith('bcrt1') });
    process.stderr.write(`  ${idx.txs} txs, ${idx.withTwo} base58 addresses with exactly 2 txs, ${Date.now() - t0} ms\n`);

    const project = path.join(tmp, 'project');
    fs.mkdirSync(project);
    fs.symlinkSync(path.join(host, 'node_modules'), path.join(project, 'node_modules'), 'dir');
    const port = await new Promise((resolve) => {
      const s = http.createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
    });
    fs.writeFileSync(path.join(project, 'bitcore-node.json'), JSON.stringify({
      network: 'regtest', port, services: ['bitcoind', 'web', 'insight-api'],
      servicesConfig: { bitcoind: { datadir: idx.datadir, blocksDir: idx.blocksDir }, 'insight-api': { disableRateLimiter: true } },
    }));
    const bin = path.join(ROOT, 'bin', 'addrindex.js');
    const native = await startProcess([bin, 'serve', '--datadir', idx.datadir, '--workers', '1', '--port', '0']);
    servers.push(native);
    const insight = await startProcess([bin, 'bitcore', '--config', path.join(project, 'bitcore-node.json')]);
    servers.push(insight);

    const nativeReq = [`${native.url}/api/v1/addresses/history`, JSON.stringify({ addresses: idx.addresses, limit: 5000 })];
    const addrs = idx.addresses.join(',');
    const insightReq = (from) => [`${insight.url}/insight-api/addrs/txs`, JSON.stringify({ addrs, from, to: from + PAGE })];

    // both answer the same history: the native entries, newest first, are insight's txids
    const nat = JSON.parse((await once(false, nativeReq[0], 'POST', nativeReq[1], { keep: true })).body);
    if (nat.next !== null) throw new Error('the merged history did not fit one page');
    const first = JSON.parse((await once(false, insightReq(0)[0], 'POST', insightReq(0)[1], { keep: true })).body);
    const total = first.totalItems;
    if (total !== nat.entries.length) throw new Error(`insight counts ${total} transactions, the native route ${nat.entries.length}`);
    const newest = [...nat.entries].sort((a, b) => b.height - a.height || (a.txid < b.txid ? 1 : -1)).slice(0, PAGE).map((e) => e.txid);
    if (JSON.stringify(first.items.map((t) => t.txid)) !== JSON.stringify(newest)) throw new Error('insight\'s first page is not the newest transactions of the native history');
    const pages = Math.floor(total / PAGE);

    process.stderr.write(`${idx.addresses.length} addresses, ${total} transactions; warming up ...\n`);
    await measure(20, () => nativeReq);
    await measure(20, (i) => insightReq(PAGE * ((pages - 1 - i) % pages))); // the oldest pages: not the ones measured first
    process.stderr.write(`measuring ${REQUESTS} sequential requests each ...\n`);
    const native1 = await measure(REQUESTS, () => nativeReq);
    const cold = await measure(REQUESTS, (i) => insightReq(PAGE * (i % pages)));
    const same = await measure(REQUESTS, () => insightReq(0));
    const native2 = await measure(REQUESTS, () => nativeReq);
    const nativeP50 = (native1.p50 + native2.p50) / 2;
    for (const srv of servers.splice(0)) await stopProcess(srv);

    // where insight's time goes: the service alone (in process, no HTTP) and insight-api's own
    // address check, in the host's bitcore-lib 0.13 (a child process)
    process.stderr.write('breakdown: the service alone, and insight-api\'s address check ...\n');
    const addressesFile = path.join(tmp, 'addresses.json');
    fs.writeFileSync(addressesFile, JSON.stringify(idx.addresses));
    const breakdown = JSON.parse(execFileSync(process.execPath, [path.join(__dirname, 'lib', 'bitcore-direct.js'),
      host, idx.datadir, idx.blocksDir, addressesFile, String(REQUESTS), String(PAGE)], { encoding: 'utf8' }).trim().split('\n').pop());

    const result = {
      settings: { chain: CHAIN, addresses: idx.addresses.length, transactions: total, requests: REQUESTS, page: PAGE, coldPages: Math.min(REQUESTS, pages) },
      native1, insightCold: cold, insightSamePage: same, native2, breakdown,
      ratios: {
        cold: cold.p50 / nativeP50, samePage: same.p50 / nativeP50,
        serviceAlone: breakdown.serviceHistoryPage.p50 / nativeP50, insightAddressCheck: breakdown.insightAddressCheck.p50 / nativeP50,
      },
      target: { target: 'insight p50 <= 2x native p50', value: cold.p50 / nativeP50, met: cold.p50 / nativeP50 <= 2 },
    };
    console.log(`\nthe wallet question: ${idx.addresses.length} addresses x 2 transactions (${total} distinct), regtest, seed ${CHAIN.seed}`);
    const row = (name, m) => ({ route: name, 'p50 ms': m.p50.toFixed(2), 'p90 ms': m.p90.toFixed(2), 'p99 ms': m.p99.toFixed(2), 'KiB/answer': (m.meanBytes / 1024).toFixed(1) });
    printTable([
      row('native merged history, all (before)', native1),
      row('insight /addrs/txs, page of 10, each page new', cold),
      row('insight /addrs/txs, same page again', same),
      row('native merged history, all (after)', native2),
    ]);
    const brow = (name, m) => ({ 'in the host process, no HTTP': name, 'p50 ms': m.p50.toFixed(2), 'p90 ms': m.p90.toFixed(2) });
    console.log('');
    printTable([
      brow('the service\'s getAddressHistory, one page (each new)', breakdown.serviceHistoryPage),
      brow(`insight-api's address check (${idx.addresses.length} x new bitcore.Address, 0.13)`, breakdown.insightAddressCheck),
    ]);
    console.log(`\ninsight / native, p50: ${result.ratios.cold.toFixed(2)}x (new pages), ${result.ratios.samePage.toFixed(2)}x (same page); ` +
      `the service alone ${result.ratios.serviceAlone.toFixed(2)}x, insight's address check alone ${result.ratios.insightAddressCheck.toFixed(2)}x`);
    console.log(`  ${result.target.met ? 'met    ' : 'MISSED '} ${result.target.target}: ${result.target.value.toFixed(2)}x`);
    return result;
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
