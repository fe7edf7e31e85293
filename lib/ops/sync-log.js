'use strict';

/**
 * A sync's progress events as JSON log records: every batch at debug; at info a progress
 * record at most every `intervalMs` (the plain progress lines' pace), each reorg (warn), a
 * source behind the index (warn), and each new tip reached while following.
 *
 * @param {import('pino').Logger} logger
 * @param {{intervalMs?: number, now?: () => number}} [opts]
 * @returns {{update: (p: import('../sync/service').SyncProgress) => void,
 *   finish: (summary: object) => void}}
 */
function syncLog(logger, { intervalMs = 10000, now = Date.now } = {}) {
  let last = null; // {t, txs, blocks} at the last progress record
  let lastCaughtUp = null;

  function update(p) {
    const at = { height: p.height, target: p.target };
    if (p.phase === 'batch') {
      logger.debug({ ...at, batch: p.batch }, 'batch committed');
      const t = now();
      if (!last) last = { t: t - p.elapsedMs, txs: 0, blocks: 0 };
      if (t - last.t >= intervalMs) {
        const s = (t - last.t) / 1000;
        logger.info({
          ...at, blocks: p.blocks, txs: p.txs, blocksPerSec: round((p.blocks - last.blocks) / s), txsPerSec: round((p.txs - last.txs) / s),
        }, 'progress');
        last = { t, txs: p.txs, blocks: p.blocks };
      }
    } else if (p.phase === 'reorg') {
      logger.warn({ ...at, reorg: p.reorg }, 'reorg: reverted to the fork point');
    } else if (p.phase === 'behind') {
      logger.warn(at, 'the block source\'s best chain is behind the index: waiting for it');
    } else if (p.phase === 'caught-up' && p.hash !== lastCaughtUp) {
      lastCaughtUp = p.hash;
      logger.info({ ...at, hash: p.hash }, 'at the source\'s tip');
    }
  }

  function finish(summary) {
    const s = Math.max(1, summary.elapsedMs) / 1000;
    logger.info({
      blocks: summary.blocks, txs: summary.txs, bytes: summary.bytes, elapsedMs: summary.elapsedMs,
      txsPerSec: round(summary.txs / s), tip: summary.tip ? { height: summary.tip.height, hash: summary.tip.hash } : null,
      reorgs: summary.reorgs.length,
    }, 'synced');
  }

  return { update, finish };
}

function round(x) {
  return Math.round(x * 10) / 10;
}

module.exports = { syncLog };
