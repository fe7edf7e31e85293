'use strict';

/**
 * Difficulty and median time past: the numbers block views derive from headers.
 */

/**
 * Bitcoin Core's GetDifficulty (rpc/blockchain.cpp): the genesis target over this target, as a
 * double, computed by Core's shifts so the last bit agrees. Esplora (mempool/electrs
 * `difficulty_new`) answers the same.
 * @param {number} bits compact target
 * @returns {number}
 */
function coreDifficulty(bits) {
  let shift = (bits >>> 24) & 0xff;
  let diff = 0x0000ffff / (bits & 0x00ffffff);
  while (shift < 29) {
    diff *= 256.0;
    shift++;
  }
  while (shift > 29) {
    diff /= 256.0;
    shift--;
  }
  return diff;
}

/**
 * The median of a block's timestamp and those of up to 10 blocks before it (BIP113's median
 * time past, Esplora's `mediantime`).
 * @param {number[]} times the block's own and its ancestors' timestamps, any order, at most 11
 * @returns {number}
 */
function medianTimePast(times) {
  if (times.length === 0 || times.length > 11) throw new RangeError(`median time past of ${times.length} timestamps (1 to 11)`);
  const sorted = [...times].sort((a, b) => a - b);
  return sorted[sorted.length >> 1];
}

module.exports = { coreDifficulty, medianTimePast };
