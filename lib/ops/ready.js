'use strict';

/**
 * Readiness: whether a load balancer should send this process requests.
 *
 *   index open   the store is open and the process is not draining for shutdown
 *   tip known    the index holds at least one block
 *   lag          node tip height − index tip height <= maxLag — only when a node's tip is
 *                read (serve --blocks-dir). Without a node the lag is unknown and the check
 *                is not made: the index is ready when it is open and has a tip, and the answer
 *                says `lag: null` (a server that cannot see the node cannot tell stale from
 *                current, and refusing all traffic for that would take a healthy index down).
 *                With a node configured but not read yet (first read pending, or failing), the
 *                lag is unknown too and the process is NOT ready: the operator asked for a bound
 *                it cannot check.
 *
 * An index ahead of the node's view (the node's blocks dir read before the sync's last
 * commit) has lag 0.
 */

/**
 * @param {object} s
 * @param {boolean} s.open
 * @param {{height: number, hash: string}|null} s.tip the index's tip
 * @param {boolean} s.nodeConfigured
 * @param {{height: number, hash?: string}|null} s.nodeTip the node's tip as last read
 * @param {number|null} s.maxLag
 * @returns {{ready: boolean, index: {open: boolean, tip: {height: number, hash: string}|null},
 *   node: {tip: {height: number}|null}|null, lag: number|null, maxLag: number|null, reasons: string[]}}
 */
function readiness({ open, tip, nodeConfigured, nodeTip, maxLag }) {
  const reasons = [];
  const lag = lagOf(tip, nodeTip);
  if (!open) {
    reasons.push('the index is not open (starting or shutting down)');
  } else {
    if (!tip) reasons.push('the index holds no block yet');
    if (nodeConfigured && !nodeTip) reasons.push('the node\'s tip has not been read (yet)');
    if (nodeConfigured && lag !== null && maxLag !== null && lag > maxLag) reasons.push(`the index is ${lag} blocks behind the node (max ${maxLag})`);
  }
  return {
    ready: reasons.length === 0,
    index: { open, tip: tip ? { height: tip.height, hash: tip.hash } : null },
    node: nodeConfigured ? { tip: nodeTip ? { height: nodeTip.height, hash: nodeTip.hash || null } : null } : null,
    lag,
    maxLag: nodeConfigured ? maxLag : null,
    reasons,
  };
}

/**
 * @returns {number|null} blocks the index is behind the node, null when either tip is unknown
 */
function lagOf(tip, nodeTip) {
  if (!tip || !nodeTip) return null;
  return Math.max(0, nodeTip.height - tip.height);
}

module.exports = { readiness, lagOf };
