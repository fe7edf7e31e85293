#!/usr/bin/env node
'use strict';

/**
 * addrindex beside the Electrum servers: ElectrumX, Fulcrum and `addrindex sync` (from the
 * blocks dir and over JSON-RPC) each index the same generated chain, one after another in one
 * run, on this machine, and are measured the same way.
 *
 *   node bench/peers.js [--dir DIR] [--txs 1000000] [--seed 1]
 *        [--systems electrumx,fulcrum,addrindex-rpc,addrindex-blocks] [--memory-max 1G]
 *        [--fulcrum PATH] [--fulcrum-db-mem MIB] [--electrumx-version 2.0.0]
 *        [--electrumx-cache-mb MB] [--electrumx-fetch-blocks 100] [--electrumx-reorg-limit 200]
 *        [--addrindex-flags="--bulk-batches 1 ..."]
 *        [--timeout-s 3600] [--keep] [--json FILE]
 *
 * The chain is bench/gen-chain.js's (tools/generator, regtest, seed 1 by default), written into
 * DIR/blocks once and reused; chains of one seed are prefixes of each other, so a chain longer
 * than --txs is seen as the blocks holding its first --txs transactions (bench/lib/prefix.js):
 * the bitcoind-like fixture (bench/lib/rpc-fixture.js, its own process, as a node would be)
 * ends its best chain there (--tip-height), and `addrindex sync --blocks-dir` reads a blocks
 * dir cut at that block (DIR/prefix-HEIGHT: the whole blk files before it linked, the one
 * holding it copied up to its end).
 *
 * The systems, each into a new datadir (removed afterwards unless --keep):
 *   - ElectrumX (PyPI `e-x`, pinned by --electrumx-version, with `plyvel`: LevelDB), installed
 *     by this script into a virtualenv under .cache/electrumx/ (python3 -m venv; pip). Fed by
 *     the fixture; configured by its environment (COIN=Bitcoin NET=regtest DB_ENGINE=leveldb,
 *     no services, no peer discovery; CACHE_MB from --electrumx-cache-mb, else its own default;
 *     REORG_LIMIT, the raw blocks it keeps for reorgs, from --electrumx-reorg-limit, default 200
 *     as on Bitcoin mainnet: its regtest default, 8,000, would keep every block of these chains;
 *     '' for that).
 *     Below height 130,000 ElectrumX asks the node for up to 1,000 blocks a request (the whole
 *     of a 1M-tx chain in one batch); --electrumx-fetch-blocks caps that (default 100, what it
 *     asks for above that height on mainnet; 0: its own rule). Done when it logs "synced to
 *     height"; progress from its "new height: H" lines (LOG_LEVEL=debug: one after each batch
 *     of blocks it processes; at info it says its height every 30 s only).
 *   - Fulcrum, a binary given by --fulcrum PATH or $FULCRUM_BIN (built from its own source, see
 *     its README; skipped without one). Fed by the fixture; a config file in the run's work dir
 *     (datadir, bitcoind, rpcuser/rpcpassword, tcp on 127.0.0.1, no peering; db_mem from
 *     --fulcrum-db-mem, else its own default). Done when it logs "Block height H, up-to-date";
 *     progress from its "Processed height: H" lines, which its upstream source prints every
 *     1,000 blocks (a 1M-tx chain has ~600: then no tenths, only its whole rate; a binary that
 *     prints them more often gives tenths, and the results record the interval seen). Its stats
 *     endpoint does not answer while it processes blocks, and what the fixture sent is no
 *     measure: it fetches up to 1,000 blocks ahead of what it has indexed.
 *   - `addrindex sync --rpc-url URL` (the fixture) and `addrindex sync --blocks-dir DIR`, both
 *     `--network regtest --log-format json --log-level debug` (every committed batch is a JSON
 *     line on stdout: the progress, one point per batch), with --addrindex-flags added. Done
 *     when it exits 0.
 * Every address is 127.0.0.1. A system that cannot be installed or run is skipped with one line
 * saying why, and the rest run.
 *
 * Measured for each: wall time from its start to done (start-up included); CPU seconds of its
 * whole process tree up to done (/proc: each process's user + system time and its reaped
 * children's), and the fixture's own CPU separately; peak RSS (the largest VmHWM in the tree)
 * and the peak sum of anonymous RSS (sampled every 200 ms); bytes on disk of its datadir after
 * it stopped; tx/s by tenth of the chain's transactions, from the times at which the bench
 * received its progress lines (heights mapped to cumulative transactions by the chain's
 * per-block counts, interpolated between lines; the first tenth includes the start-up; given
 * only when it reported at least 3 heights inside the chain). The JSON also has, for those fed
 * by the fixture, tx/s by tenth of when the fixture sent the blocks (how they fetch, not how
 * they index: Fulcrum and addrindex fetch far ahead).
 *
 * --memory-max runs each indexer alone (not the fixture) in a memory cgroup of that size
 * (bench/lib/cgroup.js; page cache counted; root or a delegated cgroup), after dropping the
 * chain's files from the page cache, and reports the cgroup's peak and OOM kills. The peers'
 * cache settings are theirs to give (--electrumx-cache-mb, --fulcrum-db-mem, --addrindex-flags)
 * and are recorded with the results.
 *
 * Results: a table on stdout, and bench/results/peers.json (--json): per regime (in RAM, or
 * the memory limit) the date, load averages, node and Python versions, the chain, and each
 * system's version, settings and figures, with its log (the lines it printed, timed). A run
 * replaces, in its own regime, the figures of the systems it ran; those of the others stay when
 * they were of the same chain.
 */

const fs = require('node:fs');
const os = require('node:os');
const net = require('node:net');
const path = require('node:path');
const readline = require('node:readline');
const { parseArgs } = require('node:util');
const { spawn, execFileSync } = require('node:child_process');
const { printTable } = require('./lib/table');
const { diskUsage, allocatedBytes } = require('./lib/disk');
const { msSince, runPhase: runPhaseIn, runBench } = require('./lib/proc');
const { startRpcFixture } = require('./lib/rpc-fixture-process');
const { tenths } = require('./lib/tenths');

const ROOT = path.join(__dirname, '..');
const ALL = ['electrumx', 'fulcrum', 'addrindex-rpc', 'addrindex-blocks'];
const MB = 1e6;

const { values: args } = parseArgs({
  options: {
    dir: { type: 'string' },
    txs: { type: 'string', default: '1000000' },
    seed: { type: 'string', default: '1' },
    systems: { type: 'string', default: ALL.join(',') },
    'memory-max': { type: 'string' },
    fulcrum: { type: 'string' },
    'fulcrum-db-mem': { type: 'string' },
    'electrumx-version': { type: 'string', default: '2.0.0' },
    'electrumx-cache-mb': { type: 'string' },
    'electrumx-fetch-blocks': { type: 'string', default: '100' },
    'electrumx-reorg-limit': { type: 'string', default: '200' },
    'addrindex-flags': { type: 'string', default: '' },
    'timeout-s': { type: 'string', default: '3600' },
    keep: { type: 'boolean', default: false },
    json: { type: 'string', default: path.join(__dirname, 'results', 'peers.json') },
    // internal: which phase this process runs
    phase: { type: 'string' },
    blocks: { type: 'string' },
  },
});

// --- the chain ----------------------------------------------------------------------------

async function phaseGenerate() {
  const { writeChain } = require('../tools/generator');
  const t0 = process.hrtime.bigint();
  const s = await writeChain({ dir: args.blocks, seed: args.seed, txs: Number(args.txs), network: 'regtest' });
  return { txs: s.txs, blocks: s.blocks, bytes: s.bytes, ms: msSince(t0) };
}

/**
 * The chain's best chain up to the block holding its first `txs` transactions: that height,
 * the cumulative transaction count at every height up to it, and its bytes.
 */
async function readChain(blocks, txs) {
  const { BlocksDirSource } = require('../lib/sources/blocksdir');
  const { readVarint } = require('../lib/chain/tx');
  const source = new BlocksDirSource({ dir: blocks, network: 'regtest' });
  await source.scan();
  const cum = [];
  let n = 0;
  let bytes = 0;
  for await (const b of source.blocks(0)) {
    n += readVarint(b.raw, { pos: 80 }, b.raw.length, 'tx count');
    bytes += b.raw.length;
    cum.push(n);
    if (n >= txs) break;
  }
  const height = cum.length - 1;
  return { source, height, hash: source.hashAt(height), genesis: source.hashAt(0), tip: source.tip(), cum, txs: n, bytes };
}

/**
 * A blocks dir holding the best chain up to `height` only, for `addrindex sync --blocks-dir`:
 * the blk files wholly before that block hard-linked (copied across file systems), the one
 * holding it copied up to the block's end. Made once and reused (its marker names the block).
 */
async function prefixDir(chain, blocks, work) {
  const { source, height, hash } = chain;
  if (height === chain.tip.height) return blocks;
  const { blkName } = require('../tools/generator/blkwriter');
  const dir = path.join(work, `prefix-${height}`);
  const marker = path.join(dir, 'addrindex-bench-prefix.json');
  if (fs.existsSync(marker) && JSON.parse(fs.readFileSync(marker, 'utf8')).hash === hash) return dir;
  const end = source.locate(hash);
  for (let h = height + 1; h <= chain.tip.height; h++) {
    const at = source.locate(source.hashAt(h));
    if (at.file < end.file || (at.file === end.file && at.offset < end.offset)) {
      throw new Error(`block ${h} lies before block ${height} in the blk files: this chain cannot be cut at a height (generate one of --txs ${args.txs})`);
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  for (let f = 0; f < end.file; f++) {
    const from = path.join(blocks, blkName(f));
    try {
      fs.linkSync(from, path.join(dir, blkName(f)));
    } catch (err) {
      if (err.code !== 'EXDEV') throw err;
      fs.copyFileSync(from, path.join(dir, blkName(f)));
    }
  }
  const last = path.join(dir, blkName(end.file));
  fs.copyFileSync(path.join(blocks, blkName(end.file)), last);
  fs.truncateSync(last, end.offset + end.length);
  if (fs.existsSync(path.join(blocks, 'xor.dat'))) fs.copyFileSync(path.join(blocks, 'xor.dat'), path.join(dir, 'xor.dat'));
  const { BlocksDirSource } = require('../lib/sources/blocksdir');
  const check = new BlocksDirSource({ dir, network: 'regtest' });
  try {
    await check.scan();
    if (check.tip().hash !== hash) throw new Error(`the prefix blocks dir ${dir} ends at ${check.tip().height}, not at block ${height}`);
  } finally {
    await check.close();
  }
  fs.writeFileSync(marker, JSON.stringify({ height, hash }));
  return dir;
}

// --- processes ----------------------------------------------------------------------------

const live = new Set(); // pids this script started and has not seen exit
const cgroups = new Set(); // memory cgroups made and not yet removed
const scratch = new Set(); // what a SIGINT removes (unless --keep): datadirs, or the whole temporary work dir

/** /proc/PID/stat: its CPU seconds (own user + system, and its reaped children's). */
function procCpu(pid) {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100;
  } catch {
    return null;
  }
}

/** /proc/PID/status fields in bytes. */
function procMem(pid) {
  const out = { hwm: 0, rss: 0, anon: 0 };
  try {
    const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name) => {
      const m = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text);
      return m ? Number(m[1]) * 1024 : 0;
    };
    out.hwm = kb('VmHWM');
    out.rss = kb('VmRSS');
    out.anon = kb('RssAnon');
  } catch {
    // gone
  }
  return out;
}

/** A process and its descendants (/proc/PID/task/TID/children). */
function tree(pid) {
  const out = [];
  const todo = [pid];
  while (todo.length) {
    const p = todo.pop();
    out.push(p);
    let tasks = [];
    try {
      tasks = fs.readdirSync(`/proc/${p}/task`);
    } catch {
      continue;
    }
    for (const t of tasks) {
      try {
        for (const c of fs.readFileSync(`/proc/${p}/task/${t}/children`, 'utf8').trim().split(/\s+/)) if (c) todo.push(Number(c));
      } catch {
        // the thread ended
      }
    }
  }
  return out;
}

/** CPU seconds of this process's reaped children (cutime + cstime): what exited and was waited for. */
function reapedCpu() {
  const f = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return (Number(f[13]) + Number(f[14])) / 100;
}

/**
 * Runs one indexer until it is done (a line its `onLine` says is the end, or its exit when
 * `untilExit`), sampling its process tree's CPU and memory, then stops it (SIGTERM, SIGKILL
 * after 60 s) and waits for it. Every line it prints goes to `logFile` with the time it was
 * received.
 * @returns {Promise<object>}
 */
function runIndexer({ cmd, argv, env, cwd = ROOT, logFile, cgroup, onLine, untilExit = false }) {
  return new Promise((resolve) => {
    const t0 = process.hrtime.bigint();
    const epoch0 = Date.now();
    const reaped0 = reapedCpu();
    // in the cgroup from its first instruction: a shell joins it, then execs the indexer
    const [file, list] = cgroup ? ['/bin/sh', ['-c', 'echo $$ > "$0" && exec "$@"', cgroup.procsFile, cmd, ...argv]] : [cmd, argv];
    const child = spawn(file, list, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    live.add(child.pid);
    const log = fs.createWriteStream(logFile);
    const mem = { hwm: 0, rss: 0, anon: 0 };
    let cpuSampled = 0;
    let done = null;
    let failure = null;
    let stopping = false;
    const sample = () => {
      let cpu = 0;
      let rss = 0;
      let anon = 0;
      let seen = 0;
      for (const pid of tree(child.pid)) {
        const c = procCpu(pid);
        if (c === null) continue;
        seen++;
        cpu += c;
        const m = procMem(pid);
        mem.hwm = Math.max(mem.hwm, m.hwm);
        rss += m.rss;
        anon += m.anon;
      }
      if (seen) {
        cpuSampled = cpu;
        mem.rss = Math.max(mem.rss, rss);
        mem.anon = Math.max(mem.anon, anon);
      }
      return cpu;
    };
    const sampler = setInterval(sample, 200);
    let killer = null;
    const stop = () => {
      if (stopping) return;
      stopping = true;
      try {
        child.kill('SIGTERM');
      } catch {
        // gone
      }
      killer = setTimeout(() => child.kill('SIGKILL'), 60000);
    };
    const timeout = setTimeout(() => {
      failure = `no end after ${args['timeout-s']} s`;
      stop();
    }, Number(args['timeout-s']) * 1000);
    const lines = (stream, name) => readline.createInterface({ input: stream }).on('line', (line) => {
      const ms = msSince(t0);
      log.write(`${(ms / 1000).toFixed(3)} ${name} ${line}\n`);
      if (done || failure) return;
      const r = onLine(line, ms);
      if (r === 'done') {
        done = { ms, cpu: sample() };
        stop();
      } else if (r && r.failed) {
        failure = r.failed;
        stop();
      }
    });
    lines(child.stdout, 'out');
    lines(child.stderr, 'err');
    child.on('error', (err) => {
      failure = failure || err.message;
    });
    child.on('close', (code, signal) => {
      live.delete(child.pid);
      clearInterval(sampler);
      clearTimeout(timeout);
      clearTimeout(killer);
      const ms = msSince(t0);
      const cpuAtExit = reapedCpu() - reaped0; // this child's and its reaped descendants'
      if (!done && !failure) {
        if (untilExit && code === 0) done = { ms, cpu: cpuAtExit };
        else failure = `exited ${signal || code} before it was done`;
      }
      log.end(() => resolve({ done, failure, code, signal, exitMs: ms, cpuAtExit, cpuSampled, mem, epoch0 }));
    });
  });
}

/** A free TCP port on 127.0.0.1. */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function run(cmd, argv, opts = {}) {
  return execFileSync(cmd, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...opts }).trim();
}

/** A skip: the system is not measured, for this one reason. */
class Skip extends Error {}

// --- the systems --------------------------------------------------------------------------

/**
 * What addrindex is given of the bench's environment, when set: glibc's arena count and
 * libuv's thread pool, on which the LevelDB store's native memory depends (docs/SCALING.md).
 */
const PASSED_ENV = ['MALLOC_ARENA_MAX', 'UV_THREADPOOL_SIZE'];

/** The named variables of `env` that are set. */
function pick(env, names) {
  return Object.fromEntries(names.filter((n) => env[n] !== undefined).map((n) => [n, env[n]]));
}

/**
 * Each system: `prepare(ctx)` installs or finds it (throwing Skip with the reason when it
 * cannot) and returns its version, its settings, whether it reads the fixture, and
 * `start(datadir, url, work)`: the command and how to read its output.
 */
const SYSTEMS = {
  electrumx: {
    label: 'ElectrumX',
    async prepare(ctx) {
      const version = args['electrumx-version'];
      const venv = path.join(ROOT, '.cache', 'electrumx', `e-x-${version}`);
      const py = path.join(venv, 'bin', 'python');
      const installed = () => {
        try {
          return run(py, ['-c', 'import importlib.metadata as m, plyvel; print(m.version("e-x"))']) === version;
        } catch {
          return false;
        }
      };
      if (!installed()) {
        say(`ElectrumX: installing e-x==${version} and plyvel into ${path.relative(ROOT, venv)} ...`);
        try {
          fs.rmSync(venv, { recursive: true, force: true });
          run('python3', ['-m', 'venv', venv]);
          run(path.join(venv, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', `e-x==${version}`, 'plyvel']);
        } catch (err) {
          fs.rmSync(venv, { recursive: true, force: true });
          throw new Skip(`cannot install e-x==${version} with plyvel (${lastLine(err)})`);
        }
        if (!installed()) throw new Skip(`e-x==${version} with plyvel did not install into ${venv}`);
      }
      const genesis = run(py, ['-c', 'from electrumx.lib.coins import Coin; print(Coin.lookup_coin_class("Bitcoin", "regtest").GENESIS_HASH)']);
      if (genesis !== ctx.chain.genesis) throw new Skip(`its Bitcoin regtest genesis ${genesis} is not the chain's ${ctx.chain.genesis}`);
      const fetchBlocks = Number(args['electrumx-fetch-blocks']);
      const cacheMb = args['electrumx-cache-mb'];
      const reorgLimit = args['electrumx-reorg-limit'];
      const settings = {
        COIN: 'Bitcoin', NET: 'regtest', DB_ENGINE: 'leveldb', CACHE_MB: cacheMb === undefined ? '1200 (its default)' : cacheMb,
        // the raw blocks it keeps for reorgs: its regtest default (8,000) keeps every block of these chains
        REORG_LIMIT: reorgLimit ? `${reorgLimit}${reorgLimit === '200' ? ' (its Bitcoin mainnet default; 8,000 on regtest)' : ''}` : '8000 (its regtest default)',
        blocksPerRequest: fetchBlocks > 0 ? fetchBlocks : 'its own (1,000 below height 130,000)',
        python: run(py, ['--version']), plyvel: run(py, ['-c', 'import plyvel; print(plyvel.__version__)']),
      };
      return {
        version: `e-x ${version}`, settings, fixture: true,
        start(datadir, url) {
          // the coin's max_fetch_blocks capped before its server starts (a subclass would need a new COIN name)
          const wrapper = [
            'import sys',
            'from electrumx.lib.coins import Coin',
            'n = int(sys.argv[1])',
            'if n > 0: Coin.lookup_coin_class("Bitcoin", "regtest").max_fetch_blocks = classmethod(lambda cls, height: n)',
            'sys.argv = ["electrumx_server"]',
            'from electrumx.cli.electrumx_server import main',
            'main()',
          ].join('\n');
          const env = {
            PATH: process.env.PATH, HOME: process.env.HOME, LANG: 'C.UTF-8',
            DB_DIRECTORY: datadir, DAEMON_URL: `${url}/`, COIN: 'Bitcoin', NET: 'regtest', DB_ENGINE: 'leveldb',
            // debug: "new height: H" after each batch of blocks it processes (at info it says its
            // height every 30 s)
            ALLOW_ROOT: '1', SERVICES: '', PEER_DISCOVERY: 'off', PEER_ANNOUNCE: '', LOG_LEVEL: 'debug',
            ...(cacheMb === undefined ? {} : { CACHE_MB: cacheMb }),
            ...(reorgLimit ? { REORG_LIMIT: reorgLimit } : {}),
          };
          return {
            cmd: py, argv: ['-c', wrapper, String(fetchBlocks > 0 ? fetchBlocks : 0)], env,
            onLine(line, ms, progress) {
              let m = /BlockProcessor:new height: (\d+)|our height: ([\d,]+)/.exec(line);
              if (m) progress.push({ ms, height: Number((m[1] || m[2]).replace(/,/g, '')) });
              m = /synced to height ([\d,]+)/.exec(line);
              if (m) {
                progress.push({ ms, height: Number(m[1].replace(/,/g, '')) });
                return 'done';
              }
              if (/terminated abnormally/.test(line)) return { failed: line.trim() };
              return null;
            },
          };
        },
      };
    },
  },

  fulcrum: {
    label: 'Fulcrum',
    async prepare() {
      const bin = args.fulcrum || process.env.FULCRUM_BIN;
      if (!bin) throw new Skip('no Fulcrum binary given (build it from its source, see its README; then --fulcrum PATH or $FULCRUM_BIN)');
      let banner;
      try {
        banner = run(bin, ['--version']);
      } catch (err) {
        throw new Skip(`${bin} --version failed (${lastLine(err)})`);
      }
      const version = (/^Fulcrum .*$/m.exec(banner) || [banner.split('\n')[0]])[0];
      const lib = (name) => ((new RegExp(`^${name}: (?:version )?(.*)$`, 'm').exec(banner) || [])[1] || null);
      const dbMem = args['fulcrum-db-mem'];
      const settings = {
        binary: path.resolve(bin), db_mem: dbMem === undefined ? '2048 MiB (its default)' : `${dbMem} MiB`, bitcoind_clients: '3 (its default)',
        rocksdb: lib('rocksdb'), qt: lib('Qt'), jemalloc: lib('jemalloc'),
      };
      return {
        version, settings, fixture: true,
        async start(datadir, url, work) {
          const u = new URL(url);
          const conf = path.join(work, 'fulcrum.conf');
          fs.writeFileSync(conf, [
            `datadir = ${datadir}`, `bitcoind = ${u.host}`, `rpcuser = ${u.username}`, `rpcpassword = ${u.password}`,
            `tcp = 127.0.0.1:${await freePort()}`, 'peering = false', 'announce = false',
            ...(dbMem === undefined ? [] : [`db_mem = ${dbMem}`]), '',
          ].join('\n'));
          return {
            cmd: bin, argv: [conf], env: { PATH: process.env.PATH, HOME: process.env.HOME, LANG: 'C.UTF-8' },
            onLine(line, ms, p) {
              let m = /Processed height: (\d+)/.exec(line);
              if (m) p.push({ ms, height: Number(m[1]) });
              m = /Block height (\d+), up-to-date/.exec(line);
              if (m) {
                p.push({ ms, height: Number(m[1]) });
                return 'done';
              }
              return null;
            },
          };
        },
      };
    },
  },

  'addrindex-rpc': {
    label: 'addrindex sync --rpc-url',
    prepare: () => addrindex(true),
  },

  'addrindex-blocks': {
    label: 'addrindex sync --blocks-dir',
    prepare: () => addrindex(false),
  },
};

function addrindex(rpc) {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  let commit = '';
  try {
    commit = run('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD']);
    if (run('git', ['-C', ROOT, 'status', '--porcelain', '--', 'lib', 'bin'])) commit += ' (lib/ or bin/ modified)';
  } catch {
    // not a git checkout
  }
  const flags = args['addrindex-flags'].split(/\s+/).filter(Boolean);
  return {
    version: `addrindex ${pkg.version}${commit ? ` ${commit}` : ''}`,
    settings: {
      store: flags.includes('--store') ? flags[flags.indexOf('--store') + 1] : 'lmdb (its default)',
      flags: flags.join(' ') || '(its defaults)',
      ...pick(process.env, PASSED_ENV),
    },
    fixture: rpc,
    start(datadir, url, work, ctx) {
      const from = rpc ? ['--rpc-url', url] : ['--blocks-dir', ctx.prefix];
      return {
        cmd: process.execPath,
        argv: [path.join(ROOT, 'bin', 'addrindex.js'), 'sync', ...from, '--datadir', datadir, '--network', 'regtest',
          '--log-format', 'json', '--log-level', 'debug', ...flags],
        env: { PATH: process.env.PATH, HOME: process.env.HOME, ...pick(process.env, PASSED_ENV) },
        untilExit: true,
        onLine(line, ms, progress) {
          if (line.startsWith('{') && line.includes('"batch committed"')) {
            try {
              const r = JSON.parse(line);
              if (Number.isInteger(r.height)) progress.push({ ms, height: r.height });
            } catch {
              // not a JSON line after all
            }
          }
          return null;
        },
      };
    },
  };
}

// --- the driver ---------------------------------------------------------------------------

function say(line) {
  console.log(line);
}

function lastLine(err) {
  const text = `${err.stderr || ''}${err.stdout || ''}`.trim() || err.message;
  return text.split('\n').filter(Boolean).pop().trim().slice(0, 300);
}

/** --memory-max in bytes */
function memoryMax() {
  const m = /^(\d+(?:\.\d+)?)([KMG]?)$/i.exec(args['memory-max']);
  if (!m) throw new Error(`--memory-max takes bytes with an optional K, M or G suffix, got ${args['memory-max']}`);
  return Math.round(Number(m[1]) * { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3 }[m[2].toUpperCase()]);
}

/** Drops every file under the given dirs from the page cache. */
function evictAll(dirs) {
  const { evictFromCache } = require('./lib/cgroup');
  const walk = (d) => {
    if (!fs.existsSync(d)) return;
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) evictFromCache(p);
    }
  };
  for (const d of dirs) walk(d);
}

/** Bytes on disk of each top-level entry of a datadir (and ElectrumX's raw blocks, meta/block*). */
function diskByEntry(dir) {
  const out = {};
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    out[e.name] = e.isDirectory() ? diskUsage(p) : e.isFile() ? allocatedBytes(p) : 0;
  }
  const meta = path.join(dir, 'meta');
  if (fs.existsSync(meta)) {
    out['meta/block* (raw blocks)'] = fs.readdirSync(meta).filter((f) => /^block\d+$/.test(f))
      .reduce((n, f) => n + allocatedBytes(path.join(meta, f)), 0);
  }
  return out;
}

async function measure(name, sys, ctx) {
  const { chain, work } = ctx;
  const datadir = path.join(work, 'runs', name);
  const runWork = path.join(work, 'runs', `${name}.work`);
  fs.rmSync(datadir, { recursive: true, force: true });
  fs.rmSync(runWork, { recursive: true, force: true });
  fs.mkdirSync(datadir, { recursive: true });
  fs.mkdirSync(runWork, { recursive: true });
  let fixture = null;
  let cg = null;
  const load = os.loadavg();
  const date = new Date().toISOString();
  try {
    const servedFile = path.join(runWork, 'served.txt');
    if (sys.fixture) {
      fixture = await startRpcFixture(ctx.blocks, ['--tip-height', String(chain.height), '--served', servedFile]);
      live.add(fixture.pid);
    }
    const how = await sys.start(datadir, fixture && fixture.url, runWork, ctx);
    if (args['memory-max']) {
      evictAll([ctx.blocks, ctx.prefix, datadir]);
      const { MemoryCgroup } = require('./lib/cgroup');
      cg = new MemoryCgroup(memoryMax(), `addrindex-bench-peers-${process.pid}-${name}`);
      cgroups.add(cg);
    }
    const progress = [];
    const logFile = path.join(work, 'logs', `${name}.log`);
    fs.mkdirSync(path.dirname(logFile), { recursive: true });
    say(`${name}: running (log ${logFile})`);
    const r = await runIndexer({
      cmd: how.cmd, argv: how.argv, env: how.env, logFile, cgroup: cg, untilExit: how.untilExit,
      onLine: (line, ms) => how.onLine(line, ms, progress),
    });
    const fx = fixture ? await fixture.stop() : null;
    if (fixture) live.delete(fixture.pid);
    fixture = null;
    const limit = cg ? { ...cg.usage(), oomKills: cg.oomKills() } : null;
    const out = {
      system: name, label: SYSTEMS[name].label, date, version: sys.version, settings: sys.settings, loadAvgAtStart: load, loadAvgAtEnd: os.loadavg(),
      log: logFile, memoryLimit: limit, fixture: fx,
    };
    if (!r.done) {
      const oom = limit && limit.oomKills > 0 ? `killed by the OOM killer in the ${args['memory-max']} cgroup; ` : '';
      return { ...out, failed: `${oom}${r.failure}`, ms: r.exitMs, mem: r.mem };
    }
    const top = chain.height;
    const toSamples = (list) => {
      const out2 = list.filter((p) => p.height >= 0 && p.height <= top).map((p) => ({ ms: p.ms, txs: chain.cum[p.height] }));
      out2.push({ ms: r.done.ms, txs: chain.txs }); // done: the whole chain
      return out2.sort((a, b) => a.ms - b.ms);
    };
    const own = toSamples(progress);
    // the fixture's record of when it sent each block, on the indexer's clock
    const served = sys.fixture && fs.existsSync(servedFile) ? fs.readFileSync(servedFile, 'utf8').split('\n').filter(Boolean)
      .map((l) => l.split(' ').map(Number)).map(([epoch, height]) => ({ ms: epoch - r.epoch0, height })) : null;
    const servedSamples = served ? toSamples(served) : null;
    // tenths only where it said its height within the chain often enough to draw them
    const inside = new Set(own.filter((p) => p.txs > 0 && p.txs < chain.txs).map((p) => p.txs)).size;
    // how often it said its height: the smallest step between successive heights it printed
    const steps = progress.slice(1).map((p, k) => p.height - progress[k].height).filter((d) => d > 0);
    const t = inside >= 3 ? tenths(own, chain.txs) : null;
    return {
      ...out, txs: chain.txs, blocks: top + 1, ms: r.done.ms, txPerSec: chain.txs / (r.done.ms / 1000),
      cpuSec: r.done.cpu, cpuSecAtExit: r.cpuAtExit, fixtureCpuSec: fx ? fx.cpuMs / 1000 : null,
      peakRss: r.mem.hwm, peakRssSum: r.mem.rss, peakAnon: r.mem.anon, diskBytes: diskUsage(datadir), diskByEntry: diskByEntry(datadir),
      tenths: t, slope: t ? t[9] / t[0] : null, progressPoints: inside, progressEveryBlocks: steps.length ? Math.min(...steps) : null, samples: own,
      // when the fixture sent each block: how far ahead of its indexing it fetched (not its progress)
      servedTenths: servedSamples && tenths(servedSamples, chain.txs),
    };
  } finally {
    if (fixture) {
      await fixture.stop().catch(() => {});
      live.delete(fixture.pid);
    }
    if (cg) {
      cg.remove();
      cgroups.delete(cg);
    }
    if (!args.keep) {
      fs.rmSync(datadir, { recursive: true, force: true });
      fs.rmSync(runWork, { recursive: true, force: true });
    }
  }
}

function cleanupOnSignal() {
  const onSignal = (sig) => {
    console.log(`\n${sig}: stopping every process this bench started`);
    for (const pid of live) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    setTimeout(() => {
      for (const cg of cgroups) cg.remove();
      if (!args.keep) for (const d of scratch) fs.rmSync(d, { recursive: true, force: true });
      process.exit(130);
    }, 500);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', () => {
    for (const pid of live) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

async function main() {
  const systems = args.systems.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = systems.filter((s) => !ALL.includes(s));
  if (unknown.length) throw new Error(`--systems takes ${ALL.join(', ')}; not ${unknown.join(', ')}`);
  const txs = Number(args.txs);
  if (!(Number.isInteger(txs) && txs > 0)) throw new Error('--txs takes a transaction count');
  if (args['memory-max']) memoryMax();
  cleanupOnSignal();
  const work = args.dir || fs.mkdtempSync(path.join(os.tmpdir(), 'addrindex-bench-peers-'));
  scratch.add(args.dir ? path.join(work, 'runs') : work);
  const blocks = path.join(work, 'blocks');
  const regime = args['memory-max'] ? `memory-max ${args['memory-max']}` : 'in RAM';
  say(`bench/peers: ${txs.toLocaleString('en-US')} txs, seed ${args.seed}, ${regime}; ${os.cpus().length} cores, node ${process.version}, ` +
    `load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; work dir ${work}`);
  let chain = null;
  try {
    if (fs.existsSync(path.join(blocks, 'blk00000.dat'))) {
      say('using the chain already in the work dir');
    } else {
      const gen = await runPhaseIn(__filename, 'generate', ['--seed', args.seed, '--txs', String(txs), '--blocks', blocks]);
      say(`generated ${gen.blocks} blocks, ${gen.txs.toLocaleString('en-US')} txs, ${(gen.bytes / MB).toFixed(0)} MB in ${(gen.ms / 1000).toFixed(1)} s`);
    }
    chain = await readChain(blocks, txs);
    if (chain.txs < txs) throw new Error(`the chain in ${blocks} holds ${chain.txs.toLocaleString('en-US')} txs, fewer than --txs ${txs}: give another --dir`);
    const prefix = await prefixDir(chain, blocks, work);
    say(`the chain up to height ${chain.height} (${chain.txs.toLocaleString('en-US')} txs, ${(chain.bytes / MB).toFixed(0)} MB of blocks)` +
      (prefix === blocks ? '' : ` of ${chain.tip.height + 1} blocks; the blocks dir cut there: ${prefix}`));
    const ctx = { chain, work, blocks, prefix };
    const results = [];
    for (const name of systems) {
      let sys;
      try {
        sys = await SYSTEMS[name].prepare(ctx);
      } catch (err) {
        if (!(err instanceof Skip)) throw err;
        say(`${name}: skipped: ${err.message}`);
        results.push({ system: name, label: SYSTEMS[name].label, skipped: err.message });
        continue;
      }
      say(`\n${name} (${sys.version}): load average ${os.loadavg()[0].toFixed(2)} at the start`);
      let r;
      try {
        r = await measure(name, sys, ctx);
      } catch (err) {
        if (err instanceof Skip) r = { system: name, label: SYSTEMS[name].label, skipped: err.message };
        else if (/cannot create the memory cgroup/.test(err.message)) r = { system: name, label: SYSTEMS[name].label, skipped: err.message };
        else throw err;
      }
      results.push(r);
      printOne(r);
    }
    report(results, ctx, regime);
  } finally {
    if (chain) await chain.source.close();
    if (!args.dir) fs.rmSync(work, { recursive: true, force: true });
    else if (!args.keep) fs.rmSync(path.join(work, 'runs'), { recursive: true, force: true });
  }
}

const fmt = (v) => Math.round(v).toLocaleString('en-US');

function printOne(r) {
  if (r.skipped) return say(`${r.system}: skipped: ${r.skipped}`);
  if (r.failed) return say(`${r.system}: FAILED after ${(r.ms / 1000).toFixed(1)} s: ${r.failed} (peak RSS ${(r.mem.hwm / MB).toFixed(0)} MB; its log: ${r.log})`);
  say(`${r.system}: ${fmt(r.txs)} txs in ${(r.ms / 1000).toFixed(1)} s, ${fmt(r.txPerSec)} tx/s; CPU ${r.cpuSec.toFixed(1)} s` +
    (r.fixtureCpuSec !== null ? `, the fixture's ${r.fixtureCpuSec.toFixed(1)} s` : '') +
    `; peak RSS ${(r.peakRss / MB).toFixed(0)} MB (anonymous ${(r.peakAnon / MB).toFixed(0)} MB); ${(r.diskBytes / MB).toFixed(0)} MB on disk; ` +
    `heights reported inside the chain: ${r.progressPoints}${r.tenths ? '' : ' (too few for tenths)'}` +
    (r.memoryLimit ? `; cgroup peak ${(r.memoryLimit.peak / MB).toFixed(0)} MB of ${(r.memoryLimit.limit / MB).toFixed(0)}` : ''));
  return undefined;
}

function report(results, ctx, regime) {
  const { chain } = ctx;
  const ran = results.filter((r) => !r.skipped && !r.failed);
  say('');
  const rows = results.map((r) => {
    const row = {
      system: r.label,
      's': r.ms !== undefined ? (r.ms / 1000).toFixed(1) : '',
      'tx/s': r.txPerSec ? fmt(r.txPerSec) : '',
      'CPU s': r.cpuSec !== undefined ? r.cpuSec.toFixed(1) : '',
      'fixture CPU s': r.fixtureCpuSec ? r.fixtureCpuSec.toFixed(1) : '',
      'peak RSS MB': r.peakRss ? fmt(r.peakRss / MB) : r.mem ? fmt(r.mem.hwm / MB) : '',
      'peak anon MB': r.peakAnon ? fmt(r.peakAnon / MB) : r.mem ? fmt(r.mem.anon / MB) : '',
      'disk MB': r.diskBytes !== undefined ? fmt(r.diskBytes / MB) : '',
      'tx/s first → last tenth': r.tenths ? `${fmt(r.tenths[0])} → ${fmt(r.tenths[9])}` : r.txs ? 'n/a' : '',
      slope: r.tenths ? `${(100 * r.slope).toFixed(0)} %` : '',
    };
    if (args['memory-max']) row['cgroup peak MB'] = r.memoryLimit && r.memoryLimit.peak ? fmt(r.memoryLimit.peak / MB) : '';
    row.note = r.skipped ? `skipped: ${r.skipped}` : r.failed ? `failed: ${r.failed}` : '';
    return row;
  });
  say(`${fmt(chain.txs)} txs, ${chain.height + 1} blocks (${(chain.bytes / MB).toFixed(0)} MB), ${regime}:`);
  printTable(rows);
  if (ran.some((r) => r.tenths)) {
    say('\ntx/s by tenth of the chain (from the times its progress lines arrived; the first tenth includes its start-up):');
    printTable(ran.filter((r) => r.tenths).map((r) => ({
      system: r.label, ...Object.fromEntries(r.tenths.map((v, i) => [`${i + 1}`, fmt(v)])), points: String(r.progressPoints),
    })));
  }
  for (const r of ran.filter((x) => !x.tenths)) say(`${r.label}: no tenths, heights it reported inside the chain: ${r.progressPoints}`);
  say('\nsettings:');
  for (const r of results) {
    if (!r.settings) continue;
    say(`  ${r.label}: ${r.version}; ${Object.entries(r.settings).map(([k, v]) => `${k} ${v}`).join(', ')}` +
      (r.progressEveryBlocks ? `; said its height every ${r.progressEveryBlocks} blocks or more` : ''));
  }
  let python = null;
  try {
    python = run('python3', ['--version']);
  } catch {
    // none
  }
  const doc = fs.existsSync(args.json) ? JSON.parse(fs.readFileSync(args.json, 'utf8')) : {};
  const regimes = doc.regimes || {};
  // the systems this run did not run keep their figures, when they were of the same chain
  const before = regimes[regime];
  const same = before && before.chain && before.chain.txs === chain.txs && before.chain.seed === args.seed && before.chain.height === chain.height;
  const kept = same ? before.systems.filter((b) => !results.some((r) => r.system === b.system)).map((b) => ({ date: before.date, ...b })) : [];
  const systems = [...kept, ...results].sort((a, b) => ALL.indexOf(a.system) - ALL.indexOf(b.system));
  regimes[regime] = {
    date: new Date().toISOString(), node: process.version, python, cores: os.cpus().length, memory: os.totalmem(), kernel: os.release(),
    loadAvgAtEnd: os.loadavg(), options: { ...args, phase: undefined, blocks: undefined },
    chain: { seed: args.seed, height: chain.height, blocks: chain.height + 1, txs: chain.txs, bytes: chain.bytes, tipOfTheFiles: chain.tip.height },
    systems,
  };
  fs.mkdirSync(path.dirname(args.json), { recursive: true });
  fs.writeFileSync(args.json, `${JSON.stringify({ bench: 'bench/peers.js', regimes }, null, 2)}\n`);
  say(`\nresults written to ${path.relative(process.cwd(), args.json)} (${regime})`);
}

runBench({ generate: phaseGenerate }, args.phase, main);
