'use strict';

/** Message types between the primary and its workers (one namespace, so nothing collides). */
const MSG = Object.freeze({
  listening: 'addrindex:listening',
  fatal: 'addrindex:fatal',
  shutdown: 'addrindex:shutdown',
  // metrics (lib/cluster/ops.js): a worker asks the primary for everyone's; the primary
  // collects each worker's snapshot and answers with the merged text
  metricsRequest: 'addrindex:metrics-request',
  metricsCollect: 'addrindex:metrics-collect',
  metricsSnapshot: 'addrindex:metrics-snapshot',
  metricsText: 'addrindex:metrics-text',
  // the node's tip as the primary last read it (for /ready and the lag)
  nodeTip: 'addrindex:node-tip',
});

module.exports = { MSG };
