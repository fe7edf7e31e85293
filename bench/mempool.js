#!/usr/bin/env node
'use strict';

/**
 * The mempool follower (lib/mempool) on a mempool of 20,000 transactions, into each store,
 * side by side in one run. The node is the bench fixture (bench/lib/rpc-fixture.js, its own
 * process, answering getrawmempool / getrawtransaction / getbestblockhash as bitcoind does);
 * its mempool is generated: the spending transactions of the blocks the generator makes
 * after the indexed chain (young spends of the chain and of each other, parents and children
 * as in a real mempool).
 *
 *   node bench/mempool.js [--mempool 20000] [--step 500] [--steps 5] [--chain-txs 100000]
 *                         [--seed 1] [--stores lmdb,level,mongo] [--dir DIR] [--json FILE]
 *
 * Per store, in a fresh process: the chain is synced from the fixture (not measured), then
 *   - first load: the fixture's mempool becomes `--mempool` transactions, one poll;
 *   - `--steps` polls that each bring `--step` new transactions;
 *   - a poll that brings nothing;
 *   - a block: the fixture's next block (about 2,000 of the mempool's transactions), the sync
 *     commits it, one poll (the tip moved: everything resolved anew where it must be);
 *   - side by side, the baseline: a follower without state (a new one on the same index) loading
 *     the same mempool from scratch, which is what every poll would cost without the diff.
 * Main-thread time is the poll's CPU time on the main thread (/proc, 10 ms ticks) and its
 * event-loop busy time; RSS growth is from before the first load to after the last poll (after
 * a full GC); the fixture's CPU is its own process's, as bitcoind's would be.
 *
 * Targets (issue 12): first load <= 10 s; a poll bringing 500 new transactions <= 200 ms of
 * main-thread time; RSS growth <= 200 MB.
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
    mempool: { type: 'string', default: '20000' },
    step: { type: 'string', default: '500' },
    steps: { type: 'string', default: '5' },
    'chain-txs': { type: 'string', default: '100000' },
    seed: { type: 'string', default: '1' },
    stores: { type: 'string', default: 'lmdb,level,mongo' },
    dir: { type: 'string' },
    json: { type: 'string', default: path.join(__dirname, 'results', 'mempool.json') },
    // internal: which phase this process runs
    phase: { type: 'string' },
    blocks: { type: 'string' },
    store: { type: 'string' },
    datadir: { type: 'string' },
    'mongodb-url': { type: 'string' },
    above: { type: 'string' },
  },
});

const MB = 1e6;
/** The generator's shape: mainnet-like transactions, 2,000 a block, coinbases spendable after 20 blocks (none of the mempool's). */
const SHAPE = { network: 'regtest', txsPerBlock: 2000, coinbaseMaturity: 20 };

/** Writes the chain, then blocks holding the mempool's transactions (and the margin the polls need). */
async function phaseGenerate() {
  const { ChainGenerator, BlkWriter } = require('../tools/generator');
  const gen = new ChainGenerator({ seed: args.seed, ...SHAPE });
  const writer = new BlkWriter({ dir: args.blocks, network: SHAPE.network });
  const want = Number(args.mempool) + Number(args.step) * Number(args.steps) + 1;
  let chainTxs = 0;
  let above = -1;
  let poolTxs = 0;
  for (;;) {
    const b = gen.nextBlock();
    writer.write(b.raw);
    if (above < 0) {
      chainTxs += b.txCount;
      if (chainTxs >= Number(args['chain-txs'])) above = b.height;
    } else {
      poolTxs += b.txCount - 1;
      // one more block than the mempool needs: the bench confirms the first of them
      if (poolTxs >= want + b.txCount) break;
    }
  }
  await writer.close();
  return { above, chainTxs, poolTxs, tip: gen.height };
}

/** The process's memory after a full GC. */
function gcMemory() {
  if (global.gc) {
    global.gc();
    global.gc();
  }
  return process.memoryUsage();
}

/** What the bench reports of a poll (lib/mempool/follower.js MempoolPoll). */
function pick(p) {
  const keys = ['outcome', 'listed', 'added', 'removed', 'txs', 'asked', 'bytes', 'ms', 'busyMs', 'fetchMs', 'resolveMs', 'writeMs'];
  return Object.fromEntries(keys.map((k) => [k, p[k]]));
}

/** One store: sync the chain, then the polls. */
async function phaseRun() {
  const { openStore } = require('../lib/stores');
  const { NodeClient } = require('../lib/node/client');
  const { NodeSource } = require('../lib/sources/node');
  const { resolveEndpoint } = require('../lib/node/endpoint');
  const { SyncService } = require('../lib/sync/service');
  const { MempoolFollower } = require('../lib/mempool/follower');
  const { decodeMempool } = require('../lib/codec/mempool');
  const { MempoolView } = require('../lib/core/mempool');

  const above = Number(args.above);
  const fixture = await startRpcFixture(args.blocks, ['--mempool-above', String(above)]);
  const endpoint = resolveEndpoint({ rpcUrl: fixture.url, network: 'regtest', env: {} });
  const store = args.store === 'mongo'
    ? await require('../lib/stores/mongo').MongoStore.open({ url: args['mongodb-url'], dbName: `addrindex_bench_mempool_${process.pid}`, network: 'regtest' })
    : await openStore({ store: args.store, datadir: args.datadir, network: 'regtest', readOnly: false });
  const source = new NodeSource({ client: NodeClient.fromEndpoint(endpoint), network: 'regtest' });
  const client = NodeClient.fromEndpoint(endpoint);
  const out = { store: args.store };
  try {
    const sync = async () => new SyncService({ source, store, network: 'regtest', threads: 1 }).run();
    let t0 = process.hrtime.bigint();
    const synced = await sync();
    out.sync = { ms: msSince(t0), txs: synced.txs, height: synced.tip.height };

    const follower = new MempoolFollower({ store, client, network: 'regtest', tipGraceMs: 0 });
    const measured = async (what) => {
      const cpu0 = mainThreadCpuSec();
      const p = await follower.poll();
      const cpuMs = 1000 * (mainThreadCpuSec() - cpu0);
      return { what, ...pick(p), cpuMs };
    };
    const polls = [];
    const mem0 = gcMemory();
    let size = Number(args.mempool);
    await fixture.tell(`mempool ${size}`);
    polls.push(await measured('first load'));
    for (let k = 0; k < Number(args.steps); k++) {
      size += Number(args.step);
      await fixture.tell(`mempool ${size}`);
      polls.push(await measured(`+${args.step}`));
    }
    polls.push(await measured('nothing new'));
    // a block: the fixture's next one confirms the first ~2,000 of the mempool's transactions
    await fixture.tell(`tip ${above + 1}`);
    t0 = process.hrtime.bigint();
    await sync();
    out.blockSyncMs = msSince(t0);
    polls.push(await measured('a block'));
    const mem1 = gcMemory();
    out.rss = { before: mem0.rss, after: mem1.rss, growth: mem1.rss - mem0.rss, peak: process.resourceUsage().maxRSS * 1024 };
    out.memory = { before: mem0, after: mem1 };

    // what a reader pays for a new snapshot (each serve worker, once per seq): read, decode, index
    t0 = process.hrtime.bigint();
    const raw = await store.getMempool();
    const view = new MempoolView(decodeMempool(raw));
    out.reader = { ms: msSince(t0), txs: view.txs.length, bytes: raw.length };

    // the baseline, side by side: no state kept between polls
    const fresh = new MempoolFollower({ store, client, network: 'regtest', tipGraceMs: 0 });
    const cpu0 = mainThreadCpuSec();
    const p = await fresh.poll();
    polls.push({ what: 'baseline: all again', ...pick(p), cpuMs: 1000 * (mainThreadCpuSec() - cpu0) });
    out.polls = polls;
    out.rpc = client.rpc.stats;
  } finally {
    client.close();
    await source.close();
    await store.close();
    out.fixture = await fixture.stop();
  }
  return out;
}

function runPhase(phase, extra, execArgv) {
  const argv = ['--seed', args.seed, '--mempool', args.mempool, '--step', args.step, '--steps', args.steps, '--chain-txs', args['chain-txs'], ...extra];
  return runPhaseIn(__filename, phase, argv, execArgv);
}

async function main() {
  const work = args.dir || fs.mkdtempSync(path.join(os.tmpdir(), 'addrindex-bench-mempool-'));
  const blocks = path.join(work, 'blocks');
  const stores = args.stores.split(',').filter(Boolean);
  console.log(`bench/mempool: a mempool of ${Number(args.mempool).toLocaleString('en-US')} txs (+${args.step} × ${args.steps}) over a ` +
    `${Number(args['chain-txs']).toLocaleString('en-US')}-tx chain, seed ${args.seed}; ${os.cpus().length} cores, node ${process.version}, ` +
    `load average ${os.loadavg()[0].toFixed(2)}; work dir ${work}`);
  let mongo = null;
  try {
    const metaFile = path.join(work, 'mempool-chain.json');
    const key = JSON.stringify({ seed: args.seed, mempool: args.mempool, step: args.step, steps: args.steps, chain: args['chain-txs'] });
    let gen = fs.existsSync(metaFile) ? JSON.parse(fs.readFileSync(metaFile, 'utf8')) : null;
    if (!gen || gen.key !== key) {
      fs.rmSync(blocks, { recursive: true, force: true });
      const t0 = process.hrtime.bigint();
      gen = { key, ...(await runPhase('generate', ['--blocks', blocks])), ms: msSince(t0) };
      fs.writeFileSync(metaFile, JSON.stringify(gen));
      console.log(`generated: a chain of ${gen.chainTxs.toLocaleString('en-US')} txs to height ${gen.above}, then ${gen.poolTxs.toLocaleString('en-US')} ` +
        `mempool txs in blocks ${gen.above + 1}-${gen.tip} (${(gen.ms / 1000).toFixed(1)} s)`);
    } else {
      console.log('using the chain already in the work dir');
    }
    if (stores.includes('mongo')) {
      const { startMongo } = require('../test/helpers/mongo-server');
      mongo = await startMongo();
    }
    const results = [];
    for (const store of stores) {
      const datadir = path.join(work, `index-${store}`);
      fs.rmSync(datadir, { recursive: true, force: true });
      const extra = ['--blocks', blocks, '--store', store, '--above', String(gen.above), '--datadir', datadir];
      if (store === 'mongo') extra.push('--mongodb-url', mongo.url);
      results.push(await runPhase('run', extra, ['--expose-gc']));
      fs.rmSync(datadir, { recursive: true, force: true });
      console.log(`  ${store}: done (chain synced in ${(results[results.length - 1].sync.ms / 1000).toFixed(1)} s)`);
    }
    report(gen, results);
  } finally {
    if (mongo) await mongo.stop();
    if (!args.dir) fs.rmSync(work, { recursive: true, force: true });
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function report(gen, results) {
  const rows = [];
  for (const r of results) {
    for (const p of r.polls) {
      rows.push({
        store: r.store, poll: p.what, listed: p.listed.toLocaleString('en-US'), added: p.added, removed: p.removed, snapshot: p.txs.toLocaleString('en-US'),
        'index lookups': p.asked.toLocaleString('en-US'), 'MB written': p.bytes ? (p.bytes / MB).toFixed(1) : '-',
        'wall ms': p.ms.toFixed(0), 'node ms': p.fetchMs.toFixed(0), 'resolve ms': p.resolveMs.toFixed(0), 'write ms': p.writeMs.toFixed(0),
        'main CPU ms': p.cpuMs.toFixed(0), 'loop busy ms': p.busyMs.toFixed(0),
      });
    }
  }
  console.log('');
  printTable(rows);
  console.log('');
  printTable(results.map((r) => ({
    store: r.store,
    'RSS before MB': (r.rss.before / MB).toFixed(0), 'RSS after MB': (r.rss.after / MB).toFixed(0), 'growth MB': (r.rss.growth / MB).toFixed(0),
    'of it JS heap MB': ((r.memory.after.heapUsed - r.memory.before.heapUsed) / MB).toFixed(0),
    'buffers MB': ((r.memory.after.arrayBuffers - r.memory.before.arrayBuffers) / MB).toFixed(0),
    'peak RSS MB': (r.rss.peak / MB).toFixed(0), 'a reader: read+decode+index ms': r.reader.ms.toFixed(0),
    'block commit ms': r.blockSyncMs.toFixed(0), 'fixture CPU s': (r.fixture.cpuMs / 1000).toFixed(1),
  })));
  const steps = (r) => r.polls.filter((p) => p.what.startsWith('+'));
  const targets = [];
  for (const r of results) {
    const first = r.polls[0];
    const stepCpu = steps(r).map((p) => p.cpuMs);
    const stepBusy = steps(r).map((p) => p.busyMs);
    const base = r.polls.find((p) => p.what.startsWith('baseline'));
    targets.push({
      store: r.store,
      'first load <= 10 s': `${(first.ms / 1000).toFixed(2)} s ${first.ms <= 10000 ? 'met' : 'NOT met'}`,
      '+500 poll <= 200 ms main thread (median, max)': `CPU ${median(stepCpu).toFixed(0)}, ${Math.max(...stepCpu).toFixed(0)}; busy ${median(stepBusy).toFixed(0)}, ${Math.max(...stepBusy).toFixed(0)} ms ` +
        `${Math.max(...stepCpu, ...stepBusy) <= 200 ? 'met' : median(stepBusy) <= 200 ? 'median met' : 'NOT met'}`,
      'vs baseline (all again)': `${(base.busyMs / median(stepBusy)).toFixed(1)}x less`,
      'RSS growth <= 200 MB': `${(r.rss.growth / MB).toFixed(0)} MB ${r.rss.growth <= 200 * MB ? 'met' : 'NOT met'}`,
    });
  }
  console.log('\ntargets:');
  printTable(targets);
  const result = {
    date: new Date().toISOString(), node: process.version, cores: os.cpus().length, loadAvgAtEnd: os.loadavg(),
    options: { ...args, phase: undefined }, chain: gen, results,
  };
  fs.mkdirSync(path.dirname(args.json), { recursive: true });
  fs.writeFileSync(args.json, JSON.stringify(result, null, 2));
  console.log(`\nload average at the end ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; results written to ${path.relative(process.cwd(), args.json)}`);
}

runBench({ generate: phaseGenerate, run: phaseRun }, args.phase, main);
