'use strict';

const { UsageError } = require('../errors');

/**
 * How the workers of `addrindex serve` read each store.
 *
 *   lmdb   direct   every worker opens the environment read-only beside the writer (the
 *                   `addrindex sync` process). A read sees the snapshot of its event turn;
 *                   no read transaction outlives a request, so the writer can reuse pages.
 *   mongo  direct   every worker has its own connection pool.
 *   level  forward  LevelDB admits one process: the primary opens it and answers the
 *                   workers' reads over IPC (lib/cluster/forward.js).
 */
const STRATEGY = Object.freeze({ lmdb: 'direct', mongo: 'direct', level: 'forward' });

/**
 * @param {string} kind
 * @returns {'direct'|'forward'}
 * @throws {UsageError} an unknown store
 */
function readStrategy(kind) {
  if (!STRATEGY[kind]) {
    throw new UsageError('ERR_USAGE', `unknown store "${kind}": expected one of ${Object.keys(STRATEGY).join(', ')}`);
  }
  return STRATEGY[kind];
}

/**
 * Opens a store for reading, as a worker (direct strategy) or the primary (preflight and
 * forward strategy) does.
 * @param {{store: string, datadir?: string, network?: string, mongodbUrl?: string, readOnly?: boolean}} config
 * @returns {Promise<import('../stores/abstract').AbstractStore>}
 */
async function openReadStore(config) {
  const { openStore } = require('../stores');
  const open = (network) => openStore({
    store: config.store,
    datadir: config.datadir,
    network,
    url: config.mongodbUrl,
    readOnly: config.readOnly !== false,
  });
  if (config.network) return open(config.network);
  // No network given: the index's meta row decides (a store opened for another network
  // refuses and names the one it holds).
  try {
    return await open('main');
  } catch (err) {
    if (err.code === 'ERR_WRONG_NETWORK' && err.details && err.details.found) return open(err.details.found);
    throw err;
  }
}

module.exports = { STRATEGY, readStrategy, openReadStore };
