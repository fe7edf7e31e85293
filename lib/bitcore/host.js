'use strict';

const path = require('node:path');
const { createRequire } = require('node:module');
const { UsageError } = require('../errors');
const { getNetwork } = require('../chain/networks');

/**
 * What the plugin takes from the bitcore-node process that loads it: that host's own
 * bitcore-lib (a peer dependency) and its network.
 *
 * bitcore-lib 0.13 refuses to be loaded twice in one process, and the objects the service
 * hands out (getBlock, getTransaction) must be instances of the copy insight-api and
 * bitcore-node test against. So the library is resolved from where the host's bitcore-node
 * lives, never from addrindex's own dependencies (its devDependency bitcore-lib 11 must not
 * meet 0.13). It is required here only, and only when a service is constructed.
 */

/**
 * The file a loaded module's exports came from, looked up in the require cache.
 * @param {Function} exported
 * @returns {string|null}
 */
function moduleFileOf(exported) {
  for (const m of Object.values(require.cache)) {
    if (m && m.exports === exported) return m.filename;
  }
  return null;
}

/**
 * The host's bitcore-lib: resolved from the module that defines the node (bitcore-node's
 * lib/node.js), else from `from` (a directory such as the bitcore-node.json's).
 * @param {object} node the bitcore-node Node the service belongs to
 * @param {string} [from] fallback directory to resolve from
 * @returns {object} the bitcore-lib module
 * @throws {UsageError} ERR_NO_BITCORE_LIB
 */
function hostBitcore(node, from) {
  const bases = [];
  const nodeFile = node && typeof node.constructor === 'function' ? moduleFileOf(node.constructor) : null;
  if (nodeFile) bases.push(nodeFile);
  if (from) bases.push(path.join(from, 'noop.js'));
  for (const base of bases) {
    try {
      const lib = createRequire(base)('bitcore-lib');
      if (lib && lib.Block && lib.Transaction && lib.Address && lib.util && lib.util.preconditions) return lib;
    } catch (err) {
      if (err.code !== 'MODULE_NOT_FOUND') throw err;
    }
  }
  throw new UsageError('ERR_NO_BITCORE_LIB',
    'the bitcore-node host has no bitcore-lib the plugin can load (it resolves bitcore-lib from the host\'s ' +
    `bitcore-node${from ? ` or from ${from}` : ''}): install bitcore-node and its bitcore-lib ^0.13 beside addrindex`);
}

const BITCORE_NAMES = { livenet: 'main', mainnet: 'main', testnet: 'testnet', regtest: 'regtest' };

/**
 * The addrindex network of a bitcore-node Node: 'livenet' is main, 'testnet' testnet3,
 * 'regtest' regtest. A network named in the service's own config must agree with it.
 * @param {object} node
 * @param {string} [configured] servicesConfig.bitcoind.network
 * @returns {import('../chain/networks').Network}
 */
function networkOf(node, configured) {
  const hostName = node && typeof node.getNetworkName === 'function' ? node.getNetworkName() : null;
  const fromHost = hostName ? BITCORE_NAMES[hostName] : null;
  if (hostName && !fromHost) {
    throw new UsageError('ERR_UNKNOWN_NETWORK', `bitcore-node network "${hostName}" has no addrindex counterpart`);
  }
  const net = configured ? getNetwork(configured) : getNetwork(fromHost || 'main');
  if (fromHost && net.name !== fromHost) {
    throw new UsageError('ERR_WRONG_NETWORK',
      `servicesConfig.bitcoind.network is "${configured}" (${net.name}) but the node runs on ${hostName}`);
  }
  return net;
}

module.exports = { hostBitcore, networkOf, moduleFileOf };
