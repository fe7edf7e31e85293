'use strict';

const { UsageError } = require('../errors');
const { getNetwork } = require('../chain/networks');
const { openIndex } = require('../stores');

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

/** Where `--store mongo` looks without --mongodb-url. */
const DEFAULT_MONGODB_URL = 'mongodb://127.0.0.1:27017/addrindex';

/** The options naming an index, as every index command takes them (parseArgs spec). */
const storeOptions = {
  datadir: { type: 'string' },
  network: { type: 'string', short: 'n' },
  store: { type: 'string', default: 'lmdb' },
  'mongodb-url': { type: 'string' },
  'mongodb-retry-s': { type: 'string' },
};

/** Their usage lines, for the commands that read an existing index. */
const storeUsage = `  --datadir DIR        the index (its network is read from it)
  --network NET        optional; must match the datadir's
  --store NAME         index backend: lmdb (default) | level | mongo
  --mongodb-url URL    --store mongo: the server and database (default ${DEFAULT_MONGODB_URL})
  --mongodb-retry-s N  --store mongo: how long a lost server is waited for before ERR_DB_UNAVAILABLE (default 30)
`;

/**
 * The index a command's options name: a datadir for the stores that live in one, a MongoDB
 * connection string (--mongodb-url, database from its path) for --store mongo.
 * @param {object} values parsed options
 * @param {string} command for the usage messages
 * @returns {{store: string, datadir?: string, mongodbUrl?: string, retryTimeoutMs?: number}}
 */
function indexLocation(values, command) {
  const store = values.store || 'lmdb';
  const url = values['mongodb-url'];
  if (store === 'mongo') {
    const retry = intOption(values, 'mongodb-retry-s', 0);
    return { store, mongodbUrl: url || DEFAULT_MONGODB_URL, ...(retry === undefined ? {} : { retryTimeoutMs: retry * 1000 }) };
  }
  if (values['mongodb-retry-s'] !== undefined) throw new UsageError('ERR_USAGE', `--mongodb-retry-s goes with --store mongo (see "addrindex ${command} --help")`);
  if (url !== undefined) throw new UsageError('ERR_USAGE', `--mongodb-url goes with --store mongo (see "addrindex ${command} --help")`);
  if (!values.datadir) throw new UsageError('ERR_USAGE', `${command} needs --datadir (see "addrindex ${command} --help")`);
  return { store, datadir: values.datadir };
}

/**
 * The network a sync should use: the index's own when it holds one (and --network, if given,
 * must agree), else --network, else main. Reads only; creates nothing.
 * @param {ReturnType<typeof indexLocation>} location
 * @param {string|undefined} networkArg
 * @returns {Promise<import('../chain/networks').Network>}
 */
async function resolveNetwork(location, networkArg) {
  const asked = networkArg ? getNetwork(networkArg) : null;
  let existing;
  try {
    existing = await openIndex({ ...location, network: asked && asked.name, readOnly: true });
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
 * @param {object} values parsed options (--datadir, --store, --mongodb-url, --network)
 * @param {string} command
 * @param {(store: import('../stores/abstract').AbstractStore, network: import('../chain/networks').Network) => Promise<T>} fn
 * @returns {Promise<T>}
 */
async function withIndex(values, command, fn) {
  const store = await openIndex({ ...indexLocation(values, command), network: values.network, readOnly: true });
  try {
    return await fn(store, getNetwork(store.network));
  } finally {
    await store.close();
  }
}

module.exports = { intOption, indexLocation, resolveNetwork, withIndex, storeOptions, storeUsage, DEFAULT_MONGODB_URL };
