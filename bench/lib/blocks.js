'use strict';

const { ChainGenerator } = require('../../tools/generator');

/** An output mix for the segwit era's busiest blocks: most outputs and spends are P2WPKH or P2TR. */
const SEGWIT_HEAVY_MIX = Object.freeze({
  p2wpkh: 0.58, p2tr: 0.27, p2pkh: 0.04, p2sh: 0.05, p2wsh: 0.04, p2pk: 0.002, multisig: 0.003, nulldata: 0.005,
});

/**
 * One raw, segwit-heavy block of at least `minBytes` bytes, for parser benchmarks: a
 * generated block at height 1 whose transactions spend funding outputs (txs outside the
 * chain), so it is full of spends with real-length witnesses; the merkle root and the
 * witness commitment are correct. Deterministic in `seed`.
 * @param {object} [opts]
 * @param {number|string} [opts.seed=1]
 * @param {number} [opts.minBytes=1.5e6]
 * @returns {Buffer}
 */
function generateSegwitBlock({ seed = 1, minBytes = 1.5e6 } = {}) {
  const gen = new ChainGenerator({
    seed: `segwit-block/${seed}`,
    txsPerBlock: 0,
    minBlockBytes: Math.ceil(minBytes),
    maxBlockWeight: Math.max(4000000, Math.ceil(minBytes) * 4),
    mix: SEGWIT_HEAVY_MIX,
    fundingOutputs: 20000,
  });
  gen.nextBlock(); // genesis
  const { raw } = gen.nextBlock();
  if (raw.length < minBytes) throw new Error(`generated block is ${raw.length} bytes, under ${minBytes}`);
  return raw;
}

module.exports = { generateSegwitBlock, SEGWIT_HEAVY_MIX };
