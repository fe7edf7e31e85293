'use strict';

const { lagOf } = require('./ready');

/**
 * Readings of an open index taken at each scrape: its tip height, the lag behind the node's
 * tip (when one is known), and for LMDB how much of the map is used.
 *
 * The LMDB figures come from the store's engineStats() (the environment's own statistics:
 * map size, pages written), not stats(), which walks the whole index: a scrape must be cheap.
 *
 * @param {import('./metrics').Metrics} metrics with indexTip and indexLag
 * @param {import('../stores/abstract').AbstractStore} store
 * @param {() => ({height: number}|null)} nodeTip the node's tip as last read, null if unknown
 */
function watchIndex(metrics, store, nodeTip) {
  metrics.indexTip.set(-1);
  metrics.indexLag.set(-1);
  metrics.collect(async () => {
    const tip = await store.getTip();
    metrics.indexTip.set(tip ? tip.height : -1);
    const lag = lagOf(tip, nodeTip());
    metrics.indexLag.set(lag === null ? -1 : lag);
  });
  // the writer's reads ahead (LMDB): what a sync's store says of them
  if (metrics.syncPrefetched) {
    metrics.collect(() => {
      const p = store.prefetcher ? store.prefetcher.stats : null;
      metrics.syncPrefetched.set(p ? p.batches : 0);
    });
  }
  // only LMDB has a map to fill; the gauges exist for it alone
  if (store.kind === 'lmdb') {
    const map = metrics.ensure('lmdbMapBytes');
    const used = metrics.ensure('lmdbUsedBytes');
    metrics.collect(async () => {
      const s = await store.engineStats();
      map.set(s.mapBytes);
      used.set(s.usedBytes);
    });
  }
}

/**
 * The mempool the answers hold, read at each scrape: the snapshot that goes with the index's
 * tip (lib/mempool/reader.js's rule), its transactions and vsize; 0 when none goes with it.
 * The view is the one requests read (a new seq is read once per process, for both).
 * @param {import('./metrics').Metrics} metrics with mempoolTxs and mempoolVsize
 * @param {import('../stores/abstract').AbstractStore} store
 * @param {{at: (tip: {hash: string}|null) => Promise<import('../core/mempool').MempoolView|null>}} views
 */
function watchMempool(metrics, store, views) {
  metrics.mempoolTxs.set(0);
  metrics.mempoolVsize.set(0);
  metrics.collect(async () => {
    const view = await views.at(await store.getTip());
    metrics.mempoolTxs.set(view ? view.txs.length : 0);
    metrics.mempoolVsize.set(view ? view.vsize : 0);
  });
}

module.exports = { watchIndex, watchMempool };
