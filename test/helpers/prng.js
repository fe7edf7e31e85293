'use strict';

/**
 * A small deterministic PRNG (mulberry32) for test schedules and shuffles, so a failing
 * case reproduces from its seed.
 * @param {number} seed
 * @returns {() => number} uniform in [0, 1)
 */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

module.exports = { prng };
