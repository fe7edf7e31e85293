'use strict';

const { UsageError } = require('../errors');
const { getNetwork } = require('../chain/networks');

/**
 * What the index commands share: integer options, and opening a datadir whose network is
 * written in its own meta row — so status, verify and query need no --network, and a
 * --network that disagrees with the datadir is an error rather than a silent misreading.
 */

/**
 * Reads an integer option.
 * @param {object} values parsed options
 * @param {string} name
 * @param {number} min
 * @returns {number|undefined} undefined when the option is absent
 */
function intOption(values, name, min) {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(String(raw).trim()) || !Number.isSafeInteger(n) || n < min) {
    throw new UsageError('ERR_USAGE', `--${name} must be a whole number >= ${min}, got "${raw}"`);
  }
  return n;
}

/**
 * Opens a datadir's index (read-only unless asked), on the network its meta row names. With
 * `network` given, a datadir of another network is refused (StoreError ERR_WRONG_NETWORK).
 * @param {{datadir: string, store?: string, network?: string, undoDepth?: number, readOnly?: boolean}} opts
 * @returns {Promise<import('../stores/abstract').AbstractStore>}
 */
async function openIndex({ datadir, store = 'lmdb', network, undoDepth, readOnly = true }) {
  const { openStore } = require('../stores');
  const open = (net) => openStore({ store, datadir, network: net, undoDepth, readOnly });
  if (network) return open(getNetwork(network).name);
  // No network asked for: the meta row decides. The store checks the meta row on open and
  // names the network it found when it is not the one asked for.
  try {
    return await open('main');
  } catch (err) {
    if (err.code === 'ERR_WRONG_NETWORK' && err.details && err.details.found) return open(err.details.found);
    throw err;
  }
}

/**
 * The network a sync should use: the datadir's own when it holds an index (and --network,
 * if given, must agree), else --network, else main. Reads only; creates nothing.
 * @param {string} datadir
 * @param {string|undefined} networkArg
 * @param {string} store
 * @returns {Promise<import('../chain/networks').Network>}
 */
async function resolveNetwork(datadir, networkArg, store) {
  const asked = networkArg ? getNetwork(networkArg) : null;
  let existing;
  try {
    existing = await openIndex({ datadir, store, network: asked && asked.name, readOnly: true });
  } catch (err) {
    if (err.code === 'ERR_NO_INDEX') return asked || getNetwork('main');
    throw err;
  }
  try {
    return getNetwork(existing.network);
  } finally {
    await existing.close();
  }
}

/**
 * Opens the index named by the command's options read-only, runs `fn`, closes it.
 * @template T
 * @param {{datadir: string, store?: string, network?: string}} values
 * @param {(store: import('../stores/abstract').AbstractStore, network: import('../chain/networks').Network) => Promise<T>} fn
 * @returns {Promise<T>}
 */
async function withIndex(values, fn) {
  const store = await openIndex({ datadir: values.datadir, store: values.store, network: values.network, readOnly: true });
  try {
    return await fn(store, getNetwork(store.network));
  } finally {
    await store.close();
  }
}

module.exports = { intOption, openIndex, resolveNetwork, withIndex };
