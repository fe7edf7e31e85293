'use strict';

const path = require('node:path');
const { UsageError } = require('../errors');
const { BATCH_DEFAULTS, CATCH_UP_BULK, DEFAULT_CACHE_MB, batchLimits, catchUpLimits } = require('../sync/batch');
const { intOption, indexLocation, resolveNetwork, storeOptions } = require('./datadir');
const { openIndex, storeClass } = require('../stores');
const { poolForPrefetch } = require('../stores/prefetcher');
const { sourceOptions, sourceUsage, openSource } = require('./source');
const { logOptions, logUsage, logSettings, errorFields } = require('../ops/log');

const usage = `usage: addrindex sync (--blocks-dir DIR | --rpc-url URL | --rpc-cookie FILE) (--datadir DIR | --store mongo --mongodb-url URL)
                      [--network NET] [options]

Indexes the best chain of a Bitcoin Core blocks directory or of a running node (JSON-RPC)
into DATADIR, then exits (or, with --follow, keeps indexing new blocks as they come, until
SIGINT/SIGTERM). Safe to stop at any moment: the index moves one whole batch at a time, and
a restart resumes. With a node and no --blocks-dir every block comes over JSON-RPC; with both,
the node decides the best chain, the blocks dir serves the blocks of it that it holds and the
node the others.

${sourceUsage}  --datadir DIR        where the index lives (created when missing)
  --network NET        main | testnet | testnet4 | signet | regtest; an existing datadir's own network
                       is used when omitted (a new one defaults to main)
  --store NAME         index backend: lmdb (default) | level | mongo
  --mongodb-url URL    --store mongo: the server and database (default mongodb://127.0.0.1:27017/addrindex)
  --mongodb-retry-s N  --store mongo: how long a lost server is waited for (retrying with backoff, then
                       resuming) before the command stops with ERR_DB_UNAVAILABLE (default 30)
  --follow             keep syncing new blocks until SIGINT/SIGTERM
  --poll-ms N          --follow: pause between rescans of the blocks dir or the node (default 1000)
  --mempool-poll-ms N  --follow with a node: pause between polls of its mempool, kept in the index
                       as a snapshot every reader shares (default 2000; 0: no mempool)
  --mempool-max-mb N   what the mempool it holds may take in memory (default 300, as Bitcoin Core's
                       maxmempool): past it the lowest fee-rate packages are evicted as Core evicts them
  --undo-depth N       blocks of undo kept: the deepest reorg the index follows (default 100)
  --txstore            keep every block's transactions in the index (compressed), for servers
                       with neither the blocks dir nor an unpruned node; chosen when the index
                       is created
  --batch-blocks N     blocks per commit, at most (default ${BATCH_DEFAULTS.maxBlocks})
  --batch-mb N         raw block megabytes per batch, at most (default: an eighth of --cache-mb,
                       between 4 and 32)
  --batch-ms N         milliseconds a batch may collect blocks before it commits (default ${BATCH_DEFAULTS.maxMs})
  --threads N          parse worker threads (default: one per core but one; 0 parses on the main thread)
  --cache-mb N         the sync's memory while catching up (default ${DEFAULT_CACHE_MB}): batches commit together
                       until they hold N MiB of blocks (the index pages they read and write stay
                       in memory until then, as Bitcoin Core's dbcache), each batch an eighth of
                       it (--store level: every batch its own commit). A crash
                       loses at most that much work, never part of a commit
  --bulk-batches N     while catching up, commit at the latest every N batches (1: every batch)
  --prefetch MODE      LMDB: read what the next batch needs ahead of the writer, many reads at a
                       time: off (default: measured faster, docs/SCALING.md), on, auto (while
                       the index is more than half the memory the process may use)
  --no-compact         LMDB: when the index first catches up after indexing most of it, do not
                       rewrite it into full pages (addrindex compact's rewrite, which it otherwise
                       runs when no other process reads the index)
  --metrics-port N     serve Prometheus metrics on this port at /metrics, and /health (blocks and
                       txs per second, batch and commit times, reorgs, tips and lag, node errors;
                       see docs/DEPLOY.md); 0 picks a free port, printed on stderr
  --metrics-host ADDR  the metrics listen address (default 127.0.0.1)
${logUsage}`;

const options = {
  ...sourceOptions,
  ...storeOptions,
  follow: { type: 'boolean', default: false },
  'poll-ms': { type: 'string' },
  'mempool-poll-ms': { type: 'string' },
  'mempool-max-mb': { type: 'string' },
  'undo-depth': { type: 'string' },
  txstore: { type: 'boolean' },
  'batch-blocks': { type: 'string' },
  'batch-mb': { type: 'string' },
  'cache-mb': { type: 'string' },
  prefetch: { type: 'string' },
  'no-compact': { type: 'boolean', default: false },
  'batch-ms': { type: 'string' },
  threads: { type: 'string' },
  'bulk-batches': { type: 'string' },
  'metrics-port': { type: 'string' },
  'metrics-host': { type: 'string', default: '127.0.0.1' },
  ...logOptions,
};

async function run(positionals, values, io) {
  const { createLogger } = require('../ops/log');
  const logs = logSettings(values);
  const logger = createLogger({ ...logs, dest: io.stdout === process.stdout ? 1 : io.stdout });
  try {
    // the readable lines are for a person: off with --quiet, and with the JSON log, which has them
    return await sync(positionals, { ...values, quiet: logs.quiet || logs.json }, io, logger);
  } catch (err) {
    // the JSON log says why the process stopped, like stderr's one line does
    logger.fatal(errorFields(err), 'sync failed');
    throw err;
  }
}

async function sync(positionals, values, io, logger) {
  if (positionals.length) throw new UsageError('ERR_USAGE', `sync takes no positional arguments (see "addrindex sync --help")`);
  const location = indexLocation(values, 'sync');
  const batchMb = intOption(values, 'batch-mb', 1);
  const cacheMb = intOption(values, 'cache-mb', 1);
  const { bulkBytes, batchBytes } = catchUpLimits(cacheMb, storeClass(location.store).catchUpBatchShare);
  const batch = batchLimits({
    maxBlocks: intOption(values, 'batch-blocks', 1),
    maxBytes: batchMb === undefined ? batchBytes : batchMb * 1048576,
    maxMs: intOption(values, 'batch-ms', 1),
  });
  const undoDepth = intOption(values, 'undo-depth', 0);
  if (values.prefetch !== undefined && !['auto', 'on', 'off'].includes(values.prefetch)) {
    throw new UsageError('ERR_USAGE', `--prefetch is auto, on or off, got ${values.prefetch}`);
  }
  poolForPrefetch(values.prefetch);
  const threads = intOption(values, 'threads', 0);
  const bulkBatches = intOption(values, 'bulk-batches', 1);
  const pollMs = intOption(values, 'poll-ms', 1);
  const mempoolPollMs = intOption(values, 'mempool-poll-ms', 0);
  if (mempoolPollMs !== undefined && !values.follow) throw new UsageError('ERR_USAGE', '--mempool-poll-ms goes with --follow');
  const mempoolMaxMb = intOption(values, 'mempool-max-mb', 1);
  if (mempoolMaxMb !== undefined && !values.follow) throw new UsageError('ERR_USAGE', '--mempool-max-mb goes with --follow');
  const metricsPort = intOption(values, 'metrics-port', 0);
  if (metricsPort !== undefined && metricsPort > 65535) throw new UsageError('ERR_USAGE', `--metrics-port must be at most 65535, got ${metricsPort}`);

  // Everything that can be checked without writing is checked first: a wrong network, an
  // unreadable blocks dir or an unreachable node must not leave a fresh, empty datadir behind.
  const network = await resolveNetwork(location, values.network);
  const controller = new AbortController();
  const say = (line) => {
    if (!values.quiet) io.stderr.write(`${io.stderr.isTTY ? '\n' : ''}${line}\n`);
  };
  let metrics = null;
  const source = openSource(values, network, {
    env: io.env || process.env,
    signal: controller.signal,
    log: (line) => {
      say(line);
      logger.warn(line);
    },
    // every failed call of the node, retries included (docs/DEPLOY.md, node errors)
    onNodeError: (code) => {
      if (metrics) metrics.nodeErrors.inc({ code });
    },
  });
  if (mempoolPollMs !== undefined && !source.client) {
    throw new UsageError('ERR_USAGE', '--mempool-poll-ms needs a node (--rpc-url, --rpc-cookie or $ADDRINDEX_RPC_URL): a blocks dir has no mempool');
  }
  let store = null;
  let metricsServer = null;
  let mempool = null;
  let signals = 0;
  const onSignal = (sig) => {
    signals++;
    if (signals === 1) {
      say(`${sig}: stopping after the batch being committed (again to stop now)`);
      logger.info({ signal: sig }, 'stopping after the batch being committed');
      controller.abort();
    } else {
      // the index is crash-safe: stopping mid-batch only loses that batch's work
      process.exit(130);
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    if (metricsPort !== undefined) {
      // before anything is written: a port in use fails the command with nothing created
      const { Metrics } = require('../ops/metrics');
      metrics = new Metrics({ scope: 'sync' });
      const { startMetricsServer } = require('../ops/metrics-server');
      metricsServer = await startMetricsServer({ metrics, host: values['metrics-host'], port: metricsPort });
      io.stderr.write(`metrics on ${metricsServer.url}/metrics\n`);
      logger.info({ url: `${metricsServer.url}/metrics` }, 'serving metrics');
    }
    try {
      await source.scan();
    } catch (err) {
      if (controller.signal.aborted && err.code === 'ERR_ABORTED') return 0; // stopped while waiting for the node
      throw err;
    }
    const followsMempool = Boolean(values.follow && source.client && mempoolPollMs !== 0);
    const mempoolMaxBytes = !followsMempool ? undefined
      : mempoolMaxMb === undefined ? require('../mempool/follower').DEFAULT_MAX_BYTES : mempoolMaxMb * 1e6;
    store = await openIndex({
      ...location, network, undoDepth, readOnly: false, txstore: values.txstore, prefetch: values.prefetch,
      // the mempool's rows get room in LMDB's map (lmdb.js writerMapSize)
      mapRoom: mempoolMaxBytes,
    });
    // a server started later reads blocks and transactions from the same place; of a node,
    // only its URL as printed (the password stays out of the index)
    const info = {};
    if (values['blocks-dir'] !== undefined) info.blocksDir = path.resolve(values['blocks-dir']);
    if (source.nodeUrl) info.node = source.nodeUrl;
    await store.putSourceInfo(info);
    const { SyncService } = require('../sync/service');
    const { ProgressReporter } = require('../sync/progress');
    const { syncLog } = require('../ops/sync-log');
    const reporter = values.quiet ? null : new ProgressReporter({ stream: io.stderr, follow: values.follow });
    const jsonLog = syncLog(logger);
    const observers = [jsonLog];
    if (reporter) observers.push(reporter);
    if (metrics) {
      const { syncMetrics } = require('../ops/sync-metrics');
      const { watchIndex } = require('../ops/index-metrics');
      // addrindex_node_errors_total is fed by a node source (see docs/DEPLOY.md, metrics)
      const fed = syncMetrics(metrics);
      watchIndex(metrics, store, fed.nodeTip);
      observers.push(fed);
    }
    if (followsMempool) {
      const { followMempool } = require('../mempool/run');
      mempool = followMempool({
        store, client: source.client, network, pollMs: mempoolPollMs, maxBytes: mempoolMaxBytes, metrics, logger, say,
        // a follower that cannot go on stops the sync, with its error
        onFatal: () => controller.abort(),
      });
      observers.push(mempool);
    }
    logger.info({ network: network.name, store: location.store, follow: values.follow }, 'sync starting');
    const service = new SyncService({
      source, store, network, batch, threads, pollMs, undoDepth,
      // groups only until the first catch-up, when the mempool follower starts reading and
      // writing the store (the metrics' index tip may run up to a group ahead until then)
      bulkBatches: bulkBatches === undefined ? CATCH_UP_BULK : bulkBatches,
      bulkBytes,
      onProgress: (p) => { for (const o of observers) o.update(p); },
      beforeReorgCommit: mempool ? () => mempool.beforeReorgCommit() : undefined,
      onBlock: mempool ? (hash, raw) => mempool.onBlock(hash, raw) : undefined,
      onFirstCatchUp: values['no-compact'] ? undefined : (run) => compactAfterCatchUp(store, run, { say, logger }),
    });
    const summary = await service.run({ follow: values.follow, signal: controller.signal });
    if (mempool) await mempool.stop();
    if (reporter) reporter.finish(summary);
    jsonLog.finish(summary);
    return 0;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (mempool) await mempool.stop().catch(() => {});
    if (metricsServer) await metricsServer.close();
    await source.close();
    if (store) await store.close();
  }
}

/**
 * After an initial sync (this run indexed at least half of the index's transactions), an
 * LMDB index is rewritten into full pages, as `addrindex compact` does: copy-on-write and
 * random inserts leave the file 2-4 times its rows, the rewrite about 1.3 times (docs/SCALING.md).
 * Not when another process reads the index (it would keep reading the replaced file): then
 * it says so and the sync goes on; `addrindex compact` can run later.
 * @param {import('../stores/abstract').AbstractStore} store
 * @param {{txs: number, tip: {nextTxNum: number}|null}} run
 * @param {{say: (line: string) => void, logger: object}} out
 */
async function compactAfterCatchUp(store, run, { say, logger }) {
  if (typeof store.compact !== 'function' || !run.tip || run.txs < run.tip.nextTxNum / 2) return;
  const stats = await store.engineStats();
  say(`compacting the index after its initial sync (${mb(stats.usedBytes)}); readers wait until it is done`);
  const t0 = Date.now();
  try {
    const r = await store.compact();
    const line = `compacted the index: ${mb(r.before)} -> ${mb(r.after)} on disk in ${((Date.now() - t0) / 1000).toFixed(1)} s`;
    say(line);
    logger.info({ before: r.before, after: r.after, ms: Date.now() - t0 }, line);
  } catch (err) {
    if (err.code !== 'ERR_IN_USE') throw err;
    const line = `not compacted: ${err.message} (run "addrindex compact" when nothing reads it)`;
    say(line);
    logger.warn(line);
  }
}

const mb = (bytes) => `${(bytes / 1e6).toFixed(0)} MB`;

module.exports = { usage, options, run };
