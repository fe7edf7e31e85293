#!/usr/bin/env node
'use strict';

/**
 * Initial sync over JSON-RPC vs from the blocks dir, on the same generated chain (default 1M
 * txs, seeded), into LMDB, side by side in one run. The RPC side reads from a bench fixture
 * that answers like bitcoind (bench/lib/rpc-fixture.js, its own process, as a node would be);
 * the blocks-dir side is `addrindex sync --blocks-dir` as bench/sync.js measures it.
 *
 *   node bench/rpc-sync.js [--txs 1000000] [--seed 1] [--rounds 1] [--threads N]
 *                          [--request-mb 4] [--inflight 4] [--dir DIR] [--keep] [--json FILE]
 *
 * --rounds N alternates the two syncs N times (each in a fresh process and datadir) and
 * reports each round and the best of each side; --dir keeps the generated chain for reuse.
 * Both indexes' digests are compared: the two paths must build the same index.
 *
 * Target (issue 12): the RPC sync at >= 70 % of the blocks-dir sync's rate.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { printTable } = require('./lib/table');
const { mainThreadCpuSec, msSince, runPhase: runPhaseIn, runBench } = require('./lib/proc');
const { startRpcFixture } = require('./lib/rpc-fixture-process');

const { values: args } = parseArgs({
  options: {
    txs: { type: 'string', default: '1000000' },
    seed: { type: 'string', default: '1' },
    rounds: { type: 'string', default: '1' },
    threads: { type: 'string' },
    'request-mb': { type: 'string', default: '4' },
    inflight: { type: 'string', default: '4' },
    dir: { type: 'string' },
    keep: { type: 'boolean', default: false },
    json: { type: 'string', default: path.join(__dirname, 'results', 'rpc-sync.json') },
    // internal: which phase this process runs
    phase: { type: 'string' },
    blocks: { type: 'string' },
    datadir: { type: 'string' },
    url: { type: 'string' },
  },
});

const MB = 1e6;

async function phaseGenerate() {
  const { writeChain } = require('../tools/generator');
  const t0 = process.hrtime.bigint();
  const s = await writeChain({ dir: args.blocks, seed: args.seed, txs: Number(args.txs), network: 'regtest' });
  return { txs: s.txs, blocks: s.blocks, bytes: s.bytes, ms: msSince(t0) };
}

/** One sync into a new LMDB datadir: from the blocks dir (no --url) or over RPC. */
async function phaseSync() {
  const { SyncService } = require('../lib/sync/service');
  const { openStore } = require('../lib/stores');
  let source;
  if (args.url) {
    const { NodeClient } = require('../lib/node/client');
    const { NodeSource } = require('../lib/sources/node');
    const { resolveEndpoint } = require('../lib/node/endpoint');
    const client = NodeClient.fromEndpoint(resolveEndpoint({ rpcUrl: args.url, network: 'regtest', env: {} }));
    source = new NodeSource({ client, network: 'regtest', requestBytes: Number(args['request-mb']) * 1048576, inflight: Number(args.inflight) });
  } else {
    const { BlocksDirSource } = require('../lib/sources/blocksdir');
    source = new BlocksDirSource({ dir: args.blocks, network: 'regtest' });
  }
  const store = await openStore({ store: 'lmdb', datadir: args.datadir, network: 'regtest' });
  const cpu0 = mainThreadCpuSec();
  const proc0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  // the scan is part of a sync from scratch on either side (headers over RPC, record headers from the files)
  await source.scan();
  const scanMs = msSince(t0);
  const service = new SyncService({
    source, store, network: 'regtest', threads: args.threads === undefined ? undefined : Number(args.threads),
  });
  const r = await service.run();
  const total = msSince(t0);
  const mainCpuMs = 1000 * (mainThreadCpuSec() - cpu0);
  const proc = process.cpuUsage(proc0);
  const digest = await store.digest();
  const rpc = source.stats && args.url ? source.stats() : null;
  await store.close();
  await source.close();
  return {
    ms: total, scanMs, mainCpuMs, cpuMs: (proc.user + proc.system) / 1000, txs: r.txs, blocks: r.blocks, bytes: r.bytes,
    maxRss: process.resourceUsage().maxRSS * 1024, digest, rpc,
  };
}

function runPhase(phase, extra) {
  const argv = ['--seed', args.seed, '--txs', args.txs, '--request-mb', args['request-mb'], '--inflight', args.inflight, ...extra];
  if (args.threads !== undefined) argv.push('--threads', args.threads);
  return runPhaseIn(__filename, phase, argv);
}

async function main() {
  const work = args.dir || fs.mkdtempSync(path.join(os.tmpdir(), 'addrindex-bench-rpc-'));
  const blocks = path.join(work, 'blocks');
  console.log(`bench/rpc-sync: ${Number(args.txs).toLocaleString('en-US')} txs, seed ${args.seed}; ${os.cpus().length} cores, ` +
    `node ${process.version}, load average ${os.loadavg()[0].toFixed(2)}; work dir ${work}`);
  try {
    if (fs.existsSync(path.join(blocks, 'blk00000.dat'))) {
      console.log('using the chain already in the work dir');
    } else {
      const gen = await runPhase('generate', ['--blocks', blocks]);
      console.log(`generated ${gen.blocks} blocks, ${gen.txs.toLocaleString('en-US')} txs, ${(gen.bytes / MB).toFixed(0)} MB in ${(gen.ms / 1000).toFixed(1)} s`);
    }
    const dd = (name) => {
      const d = path.join(work, name);
      fs.rmSync(d, { recursive: true, force: true });
      return d;
    };
    const rounds = [];
    for (let k = 0; k < Number(args.rounds); k++) {
      const dir = await runPhase('sync', ['--blocks', blocks, '--datadir', dd('index-dir')]);
      const fixture = await startRpcFixture(blocks);
      let rpc;
      try {
        rpc = await runPhase('sync', ['--blocks', blocks, '--datadir', dd('index-rpc'), '--url', fixture.url]);
      } finally {
        rpc = { ...rpc, fixture: await fixture.stop() };
      }
      if (rpc.digest !== dir.digest) throw new Error(`the RPC sync built another index: digest ${rpc.digest} vs ${dir.digest}`);
      rounds.push({ dir, rpc });
    }
    report(rounds);
  } finally {
    if (!args.keep && !args.dir) fs.rmSync(work, { recursive: true, force: true });
  }
}

function row(what, r) {
  const s = r.ms / 1000;
  return {
    what,
    txs: r.txs.toLocaleString('en-US'),
    s: s.toFixed(1),
    'tx/s': Math.round(r.txs / s).toLocaleString('en-US'),
    'MB/s': (r.bytes / MB / s).toFixed(1),
    'scan s': (r.scanMs / 1000).toFixed(2),
    'main CPU s': (r.mainCpuMs / 1000).toFixed(1),
    'all threads CPU s': (r.cpuMs / 1000).toFixed(1),
    'peak RSS MB': (r.maxRss / MB).toFixed(0),
  };
}

function report(rounds) {
  const rate = (r) => r.txs / (r.ms / 1000);
  const rows = [];
  rounds.forEach((r, k) => {
    rows.push(row(`round ${k + 1}: blocks dir`, r.dir));
    rows.push(row(`round ${k + 1}: JSON-RPC (fixture)`, r.rpc));
  });
  console.log('');
  printTable(rows);
  const ratios = rounds.map((r) => rate(r.rpc) / rate(r.dir));
  const best = (side) => rounds.map((r) => r[side]).reduce((a, b) => (rate(b) > rate(a) ? b : a));
  const bestRatio = rate(best('rpc')) / rate(best('dir'));
  const last = rounds[rounds.length - 1].rpc;
  const stats = last.rpc; // NodeSource#stats()
  console.log(`\nRPC side: ${stats.rpc.requests} HTTP requests (${stats.fetch.requests} getblock batches, on the fetch thread), ` +
    `${(stats.rpc.bytesIn / MB).toFixed(0)} MB received; the fixture used ${(last.fixture.cpuMs / 1000).toFixed(1)} s of CPU ` +
    `(its own process, as bitcoind would)`);
  const cpu = rounds.map((r) => r.dir.mainCpuMs / r.rpc.mainCpuMs);
  console.log(`main-thread CPU, blocks dir ÷ RPC (the sync's bottleneck, steadier than wall time on a shared machine): ` +
    `${cpu.map((x) => `${(100 * x).toFixed(0)} %`).join(', ')}`);
  console.log(`digests equal: ${rounds.every((r) => r.rpc.digest === r.dir.digest) ? 'yes' : 'NO'} (${rounds[0].dir.digest.slice(0, 16)}…)`);
  console.log('\ntargets:');
  printTable([{
    target: 'RPC sync >= 70 % of the blocks-dir rate',
    measured: `${ratios.map((x) => `${(100 * x).toFixed(0)} %`).join(', ')}${rounds.length > 1 ? ` (best vs best ${(100 * bestRatio).toFixed(0)} %)` : ''}`,
    met: (rounds.length > 1 ? bestRatio : ratios[0]) >= 0.7 ? 'yes' : 'no',
  }]);
  const result = {
    date: new Date().toISOString(), node: process.version, cores: os.cpus().length, loadAvgAtEnd: os.loadavg(),
    options: { ...args, phase: undefined }, rounds, ratios, bestRatio, mainCpuRatios: cpu,
  };
  fs.mkdirSync(path.dirname(args.json), { recursive: true });
  fs.writeFileSync(args.json, JSON.stringify(result, null, 2));
  console.log(`\nresults written to ${path.relative(process.cwd(), args.json)}`);
}

runBench({ generate: phaseGenerate, sync: phaseSync }, args.phase, main);
