'use strict';

const client = require('prom-client');
const { CATALOG } = require('./catalog');

const TYPES = { counter: client.Counter, gauge: client.Gauge, histogram: client.Histogram };

/** The content type of Prometheus' text exposition format. */
const CONTENT_TYPE = client.Registry.PROMETHEUS_CONTENT_TYPE;

/**
 * One process's metrics: a prom-client registry holding the catalog's metrics of one scope
 * (each reachable by its catalog key, `metrics.httpRequests`), the Node.js process metrics
 * (CPU, memory, event loop delay, GC), and collectors — readings taken when a scrape asks
 * (the index's tip) rather than kept up to date.
 *
 * The registry is this object's own, never prom-client's global one, so several apps in one
 * process (the tests) keep their counts apart.
 */
class Metrics {
  /**
   * @param {object} opts
   * @param {'api'|'primary'|'sync'} opts.scope which catalog metrics to create (see catalog.js)
   * @param {boolean} [opts.processMetrics=true] Node.js process metrics
   */
  constructor({ scope, processMetrics = true }) {
    this.registry = new client.Registry();
    this.collectors = [];
    for (const [key, def] of Object.entries(CATALOG)) if (def.scopes.includes(scope)) this.ensure(key);
    if (processMetrics) client.collectDefaultMetrics({ register: this.registry });
  }

  /**
   * The catalog metric `key`, created in this registry on first use.
   * @param {keyof typeof CATALOG} key
   */
  ensure(key) {
    if (this[key]) return this[key];
    const def = CATALOG[key];
    if (!def) throw new TypeError(`no metric "${key}" in lib/ops/catalog.js`);
    const { type, scopes, ...opts } = def;
    this[key] = new TYPES[type]({ ...opts, registers: [this.registry] });
    return this[key];
  }

  /**
   * Runs `fn` before every scrape (a reading that is cheap to take and pointless to keep
   * current between scrapes). A collector that throws leaves its metrics at their last value.
   * @param {() => (void|Promise<void>)} fn
   */
  collect(fn) {
    this.collectors.push(fn);
  }

  async runCollectors() {
    await Promise.all(this.collectors.map((fn) => Promise.resolve().then(fn).catch(() => {})));
  }

  /** @returns {Promise<object[]>} the metrics as JSON, for aggregation over processes */
  async snapshot() {
    await this.runCollectors();
    return this.registry.getMetricsAsJSON();
  }

  /** @returns {Promise<string>} this process's metrics in the text exposition format */
  async text() {
    await this.runCollectors();
    return this.registry.metrics();
  }
}

/**
 * Merges snapshots of several processes into one exposition: counters and histograms summed,
 * gauges by their catalog aggregator (prom-client's AggregatorRegistry.aggregate).
 * @param {object[][]} snapshots
 * @returns {Promise<string>}
 */
function renderAggregate(snapshots) {
  return client.AggregatorRegistry.aggregate(snapshots).metrics();
}

module.exports = { Metrics, renderAggregate, CONTENT_TYPE };
