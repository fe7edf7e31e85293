'use strict';

const { parseBlock, blockWeight } = require('./block');
const { classify, writeOutputScripthash, ADDR_TYPE_CODE } = require('./script');
const { sha256Into } = require('./sha256-small');

/**
 * A parsed block reduced to what indexing needs, as flat typed arrays: no per-tx or
 * per-output objects, and every array transferable between threads without a copy.
 *
 * Output identities use a fixed 32-byte stride (20-byte hashes are zero-padded) so an
 * output's hash is `idHash.subarray(o * 32, o * 32 + idLen[o])` with no offset table.
 *
 * @typedef {object} BlockColumns
 * @property {string} hash        block hash, display hex
 * @property {string} prev        previous block hash, display hex
 * @property {number} time
 * @property {Buffer} header      the 80 header bytes (its own copy)
 * @property {number} size        serialized block size in bytes
 * @property {number} weight      BIP141 weight
 * @property {number} txCount
 * @property {Buffer} txids       32 bytes per tx, internal order
 * @property {Uint32Array} inStart  tx i's inputs are [inStart[i], inStart[i+1]) (coinbase: none)
 * @property {Uint32Array} outStart tx i's outputs are [outStart[i], outStart[i+1])
 * @property {Uint32Array} txOffsets tx i's bytes are [txOffsets[i], txOffsets[i+1]) of the block
 *                                (txOffsets[txCount] = size): its place, for reading it alone
 * @property {Buffer} prevouts    36 bytes per input: spent txid (internal order) + vout LE, as serialized
 * @property {Float64Array} values satoshis per output
 * @property {Uint8Array} idType  address-identity code per output (ADDR_TYPE_CODE); 0 = not indexed (OP_RETURN)
 * @property {Uint8Array} idLen   identity hash length per output: 20 or 32, or 0 when there is no
 *                                such hash (not indexed, or 'witness'/'script' kinds, whose only
 *                                identity is the script hash)
 * @property {Buffer} idHash      32 bytes per output (identity hash, zero-padded)
 * @property {Buffer} scripthashes 32 bytes per output: the index key, sha256 of the canonical
 *                                script (internal order; see script.outputScripthash); all zero
 *                                where idType is 0
 * @property {Uint32Array} p2pkOuts the outputs whose own script hash is not their index key (P2PK),
 *                                ascending block output indexes
 * @property {Buffer} p2pkShs     32 bytes per p2pkOuts entry: that output's own script hash
 *                                (sha256 of the P2PK script, internal order)
 */

/**
 * A Buffer with an ArrayBuffer of its own: small Buffer.allocUnsafe() results share Node's
 * pool, and transferring one to another thread would detach the whole pool.
 * @param {number} n
 */
function ownedBuffer(n) {
  return Buffer.from(new ArrayBuffer(n));
}

/**
 * @param {import('./block').Block} block
 * @returns {BlockColumns}
 */
function toColumns(block) {
  const txs = block.txs;
  const T = txs.length;
  let I = 0;
  let O = 0;
  for (let i = 0; i < T; i++) {
    I += txs[i].inputs.length;
    O += txs[i].outputs.length;
  }
  const txids = ownedBuffer(32 * T);
  const inStart = new Uint32Array(T + 1);
  const outStart = new Uint32Array(T + 1);
  const txOffsets = new Uint32Array(T + 1);
  // tx.offset counts from the start of the parsed buffer, which may hold more than this block
  const blockStart = block.raw.byteOffset - txs[0].buf.byteOffset;
  const prevouts = ownedBuffer(36 * I);
  const values = new Float64Array(O);
  const idType = new Uint8Array(O);
  const idLen = new Uint8Array(O);
  const idHash = ownedBuffer(32 * O);
  const scripthashes = ownedBuffer(32 * O);
  const p2pk = [];
  let ii = 0;
  let oo = 0;
  for (let i = 0; i < T; i++) {
    const tx = txs[i];
    tx.txid.copy(txids, 32 * i);
    txOffsets[i] = tx.offset - blockStart;
    inStart[i] = ii;
    outStart[i] = oo;
    const inputs = tx.inputs;
    const base = tx.buf.byteOffset;
    for (let k = 0; k < inputs.length; k++, ii++) {
      // txid and vout sit next to each other in the serialization: one 36-byte copy
      const at = inputs[k].txid.byteOffset - base;
      tx.buf.copy(prevouts, 36 * ii, at, at + 36);
    }
    const outputs = tx.outputs;
    for (let k = 0; k < outputs.length; k++, oo++) {
      const out = outputs[k];
      values[oo] = out.value;
      const c = classify(out.script);
      if (c.addrType !== null) {
        idType[oo] = ADDR_TYPE_CODE[c.addrType];
        if (c.hash !== null) {
          idLen[oo] = c.hash.length;
          c.hash.copy(idHash, 32 * oo);
        }
        writeOutputScripthash(out.script, c, scripthashes, 32 * oo);
        if (c.type === 'p2pk') p2pk.push(oo, out.script);
      }
    }
  }
  inStart[T] = ii;
  outStart[T] = oo;
  txOffsets[T] = block.size;
  const header = ownedBuffer(80);
  block.raw.copy(header);
  // P2PK outputs are rare after the first years: a short list, not a column per output
  const p2pkOuts = new Uint32Array(p2pk.length / 2);
  const p2pkShs = ownedBuffer(16 * p2pk.length);
  for (let k = 0; k < p2pkOuts.length; k++) {
    p2pkOuts[k] = p2pk[2 * k];
    sha256Into(p2pk[2 * k + 1], p2pkShs, 32 * k);
  }
  return {
    hash: block.hash, prev: block.prev, time: block.time, header, size: block.size, weight: blockWeight(block), txCount: T,
    txids, inStart, outStart, txOffsets, prevouts, values, idType, idLen, idHash, scripthashes, p2pkOuts, p2pkShs,
  };
}

/**
 * Parses a block straight into columns.
 * @param {Buffer} raw
 * @param {{verifyMerkle?: boolean}} [opts]
 * @returns {BlockColumns}
 */
function parseColumns(raw, opts) {
  return toColumns(parseBlock(raw, opts));
}

/**
 * The typed arrays of a BlockColumns, for a postMessage transfer list.
 * @param {BlockColumns} cols
 * @returns {ArrayBuffer[]}
 */
function transferList(cols) {
  const list = [];
  for (const a of [cols.header, cols.txids, cols.inStart, cols.outStart, cols.txOffsets, cols.prevouts, cols.values, cols.idType, cols.idLen, cols.idHash, cols.scripthashes, cols.p2pkOuts, cols.p2pkShs]) {
    if (a.byteLength > 0 && !list.includes(a.buffer)) list.push(a.buffer);
  }
  return list;
}

/**
 * The own script hash of a block's output when it is a P2PK output, else null.
 * @param {BlockColumns} cols
 * @param {number} o block output index
 * @returns {Buffer|null} a view into cols.p2pkShs
 */
function p2pkOf(cols, o) {
  const outs = cols.p2pkOuts;
  let lo = 0;
  let hi = outs.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (outs[mid] === o) return cols.p2pkShs.subarray(32 * mid, 32 * mid + 32);
    if (outs[mid] < o) lo = mid + 1;
    else hi = mid - 1;
  }
  return null;
}

module.exports = { toColumns, parseColumns, transferList, p2pkOf };
