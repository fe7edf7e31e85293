'use strict';

const { HEADER_SIZE } = require('../chain/header');

/**
 * Transactions and blocks in their non-witness serialization: what the service hands out,
 * because the bitcore-lib 0.13 that insight-api and bitcore-node parse them with knows no
 * segwit (a witness serialization would be misread). The txid hashes exactly these bytes and
 * a block's merkle root covers them, so nothing a pre-segwit client checks changes. Pure.
 */

/**
 * @param {import('../chain/tx').Tx} tx
 * @returns {Buffer} the tx's bytes without marker, flag and witnesses (a view when it has none)
 */
function strippedTx(tx) {
  const raw = tx.raw;
  if (!tx.hasWitness) return raw;
  // layout: version(4) marker flag | inputs and outputs | witnesses | locktime(4)
  const ioEnd = raw.length - 4 - (tx.witnessSize - 2);
  return Buffer.concat([raw.subarray(0, 4), raw.subarray(6, ioEnd), raw.subarray(raw.length - 4)]);
}

/** Bitcoin's CompactSize. */
function compactSize(n) {
  if (n < 0xfd) return Buffer.from([n]);
  if (n <= 0xffff) {
    const b = Buffer.alloc(3);
    b[0] = 0xfd;
    b.writeUInt16LE(n, 1);
    return b;
  }
  const b = Buffer.alloc(5);
  b[0] = 0xfe;
  b.writeUInt32LE(n, 1);
  return b;
}

/**
 * @param {Buffer} raw the block's bytes
 * @param {import('../chain/block').Block} block the same block, parsed
 * @returns {Buffer} raw itself when no transaction has a witness
 */
function strippedBlock(raw, block) {
  if (!block.txs.some((t) => t.hasWitness)) return raw;
  const parts = [raw.subarray(0, HEADER_SIZE), compactSize(block.txs.length)];
  for (const t of block.txs) parts.push(strippedTx(t));
  return Buffer.concat(parts);
}

module.exports = { strippedTx, strippedBlock };
