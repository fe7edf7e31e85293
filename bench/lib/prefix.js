'use strict';

/**
 * A chain's prefix, for benchmarks that sync only the blocks holding its first N
 * transactions (bench/sync.js's baseline prefix, bench/stores.js's sync rows).
 */

/**
 * The lowest height whose block brings the chain to at least `txs` transactions.
 * @param {import('../../lib/sources/blocksdir').BlocksDirSource} source scanned
 * @param {number} txs
 * @returns {Promise<number>}
 */
async function heightHolding(source, txs) {
  const { readVarint } = require('../../lib/chain/tx');
  let n = 0;
  for await (const b of source.blocks(0)) {
    n += readVarint(b.raw, { pos: 80 }, b.raw.length, 'tx count');
    if (n >= txs) return b.height;
  }
  return source.tip().height;
}

/**
 * `source` seen as ending at height `to` (already scanned: its scan() does nothing).
 * @param {import('../../lib/sources/blocksdir').BlocksDirSource} source
 * @param {number} to
 */
function boundedSource(source, to) {
  return {
    scan: async () => {},
    tip: () => ({ height: to, hash: source.hashAt(to) }),
    hashAt: (h) => (h <= to ? source.hashAt(h) : null),
    blocks: (from, until) => source.blocks(from, Math.min(until, to)),
  };
}

module.exports = { heightHolding, boundedSource };
