'use strict';

/**
 * The bundled chain data decoded by bitcore-lib, once per test process: the independent
 * reference the formatter and parser tests compare against. Nothing here uses lib/chain.
 */

const bitcore = require('bitcore-lib');
const { RAW_BLOCKS, readFixture, networkOf, mainnet439Blocks } = require('./fixtures');

/**
 * @typedef {object} RefBlock
 * @property {string} name      fixture name (or "mainnet/439:<height>")
 * @property {string} network   addrindex network name
 * @property {Buffer} raw
 * @property {number|null} height known for the 439-block chain, null for the single raw blocks
 * @property {import('bitcore-lib').Block} ref bitcore-lib's decoding
 */

let cache = null;

/** @returns {RefBlock[]} every bundled block: the ten raw blocks, then heights 0-438 */
function referenceBlocks() {
  if (cache) return cache;
  cache = [];
  for (const rel of RAW_BLOCKS) {
    const raw = readFixture(rel);
    cache.push({ name: rel, network: networkOf(rel), raw, height: null, ref: bitcore.Block.fromBuffer(raw) });
  }
  mainnet439Blocks().forEach((raw, height) => {
    cache.push({ name: `mainnet/439:${height}`, network: 'main', raw, height, ref: bitcore.Block.fromBuffer(raw) });
  });
  return cache;
}

let outputs = null;

/**
 * Every output of the 439-block chain by outpoint, as bitcore-lib reads it: the prevouts of
 * every input in that chain (they all spend outputs of earlier blocks).
 * @returns {Map<string, {value: number, script: Buffer}>} "txid:vout" (display hex) → output
 */
function chainOutputs() {
  if (outputs) return outputs;
  outputs = new Map();
  for (const b of referenceBlocks()) {
    if (b.height === null) continue;
    for (const tx of b.ref.transactions) {
      tx.outputs.forEach((o, n) => outputs.set(`${tx.hash}:${n}`, { value: o.satoshis, script: o.script.toBuffer() }));
    }
  }
  return outputs;
}

module.exports = { referenceBlocks, chainOutputs };
