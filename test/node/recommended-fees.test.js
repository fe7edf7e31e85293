'use strict';

const assert = require('node:assert/strict');
const { recommendedFees } = require('../../lib/node/fees');

describe('mempool.space\'s recommended fees from a node\'s estimates (lib/node/fees.js)', () => {
  it('whole sat/vB rounded up; a missing target takes the next longer one\'s; economy min(2 × minimum, hour); never inverted', () => {
    // relay fee 0.00001 BTC/kvB = 1 sat/vB
    assert.deepEqual(recommendedFees({ fastestFee: 20.2, halfHourFee: 12, hourFee: 7.001 }, 0.00001),
      { fastestFee: 21, halfHourFee: 12, hourFee: 8, economyFee: 2, minimumFee: 1 });
    assert.deepEqual(recommendedFees({ fastestFee: null, halfHourFee: 9, hourFee: null }, 0.00001),
      { fastestFee: 9, halfHourFee: 9, hourFee: 1, economyFee: 1, minimumFee: 1 });
    assert.deepEqual(recommendedFees({ fastestFee: null, halfHourFee: null, hourFee: null }, 0.00001),
      { fastestFee: 1, halfHourFee: 1, hourFee: 1, economyFee: 1, minimumFee: 1 });
    // an estimate below the relay fee, and a shorter target estimated lower than a longer one
    assert.deepEqual(recommendedFees({ fastestFee: 3, halfHourFee: 5, hourFee: 2.5 }, 0.00004),
      { fastestFee: 5, halfHourFee: 5, hourFee: 4, economyFee: 4, minimumFee: 4 });
    // a relay fee below 1 sat/vB (Core's 0.1 sat/vB setting) still answers 1
    assert.equal(recommendedFees({ fastestFee: 2, halfHourFee: 2, hourFee: 2 }, 0.000001).minimumFee, 1);
  });
});
