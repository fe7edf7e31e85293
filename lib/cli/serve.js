'use strict';

const os = require('node:os');
const { UsageError } = require('../errors');
const { getNetwork } = require('../chain/networks');
const { LIMITS } = require('../api/validate');
const { DEFAULTS: COMPRESSION, ENCODINGS } = require('../api/compress');
const { logOptions, logUsage, logSettings, errorFields } = require('../ops/log');
const { LIMITS: ELECTRUM } = require('../electrum/limits');
const { sourceOptions, nodeUsage } = require('./source');
const { ENV_URL } = require('../node/endpoint');

const usage = `usage: addrindex serve --datadir DIR [options]

Serves the index over HTTP (REST: native /api/v1, Esplora-compatible /api, insight-compatible
/insight-api) from a cluster of worker processes. Safe beside a running \`addrindex sync\`:
every answer belongs to one committed block. SIGTERM or SIGINT drains the requests in flight
and exits 0; a worker that dies is replaced.

  --datadir DIR        the index written by \`addrindex sync\`
  --store NAME         lmdb (default) | mongo | level. LevelDB allows one process at a time:
                       this process owns a LevelDB index while it serves (no sync beside it)
                       and its workers forward their reads to it; with a node (below) it also
                       follows the node itself: new blocks and the mempool snapshot
  --mongodb-url URL    --store mongo: the server (default mongodb://127.0.0.1:27017)
  --network NET        optional; must match the index's own
  --workers N          HTTP worker processes (default: one per core, here ${os.availableParallelism()})
  --host ADDR          listen address (default 127.0.0.1)
  --port N             listen port (default 3000; 0 picks a free port)
  --timeout-ms N       a request not answered within N ms gets 503 (default ${LIMITS.requestTimeoutMs})
  --grace-ms N         on shutdown, wait up to N ms for requests in flight (default 10000)

Transactions and blocks (/api/tx/..., /api/block/..., insight's /tx, /txs, /block, native
/api/v1/tx/:txid?full=1) are read from the blocks dir \`addrindex sync\` recorded in the index,
at the places it recorded; --blocks-dir overrides it (the same blocks, moved).

The node (optional): its tip for the lag, blocks the blocks dir does not hold (getblock), and
broadcasts (POST /api/tx, /insight-api/tx/send, Electrum's broadcast) and fee estimates
(/api/fee-estimates, Electrum's estimatefee and relayfee). Unconfirmed transactions come from
the mempool snapshot the follower (\`addrindex sync --follow\` with a node) writes into the index;
with --store level, which admits no sync beside serve, this process is that follower.
${nodeUsage}  --mempool-poll-ms N  --store level with a node: how often the node's mempool is read
                       (default 2000)
  --mempool-max-mb N   --store level with a node: what the mempool held may take in memory
                       (default 300, as Bitcoin Core's maxmempool; past it Core's eviction)

Operations (see docs/DEPLOY.md): GET /health (the process is up), GET /ready (index open, tip
known, lag under --max-lag), GET /metrics (Prometheus, every worker merged by the primary).
  --blocks-dir DIR     the node's blocks dir: where transactions and blocks are read; without a
                       node (above) its best chain's tip is the node's tip, for the lag in /ready,
                       /api/v1/status and the metrics. Without either the lag is unknown and /ready
                       checks only that the index is open with a tip
  --poll-ms N          how often the node's tip is read (default 2000)
  --max-lag N          /ready answers 503 when the index is more than N blocks behind the node
                       (default 3; needs a node or --blocks-dir)
  --compression LIST   content encodings offered, preferred first: br,gzip (default) | gzip | br | off
  --compress-min-bytes N  answers smaller than N bytes are never compressed (default ${COMPRESSION.minBytes})
  --rate-limit N       at most N requests per client per window, then 429 (default: no limit).
                       Counted per worker process: see docs/API.md
  --rate-window-s N    the rate limit's window in seconds (default 60)
  --trust-proxy        the client is the last X-Forwarded-For address (behind one reverse proxy)
  --cors-origin O      let browser pages from origin O read the API ('*': any page); repeatable
                       (insight's /insight-api routes answer any origin unless this is given)

The explorer and the live feeds (docs/API.md, "The explorer", "bitcore-node v8"):
  --explorer           serve insight-ui 0.4.0 at /insight/ on the same port (a browser opening /
                       is sent there); off unless given (\`addrindex start\` turns it on)
  --live-poll-ms N     how often each worker reads the tip and the mempool snapshot for insight's
                       socket.io feed at /socket.io/ (default 1000)
  --bws-key KEY        a public key (hex) whose signed payload may join bitcore-node v8's live
                       feed room of every wallet (/BTC/<network>/wallets), as bitcore-wallet-
                       service does; repeatable (docs/API.md, "bitcore-node v8")

Electrum protocol 1.4 (off unless a port is given), served by the same workers:
  --electrum-port N          plain TCP (50001 is the custom; 0 picks a free port)
  --electrum-tls-port N      TLS (50002 is the custom), with --tls-cert and --tls-key
  --tls-cert FILE            PEM certificate (chain) for --electrum-tls-port
  --tls-key FILE             PEM private key for --electrum-tls-port
  (raw confirmed transactions are read where the REST routes read them: the index after
  sync --txstore, else --blocks-dir or the blocks dir the sync recorded, else the node's
  getblock; with none of them, blockchain.transaction.get of a confirmed transaction answers
  error 2 and everything else is served)
  --electrum-max-history N   longer histories (and unspent lists) get an error instead of an
                             answer (default ${ELECTRUM.maxHistory}, Fulcrum's)
  --electrum-poll-ms N       how often each worker looks for new blocks to notify (default ${ELECTRUM.pollMs})
${logUsage}`;

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
  ...sourceOptions,
  'poll-ms': { type: 'string' },
  'mempool-poll-ms': { type: 'string' },
  'mempool-max-mb': { type: 'string' },
  'max-lag': { type: 'string' },
  compression: { type: 'string' },
  'compress-min-bytes': { type: 'string' },
  'rate-limit': { type: 'string' },
  'rate-window-s': { type: 'string' },
  'trust-proxy': { type: 'boolean', default: false },
  'cors-origin': { type: 'string', multiple: true },
  explorer: { type: 'boolean', default: false },
  'live-poll-ms': { type: 'string' },
  'bws-key': { type: 'string', multiple: true },
  ...logOptions,
  'electrum-port': { type: 'string' },
  'electrum-tls-port': { type: 'string' },
  'tls-cert': { type: 'string' },
  'tls-key': { type: 'string' },
  'electrum-max-history': { type: 'string' },
  'electrum-poll-ms': { type: 'string' },
};

/** --bws-key values, checked: secp256k1 public keys in hex. */
function bwsKeys(keys) {
  for (const k of keys) {
    if (!/^(0[23][0-9a-fA-F]{64}|04[0-9a-fA-F]{128})$/.test(k)) {
      throw new UsageError('ERR_USAGE', `--bws-key must be a public key in hex (66 or 130 digits), got "${k}"\n${usage}`);
    }
  }
  return keys;
}

function intValue(values, name, min, max, def) {
  const raw = values[name];
  if (raw === undefined) return def;
  if (!/^[0-9]+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new UsageError('ERR_USAGE', `--${name} must be an integer from ${min} to ${max}, got "${raw}"\n${usage}`);
  }
  return Number(raw);
}

/**
 * The Electrum part of the configuration: null when no Electrum port is given.
 * @returns {{port: number|null, tlsPort: number|null, tlsCert?: string, tlsKey?: string, blocksDir: string|null,
 *   maxHistory: number, pollMs: number}|null} blocksDir: --blocks-dir; serve() puts the recorded one
 *   in its place when there is none
 */
function electrumConfig(values) {
  const port = intValue(values, 'electrum-port', 0, 65535, null);
  const tlsPort = intValue(values, 'electrum-tls-port', 0, 65535, null);
  const dependent = ['tls-cert', 'tls-key', 'electrum-max-history', 'electrum-poll-ms'].filter((k) => values[k] !== undefined);
  if (port === null && tlsPort === null) {
    if (dependent.length) throw new UsageError('ERR_USAGE', `--${dependent[0]} goes with --electrum-port or --electrum-tls-port\n${usage}`);
    return null;
  }
  if (tlsPort !== null && (!values['tls-cert'] || !values['tls-key'])) {
    throw new UsageError('ERR_USAGE', `--electrum-tls-port needs --tls-cert and --tls-key\n${usage}`);
  }
  if (tlsPort === null && (values['tls-cert'] || values['tls-key'])) {
    throw new UsageError('ERR_USAGE', `--tls-cert and --tls-key go with --electrum-tls-port\n${usage}`);
  }
  return {
    port,
    tlsPort,
    tlsCert: values['tls-cert'],
    tlsKey: values['tls-key'],
    blocksDir: values['blocks-dir'] || null,
    maxHistory: intValue(values, 'electrum-max-history', 1, 25000000, ELECTRUM.maxHistory),
    pollMs: intValue(values, 'electrum-poll-ms', 10, 600000, ELECTRUM.pollMs),
  };
}

/**
 * The validated serve configuration from command-line values.
 * @returns {{store: string, datadir: string, mongodbUrl?: string, network?: string, workers: number,
 *   host: string, port: number, timeoutMs: number, graceMs: number, electrum: ReturnType<typeof electrumConfig>}}
 */
function serveConfig(values) {
  const store = values.store;
  if (store !== 'mongo' && !values.datadir) throw new UsageError('ERR_USAGE', `serve needs --datadir\n${usage}`);
  if (values['mongodb-url'] && store !== 'mongo') {
    throw new UsageError('ERR_USAGE', `--mongodb-url goes with --store mongo\n${usage}`);
  }
  const ops = opsConfig(values);
  for (const name of ['mempool-poll-ms', 'mempool-max-mb']) {
    if (values[name] !== undefined && !(store === 'level' && ops.node)) {
      throw new UsageError('ERR_USAGE', `--${name} goes with --store level and a node (--rpc-url): elsewhere \`addrindex sync --follow\` follows the mempool\n${usage}`);
    }
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
    explorer: Boolean(values.explorer),
    livePollMs: intValue(values, 'live-poll-ms', 10, 600000, 1000),
    graceMs: intValue(values, 'grace-ms', 0, 600000, 10000),
    ...ops,
    mempoolPollMs: intValue(values, 'mempool-poll-ms', 10, 3600000, undefined),
    mempoolMaxBytes: values['mempool-max-mb'] === undefined ? undefined : 1e6 * intValue(values, 'mempool-max-mb', 1, 1000000, undefined),
    electrum: electrumConfig(values),
  };
}

/**
 * The node the options name (resolved once the index's network is known), or null.
 * @param {object} values
 * @param {NodeJS.ProcessEnv} env
 */
function nodeConfig(values, env) {
  const named = values['rpc-url'] !== undefined || values['rpc-cookie'] !== undefined || values['rpc-host'] !== undefined || Boolean(env[ENV_URL]);
  if (!named) {
    if (values['rpc-retry-s'] !== undefined) throw new UsageError('ERR_USAGE', `--rpc-retry-s goes with a node (--rpc-url or --rpc-cookie)\n${usage}`);
    return null;
  }
  return {
    rpcUrl: values['rpc-url'], rpcCookie: values['rpc-cookie'], rpcHost: values['rpc-host'],
    retryMs: 1000 * intValue(values, 'rpc-retry-s', 0, 86400, 60),
  };
}

/** The operations half of the serve configuration (node tip, compression, limits, CORS, logs). */
function opsConfig(values, env = process.env) {
  const blocksDir = values['blocks-dir'];
  const node = nodeConfig(values, env);
  if (!blocksDir && !node && values['max-lag'] !== undefined) {
    throw new UsageError('ERR_USAGE', `--max-lag needs a node (--rpc-url) or --blocks-dir: without the node's tip the lag is unknown\n${usage}`);
  }
  const compression = values.compression === undefined ? COMPRESSION.encodings.join(',') : values.compression;
  const encodings = compression === 'off' ? [] : compression.split(',').map((e) => e.trim());
  if (!encodings.every((e) => ENCODINGS.includes(e)) || new Set(encodings).size !== encodings.length || (compression !== 'off' && !encodings.length)) {
    throw new UsageError('ERR_USAGE', `--compression must be "off" or a list of ${ENCODINGS.join(', ')}, got "${compression}"\n${usage}`);
  }
  const limit = intValue(values, 'rate-limit', 1, 1e9, undefined);
  if (limit === undefined && (values['rate-window-s'] !== undefined || values['trust-proxy'])) {
    throw new UsageError('ERR_USAGE', `--rate-window-s and --trust-proxy go with --rate-limit\n${usage}`);
  }
  const origins = values['cors-origin'] || [];
  for (const o of origins) {
    if (o !== '*' && !/^https?:\/\/[^/\s]+\/?$/.test(o)) {
      throw new UsageError('ERR_USAGE', `--cors-origin must be "*" or an origin such as https://explorer.example, got "${o}"\n${usage}`);
    }
  }
  return {
    blocksDir,
    node,
    pollMs: intValue(values, 'poll-ms', 10, 3600000, 2000),
    maxLag: blocksDir || node ? intValue(values, 'max-lag', 0, 1e6, 3) : undefined,
    compression: { encodings, minBytes: intValue(values, 'compress-min-bytes', 0, 1 << 30, COMPRESSION.minBytes) },
    rateLimit: limit === undefined ? undefined
      : { limit, windowMs: 1000 * intValue(values, 'rate-window-s', 1, 86400, 60), trustProxy: Boolean(values['trust-proxy']) },
    cors: origins,
    bwsKeys: bwsKeys(values['bws-key'] || []),
    log: { format: values['log-format'], level: values['log-level'], quiet: Boolean(values.quiet) },
  };
}

/**
 * Starts the cluster and keeps it up until SIGTERM/SIGINT (or `signal` aborts), then drains.
 * @param {ReturnType<typeof serveConfig>} cfg
 * @param {{stdout: NodeJS.WritableStream, stderr: NodeJS.WritableStream}} io
 * @param {{onReady?: (info: {url: string, network: string, tip: object|null}) => void, signal?: AbortSignal,
 *   intro?: (url: string) => void}} [hooks] intro: once listening, before the banner (what a person should see first)
 * @returns {Promise<number>} exit code
 */
async function serve(cfg, io, hooks = {}) {
  const { createLogger } = require('../ops/log');
  const logs = logSettings(cfg.log ? { 'log-format': cfg.log.format, 'log-level': cfg.log.level, quiet: cfg.log.quiet } : {});
  const logger = createLogger({ ...logs, dest: io.stdout === process.stdout ? 1 : io.stdout });
  try {
    return await serveWith(cfg, io, hooks, logs, logger);
  } catch (err) {
    logger.fatal(errorFields(err), 'serve failed');
    throw err;
  }
}

async function serveWith(cfg, io, hooks, logs, logger) {
  const { readStrategy, openReadStore } = require('../cluster/stores');
  const { ClusterPrimary } = require('../cluster/primary');
  const { PrimaryOps } = require('../cluster/ops');
  const { Metrics } = require('../ops/metrics');
  const { NodeTipWatcher, blocksDirTip } = require('../ops/node-tip');
  const { blocksDirOf } = require('../api/txdata');
  const strategy = readStrategy(cfg.store);

  // Open once here before forking: a missing or foreign index fails with one clear error
  // instead of N workers failing, and the network comes from the index itself. With the
  // forward strategy (LevelDB) this process keeps it open and answers the workers' reads, and
  // holds LevelDB's one-process lock until it stops; with a node it also follows it, writing
  // new blocks and the mempool snapshot (follow-node.js), so then it opens the index writable.
  const follows = strategy === 'forward' && Boolean(cfg.node);
  const store = await openReadStore({ ...cfg, readOnly: !follows });
  let keep = false;
  let network;
  let tip;
  let bodies;
  let keepsBlocks;
  try {
    network = getNetwork(store.network || cfg.network);
    tip = await store.getTip();
    bodies = await blocksDirOf(store, cfg.blocksDir);
    keepsBlocks = store.keepsTransactions;
    keep = strategy === 'forward';
  } finally {
    if (!keep) await store.close();
  }
  if (cfg.electrum) checkElectrum(cfg.electrum);
  // the Electrum workers read confirmed transactions as the REST routes do
  const electrum = cfg.electrum && { ...cfg.electrum, blocksDir: bodies.readable ? bodies.dir : null, indexKeepsBlocks: keepsBlocks };

  // readable lines: events on stderr, the banner on stdout (stderr with the JSON log on stdout);
  // --quiet keeps errors only
  const say = (msg, { error = false } = {}) => { if (error || !logs.quiet) io.stderr.write(`addrindex serve: ${msg}\n`); };
  const banner = (line) => { if (!logs.quiet) (logs.json ? io.stderr : io.stdout).write(line); };
  // Transactions and blocks are read where the sync read them (or where --blocks-dir says),
  // else from the node (getblock); with neither those routes answer 503.
  if (keepsBlocks) {
    // the index holds every block's bytes itself (sync --txstore): nothing outside it is needed
  } else if (cfg.node) {
    if (!bodies.readable) say(`${bodies.why}: transactions and blocks will be read from the node (getblock)`);
  } else if (!bodies.dir) {
    say(`${bodies.why}, and neither --blocks-dir nor a node was given: transaction and block routes will answer 503 ` +
      'ERR_NO_BLOCK_SOURCE; give --blocks-dir DIR or --rpc-url URL, or build the index with `addrindex sync --txstore`');
  } else if (!bodies.readable) {
    say(`${bodies.why}: transaction and block routes will answer 503 until it can`);
  }
  const metrics = new Metrics({ scope: 'primary' });
  metrics.nodeTip.set(-1);
  // The node's tip: read once before forking (a node of another network, wrong credentials or
  // a wrong --blocks-dir fail here, clearly), then every --poll-ms; the workers get each new
  // tip. Over JSON-RPC when a node is named, else from its blocks dir.
  let watcher = null;
  let nodeReader = null;
  let node = null;
  try {
    if (cfg.node) {
      node = await checkedNode(cfg.node, network);
      nodeReader = { read: () => node.tip(), close: async () => node.close() };
    } else if (cfg.blocksDir) {
      nodeReader = blocksDirTip({ dir: cfg.blocksDir, network: network.name });
      await nodeReader.read();
    }
  } catch (err) {
    if (nodeReader) await nodeReader.close();
    if (keep) await store.close();
    throw err;
  }
  if (nodeReader) watcher = new NodeTipWatcher({ read: nodeReader.read, pollMs: cfg.pollMs, metrics, logger, say });
  // bitcore v8 wallets: LMDB and LevelDB workers send their writes here (lib/cluster/wallet-writes.js)
  const { WalletWriter } = require('../cluster/wallet-writes');
  const walletWriter = WalletWriter.forwards(cfg.store)
    ? new WalletWriter({ store: cfg.store, datadir: cfg.datadir, network: network.name }, keep ? store : null) : null;
  const primary = new ClusterPrimary({
    workers: cfg.workers,
    // The kernel hands connections to the workers, not the primary: with node's round robin a
    // connection the primary was handing to a worker that dies stays open in the primary,
    // answered by no one, until the client gives up (bench/soak.js saw 30 s waits).
    scheduling: 'none',
    store: keep ? store : null,
    walletWriter,
    worker: {
      store: cfg.store, strategy, datadir: cfg.datadir, mongodbUrl: cfg.mongodbUrl, network: network.name,
      host: cfg.host, port: cfg.port, timeoutMs: cfg.timeoutMs, graceMs: cfg.graceMs,
      logJson: logs.json, logLevel: logs.level, nodeConfigured: Boolean(watcher), nodeSource: node ? 'rpc' : 'blocks-dir', maxLag: cfg.maxLag,
      // each worker asks the node itself (broadcast, fee estimates, getblock); the values are the
      // options' own, so a URL from $ADDRINDEX_RPC_URL reaches it through the environment
      node: cfg.node && { rpcUrl: cfg.node.rpcUrl, rpcCookie: cfg.node.rpcCookie, rpcHost: cfg.node.rpcHost },
      compression: cfg.compression, rateLimit: cfg.rateLimit, cors: cfg.cors, electrum, blocksDir: bodies.dir,
      indexKeepsBlocks: keepsBlocks, explorer: cfg.explorer, livePollMs: cfg.livePollMs, workers: cfg.workers,
      walletWrites: walletWriter ? 'primary' : 'direct', bwsKeys: cfg.bwsKeys,
    },
  });
  const ops = new PrimaryOps(primary, metrics);
  if (watcher) {
    watcher.on('tip', (t) => {
      ops.setNodeTip(t);
      logger.debug({ nodeTip: t }, 'node tip');
    });
    await watcher.start();
  }
  primary.on('listening', (w) => {
    say(`worker ${w.process.pid} listening`);
    logger.info({ worker: w.process.pid }, 'worker listening');
  });
  primary.on('fatal', (w, e) => {
    say(`worker ${w.process.pid} could not start: ${e.message}${e.code ? ` [${e.code}]` : ''}`, { error: true });
    logger.error({ worker: w.process.pid, code: e.code, error: e.message }, 'worker could not start');
  });
  primary.on('exit', (w, code, signal, delay) => {
    const how = signal ? `killed by ${signal}` : `exited with code ${code}`;
    say(delay === null ? `worker ${w.process.pid} ${how}` : `worker ${w.process.pid} ${how}; starting a replacement${delay ? ` in ${delay} ms` : ''}`,
      { error: delay !== null });
    const fields = { worker: w.process.pid, code, signal, replacementInMs: delay };
    if (delay === null) logger.info(fields, 'worker exited');
    else logger.warn(fields, 'worker died; starting a replacement');
  });

  let stopRequested = null;
  let following = null;
  const stopped = new Promise((resolve) => { stopRequested = resolve; });
  let signals = 0;
  const onSignal = (sig) => {
    signals++;
    if (signals === 1) {
      say(`${sig}: draining requests in flight (again to stop at once)`);
      logger.info({ signal: sig }, 'draining requests in flight');
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
    if (hooks.intro && !logs.quiet) hooks.intro(url);
    // The banner is for people and scripts reading the URL; with the JSON log on stdout it goes
    // to stderr, so stdout holds nothing but JSON lines.
    banner(`addrindex serve: ${network.name} index, ${tip ? `tip ${tip.height} ${tip.hash}` : 'empty'}; ` +
      `${cfg.workers} worker${cfg.workers === 1 ? '' : 's'} (${cfg.store}, ${strategy === 'forward' ? `reads forwarded to this process${follows ? ', which follows the node' : ''}` : 'read-only'}) ` +
      `listening on ${url}\n`);
    const listening = address.electrum || null;
    if (listening) {
      const at = (a) => `${a.address.includes(':') ? `[${a.address}]` : a.address}:${a.port}`;
      const ports = [listening.tcp && `tcp ${at(listening.tcp)}`, listening.tls && `tls ${at(listening.tls)}`].filter(Boolean);
      const txs = keepsBlocks ? 'transactions from the index' : bodies.readable ? `transactions from ${bodies.dir}`
        : node ? 'transactions from the node (getblock)' : `no raw confirmed transactions: ${bodies.why}`;
      banner(`addrindex serve: electrum ${ports.join(', ')} (${txs})\n`);
    }
    if (node) banner(`addrindex serve: node ${node.display} (tip ${watcher.tip ? watcher.tip.height : 'unknown'})\n`);
    if (keepsBlocks) {
      banner('addrindex serve: transactions and blocks read from the index (synced with --txstore)\n');
    } else if (bodies.dir) {
      banner(`addrindex serve: transactions and blocks read from ${bodies.dir} ` +
        `(${bodies.from === 'index' ? 'the blocks dir sync recorded' : '--blocks-dir'})\n`);
    }
    logger.info({
      url, network: network.name, tip: tip ? { height: tip.height, hash: tip.hash } : null, workers: cfg.workers, store: cfg.store,
      blocksDir: bodies.dir, node: node ? node.display : undefined,
      nodeTip: watcher ? watcher.tip : undefined, electrum: listening || undefined,
    }, 'serving');
    if (follows) {
      // after the workers listen: a long catch-up must not keep the API from answering
      const { followNode } = require('./follow-node');
      try {
        following = await followNode({
          store, node: cfg.node, blocksDir: cfg.blocksDir, network, mempoolPollMs: cfg.mempoolPollMs, mempoolMaxBytes: cfg.mempoolMaxBytes, metrics, logger, say,
        });
      } catch (err) {
        // the node was checked before forking; one that fails now stops serve as it would have then
        await primary.stop();
        await store.close();
        throw err;
      }
    }
    if (hooks.onReady) hooks.onReady({ url, network: network.name, tip, electrum: listening });
    await stopped;
    // the follower first (its commit under way ends), then the workers that read through this
    // process, then the store
    if (following) await following.stop();
    following = null;
    await primary.stop();
    if (walletWriter) await walletWriter.close();
    if (keep) await store.close();
    say('stopped');
    logger.info('stopped');
    return 0;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    if (following) await following.stop().catch(() => {});
    if (watcher) watcher.stop();
    if (nodeReader) await nodeReader.close();
  }
}

/**
 * The node the options name, checked before forking: it answers (retried for --rpc-retry-s),
 * takes the credentials, and follows the index's network. Its tip polls are not retried: a
 * failed one is counted and the next poll tries again.
 * @returns {Promise<import('../node/serve-node').ServeNode>}
 */
async function checkedNode(nodeCfg, network) {
  const { openServeNode } = require('../node/serve-node');
  const first = openServeNode({ node: nodeCfg, network, retryMs: nodeCfg.retryMs });
  try {
    await first.client.checkNetwork(network);
  } finally {
    first.close();
  }
  return openServeNode({ node: nodeCfg, network, retryMs: 0, timeoutMs: 10000 });
}

/**
 * Before forking: the certificate and key load, so a mistake is one clear error instead of
 * one per worker. (A --blocks-dir that does not read fails above, where the node's tip is read.)
 */
function checkElectrum(e) {
  if (e.tlsPort === null) return;
  const fs = require('node:fs');
  const tls = require('node:tls');
  let pem;
  try {
    pem = { cert: fs.readFileSync(e.tlsCert), key: fs.readFileSync(e.tlsKey) };
  } catch (err) {
    throw new UsageError('ERR_TLS_FILES', `cannot read the TLS certificate or key: ${err.message}`);
  }
  try {
    tls.createSecureContext(pem);
  } catch (err) {
    throw new UsageError('ERR_TLS_FILES',
      `--tls-cert ${e.tlsCert} and --tls-key ${e.tlsKey} do not load as a PEM certificate and its key: ${err.message}`);
  }
}

async function run(positionals, values, io) {
  if (positionals.length) throw new UsageError('ERR_USAGE', `serve takes no positional arguments\n${usage}`);
  return serve(serveConfig(values), io);
}

module.exports = { usage, options, run, serve, serveConfig };
