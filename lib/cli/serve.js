'use strict';

const os = require('node:os');
const { UsageError } = require('../errors');
const { getNetwork } = require('../chain/networks');
const { LIMITS } = require('../api/validate');

const usage = `usage: addrindex serve --datadir DIR [options]

Serves the index over HTTP (REST: native /api/v1, Esplora-compatible /api, insight-compatible
/insight-api) from a cluster of worker processes. Safe beside a running \`addrindex sync\`:
every answer belongs to one committed block. SIGTERM or SIGINT drains the requests in flight
and exits 0; a worker that dies is replaced.

  --datadir DIR        the index written by \`addrindex sync\`
  --store NAME         lmdb (default) | mongo | level. LevelDB allows one process at a time:
                       this process owns a LevelDB index while it serves (no sync beside it)
                       and its workers forward their reads to it
  --mongodb-url URL    --store mongo: the server (default mongodb://127.0.0.1:27017)
  --network NET        optional; must match the index's own
  --workers N          HTTP worker processes (default: one per core, here ${os.availableParallelism()})
  --host ADDR          listen address (default 127.0.0.1)
  --port N             listen port (default 3000; 0 picks a free port)
  --timeout-ms N       a request not answered within N ms gets 503 (default ${LIMITS.requestTimeoutMs})
  --grace-ms N         on shutdown, wait up to N ms for requests in flight (default 10000)
`;

const options = {
  datadir: { type: 'string' },
  store: { type: 'string', default: 'lmdb' },
  'mongodb-url': { type: 'string' },
  network: { type: 'string', short: 'n' },
  workers: { type: 'string' },
  host: { type: 'string', default: '127.0.0.1' },
  port: { type: 'string', default: '3000' },
  'timeout-ms': { type: 'string' },
  'grace-ms': { type: 'string' },
};

function intValue(values, name, min, max, def) {
  const raw = values[name];
  if (raw === undefined) return def;
  if (!/^[0-9]+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new UsageError('ERR_USAGE', `--${name} must be an integer from ${min} to ${max}, got "${raw}"\n${usage}`);
  }
  return Number(raw);
}

/**
 * The validated serve configuration from command-line values.
 * @returns {{store: string, datadir: string, mongodbUrl?: string, network?: string, workers: number,
 *   host: string, port: number, timeoutMs: number, graceMs: number}}
 */
function serveConfig(values) {
  const store = values.store;
  if (store !== 'mongo' && !values.datadir) throw new UsageError('ERR_USAGE', `serve needs --datadir\n${usage}`);
  if (values['mongodb-url'] && store !== 'mongo') {
    throw new UsageError('ERR_USAGE', `--mongodb-url goes with --store mongo\n${usage}`);
  }
  return {
    store,
    datadir: values.datadir,
    mongodbUrl: store === 'mongo' ? values['mongodb-url'] || 'mongodb://127.0.0.1:27017' : undefined,
    network: values.network === undefined ? undefined : getNetwork(values.network).name,
    workers: intValue(values, 'workers', 1, 256, os.availableParallelism()),
    host: values.host,
    port: intValue(values, 'port', 0, 65535, 3000),
    timeoutMs: intValue(values, 'timeout-ms', 100, 600000, LIMITS.requestTimeoutMs),
    graceMs: intValue(values, 'grace-ms', 0, 600000, 10000),
  };
}

/**
 * Starts the cluster and keeps it up until SIGTERM/SIGINT (or `signal` aborts), then drains.
 * @param {ReturnType<typeof serveConfig>} cfg
 * @param {{stdout: NodeJS.WritableStream, stderr: NodeJS.WritableStream}} io
 * @param {{onReady?: (info: {url: string, network: string, tip: object|null}) => void, signal?: AbortSignal}} [hooks]
 * @returns {Promise<number>} exit code
 */
async function serve(cfg, io, hooks = {}) {
  const { readStrategy, openReadStore } = require('../cluster/stores');
  const { ClusterPrimary } = require('../cluster/primary');
  const strategy = readStrategy(cfg.store);

  // Open once here before forking: a missing or foreign index fails with one clear error
  // instead of N workers failing, and the network comes from the index itself. With the
  // forward strategy (LevelDB) this process keeps it open and answers the workers' reads; it
  // never writes, but it holds LevelDB's one-process lock until it stops.
  const store = await openReadStore({ ...cfg, readOnly: true });
  let keep = false;
  let network;
  let tip;
  try {
    network = getNetwork(store.network || cfg.network);
    tip = await store.getTip();
    keep = strategy === 'forward';
  } finally {
    if (!keep) await store.close();
  }

  const primary = new ClusterPrimary({
    workers: cfg.workers,
    store: keep ? store : null,
    worker: {
      store: cfg.store, strategy, datadir: cfg.datadir, mongodbUrl: cfg.mongodbUrl, network: network.name,
      host: cfg.host, port: cfg.port, timeoutMs: cfg.timeoutMs, graceMs: cfg.graceMs,
    },
  });
  const say = (msg) => io.stderr.write(`addrindex serve: ${msg}\n`);
  primary.on('listening', (w) => say(`worker ${w.process.pid} listening`));
  primary.on('fatal', (w, e) => say(`worker ${w.process.pid} could not start: ${e.message}${e.code ? ` [${e.code}]` : ''}`));
  primary.on('exit', (w, code, signal, delay) => {
    const how = signal ? `killed by ${signal}` : `exited with code ${code}`;
    say(delay === null ? `worker ${w.process.pid} ${how}` : `worker ${w.process.pid} ${how}; starting a replacement${delay ? ` in ${delay} ms` : ''}`);
  });

  let stopRequested = null;
  const stopped = new Promise((resolve) => { stopRequested = resolve; });
  let signals = 0;
  const onSignal = (sig) => {
    signals++;
    if (signals === 1) {
      say(`${sig}: draining requests in flight (again to stop at once)`);
      stopRequested();
    } else {
      for (const pid of primary.pids()) process.kill(pid, 'SIGKILL');
      process.exit(130);
    }
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  if (hooks.signal) hooks.signal.addEventListener('abort', () => stopRequested(), { once: true });
  try {
    let address;
    try {
      address = await primary.start();
    } finally {
      if (!address && keep) await store.close();
    }
    const host = address.address.includes(':') ? `[${address.address}]` : address.address;
    const url = `http://${host}:${address.port}`;
    io.stdout.write(`addrindex serve: ${network.name} index, ${tip ? `tip ${tip.height} ${tip.hash}` : 'empty'}; ` +
      `${cfg.workers} worker${cfg.workers === 1 ? '' : 's'} (${cfg.store}, ${strategy === 'forward' ? 'reads forwarded to this process' : 'read-only'}) ` +
      `listening on ${url}\n`);
    if (hooks.onReady) hooks.onReady({ url, network: network.name, tip });
    await stopped;
    await primary.stop();
    if (keep) await store.close();
    say('stopped');
    return 0;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}

async function run(positionals, values, io) {
  if (positionals.length) throw new UsageError('ERR_USAGE', `serve takes no positional arguments\n${usage}`);
  return serve(serveConfig(values), io);
}

module.exports = { usage, options, run, serve, serveConfig };
