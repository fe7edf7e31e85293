'use strict';

/**
 * Feeds a sync's progress events (lib/sync/service.js) into its metrics: counters of blocks,
 * transactions and bytes applied, batch and commit time histograms, reorgs, the block
 * source's tip (the node's, as the source sees it) and per-second rates over a trailing
 * window that fall to 0 when the sync idles.
 *
 * @param {import('./metrics').Metrics} metrics scope 'sync'
 * @param {{windowMs?: number, now?: () => number}} [opts]
 * @returns {{update: (p: import('../sync/service').SyncProgress) => void, nodeTip: () => ({height: number}|null)}}
 */
function syncMetrics(metrics, { windowMs = 20000, now = Date.now } = {}) {
  let nodeTip = null;
  const started = now();
  // cumulative totals after each batch; the one just before the window is the baseline
  const samples = [{ t: started, blocks: 0, txs: 0 }];
  metrics.syncCaughtUp.set(0);

  const prune = (t) => {
    while (samples.length > 1 && samples[1].t <= t - windowMs) samples.shift();
  };
  metrics.collect(() => {
    const t = now();
    prune(t);
    const base = samples[0];
    const last = samples[samples.length - 1];
    const seconds = Math.max(1, Math.min(windowMs, t - started)) / 1000;
    metrics.syncBlockRate.set((last.blocks - base.blocks) / seconds);
    metrics.syncTxRate.set((last.txs - base.txs) / seconds);
  });

  function update(p) {
    if (p.target !== undefined && p.target >= 0) {
      nodeTip = { height: p.target };
      metrics.nodeTip.set(p.target);
    }
    if (p.phase === 'batch') {
      metrics.syncBlocks.inc(p.batch.blocks);
      metrics.syncTxs.inc(p.batch.txs);
      metrics.syncBytes.inc(p.batch.bytes);
      metrics.syncBatch.observe(p.batch.ms / 1000);
      if (p.batch.commitMs !== undefined) metrics.syncCommit.observe(p.batch.commitMs / 1000);
      const t = now();
      samples.push({ t, blocks: p.blocks, txs: p.txs });
      prune(t);
      metrics.syncCaughtUp.set(p.height >= p.target ? 1 : 0);
    } else if (p.phase === 'reorg') {
      metrics.syncReorgs.inc();
      metrics.syncReverted.inc(p.reorg.depth);
    } else if (p.phase === 'caught-up') {
      metrics.syncCaughtUp.set(1);
    } else if (p.phase === 'scan' || p.phase === 'behind') {
      metrics.syncCaughtUp.set(p.height >= p.target ? 1 : 0);
    }
  }

  return { update, nodeTip: () => nodeTip };
}

module.exports = { syncMetrics };
