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

module.exports = { watchIndex };
