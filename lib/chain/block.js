'use strict';

const { ParseError } = require('../errors');
const { parseHeader, HEADER_SIZE } = require('./header');
const { parseTx, readVarint } = require('./tx');
const { computeMerkle } = require('./merkle');

const MIN_TX_SIZE = 60; // version + 1 input + 1 output + locktime, all minimal

/**
 * @typedef {import('./header').BlockHeader & {
 *   size: number,
 *   txs: import('./tx').Tx[],
 * }} Block
 */

/**
 * Parses a whole block: header, every transaction, txids, and (by default) checks that the
 * txids hash to the header's merkle root. Scripts and outpoints are views into `buf`.
 *
 * @param {Buffer} buf
 * @param {object} [opts]
 * @param {number} [opts.offset=0]       where the block starts in `buf`
 * @param {number} [opts.end=buf.length] where it must end (a block file record's size)
 * @param {boolean} [opts.verifyMerkle=true]
 * @returns {Block}
 */
function parseBlock(buf, opts = {}) {
  const offset = opts.offset || 0;
  const end = opts.end === undefined ? buf.length : opts.end;
  if (end > buf.length) {
    throw new ParseError('ERR_TRUNCATED', `truncated: block claims to end at ${end}, buffer holds ${buf.length} bytes`, { offset: end });
  }
  const header = parseHeader(buf, offset);
  if (offset + HEADER_SIZE > end) {
    throw new ParseError('ERR_TRUNCATED', `truncated: a block header needs 80 bytes at offset ${offset}`, { offset });
  }
  const st = { pos: offset + HEADER_SIZE };
  const at = st.pos;
  const n = readVarint(buf, st, end, 'transaction count');
  if (n === 0) throw new ParseError('ERR_BAD_BLOCK', `block ${header.hash} has no transactions`, { offset: at });
  if (n * MIN_TX_SIZE > end - st.pos) {
    throw new ParseError('ERR_TRUNCATED', `truncated: ${n} transactions cannot fit in the ${end - st.pos} bytes left`, { offset: at });
  }
  const txs = new Array(n);
  let pos = st.pos;
  for (let i = 0; i < n; i++) {
    const tx = parseTx(buf, pos, end, i === 0);
    txs[i] = tx;
    pos += tx.size;
  }
  if (pos !== end) {
    throw new ParseError('ERR_TRAILING_BYTES', `block ${header.hash}: ${end - pos} bytes follow its last transaction`, { offset: pos });
  }
  if (opts.verifyMerkle !== false) checkMerkle(header, txs);
  header.size = end - offset;
  header.txs = txs;
  return header;
}

/**
 * Throws ERR_MERKLE_MISMATCH unless the txids produce the header's merkle root without the
 * duplicate-pair mutation.
 * @param {import('./header').BlockHeader} header
 * @param {import('./tx').Tx[]} txs
 */
function checkMerkle(header, txs) {
  const ids = new Array(txs.length);
  for (let i = 0; i < txs.length; i++) ids[i] = txs[i].txid;
  const { root, mutated } = computeMerkle(ids);
  if (!root.equals(header.merkleRoot)) {
    throw new ParseError('ERR_MERKLE_MISMATCH', `block ${header.hash}: transactions do not match the header's merkle root`);
  }
  if (mutated) {
    throw new ParseError('ERR_MERKLE_MUTATED', `block ${header.hash}: duplicate transactions (CVE-2012-2459 mutation)`);
  }
}

/**
 * BIP141 block weight: every byte counts 4, except witness bytes, which count 1.
 * @param {Block} block
 * @returns {number}
 */
function blockWeight(block) {
  let witness = 0;
  for (const tx of block.txs) witness += tx.witnessSize;
  return 4 * block.size - 3 * witness;
}

module.exports = { parseBlock, checkMerkle, blockWeight };
