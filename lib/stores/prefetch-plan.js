'use strict';

const { HASHX_LEN, TX_PREFIX_LEN } = require('./layout');

/**
 * What a batch will read from the key-value schema, as far as its blocks alone tell: the tx
 * rows of every txid it spends from and of every txid it adds (keyed by the txid's first
 * bytes), the accounts of every script it pays. The rest — the outputs rows the tx rows
 * name, the accounts of the scripts those outputs paid — follows from rows the prefetcher
 * reads itself (prefetch-worker.js). Pure: bytes in, bytes out.
 *
 * @typedef {object} PrefetchPlan
 * @property {Buffer} inputs    per input: the spent txid's first TX_PREFIX_LEN bytes, then its vout (u32 LE)
 * @property {Buffer} txids     per transaction of the batch: its txid's first TX_PREFIX_LEN bytes
 * @property {Buffer} accounts  per indexed output (and per P2PK output's own script): the script hash's first HASHX_LEN bytes
 */

/** Bytes of one input in `inputs`. */
const INPUT_BYTES = TX_PREFIX_LEN + 4;

/**
 * @param {Array<{cols: import('../chain/columns').BlockColumns}>} blocks
 * @returns {PrefetchPlan}
 */
function prefetchPlan(blocks) {
  let I = 0;
  let T = 0;
  let A = 0;
  for (const { cols } of blocks) {
    I += cols.inStart[cols.txCount];
    T += cols.txCount;
    for (let o = 0; o < cols.outStart[cols.txCount]; o++) if (cols.idType[o] !== 0) A++;
    A += cols.p2pkOuts.length;
  }
  const inputs = Buffer.allocUnsafeSlow(INPUT_BYTES * I);
  const txids = Buffer.allocUnsafeSlow(TX_PREFIX_LEN * T);
  const accounts = Buffer.allocUnsafeSlow(HASHX_LEN * A);
  let i = 0;
  let t = 0;
  let a = 0;
  for (const { cols } of blocks) {
    const pv = cols.prevouts;
    for (let k = 0; k < cols.inStart[cols.txCount]; k++, i += INPUT_BYTES) {
      pv.copy(inputs, i, 36 * k, 36 * k + TX_PREFIX_LEN);
      inputs.writeUInt32LE(pv.readUInt32LE(36 * k + 32), i + TX_PREFIX_LEN);
    }
    for (let k = 0; k < cols.txCount; k++, t += TX_PREFIX_LEN) cols.txids.copy(txids, t, 32 * k, 32 * k + TX_PREFIX_LEN);
    for (let o = 0; o < cols.outStart[cols.txCount]; o++) {
      if (cols.idType[o] === 0) continue;
      cols.scripthashes.copy(accounts, a, 32 * o, 32 * o + HASHX_LEN);
      a += HASHX_LEN;
    }
    for (let k = 0; k < cols.p2pkOuts.length; k++, a += HASHX_LEN) cols.p2pkShs.copy(accounts, a, 32 * k, 32 * k + HASHX_LEN);
  }
  return { inputs, txids, accounts };
}

module.exports = { prefetchPlan, INPUT_BYTES };
