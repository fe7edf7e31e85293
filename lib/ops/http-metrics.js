'use strict';

/**
 * The API's per-request accounting, kept cheap: an answered request is counted in plain maps
 * and handed to the prom-client counters only when a scrape asks (a collector), because
 * prom-client hashes the label object on every inc() — ~1 µs each, several per request,
 * measurable against a ~100 µs summary answer. The latency histogram is observed at once (its
 * buckets are prom-client's), with one label object per route and method, made once.
 */
class HttpMetrics {
  /** @param {import('./metrics').Metrics} metrics scope 'api' */
  constructor(metrics) {
    this.metrics = metrics;
    this.requests = new Map(); // "route method status" -> {labels, n}
    this.routes = new Map(); // "route method" -> labels
    this.bytes = new Map(); // encoding -> {body, sent}
    metrics.collect(() => this.flush());
  }

  /**
   * @param {string} route the pattern, or 'none'
   * @param {string} method
   * @param {number} status
   * @param {number} seconds from the request to the answer handed to the socket
   * @param {string} encoding 'identity' | 'gzip' | 'br'
   * @param {number} bodyBytes before encoding
   * @param {number} sentBytes after
   */
  record(route, method, status, seconds, encoding, bodyBytes, sentBytes) {
    const rk = `${route} ${method}`;
    let rl = this.routes.get(rk);
    if (!rl) {
      rl = { route, method };
      this.routes.set(rk, rl);
    }
    this.metrics.httpDuration.observe(rl, seconds);
    const k = `${rk} ${status}`;
    const c = this.requests.get(k);
    if (c) c.n++;
    else this.requests.set(k, { labels: { route, method, status: String(status) }, n: 1 });
    const b = this.bytes.get(encoding);
    if (b) {
      b.body += bodyBytes;
      b.sent += sentBytes;
    } else {
      this.bytes.set(encoding, { body: bodyBytes, sent: sentBytes });
    }
  }

  /** Moves the counts gathered since the last scrape into the prom-client counters. */
  flush() {
    const m = this.metrics;
    for (const c of this.requests.values()) {
      if (!c.n) continue;
      m.httpRequests.inc(c.labels, c.n);
      c.n = 0;
    }
    for (const [encoding, b] of this.bytes) {
      if (b.body) m.httpBodyBytes.inc({ encoding }, b.body);
      if (b.sent) m.httpSentBytes.inc({ encoding }, b.sent);
      b.body = 0;
      b.sent = 0;
    }
  }
}

module.exports = { HttpMetrics };
