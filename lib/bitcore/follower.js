'use strict';

const { UsageError } = require('../errors');
const { openStore } = require('../stores');
const { openSource } = require('../sources/open');

/**
 * `follow: true`: the service keeps its index itself, in its own process, as
 * `addrindex sync --follow` would beside it: the index is opened for writing (created when
 * empty), its block source is the config's `blocksDir` and/or the node at `rpcUrl` /
 * `rpcCookie` (the same source `addrindex sync` builds, lib/sources/open.js), and a SyncService
 * follows it until the service stops. The readers of the service (address and chain methods,
 * the tip watcher, the REST API) read the same store. With a node, its mempool is kept in the
 * index's snapshot too, by the mempool follower as `sync --follow` runs it (lib/mempool/run.js:
 * started once the blocks have caught up, woken by each new tip; `mempoolPollMs`, 0 for none).
 *
 * @param {object} opts
 * @param {object} opts.config servicesConfig.bitcoind
 * @param {import('../chain/networks').Network} opts.network
 * @param {(p: string) => string} opts.resolve a config path, relative to the config's directory
 * @param {(line: string) => void} opts.log the node's retries and the follower's failure
 * @param {(err: Error) => void} opts.onError a follower that stopped on an error (the index stays at its last commit)
 * @param {(err: Error) => void} [opts.onMempoolError] the mempool follower stopped on an error (the
 *   blocks are still followed; the snapshot stays as last written)
 * @returns {Promise<{store: import('../stores/abstract').AbstractStore, wake: () => void, stop: () => Promise<void>}>}
 *   wake: polls the node's mempool now (a transaction was sent through the service)
 */
async function startFollower({ config: o, network, resolve, log, onError, onMempoolError = onError }) {
  if (!o.blocksDir && !o.rpcUrl && !o.rpcCookie) {
    throw new UsageError('ERR_BITCORE_CONFIG', 'servicesConfig.bitcoind.follow needs a block source: "blocksDir", or a node ("rpcUrl" or "rpcCookie")');
  }
  const controller = new AbortController();
  const blocksDir = o.blocksDir ? resolve(o.blocksDir) : undefined;
  const source = openSource({
    blocksDir, rpcUrl: o.rpcUrl, rpcCookie: o.rpcCookie ? resolve(o.rpcCookie) : undefined, rpcHost: o.rpcHost,
    network, env: {}, signal: controller.signal, log,
  });
  let store = null;
  try {
    await source.scan();
    store = await openStore({
      store: o.store || 'lmdb', datadir: o.datadir ? resolve(o.datadir) : undefined, mongodbUrl: o.mongodbUrl,
      network: network.name, readOnly: false, undoDepth: o.undoDepth,
    });
    // as `addrindex sync` records it: where blocks and transactions are read later
    const info = {};
    if (blocksDir) info.blocksDir = blocksDir;
    if (source.nodeUrl) info.node = source.nodeUrl;
    await store.putSourceInfo(info);
  } catch (err) {
    await source.close();
    if (store) await store.close();
    throw err;
  }
  let mempool = null;
  if (source.client && o.mempoolPollMs !== 0) {
    const { followMempool } = require('../mempool/run');
    mempool = followMempool({ store, client: source.client, network, pollMs: o.mempoolPollMs, say: log, onFatal: onMempoolError });
  }
  const { SyncService } = require('../sync/service');
  const sync = new SyncService({
    source, store, network, threads: o.threads, pollMs: o.followPollMs, onProgress: mempool ? (p) => mempool.update(p) : undefined,
    beforeReorgCommit: mempool ? () => mempool.beforeReorgCommit() : undefined,
    onBlock: mempool ? (hash, raw) => mempool.onBlock(hash, raw) : undefined,
  });
  const running = sync.run({ follow: true, signal: controller.signal }).catch((err) => {
    if (!controller.signal.aborted) onError(err);
  });
  return {
    store,
    wake: () => { if (mempool) mempool.follower.wake(); },
    stop: async () => {
      controller.abort();
      await running;
      // its error was reported when it stopped
      if (mempool) await mempool.stop().catch(() => {});
      await source.close();
    },
  };
}

module.exports = { startFollower };
