'use strict';

/**
 * addrindex as a library: what an embedder (the bitcore-node plugin, a wallet backend, a
 * script) needs to open an index, fill it from a block source, and serve it. Types:
 * index.d.ts at the package root. Backends and sources load only when used.
 *
 *   const addrindex = require('addrindex');
 *   const store = await addrindex.openStore({ datadir: './idx', network: 'main', readOnly: false });
 *   const source = new addrindex.BlocksDirSource({ dir: '/data/bitcoin/blocks', network: 'main' });
 *   // or a node over JSON-RPC (Bitcoin Core, btcd):
 *   //   const client = addrindex.NodeClient.fromEndpoint(addrindex.resolveEndpoint({ rpcUrl: 'http://u:p@127.0.0.1:8332', network: 'main' }));
 *   //   const source = new addrindex.NodeSource({ client, network: 'main' });
 *   await new addrindex.SyncService({ source, store, network: 'main' }).run();
 *   const { scripthash } = addrindex.parseTarget('1Q2TWHE3GMdB6BZKafqwxXtWAWgFt5Jvm3', 'main');
 *   console.log(await store.getSummary(scripthash));
 *
 * With a node, also: a MempoolFollower keeping the index's mempool snapshot at the node's
 * mempool, and a FeeEstimator for its fee rates.
 */

const errors = require('./errors');
const { openStore, openIndex, STORE_NAMES } = require('./stores');
const { AbstractStore, READ_METHODS, WRITE_METHODS } = require('./stores/abstract');
const { getNetwork, NETWORKS } = require('./chain/networks');
const { parseTarget, encodeAddress, decodeAddress } = require('./chain/address');
const { toDisplayHex, fromDisplayHex } = require('./chain/hash');

const lazy = {
  LmdbStore: () => require('./stores/lmdb').LmdbStore,
  LevelStore: () => require('./stores/level').LevelStore,
  MongoStore: () => require('./stores/mongo').MongoStore,
  SyncService: () => require('./sync/service').SyncService,
  BlocksDirSource: () => require('./sources/blocksdir').BlocksDirSource,
  NodeSource: () => require('./sources/node').NodeSource,
  CombinedSource: () => require('./sources/combined').CombinedSource,
  NodeClient: () => require('./node/client').NodeClient,
  resolveEndpoint: () => require('./node/endpoint').resolveEndpoint,
  openFile: () => require('./sources/rawfile').openFile,
  openSource: () => require('./sources/open').openSource,
  ApiApp: () => require('./api/server').ApiApp,
  createServer: () => require('./api/server').createServer,
  closeGracefully: () => require('./api/server').closeGracefully,
  FeeEstimator: () => require('./node/fees').FeeEstimator,
  MempoolFollower: () => require('./mempool/follower').MempoolFollower,
};

module.exports = {
  openStore,
  openIndex,
  STORE_NAMES,
  AbstractStore,
  READ_METHODS,
  WRITE_METHODS,
  getNetwork,
  NETWORKS,
  parseTarget,
  encodeAddress,
  decodeAddress,
  toDisplayHex,
  fromDisplayHex,
  errors,
  ...errors,
};
for (const [name, load] of Object.entries(lazy)) {
  Object.defineProperty(module.exports, name, { enumerable: true, get: load });
}
