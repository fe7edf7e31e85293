#!/usr/bin/env node
'use strict';

/**
 * The mempool follower (lib/mempool) on mempools of mainnet size (20,000 and 150,000
 * transactions by default), into each store, side by side in one run. The node is the bench
 * fixture (bench/lib/rpc-fixture.js, its own process, answering getrawmempool /
 * getrawtransaction / getbestblockhash as bitcoind does); its mempool is generated: the
 * spending transactions of the blocks the generator makes after the indexed chain (young
 * spends of the chain and of each other, parents and children as in a real mempool).
 *
 *   node bench/mempool.js [--mempools 20000,150000] [--step 500] [--steps 5] [--chain-txs 100000]
 *                         [--subscriptions 10000] [--seed 1] [--stores lmdb,level,mongo] [--dir DIR] [--json FILE]
 *                         [--cpu-prof DIR]
 *
 * Per mempool size and store, in a fresh process: the chain is synced from the fixture (not
 * measured; in a process of its own, so that what the catch-up allocated does not come and go
 * in the follower's RSS), then
 *   - first load: the fixture's mempool becomes the size's transactions, one poll;
 *   - `--steps` polls that each bring `--step` new transactions;
 *   - a poll that brings nothing;
 *   - a block: the fixture's next block (3,000 of the mempool's transactions), the sync
 *     commits it, one poll (the follower takes the block from the node, not the whole list:
 *     MempoolFollower's block step), then the poll after it (the list, as every other poll);
 *   - side by side, the baseline: a follower without state (a new one on the same index) loading
 *     the same mempool from scratch, which is what every poll would cost without the diff.
 * Main-thread time is the poll's CPU time on the main thread (/proc, 10 ms ticks), of it the
 * garbage collector's pauses on that thread (perf_hooks' gc entries: the incremental and
 * concurrent work of V8's other threads is not in it), and its event-loop busy time; "stored" is what the poll's change writes (the change, the rows it
 * puts, the head); RSS growth is from before the first load to after the last poll (after a
 * full GC). A serve worker is a process of its own that reads the store as a worker does
 * (LMDB and MongoDB directly, LevelDB forwarded to this process): per poll, what meeting the
 * new snapshot costs it (reading the changes, decoding what entered, deriving the view), and
 * what `--subscriptions` Electrum script hash subscriptions (script hashes the mempool
 * touches, spread evenly over them, subscribed before the polls) cost it per poll (lib/electrum/subscriptions.js
 * onChange: the statuses recomputed, the changed ones).
 *
 * Targets (issue 23): first load of 150,000 <= 30 s (LMDB, LevelDB); a +500 poll <= 100 ms of
 * main-thread CPU and <= 2 MB stored, the same at 20,000 and 150,000 (the ratio reported); a
 * worker's CPU per such poll <= 50 ms at 150,000; a block confirming 3,000 <= 300 ms; RSS
 * growth <= 500 MB in the follower and <= 300 MB per worker at 150,000; 10,000 subscriptions:
 * a +500 poll recomputes only the touched ones, <= 50 ms per worker.
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
    mempools: { type: 'string', default: '20000,150000' },
    // internal: the size a phase runs
    mempool: { type: 'string' },
    subscriptions: { type: 'string', default: '10000' },
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
    db: { type: 'string' },
    'cpu-prof': { type: 'string' },
    'rpc-url': { type: 'string' },
  },
});

const MB = 1e6;

/**
 * --cpu-prof DIR: a CPU profile of each measured step (DIR/STORE-SIZE/follower-STEP.cpuprofile,
 * and reader-STEP, electrum-STEP for the worker's side), for Chrome's DevTools or any reader
 * of .cpuprofile files. The run phase is told the directory of its store and size.
 * @param {string} name
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 * @template T
 */
async function profiled(name, fn) {
  const dir = args['cpu-prof'];
  if (!dir) return fn();
  const inspector = require('node:inspector/promises');
  const session = new inspector.Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `${name.replace(/[^A-Za-z0-9+-]+/g, '_')}.cpuprofile`), JSON.stringify(profile));
  }
}
/**
 * The generator's shape: mainnet-like transactions, 3,000 a block, coinbases spendable after 20
 * blocks (the few mempool transactions that spend a coinbase of the mempool's own blocks, and
 * their descendants, are not listed: the fixture refuses them, as Core would).
 */
const SHAPE = { network: 'regtest', txsPerBlock: 3000, coinbaseMaturity: 20 };

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
/** ' (anonymous N)' for a figure a run recorded. */
function anonOf(bytes) {
  return Number.isFinite(bytes) ? ` (anonymous ${(bytes / MB).toFixed(0)})` : '';
}

function gcMemory() {
  if (global.gc) {
    global.gc();
    global.gc();
  }
  return { ...process.memoryUsage(), ...rssParts() };
}

/**
 * The resident set's anonymous and file-backed parts (/proc/self/status): an LMDB store's pages
 * the process read or wrote count in its RSS as file pages (the kernel's page cache, given back
 * under pressure); the anonymous part is the process's own memory.
 */
function rssParts() {
  try {
    const status = fs.readFileSync('/proc/self/status', 'utf8');
    const kb = (name) => Number((status.match(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm')) || [0, 0])[1]) * 1024;
    return { anon: kb('RssAnon'), file: kb('RssFile'), indexMap: indexMapRss() };
  } catch {
    return { anon: 0, file: 0 };
  }
}

/** The bytes the LMDB index's file holds (its tail is sparse). */
function indexFileBytes() {
  const st = fs.statSync(path.join(args.datadir, 'data.mdb'));
  return Math.min(st.size, st.blocks * 512);
}

/** The resident pages of the LMDB index's map (/proc/self/smaps: the data.mdb mapping), bytes. */
function indexMapRss() {
  let total = 0;
  let inMap = false;
  for (const line of fs.readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inMap = line.endsWith('/data.mdb');
    else if (inMap && line.startsWith('Rss:')) total += Number(line.split(/\s+/)[1]) * 1024;
  }
  return total;
}

/**
 * The main thread's garbage-collection pauses: take() answers the milliseconds paused since the
 * last take (the observer's entries arrive on a later turn of the event loop, so it waits one).
 */
function gcPauses() {
  const { PerformanceObserver } = require('node:perf_hooks');
  let ms = 0;
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) ms += e.duration;
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    async take() {
      await new Promise((resolve) => setImmediate(resolve));
      const out = ms;
      ms = 0;
      return out;
    },
    stop: () => observer.disconnect(),
  };
}

/** What the bench reports of a poll (lib/mempool/follower.js MempoolPoll). */
function pick(p) {
  const keys = ['outcome', 'listed', 'blocks', 'added', 'removed', 'txs', 'asked', 'bytes', 'stored', 'upserts', 'dropped', 'evicted', 'memBytes', 'ms', 'busyMs', 'fetchMs', 'listMs', 'resolveMs', 'writeMs'];
  return Object.fromEntries(keys.map((k) => [k, p[k]]));
}

/**
 * The store a run phase writes (MongoDB: the database `dbName` on --mongodb-url); LMDB with the
 * map room `sync --follow` gives the mempool's rows.
 */
async function openRunStore(kind, dbName) {
  const { openStore } = require('../lib/stores');
  const { DEFAULT_MAX_BYTES } = require('../lib/mempool/follower');
  if (kind === 'mongo') return require('../lib/stores/mongo').MongoStore.open({ url: args['mongodb-url'], dbName, network: 'regtest' });
  return openStore({ store: kind, datadir: args.datadir, network: 'regtest', readOnly: false, ...(kind === 'lmdb' ? { mapRoom: DEFAULT_MAX_BYTES } : {}) });
}

/** The chain synced from the node at --rpc-url into the run's store, which is closed after. */
async function phaseCatchup() {
  const { NodeClient } = require('../lib/node/client');
  const { NodeSource } = require('../lib/sources/node');
  const { resolveEndpoint } = require('../lib/node/endpoint');
  const { SyncService } = require('../lib/sync/service');
  const endpoint = resolveEndpoint({ rpcUrl: args['rpc-url'], network: 'regtest', env: {} });
  const store = await openRunStore(args.store, args.db);
  try {
    const source = new NodeSource({ client: NodeClient.fromEndpoint(endpoint), network: 'regtest' });
    const synced = await new SyncService({ source, store, network: 'regtest', threads: 1 }).run();
    return { txs: synced.txs, height: synced.tip.height };
  } finally {
    await store.close();
  }
}

/** One store: sync the chain (in a process of its own), then the polls. */
async function phaseRun() {
  const { NodeClient } = require('../lib/node/client');
  const { NodeSource } = require('../lib/sources/node');
  const { resolveEndpoint } = require('../lib/node/endpoint');
  const { SyncService } = require('../lib/sync/service');
  const { MempoolFollower } = require('../lib/mempool/follower');

  const above = Number(args.above);
  const fixture = await startRpcFixture(args.blocks, ['--mempool-above', String(above)]);
  const endpoint = resolveEndpoint({ rpcUrl: fixture.url, network: 'regtest', env: {} });
  const dbName = `addrindex_bench_mempool_${process.pid}`;
  // the chain's catch-up in a process of its own: what the sync allocated and let go of would
  // otherwise come and go in this one's RSS while the follower is measured (±90 MB run to run)
  const t0 = process.hrtime.bigint();
  const synced = await runPhaseIn(__filename, 'catchup', ['--store', args.store, '--datadir', args.datadir || '', '--mongodb-url', args['mongodb-url'] || '',
    '--db', dbName, '--rpc-url', fixture.url]);
  const store = await openRunStore(args.store, dbName);
  const source = new NodeSource({ client: NodeClient.fromEndpoint(endpoint), network: 'regtest' });
  const client = NodeClient.fromEndpoint(endpoint);
  const out = { store: args.store, sync: { ms: msSince(t0), txs: synced.txs, height: synced.height } };
  try {
    // as sync --follow runs them: the sync hands the blocks it applies to the follower
    const sync = async () => new SyncService({ source, store, network: 'regtest', threads: 1, onBlock: (hash, raw) => follower.offerBlock(hash, raw) }).run();

    const follower = new MempoolFollower({ store, client, network: 'regtest', tipGraceMs: 0 });
    // a serve worker's side of each poll, in a process of its own that reads the store as a
    // worker does (LMDB and MongoDB directly, LevelDB forwarded to this process)
    const worker = await startReaderWorker(store, dbName);
    const pauses = gcPauses();
    const measured = async (what) => {
      await pauses.take();
      const cpu0 = mainThreadCpuSec();
      const label = `${polls.length} ${what}`;
      const p = await profiled(`follower-${label}`, () => follower.poll());
      const cpuMs = Math.round(1000 * (mainThreadCpuSec() - cpu0));
      const out = { what, ...pick(p), cpuMs, gcMs: await pauses.take() };
      if (p.outcome === 'written') Object.assign(out, await worker.ask(p.seq, what, label));
      return out;
    };
    const polls = [];
    // the sync as `sync --follow` keeps it beside the follower: run once here (at the tip: no
    // block) so that what it holds between passes is in the baseline, not in the growth
    await sync();
    const mem0 = gcMemory();
    const indexFile0 = args.store === 'lmdb' ? indexFileBytes() : 0;
    let size = Number(args.mempool);
    await fixture.tell(`mempool ${size}`);
    polls.push(await measured('first load'));
    const memLoaded = gcMemory();
    const held = [...follower.pool.entries.values()];
    out.perTx = {
      heapAndBuffers: (memLoaded.heapUsed + memLoaded.arrayBuffers - mem0.heapUsed - mem0.arrayBuffers) / held.length,
      estimated: follower.pool.bytes / held.length,
      raw: held.reduce((n, e) => n + e.size, 0) / held.length,
      inputs: held.reduce((n, e) => n + e.n, 0) / held.length,
      outputs: held.reduce((n, e) => n + e.m, 0) / held.length,
    };
    out.subscribed = await worker.subscribe();
    for (let k = 0; k < Number(args.steps); k++) {
      size += Number(args.step);
      await fixture.tell(`mempool ${size}`);
      polls.push(await measured(`+${args.step}`));
    }
    polls.push(await measured('nothing new'));
    // a block: the fixture's next one confirms the first ~2,000 of the mempool's transactions
    await fixture.tell(`tip ${above + 1}`);
    const t1 = process.hrtime.bigint();
    await sync();
    out.blockSyncMs = msSince(t1);
    polls.push(await measured('a block'));
    // the follower took the block from the node, not its list: the next poll lists as ever
    polls.push(await measured('the list after it'));
    pauses.stop();
    out.workerMemory = await worker.stop();
    const mem1 = gcMemory();
    out.rss = { before: mem0.rss, after: mem1.rss, growth: mem1.rss - mem0.rss, anonGrowth: mem1.anon - mem0.anon, indexMapGrowth: mem1.indexMap - mem0.indexMap, peak: process.resourceUsage().maxRSS * 1024 };
    out.memory = { before: mem0, after: mem1 };
    if (args.store === 'lmdb') out.indexFile = { before: indexFile0, after: indexFileBytes() };

    // the baseline, side by side: no state kept between polls
    const fresh = new MempoolFollower({ store, client, network: 'regtest', tipGraceMs: 0 });
    const cpu0 = mainThreadCpuSec();
    const p = await fresh.poll();
    polls.push({ what: 'baseline: all again', ...pick(p), cpuMs: Math.round(1000 * (mainThreadCpuSec() - cpu0)) });
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

/**
 * A serve worker's reader in a process of its own (this script's `reader` phase): asked with
 * a seq, it makes its MempoolCache meet that snapshot and answers what that cost it, beside a
 * cache with no previous view (the baseline: what every seq cost a worker before the cache
 * kept its view). LevelDB's reads are forwarded to this process, as serve's primary answers them.
 */
async function startReaderWorker(store, dbName) {
  const { fork } = require('node:child_process');
  const argv = ['--phase', 'reader', ...(args['cpu-prof'] ? ['--cpu-prof', args['cpu-prof']] : []), '--store', args.store, '--datadir', args.datadir || '', '--mongodb-url', args['mongodb-url'] || '', '--db', dbName];
  const child = fork(__filename, argv, { serialization: 'advanced', execArgv: ['--expose-gc'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  if (args.store === 'level') {
    const { serveStore } = require('../lib/cluster/forward');
    serveStore({ on: (e, f) => child.on(e, f), send: (m) => child.send(m), isConnected: () => child.connected }, store);
  }
  const replies = [];
  let waiting = null;
  child.on('message', (m) => {
    if (!m || m.type !== 'bench:viewed') return;
    if (waiting) waiting(m);
    else replies.push(m);
  });
  const next = () => (replies.length ? Promise.resolve(replies.shift()) : new Promise((resolve) => { waiting = (m) => { waiting = null; resolve(m); }; }));
  await next(); // open
  const call = async (msg) => {
    child.send(msg);
    const m = await next();
    if (m.error) throw new Error(`reader: ${m.error}`);
    return m;
  };
  return {
    async ask(seq, what, label) {
      const m = await call({ type: 'bench:view', seq, what: label, baseline: what === 'first load' || what.startsWith('+') });
      return { reader: m.reader, readerBaseline: m.baseline, electrum: m.electrum };
    },
    async subscribe() {
      return (await call({ type: 'bench:subscribe', n: Number(args.subscriptions) })).subscribed;
    },
    async stop() {
      const m = await call({ type: 'bench:stop' });
      await new Promise((resolve) => child.once('exit', resolve));
      return m.memory;
    },
  };
}

/** The reader worker (forked by startReaderWorker). */
async function phaseReader() {
  const { MempoolCache } = require('../lib/mempool/cache');
  const { MempoolReader } = require('../lib/mempool/reader');
  const { StoreReader } = require('../lib/electrum/reader');
  const { Subscriptions } = require('../lib/electrum/subscriptions');
  let store;
  if (args.store === 'level') {
    const { ForwardedStore } = require('../lib/cluster/forward');
    store = new ForwardedStore(process);
  } else if (args.store === 'mongo') {
    store = await require('../lib/stores/mongo').MongoStore.open({ url: args['mongodb-url'], dbName: args.db, network: 'regtest', readOnly: true });
  } else {
    store = await require('../lib/stores').openStore({ store: args.store, datadir: args.datadir, network: 'regtest', readOnly: true });
  }
  const mem0 = gcMemory();
  /** after the first view, before anything else (the baselines' garbage, the subscriptions) */
  let memLoaded = null;
  let firstTxs = 0;
  // one mempool reader per process, as a serve worker has: its cache is what a poll costs,
  // and Electrum's subscriptions read through it
  const mempoolReader = new MempoolReader(store);
  const cache = mempoolReader.cache;
  const reader = new StoreReader({ store, mempoolReader });
  let recomputed = 0;
  const subs = new Subscriptions({ reader, maxHistory: 100000, seenTip: () => null, log: () => {} });
  const compute = subs.compute.bind(subs);
  subs.compute = (sh) => {
    recomputed++;
    return compute(sh);
  };
  const session = { subs: new Set(), closed: false, notify() {} };
  const cost = async (c, seq, label) => {
    if (global.gc) global.gc();
    const before = { ...c.stats };
    const cpu0 = mainThreadCpuSec();
    const t = process.hrtime.bigint();
    const view = await profiled(`reader-${label}`, () => c.view(seq));
    return {
      ms: msSince(t), cpuMs: Math.round(1000 * (mainThreadCpuSec() - cpu0)), txs: view.txs.length,
      how: c.stats.derived > before.derived ? 'derived' : 'built', decoded: c.stats.decoded - before.decoded, changes: c.stats.changes - before.changes,
    };
  };
  /** What meeting the newest view costs the subscriptions (the index's tip does not move: no block). */
  const electrum = async (label) => {
    if (!subs.size) return null;
    const tip = await store.getTip();
    const view = await reader.mempoolReader.at(tip);
    const r0 = recomputed;
    const s0 = { ...subs.stats };
    const cpu0 = mainThreadCpuSec();
    const t = process.hrtime.bigint();
    const changed = await profiled(`electrum-${label}`, () => subs.onChange({ previous: tip, tip, forkHeight: tip.height, moved: false, mempool: async () => view }));
    const cpuMs = Math.round(1000 * (mainThreadCpuSec() - cpu0));
    // what a status costs grows with the script hash's mempool transactions (Electrum's status hashes them all)
    const sizes = changed.map((e) => view.transactions(e.sh, 'script').length);
    return {
      ms: msSince(t), cpuMs, subscribed: subs.size, recomputed: recomputed - r0, changed: changed.length,
      how: subs.stats.mempoolChanges > s0.mempoolChanges ? 'changes' : 'scan',
      txsPerChanged: sizes.length ? sizes.reduce((a, b) => a + b, 0) / sizes.length : 0, maxTxsPerChanged: sizes.length ? Math.max(...sizes) : 0,
    };
  };
  process.on('message', async (m) => {
    if (!m || !m.type || !m.type.startsWith('bench:')) return;
    try {
      if (m.type === 'bench:stop') {
        const mem1 = gcMemory();
        process.send({ type: 'bench:viewed', memory: { before: mem0, loaded: memLoaded, after: mem1, txs: cache.current ? cache.current.txs.length : 0, firstTxs: firstTxs } });
        await store.close();
        process.disconnect();
        return;
      }
      if (m.type === 'bench:subscribe') {
        // script hashes the mempool touches (script view: Electrum's), as many as asked, spread
        // evenly over them (the first ones met are the busiest of the generated chain)
        const tip = await store.getTip();
        const view = await reader.mempoolReader.at(tip);
        const touched = [...view.scripthashKeys('script')];
        const every = Math.max(1, Math.floor(touched.length / m.n));
        const keys = touched.filter((_, k) => k % every === 0).slice(0, m.n);
        for (let k = 0; k < keys.length; k += 200) {
          await Promise.all(keys.slice(k, k + 200).map((key) => {
            const sh = Buffer.from(key, 'latin1');
            return subs.subscribe(session, Buffer.from(sh).reverse().toString('hex'), sh);
          }));
        }
        // the entries are brought to this view once: the polls after it meet its changes
        await subs.onChange({ previous: tip, tip, forkHeight: tip.height, moved: false, mempool: async () => view });
        process.send({ type: 'bench:viewed', subscribed: subs.size });
        return;
      }
      const viewed = await cost(cache, m.seq, m.what);
      if (!memLoaded) {
        memLoaded = gcMemory();
        firstTxs = viewed.txs;
      }
      const baseline = m.baseline ? await cost(new MempoolCache(store), m.seq, `baseline ${m.what}`) : null;
      process.send({ type: 'bench:viewed', reader: viewed, baseline, electrum: await electrum(m.what) });
    } catch (err) {
      process.send({ type: 'bench:viewed', error: err.stack });
    }
  });
  process.send({ type: 'bench:viewed' });
  return new Promise(() => {});
}

function runPhase(phase, size, extra, execArgv) {
  const argv = ['--seed', args.seed, '--mempool', String(size), '--step', args.step, '--steps', args.steps, '--chain-txs', args['chain-txs'],
    '--subscriptions', args.subscriptions, ...extra];
  return runPhaseIn(__filename, phase, argv, execArgv);
}

async function main() {
  const work = args.dir || fs.mkdtempSync(path.join(os.tmpdir(), 'addrindex-bench-mempool-'));
  const stores = args.stores.split(',').filter(Boolean);
  const sizes = (args.mempool || args.mempools).split(',').map(Number);
  console.log(`bench/mempool: mempools of ${sizes.map((n) => n.toLocaleString('en-US')).join(' and ')} txs (+${args.step} × ${args.steps}) over a ` +
    `${Number(args['chain-txs']).toLocaleString('en-US')}-tx chain, seed ${args.seed}; ${os.cpus().length} cores, node ${process.version}, ` +
    `load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; work dir ${work}`);
  let mongo = null;
  try {
    if (stores.includes('mongo')) {
      const { startMongo } = require('../test/helpers/mongo-server');
      mongo = await startMongo();
    }
    const runs = [];
    for (const size of sizes) {
      const blocks = path.join(work, `blocks-${size}`);
      const metaFile = path.join(work, `mempool-chain-${size}.json`);
      const key = JSON.stringify({ seed: args.seed, mempool: size, step: args.step, steps: args.steps, chain: args['chain-txs'], shape: SHAPE });
      let gen = fs.existsSync(metaFile) ? JSON.parse(fs.readFileSync(metaFile, 'utf8')) : null;
      if (!gen || gen.key !== key) {
        fs.rmSync(blocks, { recursive: true, force: true });
        const t0 = process.hrtime.bigint();
        gen = { key, ...(await runPhase('generate', size, ['--blocks', blocks])), ms: msSince(t0) };
        fs.writeFileSync(metaFile, JSON.stringify(gen));
        console.log(`generated: a chain of ${gen.chainTxs.toLocaleString('en-US')} txs to height ${gen.above}, then ${gen.poolTxs.toLocaleString('en-US')} ` +
          `mempool txs in blocks ${gen.above + 1}-${gen.tip} (${(gen.ms / 1000).toFixed(1)} s)`);
      } else {
        console.log(`using the chain already in the work dir (mempool ${size})`);
      }
      const results = [];
      for (const store of stores) {
        const datadir = path.join(work, `index-${store}`);
        fs.rmSync(datadir, { recursive: true, force: true });
        const extra = ['--blocks', blocks, '--store', store, '--above', String(gen.above), '--datadir', datadir];
        // the reader's profile beside the follower's
        if (args['cpu-prof']) extra.push('--cpu-prof', path.resolve(args['cpu-prof'], `${store}-${size}`));
        if (store === 'mongo') extra.push('--mongodb-url', mongo.url);
        results.push({ size, loadAvg: os.loadavg(), ...(await runPhase('run', size, extra, ['--expose-gc'])) });
        // what is done so far, should a later run not finish
        fs.writeFileSync(`${args.json}.tmp`, JSON.stringify([...runs, { size, gen, results }]));
        fs.rmSync(datadir, { recursive: true, force: true });
        console.log(`  ${size} ${store}: done (chain synced in ${(results[results.length - 1].sync.ms / 1000).toFixed(1)} s), load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
      }
      runs.push({ size, gen, results });
    }
    report(runs);
  } finally {
    if (mongo) await mongo.stop();
    if (!args.dir) fs.rmSync(work, { recursive: true, force: true });
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const steps = (r) => r.polls.filter((p) => p.what.startsWith('+'));
const verdict = (ok) => (ok ? 'met' : 'NOT met');

function report(runs) {
  const all = runs.flatMap((run) => run.results);
  const rows = [];
  for (const r of all) {
    for (const p of r.polls) {
      rows.push({
        mempool: r.size.toLocaleString('en-US'), store: r.store, poll: p.what, listed: p.blocks ? `(${p.blocks} block)` : p.listed.toLocaleString('en-US'), added: p.added, removed: p.removed,
        snapshot: p.txs.toLocaleString('en-US'), 'rows put': p.upserts, 'rows out': p.dropped, 'index lookups': p.asked.toLocaleString('en-US'),
        'MB stored': p.stored ? (p.stored / MB).toFixed(2) : '-', 'wall ms': p.ms.toFixed(0), 'node ms': p.fetchMs.toFixed(0), 'of it the list (getblock) ms': p.listMs === undefined ? '-' : p.listMs.toFixed(0),
        'resolve ms': p.resolveMs.toFixed(0), 'write ms': p.writeMs.toFixed(0), 'main CPU ms': p.cpuMs.toFixed(0),
        'of it GC pauses ms': p.gcMs === undefined ? '-' : p.gcMs.toFixed(0), 'loop busy ms': p.busyMs.toFixed(0),
      });
    }
  }
  console.log('');
  printTable(rows);
  console.log('');
  printTable(all.map((r) => ({
    mempool: r.size.toLocaleString('en-US'), store: r.store,
    'RSS before MB': (r.rss.before / MB).toFixed(0), 'RSS after MB': (r.rss.after / MB).toFixed(0), 'growth MB': (r.rss.growth / MB).toFixed(0), 'of it anonymous MB': r.rss.anonGrowth === undefined ? '-' : (r.rss.anonGrowth / MB).toFixed(0), 'of it the index map MB': r.rss.indexMapGrowth === undefined ? '-' : (r.rss.indexMapGrowth / MB).toFixed(0),
    'of it JS heap MB': ((r.memory.after.heapUsed - r.memory.before.heapUsed) / MB).toFixed(0),
    'buffers MB': ((r.memory.after.arrayBuffers - r.memory.before.arrayBuffers) / MB).toFixed(0),
    'follower B/tx (heap+buffers)': r.perTx.heapAndBuffers.toFixed(0), 'B/tx estimated (--mempool-max-mb)': r.perTx.estimated.toFixed(0),
    'worker RSS growth MB (first view; end)': `${((r.workerMemory.loaded.rss - r.workerMemory.before.rss) / MB).toFixed(0)}; ${((r.workerMemory.after.rss - r.workerMemory.before.rss) / MB).toFixed(0)}`,
    'of it anonymous MB (first view)': r.workerMemory.loaded.anon === undefined ? '-' : ((r.workerMemory.loaded.anon - r.workerMemory.before.anon) / MB).toFixed(0),
    'worker B/tx (heap+buffers)': ((r.workerMemory.loaded.heapUsed + r.workerMemory.loaded.arrayBuffers - r.workerMemory.before.heapUsed - r.workerMemory.before.arrayBuffers) / r.workerMemory.firstTxs).toFixed(0),
    'avg tx: raw B, in, out': `${r.perTx.raw.toFixed(0)}, ${r.perTx.inputs.toFixed(2)}, ${r.perTx.outputs.toFixed(2)}`,
    'peak RSS MB': (r.rss.peak / MB).toFixed(0), 'block commit ms': r.blockSyncMs.toFixed(0), 'fixture CPU s': (r.fixture.cpuMs / 1000).toFixed(1),
  })));
  const readerRows = [];
  for (const r of all) {
    for (const p of r.polls) {
      if (!p.reader) continue;
      readerRows.push({
        mempool: r.size.toLocaleString('en-US'), store: r.store, poll: p.what, snapshot: p.txs.toLocaleString('en-US'),
        'worker: view': p.reader.how, changes: p.reader.changes, decoded: p.reader.decoded.toLocaleString('en-US'),
        'worker wall ms': p.reader.ms.toFixed(0), 'worker CPU ms': p.reader.cpuMs.toFixed(0),
        'baseline (whole) wall ms': p.readerBaseline ? p.readerBaseline.ms.toFixed(0) : '-', 'baseline CPU ms': p.readerBaseline ? p.readerBaseline.cpuMs.toFixed(0) : '-',
        'electrum subs': p.electrum ? p.electrum.subscribed : '-', 'recomputed': p.electrum ? `${p.electrum.recomputed} (${p.electrum.how})` : '-',
        'notified': p.electrum ? p.electrum.changed : '-', 'their mempool txs (mean, max)': p.electrum ? `${p.electrum.txsPerChanged.toFixed(1)}, ${p.electrum.maxTxsPerChanged}` : '-',
        'electrum CPU ms': p.electrum ? p.electrum.cpuMs.toFixed(0) : '-',
      });
    }
  }
  console.log('\nserve side, per worker per poll (the changes read, what entered decoded, the view derived; then Electrum\'s subscriptions):');
  printTable(readerRows);
  const targets = [];
  for (const r of all) {
    const first = r.polls[0];
    const stepCpu = steps(r).map((p) => p.cpuMs);
    const stepStored = steps(r).map((p) => p.stored);
    const block = r.polls.find((p) => p.what === 'a block');
    const workerCpu = steps(r).map((p) => p.reader.cpuMs);
    const subsCpu = steps(r).map((p) => (p.electrum ? p.electrum.cpuMs : NaN));
    const workerGrowth = r.workerMemory.loaded.rss - r.workerMemory.before.rss;
    const big = r.size >= 150000;
    targets.push({
      mempool: r.size.toLocaleString('en-US'), store: r.store,
      'first load (<= 30 s at 150k)': `${(first.ms / 1000).toFixed(2)} s${big ? ` ${verdict(first.ms <= 30000)}` : ''}`,
      '+500: main CPU <= 100 ms (median, max)': `${median(stepCpu).toFixed(0)}, ${Math.max(...stepCpu).toFixed(0)} ${verdict(Math.max(...stepCpu) <= 100)}`,
      '+500: stored <= 2 MB (max)': `${(Math.max(...stepStored) / MB).toFixed(2)} MB ${verdict(Math.max(...stepStored) <= 2 * MB)}`,
      'worker CPU per +500 <= 50 ms (median, max)': `${median(workerCpu).toFixed(0)}, ${Math.max(...workerCpu).toFixed(0)}${big ? ` ${verdict(Math.max(...workerCpu) <= 50)}` : ''}`,
      'block of 3,000: poll wall <= 300 ms': `${block.ms.toFixed(0)} ms (CPU ${block.cpuMs.toFixed(0)}; sync commit ${r.blockSyncMs.toFixed(0)}) ${verdict(block.ms <= 300)}`,
      'RSS growth follower <= 500 MB': `${(r.rss.growth / MB).toFixed(0)} MB${anonOf(r.rss.anonGrowth)} ${verdict(r.rss.growth <= 500 * MB)}`,
      'RSS growth worker (its view) <= 300 MB': `${(workerGrowth / MB).toFixed(0)} MB${anonOf(r.workerMemory.loaded.anon - r.workerMemory.before.anon)} ${verdict(workerGrowth <= 300 * MB)}`,
      'subscriptions per +500 <= 50 ms (median, max)': `${median(subsCpu).toFixed(0)}, ${Math.max(...subsCpu).toFixed(0)} ${verdict(Math.max(...subsCpu) <= 50)}`,
      'load avg at start': r.loadAvg.map((x) => x.toFixed(1)).join(' '),
    });
  }
  console.log('\ntargets:');
  printTable(targets);
  // the same poll at both sizes: what grows with the mempool
  const ratios = [];
  if (runs.length > 1) {
    const [small, large] = [runs[0], runs[runs.length - 1]];
    for (const r of large.results) {
      const s = small.results.find((x) => x.store === r.store);
      if (!s) continue;
      const m = (run, f) => median(steps(run).map(f));
      ratios.push({
        store: r.store, sizes: `${large.size.toLocaleString('en-US')} / ${small.size.toLocaleString('en-US')}`,
        '+500 main CPU': `${m(r, (p) => p.cpuMs).toFixed(0)} / ${m(s, (p) => p.cpuMs).toFixed(0)} ms = ${(m(r, (p) => p.cpuMs) / m(s, (p) => p.cpuMs)).toFixed(2)}x`,
        '+500 stored': `${(m(r, (p) => p.stored) / MB).toFixed(2)} / ${(m(s, (p) => p.stored) / MB).toFixed(2)} MB = ${(m(r, (p) => p.stored) / m(s, (p) => p.stored)).toFixed(2)}x`,
        '+500 wall': `${m(r, (p) => p.ms).toFixed(0)} / ${m(s, (p) => p.ms).toFixed(0)} ms = ${(m(r, (p) => p.ms) / m(s, (p) => p.ms)).toFixed(2)}x`,
        'worker CPU': `${m(r, (p) => p.reader.cpuMs).toFixed(0)} / ${m(s, (p) => p.reader.cpuMs).toFixed(0)} ms`,
      });
    }
    console.log('\nthe +500 poll at both sizes (median):');
    printTable(ratios);
  }
  const result = {
    date: new Date().toISOString(), node: process.version, cores: os.cpus().length, loadAvgAtEnd: os.loadavg(),
    options: { ...args, phase: undefined }, runs: runs.map((run) => ({ size: run.size, chain: run.gen, results: run.results })), ratios,
  };
  fs.mkdirSync(path.dirname(args.json), { recursive: true });
  fs.writeFileSync(args.json, JSON.stringify(result, null, 2));
  console.log(`\nload average at the end ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; results written to ${path.relative(process.cwd(), args.json)}`);
}

if (args.phase === 'reader') phaseReader().catch((err) => { console.error(err); process.exit(1); });
else runBench({ generate: phaseGenerate, catchup: phaseCatchup, run: phaseRun }, args.phase, main);
