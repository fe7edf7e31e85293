'use strict';

const fs = require('node:fs');
const { createReader } = require('../electrum/reader');
const { ElectrumApp, ElectrumServer } = require('../electrum/server');

/**
 * The Electrum server of one `addrindex serve` worker, on the ports every worker shares
 * (node:cluster hands each accepted connection to one worker, as for HTTP). Each worker
 * watches the index's tip and mempool snapshot itself and notifies its own connections: no
 * message between processes is needed, since each one reads the same committed index.
 * @param {object} config the worker's configuration (config.electrum from lib/cli/serve.js,
 *   its blocksDir resolved by the primary: null when there is none to read)
 * @param {import('../stores/abstract').AbstractStore} store
 * @param {(msg: string) => void} log
 * @param {import('../node/serve-node').ServeNode|null} [node] the node behind the server: blocks the
 *   blocks dir does not hold, broadcasts, fee estimates
 * @param {import('../mempool/reader').MempoolReader|null} [mempoolReader] the worker's REST app's,
 *   so that each snapshot is decoded once per worker
 * @returns {Promise<{addresses: {tcp: object|null, tls: object|null}, close: () => Promise<void>}>}
 */
async function startElectrum(config, store, log, node = null, mempoolReader = null) {
  const e = config.electrum;
  const reader = createReader({
    store, network: config.network, blocksDir: e.blocksDir, indexKeepsBlocks: Boolean(e.indexKeepsBlocks),
    fetchFromNode: node && ((hash) => node.block(hash)), mempoolReader,
  });
  let server = null;
  try {
    const app = new ElectrumApp({ reader, network: config.network, node, limits: { maxHistory: e.maxHistory, pollMs: e.pollMs }, log });
    await app.start();
    server = new ElectrumServer(app, {
      host: config.host,
      port: e.port,
      tlsPort: e.tlsPort,
      tlsCert: e.tlsPort === null ? undefined : fs.readFileSync(e.tlsCert),
      tlsKey: e.tlsPort === null ? undefined : fs.readFileSync(e.tlsKey),
    });
    const addresses = await server.listen();
    return {
      addresses,
      close: async () => {
        await server.close();
        await reader.close();
      },
    };
  } catch (err) {
    if (server) await server.close().catch(() => {});
    await reader.close();
    throw err;
  }
}

module.exports = { startElectrum };
