'use strict';

const cluster = require('node:cluster');
const os = require('node:os');
const path = require('node:path');
const { EventEmitter } = require('node:events');
const { AddrIndexError } = require('../errors');
const { serveStore } = require('./forward');
const { MSG } = require('./messages');

const WORKER = path.join(__dirname, 'worker.js');

/** A worker that dies sooner than this after starting counts as a crash loop: back off. */
const STABLE_MS = 5000;
const MAX_BACKOFF_MS = 30000;

/**
 * The primary of `addrindex serve`: forks N HTTP workers (node:cluster; they share the
 * listening port), replaces a worker that dies, and on stop() drains them: each stops
 * accepting, answers its requests in flight and exits; the primary resolves when all have.
 *
 * Events: 'fork' (worker, {replacement}), 'listening' (worker, address),
 * 'exit' (worker, code, signal, replacedInMs|null), 'fatal' (worker, error) — a worker that
 * could not start.
 */
class ClusterPrimary extends EventEmitter {
  /**
   * @param {object} opts
   * @param {number} [opts.workers] default: one per core
   * @param {object} opts.worker configuration each worker receives (JSON): store, strategy,
   *   datadir, network, mongodbUrl, host, port, timeoutMs, graceMs, electrum
   * @param {import('../stores/abstract').AbstractStore} [opts.store] the open store the
   *   primary answers forwarded reads from (strategy 'forward')
   * @param {import('./wallet-writes').WalletWriter} [opts.walletWriter] writes the workers'
   *   bitcore v8 wallets (config.walletWrites 'primary')
   * @param {'rr'|'none'} [opts.scheduling] who spreads connections: the primary, round robin
   *   (node's default on Linux), or the kernel (workers accept on the shared socket)
   */
  constructor(opts) {
    super();
    this.count = opts.workers || os.availableParallelism();
    this.config = opts.worker;
    this.store = opts.store || null;
    /** @type {import('./wallet-writes').WalletWriter|null} answers the workers' wallet writes */
    this.walletWriter = opts.walletWriter || null;
    this.scheduling = opts.scheduling;
    /** this.config with the ports the first worker got for port 0 (pinPorts) */
    this.pinned = null;
    this.workers = new Set();
    this.stopping = false;
    this.started = false;
    this.backoff = 0;
    this.timers = new Set();
  }

  /**
   * Forks the workers and resolves once every one listens.
   * @returns {Promise<{address: string, port: number, electrum?: {tcp: object|null, tls: object|null}}>}
   *   the shared listening address (and the Electrum ones, when configured)
   * @throws the first worker's startup error (the others are stopped)
   */
  async start() {
    if (this.config.strategy === 'forward' && !this.store) throw new TypeError('the forward strategy needs the primary\'s store');
    // left alone, node's default holds (round robin on Linux; NODE_CLUSTER_SCHED_POLICY overrides it)
    if (this.scheduling) cluster.schedulingPolicy = this.scheduling === 'none' ? cluster.SCHED_NONE : cluster.SCHED_RR;
    cluster.setupPrimary({ exec: WORKER, args: [], serialization: 'advanced' });
    const ready = [];
    for (let i = 0; i < this.count; i++) ready.push(this.whenListening(this.spawn()));
    try {
      const addresses = await Promise.all(ready);
      this.started = true;
      return addresses[0];
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  /**
   * @param {boolean} [replacement] it replaces a worker that died
   * @returns {import('node:cluster').Worker}
   */
  spawn(replacement = false) {
    // a worker still listening holds the socket a port-0 request is given; with none, the
    // port it had must be asked for by number (pinPorts)
    const alone = ![...this.workers].some((w) => w.listening);
    const config = alone && this.pinned ? this.pinned : this.config;
    const worker = cluster.fork({ ADDRINDEX_WORKER: JSON.stringify(config) });
    worker.startedAt = Date.now();
    this.workers.add(worker);
    this.emit('fork', worker, { replacement });
    if (this.config.strategy === 'forward') serveStore(worker, this.store);
    if (this.walletWriter) this.walletWriter.serve(worker);
    worker.on('message', (msg) => {
      if (!msg) return;
      if (msg.type === MSG.listening) {
        worker.listening = true;
        this.pinPorts(msg);
        this.emit('listening', worker, msg.electrum ? { ...msg.address, electrum: msg.electrum } : msg.address);
      } else if (msg.type === MSG.fatal) {
        worker.fatal = msg.error;
        this.emit('fatal', worker, msg.error);
      }
    });
    worker.on('exit', (code, signal) => this.onExit(worker, code, signal));
    return worker;
  }

  whenListening(worker) {
    return new Promise((resolve, reject) => {
      const onListening = (w, address) => { if (w === worker) { cleanup(); resolve(address); } };
      const onExit = () => {
        cleanup();
        const e = worker.fatal;
        reject(e ? new AddrIndexError(e.code || 'ERR_WORKER', `a worker could not start: ${e.message}`)
          : new AddrIndexError('ERR_WORKER', `worker ${worker.process.pid} exited before listening`));
      };
      const cleanup = () => {
        this.off('listening', onListening);
        worker.off('exit', onExit);
      };
      this.on('listening', onListening);
      worker.once('exit', onExit);
    });
  }

  /**
   * Port 0 asks for any free port once: workers that replace dead ones must listen where the
   * first ones did. While one worker still listens, node's cluster gives a port-0 request its
   * socket; once every worker has died at once (each closing its share of the socket), a
   * port-0 request would get new ports and the clients would knock on the old ones for good,
   * so the replacements ask for the ports by number (`this.pinned`, used by spawn()).
   * @param {{address?: {port: number}, electrum?: {tcp: {port: number}|null, tls: {port: number}|null}}} msg
   */
  pinPorts({ address, electrum }) {
    if (this.pinned) return;
    const c = this.config;
    const pinned = { ...c };
    if (c.port === 0 && address && address.port) pinned.port = address.port;
    if (c.electrum && electrum) {
      pinned.electrum = { ...c.electrum };
      if (c.electrum.port === 0 && electrum.tcp) pinned.electrum.port = electrum.tcp.port;
      if (c.electrum.tlsPort === 0 && electrum.tls) pinned.electrum.tlsPort = electrum.tls.port;
    }
    this.pinned = pinned;
  }

  onExit(worker, code, signal) {
    this.workers.delete(worker);
    if (this.stopping) {
      this.emit('exit', worker, code, signal, null);
      if (this.workers.size === 0 && this.onAllExited) this.onAllExited();
      return;
    }
    // A worker that keeps dying right after it starts (its store vanished, the port was
    // taken) is restarted with a growing delay instead of in a tight loop.
    const lived = Date.now() - worker.startedAt;
    this.backoff = lived < STABLE_MS ? Math.min(MAX_BACKOFF_MS, this.backoff ? this.backoff * 2 : 250) : 0;
    this.emit('exit', worker, code, signal, this.backoff);
    if (!this.started) return; // start() fails instead, with this worker's error
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!this.stopping) this.spawn(true);
    }, this.backoff);
    this.timers.add(timer);
  }

  /**
   * Drains every worker and resolves when all have exited. Workers still alive after
   * `graceMs` + 5 s are killed.
   * @returns {Promise<void>}
   */
  async stop() {
    this.stopping = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    if (this.workers.size === 0) return;
    const allExited = new Promise((resolve) => { this.onAllExited = resolve; });
    for (const w of this.workers) {
      if (w.isConnected()) w.send({ type: MSG.shutdown });
      else w.process.kill('SIGTERM');
    }
    const graceMs = (this.config.graceMs || 10000) + 5000;
    let timer;
    const late = new Promise((resolve) => { timer = setTimeout(resolve, graceMs); });
    await Promise.race([allExited, late]);
    clearTimeout(timer);
    for (const w of this.workers) w.process.kill('SIGKILL');
    if (this.workers.size) await allExited;
  }

  /**
   * Sends a message to every worker that is connected.
   * @param {object} msg
   */
  broadcast(msg) {
    for (const w of this.workers) if (w.isConnected()) w.send(msg);
  }

  /** Process ids of the live workers. */
  pids() {
    return [...this.workers].map((w) => w.process.pid);
  }
}

module.exports = { ClusterPrimary };
