'use strict';

const { UsageError } = require('../errors');
const { getNetwork } = require('../chain/networks');

/** Backends by --store name; each module is loaded only when chosen. */
const STORES = {
  lmdb: () => require('./lmdb').LmdbStore,
  level: () => require('./level').LevelStore,
  mongo: () => require('./mongo').MongoStore,
};

/**
 * The backend class of a --store name (its module loaded now).
 * @param {string} [store='lmdb']
 * @returns {typeof import('./abstract').AbstractStore}
 */
function storeClass(store = 'lmdb') {
  const make = Object.prototype.hasOwnProperty.call(STORES, store) ? STORES[store] : null;
  if (!make) {
    throw new UsageError('ERR_UNKNOWN_STORE', `unknown store "${store}": expected one of ${Object.keys(STORES).join(', ')}`);
  }
  return make();
}

/**
 * Opens an index.
 * @param {object} opts
 * @param {string} [opts.store='lmdb']
 * @param {string} opts.datadir
 * @param {string|object} opts.network
 * @param {number} [opts.undoDepth=100]
 * @param {boolean} [opts.readOnly=false]
 * @returns {Promise<import('./abstract').AbstractStore>} opened
 */
async function openStore({ store = 'lmdb', datadir, network, undoDepth = 100, readOnly = false, ...rest } = {}) {
  const Store = storeClass(store);
  const s = new Store({ datadir, network, undoDepth, readOnly, ...rest });
  await s.open();
  return s;
}

/**
 * Opens an existing index (read-only unless asked) on the network its own meta record names,
 * so a reader need not know it. With `network` given, an index of another network is refused
 * (StoreError ERR_WRONG_NETWORK).
 * @param {{store?: string, datadir?: string, mongodbUrl?: string, retryTimeoutMs?: number, network?: string,
 *   undoDepth?: number, readOnly?: boolean, txstore?: boolean, prefetch?: string, mapRoom?: number}} opts
 *   (`prefetch`, `mapRoom`: LMDB's, lmdb.js)
 * @returns {Promise<import('./abstract').AbstractStore>}
 */
async function openIndex({ store = 'lmdb', datadir, mongodbUrl, retryTimeoutMs, network, undoDepth, readOnly = true, txstore, prefetch, mapRoom } = {}) {
  const extra = {};
  if (store === 'lmdb' && prefetch !== undefined) extra.prefetch = prefetch;
  if (store === 'lmdb' && mapRoom !== undefined) extra.mapRoom = mapRoom;
  const open = (net) => openStore({ store, datadir, url: mongodbUrl, retryTimeoutMs, network: net, undoDepth, readOnly, txstore, ...extra });
  if (network) return open(getNetwork(network).name);
  // the store checks the meta record on open and names the network it found when it is not
  // the one asked for
  try {
    return await open('main');
  } catch (err) {
    if (err.code === 'ERR_WRONG_NETWORK' && err.details && err.details.found) return open(err.details.found);
    throw err;
  }
}

module.exports = { openStore, openIndex, storeClass, STORE_NAMES: Object.freeze(Object.keys(STORES)) };
