'use strict';

const { UsageError } = require('../errors');
const { openIndex } = require('../stores');

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
  // the index's meta record decides the network when none is given
  return openIndex({
    store: config.store,
    datadir: config.datadir,
    network: config.network,
    mongodbUrl: config.mongodbUrl,
    readOnly: config.readOnly !== false,
  });
}

module.exports = { readStrategy, openReadStore };
