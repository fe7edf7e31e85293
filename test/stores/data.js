'use strict';

const { createHash } = require('node:crypto');
const { sha256d } = require('../../lib/chain/hash');
const { mainnet439Blocks } = require('../helpers/fixtures');
const { parseColumns } = require('../../lib/chain/columns');
const { buildDeltas } = require('../../lib/sync/delta');
const { ChainGenerator } = require('../../tools/generator');
const { ADDR_TYPE_CODE } = require('../../lib/chain/script');

/**
 * Chains for the store conformance suite, parsed once per process: the first 439 mainnet
 * blocks, a generated regtest chain (segwit and taproot outputs, address reuse, spends within
 * a block), and hand-made blocks for what neither has (BIP30 duplicate coinbases).
 */

let mainnet = null;

/** @returns {{raws: Buffer[], blocks: Array<{height: number, cols: object, raw: Buffer}>}} */
function mainnetChain() {
  if (!mainnet) {
    const raws = mainnet439Blocks();
    mainnet = { raws, blocks: raws.map((raw, height) => ({ height, cols: parseColumns(raw), raw })) };
  }
  return mainnet;
}

const generated = new Map();

/**
 * A generated regtest chain: ~60 txs per block, coinbases spendable at once.
 * @param {{seed?: number, blocks?: number, txsPerBlock?: number}} [opts]
 * @returns {{raws: Buffer[], blocks: Array<{height: number, cols: object, raw: Buffer}>, hashes: string[]}}
 */
function generatedChain({ seed = 11, blocks = 60, txsPerBlock = 60 } = {}) {
  const id = `${seed}/${blocks}/${txsPerBlock}`;
  if (!generated.has(id)) {
    const g = new ChainGenerator({ seed, network: 'regtest', txsPerBlock, coinbaseMaturity: 1 });
    const raws = [];
    const hashes = [];
    for (let h = 0; h < blocks; h++) {
      const b = g.nextBlock();
      raws.push(b.raw);
      hashes.push(b.hash);
    }
    generated.set(id, { raws, hashes, blocks: raws.map((raw, height) => ({ height, cols: parseColumns(raw), raw })) });
  }
  return generated.get(id);
}

/**
 * Applies blocks[from..to] the way the sync does (deltas resolved against the store), in
 * batches whose sizes cycle through `sizes`.
 * @param {import('../../lib/stores/abstract').AbstractStore} store
 * @param {Array<{height: number, cols: object}>} blocks
 * @param {number} from
 * @param {number} to inclusive
 * @param {number[]} [sizes=[25]]
 */
async function syncBlocks(store, blocks, from, to, sizes = [25]) {
  let k = 0;
  for (let h = from; h <= to;) {
    const n = Math.min(sizes[k++ % sizes.length], to - h + 1);
    const tip = await store.getTip();
    const deltas = await buildDeltas(blocks.slice(h, h + n), store, tip ? tip.nextTxNum : 0);
    await store.apply(deltas);
    h += n;
  }
}

/**
 * Hand-made blocks: each tx is {txid (a label), inputs: [[label, vout]], outputs: [[sh label | null, value]]}.
 * Labels become 32-byte ids (sha256 of the label), so two txs with one label share a txid.
 * @param {Array<Array<object>>} spec one array of txs per block, from height 0
 * @returns {{blocks: Array<{height: number, cols: object}>, id: (label: string) => Buffer}}
 */
function handMadeChain(spec) {
  const id = (label) => createHash('sha256').update(label).digest();
  const hex = (buf) => Buffer.from(buf).reverse().toString('hex');
  let prev = '00'.repeat(32);
  const blocks = spec.map((txs, height) => {
    // a header that hashes to the block's hash (its merkle root is not the txids': no
    // store checks that), and sizes and offsets as if every tx took 100 bytes
    const header = Buffer.alloc(80);
    header.writeInt32LE(1, 0);
    Buffer.from(prev, 'hex').reverse().copy(header, 4);
    id(`merkle ${height}`).copy(header, 36);
    header.writeUInt32LE(1231006505 + 600 * height, 68);
    header.writeUInt32LE(0x207fffff, 72);
    const hash = hex(sha256d(header));
    const I = txs.reduce((s, t) => s + t.inputs.length, 0);
    const O = txs.reduce((s, t) => s + t.outputs.length, 0);
    const size = 81 + 100 * txs.length;
    const cols = {
      hash, prev, time: 1231006505 + 600 * height, header, size, weight: 4 * size, txCount: txs.length,
      txOffsets: Uint32Array.from({ length: txs.length + 1 }, (_, t) => 81 + 100 * t),
      txids: Buffer.alloc(32 * txs.length), inStart: new Uint32Array(txs.length + 1), outStart: new Uint32Array(txs.length + 1),
      prevouts: Buffer.alloc(36 * I), values: new Float64Array(O), idType: new Uint8Array(O), idLen: new Uint8Array(O),
      idHash: Buffer.alloc(32 * O), scripthashes: Buffer.alloc(32 * O),
    };
    let i = 0;
    let o = 0;
    txs.forEach((tx, t) => {
      id(tx.txid).copy(cols.txids, 32 * t);
      cols.inStart[t] = i;
      cols.outStart[t] = o;
      for (const [label, vout] of tx.inputs) {
        id(label).copy(cols.prevouts, 36 * i);
        cols.prevouts.writeUInt32LE(vout, 36 * i + 32);
        i++;
      }
      for (const [sh, value] of tx.outputs) {
        cols.values[o] = value;
        if (sh !== null) {
          cols.idType[o] = ADDR_TYPE_CODE.script;
          id(sh).copy(cols.scripthashes, 32 * o);
        }
        o++;
      }
    });
    cols.inStart[txs.length] = i;
    cols.outStart[txs.length] = o;
    prev = hash;
    return { height, cols };
  });
  return { blocks, id };
}

module.exports = { mainnetChain, generatedChain, syncBlocks, handMadeChain };
