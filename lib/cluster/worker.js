'use strict';

/**
 * One HTTP worker of `addrindex serve`, started by lib/cluster/primary.js with node:cluster.
 * It opens the store for reading (or forwards to the primary), serves the API on the shared
 * port (and the Electrum protocol on its shared ports when configured), and on shutdown
 * drains: stops accepting, answers what is in flight, closes the store, exits 0. Its
 * configuration arrives in the ADDRINDEX_WORKER environment variable (JSON).
 */

const { ApiApp, createServer, closeGracefully } = require('../api/server');
const { Metrics } = require('../ops/metrics');
const { createLogger } = require('../ops/log');
const { ForwardedStore } = require('./forward');
const { ForwardedWalletWriter } = require('./wallet-writes');
const { V8Feed } = require('../api/bitcore8/feed');
const { openReadStore } = require('./stores');
const { WorkerOps } = require('./ops');
const { MSG } = require('./messages');
const { startElectrum } = require('./electrum');
const { openServeNode } = require('../node/serve-node');
const { MempoolReader } = require('../mempool/reader');

const config = JSON.parse(process.env.ADDRINDEX_WORKER || '{}');
const logger = createLogger({ json: Boolean(config.logJson), level: config.logLevel }).child({ worker: process.pid });

function log(msg) {
  process.stderr.write(`addrindex worker ${process.pid}: ${msg}\n`);
}

async function main() {
  // listening for the primary's messages from the start: a node tip sent early is kept
  const metrics = new Metrics({ scope: 'api' });
  const ops = new WorkerOps(metrics);
  let nodeTip = null;
  ops.onNodeTip = (tip) => { nodeTip = tip; };
  let store = null;
  let server = null;
  let app = null;
  let electrum = null;
  let node = null;
  let feed = null;
  try {
    // the node behind the server (serve --rpc-url): retried briefly, so a request is answered
    // (or refused with 503) well within the request timeout
    node = config.node ? openServeNode({ node: config.node, network: config.network, retryMs: 5000, timeoutMs: 10000 }) : null;
    store = config.strategy === 'forward' ? new ForwardedStore(process) : await openReadStore(config);
    // one for the REST app and the Electrum server: each snapshot decoded once per worker
    const mempoolReader = new MempoolReader(store);
    app = new ApiApp({
      store, network: config.network, storeKind: config.store, timeoutMs: config.timeoutMs, log, logger,
      metrics, scrape: ops.scrape, nodeConfigured: Boolean(config.nodeConfigured), maxLag: config.maxLag,
      compression: config.compression, rateLimit: config.rateLimit, cors: config.cors, blocksDir: config.blocksDir || null,
      indexKeepsBlocks: Boolean(config.indexKeepsBlocks), nodeSource: config.nodeSource,
      node, fetchFromNode: node && ((hash) => node.block(hash)), mempoolReader,
      explorer: Boolean(config.explorer),
      // insight's socket.io feed; long-polling only where one worker holds every connection
      live: { pollMs: config.livePollMs || 1000, websocketOnly: config.workers > 1 },
      walletWriter: config.walletWrites === 'primary' ? new ForwardedWalletWriter(process) : undefined,
    });
    app.setNodeTip(nodeTip);
    ops.onNodeTip = (tip) => app.setNodeTip(tip);
    server = createServer(app);
    // bitcore-node v8's socket.io feed, for the sockets this worker accepts (on insight's
    // feed's socket.io server: one engine answers /socket.io/)
    feed = new V8Feed({ app, io: app.live.io, bwsKeys: config.bwsKeys || [] });
    await new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    await app.start();
    if (config.electrum) electrum = await startElectrum(config, store, log, node, mempoolReader);
  } catch (err) {
    if (electrum) await electrum.close().catch(() => {});
    if (store) await store.close().catch(() => {});
    if (node) node.close();
    process.send({ type: MSG.fatal, error: { name: err.name, code: err.code, message: err.message } }, () => process.exit(1));
    return;
  }

  let stopping = null;
  const stop = () => {
    if (stopping) return;
    stopping = Promise.all([closeGracefully(server, app, config.graceMs), electrum && electrum.close(), feed && feed.close()])
      .then(() => store.close())
      .then(() => node && node.close())
      .then(() => process.exit(0), (err) => {
        log(`shutdown failed: ${err && err.stack ? err.stack : err}`);
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('message', (msg) => { if (msg && msg.type === MSG.shutdown) stop(); });
  // Ctrl-C reaches every process of the group, and the primary may die: drain either way.
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.on('disconnect', stop);
  process.send({ type: MSG.listening, address: server.address(), electrum: electrum && electrum.addresses });
}

process.on('uncaughtException', (err) => {
  log(`uncaught exception, exiting (the primary starts a replacement): ${err && err.stack ? err.stack : err}`);
  logger.fatal({ err }, 'uncaught exception, exiting (the primary starts a replacement)');
  process.exit(1);
});

main();
