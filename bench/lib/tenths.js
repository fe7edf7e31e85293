'use strict';

/**
 * tx/s over each tenth of a chain's transactions, interpolated between progress samples
 * ({txs, ms, ...}, from the indexer's start): by wall time (`clock` 'ms'), or by another
 * cumulative clock the samples carry (bench/sync.js: 'cpuMs', the main thread's CPU, which a
 * shared machine's other work does not stretch). NaN for a tenth the samples never reach.
 * @param {Array<{txs: number}>} samples in order
 * @param {number} totalTxs
 * @param {string} [clock='ms']
 * @returns {number[]}
 */
function tenths(samples, totalTxs, clock = 'ms') {
  const timeAt = (txs) => {
    let prev = { [clock]: 0, txs: 0 };
    for (const s of samples) {
      if (s.txs >= txs) return prev[clock] + (s[clock] - prev[clock]) * ((txs - prev.txs) / Math.max(1, s.txs - prev.txs));
      prev = s;
    }
    return NaN;
  };
  const out = [];
  for (let k = 0; k < 10; k++) {
    const a = (k * totalTxs) / 10;
    const b = ((k + 1) * totalTxs) / 10;
    out.push((b - a) / Math.max(1e-9, (timeAt(b) - timeAt(a)) / 1000));
  }
  return out;
}

module.exports = { tenths };
