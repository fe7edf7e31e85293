'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { createRequire } = require('node:module');
const { UsageError } = require('../errors');
const { BitcoindService } = require('./service');

/**
 * Starts a bitcore-node 3 Node from a bitcore-node.json, in code: bitcore-node's own CLI
 * (and its root module, which requires zmq) does not run on Node 20, but its Node, Service
 * and web service do. Services are found as bitcore-node finds them, from the config's
 * directory and its node_modules (a `bitcore-node create` project); `bitcoind` is addrindex's
 * BitcoindService.
 */

/**
 * Reads and checks a bitcore-node.json.
 * @param {string} file
 * @returns {{path: string, dir: string, config: {network?: string, port?: number, services: string[], servicesConfig: object}}}
 * @throws {UsageError} ERR_BITCORE_CONFIG
 */
function loadConfig(file) {
  const abs = path.resolve(file);
  let text;
  try {
    text = fs.readFileSync(abs, 'utf8');
  } catch (err) {
    throw new UsageError('ERR_BITCORE_CONFIG', `cannot read ${abs}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`);
  }
  let config;
  try {
    config = JSON.parse(text);
  } catch (err) {
    throw new UsageError('ERR_BITCORE_CONFIG', `${abs} is not JSON: ${err.message}`);
  }
  const bad = (why) => new UsageError('ERR_BITCORE_CONFIG', `${abs}: ${why}`);
  if (!config || typeof config !== 'object' || Array.isArray(config)) throw bad('expected an object');
  if (!Array.isArray(config.services) || !config.services.every((s) => typeof s === 'string' && s)) {
    throw bad('"services" must be an array of service names, e.g. ["bitcoind", "web", "insight-api"]');
  }
  if (!config.services.includes('bitcoind')) throw bad('"services" has no "bitcoind": addrindex is the bitcoind service');
  if (config.network !== undefined && !['livenet', 'testnet', 'regtest'].includes(config.network)) {
    throw bad(`"network" is "${config.network}"; bitcore-node knows livenet, testnet and regtest`);
  }
  if (config.port !== undefined && !(Number.isInteger(config.port) && config.port > 0 && config.port < 65536)) {
    throw bad(`"port" must be a TCP port (1-65535), got ${JSON.stringify(config.port)}`);
  }
  if (config.servicesConfig !== undefined && (typeof config.servicesConfig !== 'object' || config.servicesConfig === null)) {
    throw bad('"servicesConfig" must be an object');
  }
  return { path: abs, dir: path.dirname(abs), config: { ...config, servicesConfig: config.servicesConfig || {} } };
}

/**
 * bitcore-node's Node constructor and its web service, from the config's directory.
 * @param {string} dir
 */
function loadBitcoreNode(dir) {
  const req = createRequire(path.join(dir, 'noop.js'));
  try {
    return { Node: req('bitcore-node/lib/node'), req, servicesDir: path.dirname(req.resolve('bitcore-node/lib/services/web')) };
  } catch (err) {
    if (err.code !== 'MODULE_NOT_FOUND') throw err;
    throw new UsageError('ERR_NO_BITCORE_NODE',
      `no bitcore-node in ${dir} or above it: install it there (npm install bitcore-node@3 --ignore-scripts) with the services the config names`);
  }
}

/**
 * bitcore-node's setupServices: each service's module, `bitcoind` being addrindex's.
 * Others are bitcore-node's built-in ones (web), else a package whose package.json may
 * name the file in `bitcoreNode`.
 * @returns {Array<{name: string, module: Function, config: object}>}
 */
function setupServices(config, { req, servicesDir }) {
  return config.services.map((name) => {
    let module;
    if (name === 'bitcoind') {
      module = BitcoindService;
    } else if (fs.existsSync(path.join(servicesDir, `${name}.js`))) {
      module = req(path.join(servicesDir, name));
    } else {
      let pkg;
      try {
        pkg = req(`${name}/package.json`);
      } catch (err) {
        if (err.code !== 'MODULE_NOT_FOUND') throw err;
        throw new UsageError('ERR_BITCORE_CONFIG', `service "${name}" is not installed beside the config (npm install ${name})`);
      }
      module = req(pkg.bitcoreNode ? `${name}/${pkg.bitcoreNode}` : name);
    }
    if (!module || !module.prototype || !module.dependencies || !module.prototype.start || !module.prototype.stop) {
      throw new UsageError('ERR_BITCORE_CONFIG', `could not load service "${name}": it does not support the methods and properties a service needs`);
    }
    const own = config.servicesConfig[name];
    return { name, module, config: own ? { ...own } : {} };
  });
}

/**
 * Builds the Node, starts every service in dependency order and waits for the web service to
 * listen; when a service fails to start or the port cannot be had, the services started are
 * stopped again before the error is thrown.
 * @param {ReturnType<typeof loadConfig>} loaded
 * @returns {Promise<{node: object, url: string|null}>} the started Node and the web service's URL
 */
async function startNode(loaded) {
  const host = loadBitcoreNode(loaded.dir);
  const services = setupServices(loaded.config, host);
  const node = new host.Node({ ...loaded.config, path: loaded.path, services });
  node.log.debug = () => {}; // as bitcore-node's own start does
  node.on('error', (err) => node.log.error(err));
  // bitcore-node's web service starts listening when the node is ready and reports nothing: a
  // taken port would crash the process. This handler runs before the web service's own.
  let listening = Promise.resolve(null);
  node.once('ready', () => { listening = webListening(node); });
  try {
    await new Promise((resolve, reject) => node.start((err) => (err ? reject(err) : resolve())));
    return { node, url: await listening };
  } catch (err) {
    await stopNode(node).catch(() => {}); // the services started so far, the failing one too
    throw err;
  }
}

/**
 * @returns {Promise<string|null>} the web service's URL once it listens, null without one
 */
function webListening(node) {
  const web = node.services.web;
  if (!web || !web.server) return Promise.resolve(null);
  // it listens on every interface: the URL names the loopback one
  const url = () => {
    const a = web.server.address();
    const any = a.address === '::' || a.address === '0.0.0.0';
    return `${web.https ? 'https' : 'http'}://${any ? '127.0.0.1' : a.address}:${a.port}${any ? ' (all interfaces)' : ''}`;
  };
  return new Promise((resolve, reject) => {
    web.server.once('listening', () => resolve(url()));
    web.server.once('error', (err) => reject(new UsageError('ERR_LISTEN', `the web service cannot listen on port ${web.port}: ${err.message}`)));
  });
}

/**
 * Stops every started service, in reverse order.
 * @param {object} node
 * @returns {Promise<void>}
 */
function stopNode(node) {
  return new Promise((resolve, reject) => node.stop((err) => (err ? reject(err) : resolve())));
}

module.exports = { loadConfig, loadBitcoreNode, setupServices, startNode, stopNode };
