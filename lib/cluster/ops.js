'use strict';

const { MSG } = require('./messages');
const { renderAggregate } = require('../ops/metrics');

/**
 * Operations plumbing between the primary of `serve` and its workers: one /metrics for the
 * whole cluster, and the node's tip handed to every worker.
 *
 * Metrics. Any worker may receive GET /metrics; it asks the primary, which asks every worker
 * that is listening for a snapshot of its registry, adds its own (worker restarts, the node's
 * tip), merges them with prom-client's AggregatorRegistry.aggregate (counters and histograms
 * summed, gauges by their catalog aggregator) and answers the asking worker with the text.
 *
 * prom-client's own AggregatorRegistry.clusterMetrics() is not used: it asks every connected
 * worker, including one still loading its modules (whose request is lost, so the scrape
 * fails after its fixed 5 s timeout), cannot include the primary's own metrics, and fails the
 * whole scrape when one worker dies mid-way. Here a worker that exits or does not answer
 * within `timeoutMs` is left out, and `addrindex_metrics_workers_reporting` says how many
 * are in.
 */

/** The primary's side. */
class PrimaryOps {
  /**
   * @param {import('./primary').ClusterPrimary} primary
   * @param {import('../ops/metrics').Metrics} metrics scope 'primary'
   * @param {{timeoutMs?: number}} [opts]
   */
  constructor(primary, metrics, { timeoutMs = 2000 } = {}) {
    this.primary = primary;
    this.metrics = metrics;
    this.timeoutMs = timeoutMs;
    this.nodeTip = null;
    this.nextId = 1;
    this.pending = new Map(); // collect id -> {snapshots, waiting: Set<worker>, done}
    metrics.workers.set(0);
    primary.on('fork', (worker, { replacement }) => {
      if (replacement) metrics.workerRestarts.inc();
      metrics.workers.set(primary.workers.size);
      worker.on('message', (msg) => this.onMessage(worker, msg));
    });
    primary.on('listening', (worker) => {
      if (this.nodeTip) worker.send({ type: MSG.nodeTip, tip: this.nodeTip });
    });
    primary.on('exit', (worker) => {
      metrics.workers.set(primary.workers.size);
      // a collect waiting on this worker goes on without it
      for (const p of this.pending.values()) if (p.waiting.delete(worker) && !p.waiting.size) p.done();
    });
  }

  onMessage(worker, msg) {
    if (!msg) return;
    if (msg.type === MSG.metricsRequest) {
      this.scrape().then(
        (text) => { if (worker.isConnected()) worker.send({ type: MSG.metricsText, id: msg.id, text }); },
        (err) => { if (worker.isConnected()) worker.send({ type: MSG.metricsText, id: msg.id, error: err.message }); });
    } else if (msg.type === MSG.metricsSnapshot) {
      const p = this.pending.get(msg.id);
      if (!p || !p.waiting.delete(worker)) return;
      p.snapshots.push(msg.metrics);
      if (!p.waiting.size) p.done();
    }
  }

  /**
   * Every listening worker's metrics and the primary's, merged.
   * @returns {Promise<string>}
   */
  async scrape() {
    const id = this.nextId++;
    const workers = [...this.primary.workers].filter((w) => w.listening && w.isConnected());
    const p = { snapshots: [], waiting: new Set(workers), done: null };
    const collected = new Promise((resolve) => { p.done = resolve; });
    this.pending.set(id, p);
    for (const w of workers) w.send({ type: MSG.metricsCollect, id });
    let timer;
    if (workers.length) {
      await Promise.race([collected, new Promise((resolve) => { timer = setTimeout(resolve, this.timeoutMs); })]);
    }
    clearTimeout(timer);
    this.pending.delete(id);
    this.metrics.workersReporting.set(p.snapshots.length);
    return renderAggregate([await this.metrics.snapshot(), ...p.snapshots]);
  }

  /**
   * Records the node's tip and hands it to every worker.
   * @param {{height: number, hash: string}|null} tip
   */
  setNodeTip(tip) {
    this.nodeTip = tip;
    this.metrics.nodeTip.set(tip ? tip.height : -1);
    this.primary.broadcast({ type: MSG.nodeTip, tip });
  }
}

/** A worker's side. */
class WorkerOps {
  /**
   * @param {import('../ops/metrics').Metrics} metrics this worker's (scope 'api')
   * @param {{send: Function, on: Function}} [channel] the IPC channel (process)
   */
  constructor(metrics, channel = process) {
    this.metrics = metrics;
    this.channel = channel;
    this.nextId = 1;
    this.pending = new Map();
    this.onNodeTip = () => {};
    this.scrape = this.scrape.bind(this);
    channel.on('message', (msg) => {
      if (!msg) return;
      if (msg.type === MSG.metricsCollect) {
        metrics.snapshot().then((snapshot) => channel.send({ type: MSG.metricsSnapshot, id: msg.id, metrics: snapshot }), () => {});
      } else if (msg.type === MSG.metricsText) {
        const p = this.pending.get(msg.id);
        if (!p) return;
        this.pending.delete(msg.id);
        if (msg.error) p.reject(new Error(`the primary could not merge the metrics: ${msg.error}`));
        else p.resolve(msg.text);
      } else if (msg.type === MSG.nodeTip) {
        this.onNodeTip(msg.tip);
      }
    });
  }

  /**
   * The whole cluster's metrics, merged by the primary.
   * @returns {Promise<string>}
   */
  scrape() {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.channel.send({ type: MSG.metricsRequest, id }, (err) => {
        if (!err) return;
        this.pending.delete(id);
        reject(err);
      });
    });
  }
}

module.exports = { PrimaryOps, WorkerOps };
