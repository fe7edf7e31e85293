#!/usr/bin/env node
'use strict';

/**
 * Sync benchmark: a generated chain (default 1M txs) synced into LMDB by the real SyncService,
 * and beside it the seed's baseline (bench/lib/seed-baseline.js) on the first 100k txs of the
 * same chain, into LMDB too. Each phase runs in its own process, so peak RSS is that phase's.
 *
 *   node bench/sync.js [--txs 1000000] [--seed 1] [--baseline-txs 100000] [--threads N]
 *                      [--batch-blocks N] [--batch-mb N] [--batch-ms N] [--ahead N]
 *                      [--dir DIR] [--keep] [--cpu-prof DIR] [--no-baseline] [--json FILE]
 *
 * --dir keeps the generated chain there and reuses it on the next run (same --txs and --seed);
 * --cpu-prof DIR records V8 CPU profiles of the whole-chain sync (main thread and each parse
 * worker), to be summarized with profiles/summarize.js; --no-baseline skips both prefix runs.
 *
 * Reports: tx/s, blocks/s, MB/s of raw block bytes, peak RSS, DB size on disk, bytes per
 * history entry, tx/s of each tenth of the chain, and ours ÷ baseline on the same prefix.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { parseArgs } = require('node:util');
const { printTable } = require('./lib/table');
const { heightHolding, boundedSource } = require('./lib/prefix');
const { diskUsage } = require('./lib/disk');
const { mainThreadCpuSec, msSince: ms } = require('./lib/proc');

const { values: args } = parseArgs({
  options: {
    txs: { type: 'string', default: '1000000' },
    store: { type: 'string', default: 'lmdb' },
    seed: { type: 'string', default: '1' },
    'baseline-txs': { type: 'string', default: '100000' },
    threads: { type: 'string' },
    'batch-blocks': { type: 'string' },
    'batch-mb': { type: 'string' },
    'batch-ms': { type: 'string' },
    ahead: { type: 'string' },
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
  const { openStore } = require('../lib/stores');
  const limit = args.limit ? Number(args.limit) : Infinity;
  const source = new BlocksDirSource({ dir: args.blocks, network: 'regtest' });
  const ts = process.hrtime.bigint();
  await source.scan();
  const scanMs = ms(ts);
  // --limit: sync only the blocks holding the first `limit` txs (the baseline's prefix)
  const to = limit === Infinity ? source.tip().height : await heightHolding(source, limit);
  const bounded = boundedSource(source, to);
  const store = await openStore({ store: args.store, datadir: args.datadir, network: 'regtest' });
  const samples = [];
  let rssPeak = 0;
  const rssTimer = setInterval(() => { rssPeak = Math.max(rssPeak, process.memoryUsage.rss()); }, 200);
  const cpu0 = mainThreadCpuSec();
  const proc0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const service = new SyncService({
    source: bounded, store, network: 'regtest',
    threads: args.threads === undefined ? undefined : Number(args.threads),
    ahead: args.ahead === undefined ? undefined : Number(args.ahead),
    batch: {
      maxBlocks: num(args['batch-blocks']),
      maxBytes: args['batch-mb'] === undefined ? undefined : Number(args['batch-mb']) * 1048576,
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
  const status = fs.readFileSync('/proc/self/status', 'utf8');
  const kb = (name) => Number((new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status) || [0, 0])[1]) * 1024;
  const stats = await store.stats();
  await store.close();
  await source.close();
  return {
    ms: total, scanMs, mainCpuMs, cpuMs: (proc.user + proc.system) / 1000, txs: r.txs, blocks: r.blocks, bytes: r.bytes,
    maxRss: process.resourceUsage().maxRSS * 1024, rssPeakSampled: rssPeak,
    // at the end: anonymous memory vs file-backed pages (the LMDB map counts in RSS)
    rssAnonEnd: kb('RssAnon'), rssFileEnd: kb('RssFile'),
    diskBytes: diskUsage(args.datadir), stats: { ...stats, engine: undefined }, samples,
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

function runPhase(phase, extra, execArgv = []) {
  const argv = [...execArgv, __filename, '--phase', phase, '--seed', args.seed, '--txs', args.txs, ...extra];
  for (const k of ['threads', 'batch-blocks', 'batch-mb', 'batch-ms', 'ahead', 'store']) if (args[k] !== undefined) argv.push(`--${k}`, args[k]);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`phase ${phase} exited ${code}`));
      resolve(JSON.parse(out));
    });
  });
}

/**
 * tx/s over each tenth of the chain's transactions, interpolated between batch commits: by
 * wall time (`clock` 'ms'), or per second of the main thread's CPU ('cpuMs'), which a shared
 * machine's other work does not stretch.
 */
function tenths(samples, totalTxs, clock = 'ms') {
  const timeAt = (txs) => {
    let prev = { [clock]: 0, txs: 0 };
    for (const s of samples) {
      if (s.txs >= txs) return prev[clock] + (s[clock] - prev[clock]) * ((txs - prev.txs) / Math.max(1, s.txs - prev.txs));
      prev = s;
    }
    return prev[clock];
  };
  const out = [];
  for (let k = 0; k < 10; k++) {
    const a = (k * totalTxs) / 10;
    const b = ((k + 1) * totalTxs) / 10;
    out.push((b - a) / Math.max(1e-9, (timeAt(b) - timeAt(a)) / 1000));
  }
  return out;
}

async function main() {
  const work = args.dir || fs.mkdtempSync(path.join(os.tmpdir(), 'addrindex-bench-sync-'));
  const blocks = path.join(work, 'blocks');
  const baseTxs = Number(args['baseline-txs']);
  console.log(`bench/sync: ${Number(args.txs).toLocaleString('en-US')} txs, seed ${args.seed}; ` +
    `${os.cpus().length} cores, node ${process.version}, load average ${os.loadavg()[0].toFixed(2)}; work dir ${work}`);
  try {
    let gen;
    // a chain already in the work dir may be longer (the generator's chains of one seed are
    // prefixes of each other): the sync then takes the blocks holding the first --txs
    const whole = [];
    if (fs.existsSync(path.join(blocks, 'blk00000.dat'))) {
      console.log('using the chain already in the work dir, up to the block holding transaction --txs');
      whole.push('--limit', args.txs);
    } else {
      gen = await runPhase('generate', ['--blocks', blocks]);
      console.log(`generated ${gen.blocks} blocks, ${gen.txs.toLocaleString('en-US')} txs, ${(gen.bytes / MB).toFixed(0)} MB in ${(gen.ms / 1000).toFixed(1)} s`);
    }
    const prof = args['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(args['cpu-prof'])] : [];
    const dd = (name) => {
      const d = path.join(work, name);
      fs.rmSync(d, { recursive: true, force: true });
      return d;
    };

    const ours = await runPhase('sync', ['--blocks', blocks, '--datadir', dd(`index-${args.store}`), ...whole], prof);
    if (args['no-baseline']) {
      console.log('');
      printTable([row('addrindex, whole chain', ours)]);
      report(ours, null, null, baseTxs, gen);
      return;
    }
    const prefixOurs = await runPhase('sync', ['--blocks', blocks, '--datadir', dd('index-prefix'), '--limit', String(baseTxs)]);
    const base = await runPhase('baseline', ['--blocks', blocks, '--datadir', dd('baseline'), '--limit', String(baseTxs)]);
    console.log('');
    printTable([
      row('addrindex, whole chain', ours),
      row(`addrindex, first ${baseTxs.toLocaleString('en-US')} txs`, prefixOurs),
      row(`seed baseline, first ${baseTxs.toLocaleString('en-US')} txs`, base),
    ]);
    report(ours, prefixOurs, base, baseTxs, gen);
  } finally {
    if (!args.keep && !args.dir) fs.rmSync(work, { recursive: true, force: true });
  }
}

/** Prints tenths, sizes and the targets, and writes the JSON results. */
function report(ours, prefixOurs, base, baseTxs, gen) {
  const rate = (r) => r.txs / (r.ms / 1000);
  const t = tenths(ours.samples, ours.txs);
  const tc = tenths(ours.samples, ours.txs, 'cpuMs');
  const fmt = (v) => Math.round(v).toLocaleString('en-US');
  console.log('\ntx/s by tenth of the chain (by transactions), and tx per second of the main thread\'s CPU:');
  printTable([
    { per: 'wall s', ...Object.fromEntries(t.map((v, i) => [`${i + 1}`, fmt(v)])) },
    { per: 'main CPU s', ...Object.fromEntries(tc.map((v, i) => [`${i + 1}`, fmt(v)])) },
  ]);
  const st = ours.stats;
  const ratio = base ? rate(prefixOurs) / rate(base) : NaN;
  const lastVsFirst = t[9] / t[0];
  console.log(`\nhistory entries ${st.historyEntries.toLocaleString('en-US')}, utxos ${st.utxos.toLocaleString('en-US')}; ` +
    `DB on disk ${(ours.diskBytes / MB).toFixed(1)} MB = ${(ours.diskBytes / st.historyEntries).toFixed(1)} B per history entry ` +
    `(history rows alone: ${((st.tables.account.bytes + st.tables.history.bytes) / st.historyEntries).toFixed(1)} B per entry; all rows ${(st.bytes / MB).toFixed(1)} MB)`);
  console.log(`CPU: main thread ${(ours.mainCpuMs / 1000).toFixed(1)} s (busy ${(100 * ours.mainCpuMs / ours.ms).toFixed(0)} % of the wall time; ` +
    `${Math.round(ours.txs / (ours.mainCpuMs / 1000)).toLocaleString('en-US')} tx per main-thread CPU second), all threads ${(ours.cpuMs / 1000).toFixed(1)} s`);
  console.log(`RSS at the end of the sync: ${(ours.rssAnonEnd / MB).toFixed(0)} MB anonymous + ${(ours.rssFileEnd / MB).toFixed(0)} MB file-backed (mostly the LMDB map)`);
  console.log(`blocks dir scan (headers, before the timed sync): ${(ours.scanMs / 1000).toFixed(2)} s`);
  console.log(`batches: ${ours.samples.length}, ${(ours.blocks / ours.samples.length).toFixed(1)} blocks each on average`);
  console.log('\ntargets:');
  printTable([
    { target: '>= 50k tx/s end to end', measured: `${Math.round(rate(ours)).toLocaleString('en-US')} tx/s`, met: rate(ours) >= 50000 ? 'yes' : 'no' },
    { target: 'last tenth >= 70 % of first', measured: `${(100 * lastVsFirst).toFixed(0)} %`, met: lastVsFirst >= 0.7 ? 'yes' : 'no' },
    { target: 'peak RSS < 1.5 GB', measured: `${(ours.maxRss / 1e9).toFixed(2)} GB`, met: ours.maxRss < 1.5e9 ? 'yes' : 'no' },
    base
      ? { target: '>= 20x the seed baseline', measured: `${ratio.toFixed(1)}x`, met: ratio >= 20 ? 'yes' : 'no' }
      : { target: '>= 20x the seed baseline', measured: 'not run', met: '' },
  ]);
  const result = {
    date: new Date().toISOString(), node: process.version, cores: os.cpus().length, loadAvgAtEnd: os.loadavg(), seed: args.seed,
    options: args, generate: gen && { ...gen, stats: undefined }, chainStats: gen && gen.stats,
    ours: { ...ours, samples: undefined, txPerSec: rate(ours) }, tenths: t, cpuTenths: tc, lastVsFirst,
    prefixOurs: prefixOurs && { ...prefixOurs, samples: undefined, txPerSec: rate(prefixOurs) },
    baseline: base && { ...base, txPerSec: rate(base) }, ratio: base ? ratio : null, samples: ours.samples,
  };
  fs.mkdirSync(path.dirname(args.json), { recursive: true });
  fs.writeFileSync(args.json, JSON.stringify(result, null, 2));
  console.log(`\nresults written to ${path.relative(process.cwd(), args.json)}`);
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

function num(v) {
  return v === undefined ? undefined : Number(v);
}

const phases = { generate: phaseGenerate, sync: phaseSync, baseline: phaseBaseline };
if (args.phase) {
  phases[args.phase]().then((r) => process.stdout.write(JSON.stringify(r)), (err) => {
    console.error(err);
    process.exit(1);
  });
} else {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
