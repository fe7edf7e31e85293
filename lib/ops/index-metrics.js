'use strict';

const { lagOf } = require('./ready');

/**
 * Readings of an open index taken at each scrape: its tip height, the lag behind the node's
 * tip (when one is known), and for LMDB how much of the map is used.
 *
 * The LMDB figures come from the environment's own statistics (lmdb-js getStats: page size,
 * last page written, map size), which the store keeps on its key-value adapter
 * (`store.kv.engineStats()`) — the one reading here that reaches past the store contract,
 * because stats() walks the whole index and a scrape must cost microseconds.
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
  const engine = store.kv && typeof store.kv.engineStats === 'function' ? store.kv : null;
  // only LMDB's statistics carry a map size (LevelDB's name its levels' files)
  if (engine && Number.isFinite(engine.engineStats().mapSize)) {
    const map = metrics.ensure('lmdbMapBytes');
    const used = metrics.ensure('lmdbUsedBytes');
    metrics.collect(() => {
      const s = engine.engineStats();
      map.set(s.mapSize);
      used.set((s.lastPage + 1) * s.pageSize);
    });
  }
}

module.exports = { watchIndex };
