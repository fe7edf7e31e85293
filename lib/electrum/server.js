'use strict';

const net = require('node:net');
const tls = require('node:tls');
const { getNetwork } = require('../chain/networks');
const { LIMITS } = require('./limits');
const { PROTOCOL_MIN, PROTOCOL_MAX } = require('./version');
const { HeaderMerkle } = require('./merkle');
const { Subscriptions } = require('./subscriptions');
const { TipWatcher } = require('./tip-watcher');
const { Session } = require('./session');

const VERSION = require('../../package.json').version;

/**
 * The Electrum server of one process over one reader: its sessions, subscriptions and tip
 * watcher. Listening is ElectrumServer's job, so tests and the cluster worker share this.
 */
class ElectrumApp {
  /**
   * @param {object} opts
   * @param {import('./reader').StoreReader} opts.reader
   * @param {string} opts.network the index's network (server.features' genesis_hash)
   * @param {object} [opts.node] the node behind the server: estimateFee(blocks), relayFee(),
   *   feeHistogram(), broadcast(raw: Buffer) → txid hex, rawTx(txid) → Buffer|null (README.md)
   * @param {Partial<typeof LIMITS>} [opts.limits]
   * @param {string} [opts.banner]
   * @param {string} [opts.donationAddress]
   * @param {(msg: string) => void} [opts.log]
   */
  constructor(opts) {
    this.reader = opts.reader;
    this.network = getNetwork(opts.network);
    this.node = opts.node || null;
    this.limits = { ...LIMITS, ...opts.limits };
    this.log = opts.log || ((msg) => process.stderr.write(`${msg}\n`));
    this.serverVersion = `addrindex ${VERSION}`;
    this.donationAddress = opts.donationAddress || '';
    this.banner = opts.banner || defaultBanner(this);
    /** host → {tcp_port, ssl_port}, filled in by ElectrumServer.listen */
    this.hosts = {};
    this.sessions = new Set();
    this.stats = { connections: 0, dropped: 0, notifications: 0 };
    this.watcher = new TipWatcher({ reader: this.reader, pollMs: this.limits.pollMs, onChange: (c) => this.onChange(c), log: this.log });
    this.subscriptions = new Subscriptions({
      reader: this.reader, maxHistory: this.limits.maxHistory, log: this.log,
      seenTip: () => (this.watcher.current ? this.watcher.current.hash : null),
    });
    this.headerMerkle = new HeaderMerkle((from, count) => this.reader.blockHashes(from, count));
  }

  /** server.features */
  features() {
    return {
      genesis_hash: this.network.genesis,
      hosts: this.hosts,
      protocol_max: PROTOCOL_MAX,
      protocol_min: PROTOCOL_MIN,
      pruning: null,
      server_version: this.serverVersion,
      hash_function: 'sha256',
    };
  }

  /** Starts watching the tip (for notifications). */
  async start() {
    await this.watcher.start();
  }

  /**
   * A new tip or mempool snapshot: the statuses it changed go out first, then the header of a
   * new tip, all in one turn, so a client that sees the new header has already been told every
   * status that changed with it.
   * @param {import('./tip-watcher').IndexChange} change
   */
  async onChange(change) {
    // the header first: a failure here leaves the subscriptions untouched for the next attempt.
    // null when the block is already reverted: the next poll announces the tip that replaced it
    const header = change.moved && this.sessionsWithHeaders().length ? await this.reader.blockHeader(change.tip.hash) : null;
    const changed = await this.subscriptions.onChange(change);
    for (const e of changed) {
      for (const s of e.sessions) {
        s.notify('blockchain.scripthash.subscribe', [e.hex, e.status]);
        this.stats.notifications++;
      }
    }
    if (!header) return;
    const message = { hex: header.toString('hex'), height: change.tip.height };
    for (const s of this.sessionsWithHeaders()) {
      s.notify('blockchain.headers.subscribe', [message]);
      this.stats.notifications++;
    }
  }

  sessionsWithHeaders() {
    return [...this.sessions].filter((s) => s.headersSubscribed && !s.closed);
  }

  /** @param {import('node:net').Socket} socket */
  accept(socket) {
    const session = new Session(socket, this);
    this.sessions.add(session);
    this.stats.connections++;
    return session;
  }

  removeSession(session) {
    this.sessions.delete(session);
    this.subscriptions.removeSession(session);
  }

  /** Stops watching and closes every connection after what is queued for it. */
  async close() {
    await this.watcher.stop();
    for (const s of this.sessions) s.end();
  }
}

function defaultBanner(app) {
  const lines = [`${app.serverVersion}: an Electrum server over an address index of ${app.network.name}.`];
  lines.push('A script hash means exactly sha256 of the output script: a P2PK output is found under its own script\'s hash, '
    + 'not under its key\'s P2PKH script hash (which the REST API counts it toward).');
  if (!app.node) {
    lines.push('No node behind this server: no fee estimates and no broadcast. Unconfirmed transactions are answered while '
      + 'the index\'s follower keeps its mempool snapshot.');
  }
  if (!app.reader.hasRawTx) lines.push('This server reads no blocks: raw confirmed transactions are unavailable.');
  return lines.join('\n');
}

/**
 * The listening sockets of an ElectrumApp: plain TCP and/or TLS.
 */
class ElectrumServer {
  /**
   * @param {ElectrumApp} app
   * @param {object} opts
   * @param {string} [opts.host='127.0.0.1']
   * @param {number|null} [opts.port] plain TCP (null: none)
   * @param {number|null} [opts.tlsPort] TLS (null: none)
   * @param {Buffer|string} [opts.tlsCert] PEM
   * @param {Buffer|string} [opts.tlsKey] PEM
   */
  constructor(app, opts) {
    this.app = app;
    this.opts = { host: '127.0.0.1', ...opts };
    this.servers = [];
  }

  /** @returns {Promise<{tcp: import('node:net').AddressInfo|null, tls: import('node:net').AddressInfo|null}>} */
  async listen() {
    const { host, port, tlsPort, tlsCert, tlsKey } = this.opts;
    const out = { tcp: null, tls: null };
    if (port !== null && port !== undefined) {
      const server = net.createServer((socket) => this.app.accept(socket));
      out.tcp = await this.start(server, host, port);
    }
    if (tlsPort !== null && tlsPort !== undefined) {
      const server = tls.createServer({ cert: tlsCert, key: tlsKey }, (socket) => this.app.accept(socket));
      // a failed handshake (a plain-TCP client, a bad certificate on the other side) ends that socket only
      server.on('tlsClientError', (err, socket) => socket.destroy());
      out.tls = await this.start(server, host, tlsPort);
    }
    this.app.hosts = { [host]: { tcp_port: out.tcp ? out.tcp.port : null, ssl_port: out.tls ? out.tls.port : null } };
    return out;
  }

  start(server, host, port) {
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        this.servers.push(server);
        resolve(server.address());
      });
    });
  }

  /** Stops accepting, closes the app's connections (after what is queued for each), resolves when all are gone. */
  async close() {
    const closed = this.servers.map((s) => new Promise((resolve) => s.close(() => resolve())));
    this.servers = [];
    await this.app.close();
    await Promise.all(closed);
  }
}

module.exports = { ElectrumApp, ElectrumServer };
