'use strict';

/**
 * Shared by the Electrum tests: an Electrum server in this process over a synced fixture
 * index (raw transactions read from a blocks dir through lib/sources' BlockReader), and a raw
 * line client for what a well-behaved client library never sends.
 */

const net = require('node:net');
const crypto = require('node:crypto');
const ElectrumClient = require('@mempool/electrum-client');
const { toDisplayHex } = require('../../lib/chain/hash');

/**
 * @param {string} datadir an LMDB index
 * @param {object} [opts]
 * @param {string|null} [opts.blocksDir] where raw transactions are read (serve's --blocks-dir);
 *   default: the blocks dir the index records (none for an in-process sync)
 * @param {object} [opts.limits] overrides of lib/electrum/limits.js
 * @param {{cert: Buffer, key: Buffer}} [opts.tls] also listen with TLS
 */
async function startElectrum(datadir, { blocksDir = null, network = 'main', limits = {}, tls = null } = {}) {
  const { openStore } = require('../../lib/stores');
  const { createReader } = require('../../lib/electrum/reader');
  const { blocksDirOf } = require('../../lib/api/txdata');
  const { ElectrumApp, ElectrumServer } = require('../../lib/electrum/server');
  const store = await openStore({ store: 'lmdb', datadir, network, readOnly: true });
  const bodies = await blocksDirOf(store, blocksDir);
  const reader = createReader({ store, network, blocksDir: bodies.readable ? bodies.dir : null });
  const logs = [];
  const app = new ElectrumApp({ reader, network, limits, log: (m) => logs.push(m) });
  await app.start();
  const server = new ElectrumServer(app, { host: '127.0.0.1', port: 0, tlsPort: tls ? 0 : null, tlsCert: tls && tls.cert, tlsKey: tls && tls.key });
  const addr = await server.listen();
  return {
    app, server, reader, store, logs, port: addr.tcp.port, tlsPort: addr.tls && addr.tls.port,
    close: async () => {
      await server.close();
      await reader.close();
      await store.close();
    },
  };
}

/** A connected @mempool/electrum-client (no reconnects, no console logging). */
async function connectClient(port, protocol = 'tcp') {
  const client = new ElectrumClient(port, '127.0.0.1', protocol, undefined, { onLog: () => {}, onError: () => {} });
  // no reconnecting when the server closes the connection (the tests close servers on purpose)
  client.persistencePolicy = { retryPeriod: 1, maxRetry: 0, callback: () => {} };
  await client.connect();
  return client;
}

/**
 * The raw protocol: send any bytes, read answers line by line.
 * @returns {Promise<{socket: net.Socket, send: (s: string|Buffer) => void, next: () => Promise<any>,
 *   call: (method: string, params?: any) => Promise<any>, closed: Promise<void>}>}
 */
function rawClient(port) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const lines = [];
    const waiting = [];
    let buf = '';
    let id = 0;
    const closed = new Promise((r) => socket.on('close', r));
    socket.on('data', (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf('\n')) !== -1) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        const msg = JSON.parse(line);
        if (waiting.length) waiting.shift().resolve(msg);
        else lines.push(msg);
      }
    });
    socket.on('close', () => {
      for (const w of waiting.splice(0)) w.reject(new Error('connection closed'));
    });
    socket.on('error', () => {});
    socket.once('connect', () => {
      const api = {
        socket,
        closed,
        send: (s) => socket.write(s),
        next: () => (lines.length ? Promise.resolve(lines.shift())
          : new Promise((res, rej) => (socket.destroyed ? rej(new Error('connection closed')) : waiting.push({ resolve: res, reject: rej })))),
        call: (method, params = []) => {
          socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params })}\n`);
          return api.next();
        },
      };
      resolve(api);
    });
    socket.once('error', reject);
  });
}

/** Electrum script hash (display hex) of an output script. */
function scripthashOf(script) {
  return toDisplayHex(crypto.createHash('sha256').update(script).digest());
}

/** A script hash in the tests' internal-order hex (the references' keys) as Electrum shows it. */
function toElectrum(hex) {
  return Buffer.from(hex, 'hex').reverse().toString('hex');
}

/** The status a client computes from a history: sha256 of "txid:height:" in order. */
function expectedStatus(history) {
  if (history.length === 0) return null;
  return crypto.createHash('sha256').update(history.map((e) => `${e.txid}:${e.height}:`).join('')).digest('hex');
}

const sha256d = (b) => crypto.createHash('sha256').update(crypto.createHash('sha256').update(b).digest()).digest();
const rev = (hex) => Buffer.from(hex, 'hex').reverse();

/** The root a merkle branch leads to from a leaf (all display hex), as a client checks it. */
function rootOf(leafHex, pos, branchHex) {
  let h = rev(leafHex);
  for (const sibHex of branchHex) {
    const sib = rev(sibHex);
    h = sha256d(Buffer.concat(pos & 1 ? [sib, h] : [h, sib]));
    pos >>= 1;
  }
  return Buffer.from(h).reverse().toString('hex');
}

/** Bitcoin's merkle root over display-hex hashes, written out here for the check. */
function plainMerkleRoot(hashesHex) {
  let level = hashesHex.map(rev);
  while (level.length > 1) {
    const next = [];
    for (let i = 0; i < level.length; i += 2) next.push(sha256d(Buffer.concat([level[i], level[i + 1] || level[i]])));
    level = next;
  }
  return Buffer.from(level[0]).reverse().toString('hex');
}

module.exports = { startElectrum, connectClient, rawClient, scripthashOf, toElectrum, expectedStatus, rootOf, plainMerkleRoot };
