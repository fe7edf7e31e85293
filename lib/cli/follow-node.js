'use strict';

const { openSource } = require('../sources/open');

/**
 * `serve --store level` with a node: the index follows the node inside serve's primary, as
 * `addrindex sync --follow` would beside it. LevelDB admits one process, and serve's primary
 * is it (its workers forward their reads to it), so nothing else can write the index while it
 * serves: without this an index served from LevelDB would stay at the block it was synced to,
 * and a mempool resolved against it would lose every payment the node confirms after that
 * (they leave the node's mempool, and no block of the index holds them).
 *
 * So the primary runs both halves of the follower over the store it owns, opened writable:
 * the block sync (lib/sync's SyncService, following the node's best chain through reorgs, one
 * atomic commit per batch) and the mempool follower (lib/mempool/run.js: started when the sync
 * first catches up, woken by every new tip). The workers read what it commits, paired by the
 * one rule of lib/mempool/reader.js.
 *
 * @param {object} opts
 * @param {import('../stores/abstract').AbstractStore} opts.store open, writable
 * @param {{rpcUrl?: string, rpcCookie?: string, rpcHost?: string, retryMs: number}} opts.node
 * @param {string} [opts.blocksDir] the node's blocks dir: blocks it holds are read there
 * @param {import('../chain/networks').Network} opts.network
 * @param {number} [opts.mempoolPollMs] the follower's poll (default its own, 2000)
 * @param {number} [opts.mempoolMaxBytes] what its held transactions may take (default its own, 300 MB)
 * @param {import('../ops/metrics').Metrics} [opts.metrics]
 * @param {import('pino').Logger} opts.logger
 * @param {(line: string) => void} opts.say
 * @param {NodeJS.ProcessEnv} [opts.env]
 * @returns {Promise<{stop: () => Promise<void>}>} stop: ends both, the store stays open
 */
async function followNode({ store, node, blocksDir, network, mempoolPollMs, mempoolMaxBytes, metrics = null, logger, say, env = process.env }) {
  const { SyncService } = require('../sync/service');
  const { followMempool } = require('../mempool/run');
  const { syncLog } = require('../ops/sync-log');
  const controller = new AbortController();
  const source = openSource({
    network, blocksDir, rpcUrl: node.rpcUrl, rpcCookie: node.rpcCookie, rpcHost: node.rpcHost, retryMs: node.retryMs,
    env, signal: controller.signal, log: say,
  });
  try {
    await source.scan();
  } catch (err) {
    await source.close();
    throw err;
  }
  if (metrics) for (const key of ['mempoolFollowerTxs', 'mempoolFollowerBytes', 'mempoolFollowerPoll', 'mempoolEvicted', 'mempoolTxs', 'mempoolVsize']) metrics.ensure(key);
  const log = syncLog(logger);
  let failed = null;
  const fail = (what, err) => {
    if (failed || controller.signal.aborted) return;
    failed = err;
    // serve goes on with what the index holds; /ready reports the lag once the node moves on
    say(`the ${what} stopped: ${err.message}${err.code ? ` [${err.code}]` : ''}; serving the index as it is`);
    logger.error({ code: err.code, err: err.message }, `${what} stopped`);
    controller.abort();
  };
  const mempool = followMempool({
    store, client: source.client, network, pollMs: mempoolPollMs, maxBytes: mempoolMaxBytes, metrics, logger, say,
    onFatal: (err) => fail('mempool follower', err),
  });
  const sync = new SyncService({
    beforeReorgCommit: () => mempool.beforeReorgCommit(),
    onBlock: (hash, raw) => mempool.onBlock(hash, raw),
    source, store, network,
    onProgress: (p) => {
      log.update(p);
      mempool.update(p);
    },
  });
  const running = sync.run({ follow: true, signal: controller.signal }).catch((err) => {
    if (err.code !== 'ERR_ABORTED') fail('block sync', err);
  });
  say(`following ${source.nodeUrl || 'the node'}: new blocks and the mempool are written into the index by this process`);
  return {
    async stop() {
      controller.abort();
      await running;
      await mempool.stop().catch(() => {});
      await source.close();
    },
  };
}

module.exports = { followNode };
