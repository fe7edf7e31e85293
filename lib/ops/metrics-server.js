'use strict';

const http = require('node:http');
const { CONTENT_TYPE } = require('./metrics');
const { UsageError } = require('../errors');

/**
 * The small HTTP server of `sync --metrics-port`: GET /metrics (Prometheus text) and
 * GET /health (the process is up); anything else 404, in the API's error shape. It answers
 * on the sync's own event loop, so a scrape during a long commit waits for the commit.
 *
 * @param {{metrics: import('./metrics').Metrics, host: string, port: number}} opts
 * @returns {Promise<{server: http.Server, url: string, close: () => Promise<void>}>}
 */
async function startMetricsServer({ metrics, host, port }) {
  const server = http.createServer((req, res) => {
    const path = req.url.split('?')[0];
    const answer = (status, type, body) => {
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if ((req.method === 'GET' || req.method === 'HEAD') && path === '/metrics') {
      metrics.text().then(
        (text) => answer(200, CONTENT_TYPE, text),
        (err) => answer(500, 'application/json; charset=utf-8', JSON.stringify({ error: { code: 'ERR_INTERNAL', message: `metrics failed: ${err.message}` } })));
    } else if ((req.method === 'GET' || req.method === 'HEAD') && path === '/health') {
      answer(200, 'application/json; charset=utf-8', JSON.stringify({ status: 'up', uptime: Math.round(process.uptime()) }));
    } else {
      answer(404, 'application/json; charset=utf-8', JSON.stringify({ error: { code: 'ERR_NOT_FOUND', message: `no route ${req.method} ${path.slice(0, 120)} (this port serves /metrics and /health)` } }));
    }
  });
  server.keepAliveTimeout = 5000;
  await new Promise((resolve, reject) => {
    server.once('error', (err) => reject(new UsageError('ERR_LISTEN', `cannot serve metrics on ${host}:${port}: ${err.message}`)));
    server.listen(port, host, () => {
      server.removeAllListeners('error');
      resolve();
    });
  });
  const a = server.address();
  const url = `http://${a.address.includes(':') ? `[${a.address}]` : a.address}:${a.port}`;
  return {
    server,
    url,
    close: () => new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

module.exports = { startMetricsServer };
