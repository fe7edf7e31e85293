'use strict';

const { json } = require('../reply');
const { readiness } = require('../../ops/ready');
const { CONTENT_TYPE } = require('../../ops/metrics');

/**
 * What operators and their tools ask, beside the API: liveness, readiness and metrics.
 * These routes are never rate limited (meta.ops) and never read through consistent(): each
 * is one reading.
 * @param {import('../router').Router} router
 * @param {import('../server').ApiApp} app
 */
function register(router, app) {
  const meta = { ops: true };

  // Liveness: the process runs its event loop and answers HTTP. Nothing else is checked, so
  // a restart is never triggered by a slow store or a lagging node.
  router.add('GET', '/health', async () => json({ status: 'up', uptime: Math.round(process.uptime()) }), meta);

  // Readiness: see lib/ops/ready.js. 503 with the same body when not ready.
  router.add('GET', '/ready', async () => {
    let tip = null;
    let open = !app.draining;
    if (open) {
      try {
        tip = await app.store.getTip();
      } catch {
        open = false;
      }
    }
    const r = readiness({ open, tip, nodeConfigured: app.node.configured, nodeTip: app.node.tip, maxLag: app.maxLag });
    return json(r, r.ready ? 200 : 503);
  }, meta);

  // Prometheus text format; in `serve`, every worker's metrics merged by the primary.
  router.add('GET', '/metrics', async () => ({ status: 200, type: CONTENT_TYPE, body: Buffer.from(await app.scrape()) }), meta);
}

module.exports = { register };
