#!/usr/bin/env node
'use strict';

/**
 * Sync benchmark: a generated chain synced by the real SyncService, as `addrindex sync` runs
 * it, at one or several sizes and into one or several stores; beside it the seed's baseline
 * (bench/lib/seed-baseline.js) on the first 100k txs of the same chain, into LMDB too. Each
 * run is its own process, so peak RSS is that run's.
 *
 *   node bench/sync.js [--txs 1000000 | --sizes 1000000,3000000,10000000] [--stores lmdb,level]
 *                      [--seed 1] [--baseline-txs 100000] [--threads N] [--batch-blocks N]
 *                      [--batch-mb N] [--batch-ms N] [--ahead N] [--bulk N] [--cache-mb N] [--prefetch auto|on|off] [--dir DIR] [--keep]
 *                      [--cpu-prof DIR] [--no-baseline] [--memory-max 2G] [--compact] [--json FILE]
 *
 * The chain is generated once for the largest size; the generator's chains of one seed are
 * prefixes of each other, so each size syncs the blocks holding its first N transactions.
 * --dir keeps the chain (and the last index of each run) there and reuses the chain next time
 * (a longer one serves smaller sizes); --cpu-prof DIR records V8 CPU profiles of every run
 * (main thread and each parse worker), to be summarized with profiles/summarize.js.
 * --memory-max runs each sync in a memory cgroup of that size (bench/lib/cgroup.js; root or a
 * delegated cgroup), page cache included, after dropping the chain's files from the cache:
 * the index and the blocks then no longer fit, and the run reports the disk reads it needed
 * (major page faults of the LMDB map, bytes read) per transaction. --compact runs
 * `addrindex compact`'s rewrite after each LMDB sync and reports the file after it too.
 *
 * Reports per run: tx/s, blocks/s, MB/s, peak RSS and peak anonymous RSS, the index on disk
 * beside the bytes of its rows, tx/s of each tenth of the chain by wall time and per second of
 * the main thread's CPU (which other work on a shared machine does not stretch), and the
 * slope: the last tenth's rate over the first's. The slope is the guard against a sync that
 * slows as the index grows (the cost per transaction must stay flat): under 70 % fails its
 * target line and the process exits 1.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { printTable } = require('./lib/table');
const { heightHolding, boundedSource } = require('./lib/prefix');
const { diskUsage, statIfPresent } = require('./lib/disk');
const { mainThreadCpuSec, msSince: ms, runPhase: runPhaseIn, runBench } = require('./lib/proc');
const { tenths } = require('./lib/tenths');

const { values: args } = parseArgs({
  options: {
    txs: { type: 'string', default: '1000000' },
    sizes: { type: 'string' },
    stores: { type: 'string', default: 'lmdb' },
    store: { type: 'string', default: 'lmdb' }, // internal: the store of this phase
    seed: { type: 'string', default: '1' },
    'baseline-txs': { type: 'string', default: '100000' },
    threads: { type: 'string' },
    'batch-blocks': { type: 'string' },
    'batch-mb': { type: 'string' },
    'batch-ms': { type: 'string' },
    ahead: { type: 'string' },
    bulk: { type: 'string' },
    'cache-mb': { type: 'string' },
    prefetch: { type: 'string' },
    'memory-max': { type: 'string' },
    compact: { type: 'boolean', default: false },
    dir: { type: 'string' },
    keep: { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' },
    'no-baseline': { type: 'boolean', default: false },
    json: { type: 'string', default: path.join(__dirname, 'results', 'sync.json') },
    // internal: which phase this process runs
    phase: { type: 'string' },
    blocks: { type: 'string' },
    datadir: { type: 'string' },
    limit: { type: 'string' },
  },
});

// as `addrindex sync`: the thread pool its reads ahead run on, sized before the first use
require('../lib/stores/prefetcher').poolForPrefetch(args.prefetch);

const MB = 1e6;

// --- phases (each in its own process) ---------------------------------------------------

async function phaseGenerate() {
  const { writeChain } = require('../tools/generator');
  const t0 = process.hrtime.bigint();
  const s = await writeChain({ dir: args.blocks, seed: args.seed, txs: Number(args.txs), network: 'regtest' });
  return { txs: s.txs, blocks: s.blocks, bytes: s.bytes, files: s.files, ms: ms(t0), stats: s.stats };
}

/** Our sync: BlocksDirSource → SyncService → LmdbStore, as `addrindex sync` runs it. */
async function phaseSync() {
  const { BlocksDirSource } = require('../lib/sources/blocksdir');
  const { SyncService } = require('../lib/sync/service');
  const { openStore, storeClass } = require('../lib/stores');
  const { CATCH_UP_BULK, catchUpLimits } = require('../lib/sync/batch');
  // as `addrindex sync` does: --cache-mb makes the groups' and the batches' sizes
  const limits = catchUpLimits(args['cache-mb'] === undefined ? undefined : Number(args['cache-mb']), storeClass(args.store).catchUpBatchShare);
  const limit = args.limit ? Number(args.limit) : Infinity;
  const source = new BlocksDirSource({ dir: args.blocks, network: 'regtest' });
  const ts = process.hrtime.bigint();
  await source.scan();
  const scanMs = ms(ts);
  // --limit: sync only the blocks holding the first `limit` txs (the baseline's prefix)
  const to = limit === Infinity ? source.tip().height : await heightHolding(source, limit);
  const bounded = boundedSource(source, to);
  const store = await openStore({
    store: args.store, datadir: args.datadir, network: 'regtest', ...(args.prefetch ? { prefetch: args.prefetch } : {}),
  });
  const samples = [];
  let rssPeak = 0;
  let anonPeak = 0;
  const rssTimer = setInterval(() => {
    rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
    anonPeak = Math.max(anonPeak, procStatus('RssAnon'));
  }, 250);
  const cpu0 = mainThreadCpuSec();
  const proc0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const service = new SyncService({
    source: bounded, store, network: 'regtest',
    threads: args.threads === undefined ? undefined : Number(args.threads),
    ahead: args.ahead === undefined ? undefined : Number(args.ahead),
    // batches per commit while catching up, as `addrindex sync` does (--bulk-batches)
    bulkBatches: args.bulk === undefined ? CATCH_UP_BULK : Number(args.bulk),
    bulkBytes: limits.bulkBytes,
    batch: {
      maxBlocks: num(args['batch-blocks']),
      maxBytes: args['batch-mb'] === undefined ? limits.batchBytes : Number(args['batch-mb']) * 1048576,
      maxMs: num(args['batch-ms']),
    },
    onProgress: (p) => {
      if (p.phase === 'batch') {
        samples.push({
          ms: ms(t0), cpuMs: 1000 * (mainThreadCpuSec() - cpu0), txs: p.txs, blocks: p.blocks, bytes: p.bytes, batchMs: p.batch.ms, batchBlocks: p.batch.blocks,
        });
      }
    },
  });
  const r = await service.run();
  const total = ms(t0);
  const mainCpuMs = 1000 * (mainThreadCpuSec() - cpu0);
  const proc = process.cpuUsage(proc0);
  clearInterval(rssTimer);
  const ru = process.resourceUsage();
  const io = procIo();
  // The files as the sync leaves them, before the scan below: a LevelDB iterator holds the
  // tables of its moment, so the compactions that go on while it reads every row would leave
  // their inputs on disk until the next compaction or open (the 10M chain: 330 MB more).
  const synced = { fileBytes: fileBytes(args.datadir), diskBytes: diskUsage(args.datadir) };
  const stats = await store.stats();
  let compacted = null;
  if (args.compact && store.compact) {
    const tc = process.hrtime.bigint();
    const c = await store.compact();
    compacted = { ms: ms(tc), before: c.before, after: c.after };
  }
  await store.close();
  await source.close();
  return {
    majorFaults: ru.majorPageFault, readBytes: io.read_bytes, writeBytes: io.write_bytes, compacted,
    ms: total, scanMs, mainCpuMs, cpuMs: (proc.user + proc.system) / 1000, txs: r.txs, blocks: r.blocks, bytes: r.bytes,
    maxRss: process.resourceUsage().maxRSS * 1024, rssPeakSampled: rssPeak, rssAnonPeak: anonPeak,
    // at the end: anonymous memory vs file-backed pages (the LMDB map counts in RSS)
    rssAnonEnd: procStatus('RssAnon'), rssFileEnd: procStatus('RssFile'),
    ...synced, stats, samples,
  };
}

/** The seed's way, on the blocks holding the first `limit` txs. */
async function phaseBaseline() {
  const { BlocksDirSource } = require('../lib/sources/blocksdir');
  const { SeedBaseline } = require('./lib/seed-baseline');
  const limit = Number(args.limit);
  const source = new BlocksDirSource({ dir: args.blocks, network: 'regtest' });
  await source.scan();
  const to = await heightHolding(source, limit);
  fs.mkdirSync(args.datadir, { recursive: true });
  const base = new SeedBaseline({ dir: args.datadir, network: 'regtest' });
  const t0 = process.hrtime.bigint();
  let bytes = 0;
  let blocks = 0;
  for await (const b of source.blocks(0, to)) {
    await base.applyBlock(b.raw, b.height);
    bytes += b.raw.length;
    blocks++;
  }
  const total = ms(t0);
  await base.close();
  await source.close();
  return { ms: total, txs: base.txs, blocks, bytes, maxRss: process.resourceUsage().maxRSS * 1024, diskBytes: diskUsage(args.datadir) };
}

// --- the driver ---------------------------------------------------------------------------

function runPhase(phase, extra, execArgv = [], onSpawn) {
  const argv = ['--seed', args.seed, '--txs', args.txs, ...extra];
  for (const k of ['threads', 'batch-blocks', 'batch-mb', 'batch-ms', 'ahead', 'bulk', 'cache-mb', 'prefetch']) if (args[k] !== undefined) argv.push(`--${k}`, args[k]);
  if (args.compact) argv.push('--compact');
  return runPhaseIn(__filename, phase, argv, execArgv, onSpawn);
}

async function main() {
  const work = args.dir || fs.mkdtempSync(path.join(os.tmpdir(), 'addrindex-bench-sync-'));
  const blocks = path.join(work, 'blocks');
  const baseTxs = Number(args['baseline-txs']);
  const sizes = (args.sizes || args.txs).split(',').map(Number);
  const stores = args.stores.split(',');
  if (sizes.some((n) => !(Number.isInteger(n) && n > 0)) || stores.some((s) => !['lmdb', 'level'].includes(s))) {
    throw new Error('--sizes takes transaction counts, --stores lmdb and/or level');
  }
  const maxTxs = Math.max(...sizes);
  console.log(`bench/sync: ${sizes.map((n) => n.toLocaleString('en-US')).join(', ')} txs into ${stores.join(', ')}, seed ${args.seed}; ` +
    `${os.cpus().length} cores, node ${process.version}, load average ${os.loadavg()[0].toFixed(2)}; work dir ${work}`);
  try {
    let gen;
    if (fs.existsSync(path.join(blocks, 'blk00000.dat'))) {
      console.log('using the chain already in the work dir (each size syncs the blocks holding its first N txs)');
    } else {
      gen = await runPhase('generate', ['--blocks', blocks, '--txs', String(maxTxs)]);
      console.log(`generated ${gen.blocks} blocks, ${gen.txs.toLocaleString('en-US')} txs, ${(gen.bytes / MB).toFixed(0)} MB in ${(gen.ms / 1000).toFixed(1)} s`);
    }
    const dd = (name) => {
      const d = path.join(work, name);
      fs.rmSync(d, { recursive: true, force: true });
      return d;
    };
    const runs = [];
    for (const size of sizes) {
      for (const store of stores) {
        const prof = args['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(args['cpu-prof'], `${store}-${size}`)] : [];
        console.log(`\n${store}, ${size.toLocaleString('en-US')} txs: load average ${os.loadavg()[0].toFixed(2)} at the start`);
        const cg = args['memory-max'] ? limitMemory(blocks) : null;
        let r;
        try {
          r = await runPhase('sync', ['--blocks', blocks, '--datadir', dd(`index-${store}`), '--limit', String(size), '--store', store, '--txs', String(size)], prof,
            (child) => cg && cg.add(child.pid));
        } finally {
          if (cg) {
            cg.peak = cg.usage();
            cg.remove();
          }
        }
        const run = summarize(r, store, size);
        if (cg) run.memoryLimit = cg.peak;
        runs.push(run);
        printRun(run);
      }
    }
    let prefixOurs = null;
    let base = null;
    if (!args['no-baseline']) {
      prefixOurs = await runPhase('sync', ['--blocks', blocks, '--datadir', dd('index-prefix'), '--limit', String(baseTxs), '--store', 'lmdb']);
      base = await runPhase('baseline', ['--blocks', blocks, '--datadir', dd('baseline'), '--limit', String(baseTxs)]);
      console.log('');
      printTable([
        row(`addrindex, first ${baseTxs.toLocaleString('en-US')} txs`, prefixOurs),
        row(`seed baseline, first ${baseTxs.toLocaleString('en-US')} txs`, base),
      ]);
    }
    report(runs, prefixOurs, base, gen);
    if (!args.keep && args.dir) for (const store of stores) fs.rmSync(path.join(work, `index-${store}`), { recursive: true, force: true });
  } finally {
    if (!args.keep && !args.dir) fs.rmSync(work, { recursive: true, force: true });
  }
}

/** One run's figures: rates, tenths both ways, the slope, memory, bytes. */
function summarize(r, store, size) {
  const t = tenths(r.samples, r.txs);
  const tc = tenths(r.samples, r.txs, 'cpuMs');
  const e = r.stats.engine || {};
  return {
    store, size, txs: r.txs, blocks: r.blocks, bytes: r.bytes, ms: r.ms, txPerSec: r.txs / (r.ms / 1000),
    mainCpuMs: r.mainCpuMs, cpuMs: r.cpuMs, txPerMainCpuSec: r.txs / (r.mainCpuMs / 1000),
    tenths: t, cpuTenths: tc, slope: t[9] / t[0], cpuSlope: tc[9] / tc[0],
    maxRss: r.maxRss, rssAnonPeak: r.rssAnonPeak, rssAnonEnd: r.rssAnonEnd, rssFileEnd: r.rssFileEnd,
    rowBytes: r.stats.bytes, fileBytes: r.fileBytes, diskBytes: r.diskBytes,
    // LMDB: the pages in use up to the last one written (the rest of the file is not data)
    usedBytes: e.lastPage !== undefined ? (e.lastPage + 1) * e.pageSize : null,
    freePages: e.freePages ?? null, historyEntries: r.stats.historyEntries, tables: r.stats.tables, engine: e,
    batches: r.samples.length, scanMs: r.scanMs, samples: r.samples,
    majorFaults: r.majorFaults, readBytes: r.readBytes, writeBytes: r.writeBytes, compacted: r.compacted,
  };
}

const fmt = (v) => Math.round(v).toLocaleString('en-US');
const pct = (v) => `${(100 * v).toFixed(0)} %`;

function printRun(run) {
  printTable([
    { per: 'wall s', ...Object.fromEntries(run.tenths.map((v, i) => [`${i + 1}`, fmt(v)])), slope: pct(run.slope) },
    { per: 'main CPU s', ...Object.fromEntries(run.cpuTenths.map((v, i) => [`${i + 1}`, fmt(v)])), slope: pct(run.cpuSlope) },
  ]);
  console.log(`${fmt(run.txs)} txs in ${(run.ms / 1000).toFixed(1)} s: ${fmt(run.txPerSec)} tx/s; main thread ${(run.mainCpuMs / 1000).toFixed(1)} s of CPU ` +
    `(${fmt(run.txPerMainCpuSec)} tx per second of it, busy ${pct(run.mainCpuMs / run.ms)}), all threads ${(run.cpuMs / 1000).toFixed(1)} s`);
  console.log(`memory: peak RSS ${(run.maxRss / MB).toFixed(0)} MB, peak anonymous ${(run.rssAnonPeak / MB).toFixed(0)} MB ` +
    `(at the end ${(run.rssAnonEnd / MB).toFixed(0)} MB anonymous + ${(run.rssFileEnd / MB).toFixed(0)} MB file-backed)`);
  console.log(`bytes: rows ${(run.rowBytes / MB).toFixed(0)} MB; files ${(run.fileBytes / MB).toFixed(0)} MB long, ${(run.diskBytes / MB).toFixed(0)} MB on disk` +
    (run.usedBytes ? `, LMDB's pages in use up to the last ${(run.usedBytes / MB).toFixed(0)} MB (${(run.usedBytes / run.rowBytes).toFixed(2)}x the rows), ${fmt(run.freePages)} free pages` : '') +
    `; ${run.batches} batches` +
    (run.compacted ? `; compacted in ${(run.compacted.ms / 1000).toFixed(1)} s to ${(run.compacted.after / MB).toFixed(0)} MB (${(run.compacted.after / run.rowBytes).toFixed(2)}x the rows)` : ''));
  console.log(`disk: ${(run.majorFaults / run.txs).toFixed(3)} major page faults per tx (reads of the map from disk), ` +
    `${(run.readBytes / run.txs).toFixed(0)} bytes read and ${(run.writeBytes / run.txs).toFixed(0)} written per tx` +
    (run.memoryLimit ? `; memory cgroup v${run.memoryLimit.version}: limit ${(run.memoryLimit.limit / MB).toFixed(0)} MB, peak ${(run.memoryLimit.peak / MB).toFixed(0)} MB` : ''));
}

/** A memory cgroup of --memory-max bytes for the next run, the chain's files out of the cache. */
function limitMemory(blocks) {
  const { MemoryCgroup, evictFromCache } = require('./lib/cgroup');
  const m = /^(\d+(?:\.\d+)?)([KMG]?)$/i.exec(args['memory-max']);
  if (!m) throw new Error(`--memory-max takes bytes with an optional K, M or G suffix, got ${args['memory-max']}`);
  const bytes = Math.round(Number(m[1]) * { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3 }[m[2].toUpperCase()]);
  for (const f of fs.readdirSync(blocks)) evictFromCache(path.join(blocks, f));
  return new MemoryCgroup(bytes);
}

/** /proc/self/io: bytes this process made the disk read and write (zeros where missing). */
function procIo() {
  const out = { read_bytes: 0, write_bytes: 0 };
  try {
    for (const line of fs.readFileSync('/proc/self/io', 'utf8').split('\n')) {
      const [k, v] = line.split(': ');
      if (k in out) out[k] = Number(v);
    }
  } catch {
    // not Linux
  }
  return out;
}

/** The targets of every run, the JSON results, and the exit code of the slope guard. */
function report(runs, prefixOurs, base, gen) {
  const rate = (r) => r.txs / (r.ms / 1000);
  const ratio = base ? rate(prefixOurs) / rate(base) : NaN;
  const lines = [];
  const line = (target, measured, ok) => lines.push({ target, measured, met: ok === null ? '' : ok ? 'yes' : 'no' });
  for (const r of runs) {
    const at = `${r.store} ${(r.txs / 1e6).toFixed(1)}M:`;
    line(`${at} last tenth >= 70 % of the first (wall)`, pct(r.slope), r.slope >= 0.7);
    line(`${at} the same per main-thread CPU second`, pct(r.cpuSlope), r.cpuSlope >= 0.7);
    const want = r.txs >= 5e6 ? 40000 : 50000;
    line(`${at} >= ${fmt(want)} tx/s whole chain`, `${fmt(r.txPerSec)} tx/s`, r.txPerSec >= want);
    line(`${at} peak anonymous RSS <= 1.2 GB`, `${(r.rssAnonPeak / 1e9).toFixed(2)} GB`, r.rssAnonPeak <= 1.2e9);
    line(`${at} files on disk <= 1.5x the rows`, `${(r.diskBytes / r.rowBytes).toFixed(2)}x`, r.diskBytes <= 1.5 * r.rowBytes);
    if (r.compacted) line(`${at} the same after addrindex compact`, `${(r.compacted.after / r.rowBytes).toFixed(2)}x`, r.compacted.after <= 1.5 * r.rowBytes);
  }
  line(`>= 20x the seed baseline (first ${fmt(Number(args['baseline-txs']))} txs)`, base ? `${ratio.toFixed(1)}x` : 'not run', base ? ratio >= 20 : null);
  console.log('\ntargets:');
  printTable(lines);
  const result = {
    date: new Date().toISOString(), node: process.version, cores: os.cpus().length, loadAvgAtEnd: os.loadavg(), seed: args.seed,
    options: args, generate: gen && { ...gen, stats: undefined }, chainStats: gen && gen.stats, runs,
    prefixOurs: prefixOurs && { ...prefixOurs, samples: undefined, txPerSec: rate(prefixOurs) },
    baseline: base && { ...base, txPerSec: rate(base) }, ratio: base ? ratio : null,
  };
  fs.mkdirSync(path.dirname(args.json), { recursive: true });
  fs.writeFileSync(args.json, JSON.stringify(result, null, 2));
  console.log(`\nresults written to ${path.relative(process.cwd(), args.json)}`);
  if (runs.some((r) => r.slope < 0.7 || r.cpuSlope < 0.7)) {
    console.log('the sync slows as the index grows: a last tenth under 70 % of the first (exit 1)');
    process.exitCode = 1;
  }
}

function row(what, r) {
  const s = r.ms / 1000;
  return {
    what,
    txs: r.txs.toLocaleString('en-US'),
    's': s.toFixed(1),
    'tx/s': Math.round(r.txs / s).toLocaleString('en-US'),
    'blocks/s': (r.blocks / s).toFixed(1),
    'MB/s': (r.bytes / MB / s).toFixed(1),
    'peak RSS MB': (r.maxRss / MB).toFixed(0),
    'disk MB': (r.diskBytes / MB).toFixed(1),
  };
}

/** A /proc/self/status field in bytes (0 where /proc is missing). */
function procStatus(name) {
  try {
    const m = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** The files' lengths under dir (what `ls -l` shows; diskUsage is what they occupy). */
function fileBytes(dir) {
  let total = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.isFile()) total += statIfPresent(path.join(dir, e.name))?.size ?? 0;
  }
  return total;
}

function num(v) {
  return v === undefined ? undefined : Number(v);
}

runBench({ generate: phaseGenerate, sync: phaseSync, baseline: phaseBaseline }, args.phase, main);
