'use strict';

const { UsageError } = require('../errors');

/** Backends by --store name; each module is loaded only when chosen. */
const STORES = {
  lmdb: () => require('./lmdb').LmdbStore,
  level: () => require('./level').LevelStore,
  mongo: () => require('./mongo').MongoStore,
};

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
  const make = Object.prototype.hasOwnProperty.call(STORES, store) ? STORES[store] : null;
  if (!make) {
    throw new UsageError('ERR_UNKNOWN_STORE', `unknown store "${store}": expected one of ${Object.keys(STORES).join(', ')}`);
  }
  const Store = make();
  const s = new Store({ datadir, network, undoDepth, readOnly, ...rest });
  await s.open();
  return s;
}

module.exports = { openStore };
