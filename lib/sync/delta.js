'use strict';

const { SyncError } = require('../errors');
const { toDisplayHex } = require('../chain/hash');
const { p2pkOf } = require('../chain/columns');

/**
 * Turns a batch of parsed blocks into BlockDeltas: assigns TxNums and resolves every input to
 * the output it spends — from earlier in the same batch first (those outputs are not in the
 * store yet), then from the store in one getPrevouts call for the whole batch.
 *
 * A pure function of (blocks, what the store answers): the same batch always yields the same
 * deltas, which is what makes a re-run after a crash write identical bytes.
 *
 * @param {Array<{height: number, cols: import('../chain/columns').BlockColumns, locator?: import('../sources/blockreader').BlockLocator,
 *   raw?: Buffer}>} blocks consecutive, in height order; `locator` where the source read each
 *   from (blocks dir), `raw` its bytes for an index that keeps them (--txstore)
 * @param {{getPrevouts: (outpoints: Buffer) => Promise<Array<import('../stores/abstract').Prevout|null>>}} store
 * @param {number} firstTxNum TxNum of the first block's coinbase (the store's nextTxNum)
 * @returns {Promise<import('../stores/abstract').BlockDelta[]>}
 */
async function buildDeltas(blocks, store, firstTxNum) {
  let T = 0;
  for (const { cols } of blocks) T += cols.txCount;
  // the batch's txids in an open-addressing table: global tx index by txid (see TxTable)
  const created = new TxTable(T);
  const txBlock = new Int32Array(T);
  const deltas = new Array(blocks.length);
  // per block: outputs already spent in this batch (a double spend the store cannot see),
  // and inputs resolved from the batch
  const spentHere = new Array(blocks.length);
  const resolved = new Array(blocks.length);
  let txNum = firstTxNum;
  let g = 0; // global tx index in the batch
  let storeInputs = 0;
  for (let b = 0; b < blocks.length; b++) {
    const { height, cols, locator, raw } = blocks[b];
    const I = cols.inStart[cols.txCount];
    deltas[b] = {
      height,
      firstTxNum: txNum,
      cols,
      locator: locator || null,
      raw,
      spent: {
        values: new Float64Array(I),
        scripthashes: Buffer.alloc(32 * I),
        heights: new Uint32Array(I),
        txNums: new Float64Array(I),
        p2pk: new Map(),
      },
    };
    spentHere[b] = new Uint8Array(cols.outStart[cols.txCount]);
    resolved[b] = new Uint8Array(I);
    const sp = deltas[b].spent;
    for (let t = 0; t < cols.txCount; t++, g++) {
      // inputs first: a tx cannot spend its own outputs
      for (let i = cols.inStart[t]; i < cols.inStart[t + 1]; i++) {
        const src = created.find(cols.prevouts, 36 * i);
        if (src < 0) {
          storeInputs++;
          continue;
        }
        const vout = cols.prevouts.readUInt32LE(36 * i + 32);
        const sb = txBlock[src];
        const d = deltas[sb];
        const st = src - created.base[sb];
        const first = d.cols.outStart[st];
        if (vout >= d.cols.outStart[st + 1] - first) throw missing(height, cols, t, i, 'it has fewer outputs');
        const o = first + vout;
        if (spentHere[sb][o]) throw doubleSpend(height, cols, t, i);
        // OP_RETURN outputs are not indexed and can never be spent
        if (d.cols.idType[o] === 0) throw missing(height, cols, t, i, 'it is an unspendable OP_RETURN output');
        spentHere[sb][o] = 1;
        sp.values[i] = d.cols.values[o];
        copyBytes(d.cols.scripthashes, 32 * o, sp.scripthashes, 32 * i, 32);
        if (d.cols.p2pkOuts.length > 0) {
          const own = p2pkOf(d.cols, o);
          if (own) sp.p2pk.set(i, own);
        }
        sp.heights[i] = d.height;
        sp.txNums[i] = d.firstTxNum + st;
        resolved[b][i] = 1;
      }
      txBlock[g] = b;
      // the genesis coinbase is never spendable (Bitcoin Core keeps it out of its UTXO set)
      if (height !== 0) created.insert(cols.txids, 32 * t, g);
      txNum++;
    }
    created.base[b + 1] = g;
  }
  if (storeInputs > 0) await resolveFromStore(deltas, resolved, store, storeInputs);
  return deltas;
}

/**
 * The txids of one batch, for resolving spends of outputs the batch itself creates: an
 * open-addressing hash table (linear probing, at most half full) of global tx indexes,
 * hashed by a txid's first four bytes and fingerprinted by the next four — a txid is a hash,
 * so both are uniform, and a probe that meets another tx almost never compares 32 bytes.
 * Typed arrays only: no string per txid and no object per entry, which is what a Map of hex
 * or latin1 keys costs for a batch of 100k transactions.
 */
class TxTable {
  /** @param {number} count transactions in the batch */
  constructor(count) {
    let size = 16;
    while (size < 2 * count) size *= 2;
    this.mask = size - 1;
    this.slots = new Int32Array(size).fill(-1);
    this.prints = new Int32Array(size);
    this.keys = Buffer.allocUnsafe(32 * Math.max(1, count));
    /** base[b]: global index of block b's first tx */
    this.base = [0];
  }

  /**
   * Files tx `g`; a later tx with the same txid replaces an earlier one (the duplicate
   * coinbases of BIP30: only the later one is spendable).
   */
  insert(txids, at, g) {
    const keys = this.keys;
    copyBytes(txids, at, keys, 32 * g, 32);
    const print = txids.readInt32LE(at + 4);
    let h = txids.readUInt32LE(at) & this.mask;
    for (;;) {
      const s = this.slots[h];
      if (s < 0 || (this.prints[h] === print && sameBytes(keys, 32 * s, keys, 32 * g, 32))) {
        this.slots[h] = g;
        this.prints[h] = print;
        return;
      }
      h = (h + 1) & this.mask;
    }
  }

  /** @returns {number} the global index of the tx whose txid is at buf[at..at+32], else -1 */
  find(buf, at) {
    const print = buf.readInt32LE(at + 4);
    let h = buf.readUInt32LE(at) & this.mask;
    for (;;) {
      const s = this.slots[h];
      if (s < 0) return -1;
      if (this.prints[h] === print && sameBytes(buf, at, this.keys, 32 * s, 32)) return s;
      h = (h + 1) & this.mask;
    }
  }
}

// Byte loops for 32- and 36-byte keys: Buffer#copy and Buffer#compare cross into C++ and
// validate their arguments on every call, which costs more than the bytes themselves.

function copyBytes(src, from, dst, to, n) {
  for (let k = 0; k < n; k++) dst[to + k] = src[from + k];
}

function sameBytes(a, ai, b, bi, n) {
  for (let k = 0; k < n; k++) if (a[ai + k] !== b[bi + k]) return false;
  return true;
}

/** Resolves every input not resolved from the batch with one store call, in input order. */
async function resolveFromStore(deltas, resolved, store, count) {
  const outpoints = Buffer.allocUnsafe(36 * count);
  // where each asked-for outpoint's input sits: block and input index (typed, not an object
  // per input: a batch can have hundreds of thousands)
  const whereBlock = new Int32Array(count);
  const whereInput = new Int32Array(count);
  // outpoints asked for so far, to catch two inputs of the batch spending the same one
  let size = 16;
  while (size < 2 * count) size *= 2;
  const mask = size - 1;
  const seen = new Int32Array(size).fill(-1);
  const prints = new Int32Array(size);
  let n = 0;
  for (let b = 0; b < deltas.length; b++) {
    const d = deltas[b];
    const cols = d.cols;
    const pv = cols.prevouts;
    for (let i = cols.inStart[1]; i < cols.inStart[cols.txCount]; i++) {
      if (resolved[b][i]) continue;
      const print = pv.readInt32LE(36 * i + 4);
      let h = (pv.readUInt32LE(36 * i) ^ Math.imul(pv.readUInt32LE(36 * i + 32), 0x9e3779b1)) & mask;
      for (;;) {
        const s = seen[h];
        if (s < 0) break;
        if (prints[h] === print && sameBytes(pv, 36 * i, outpoints, 36 * s, 36)) throw doubleSpend(d.height, cols, txOf(cols, i), i);
        h = (h + 1) & mask;
      }
      seen[h] = n;
      prints[h] = print;
      copyBytes(pv, 36 * i, outpoints, 36 * n, 36);
      whereBlock[n] = b;
      whereInput[n++] = i;
    }
  }
  // the inputs of the source's valid best chain spend transactions the index holds
  const found = await store.getPrevouts(outpoints.subarray(0, 36 * n), { indexed: true });
  for (let k = 0; k < n; k++) {
    const d = deltas[whereBlock[k]];
    const i = whereInput[k];
    const p = found[k];
    if (!p) throw missing(d.height, d.cols, txOf(d.cols, i), i, 'the index holds no such unspent output');
    const sp = d.spent;
    sp.values[i] = p.value;
    copyBytes(p.scripthash, 0, sp.scripthashes, 32 * i, 32);
    if (p.p2pk) sp.p2pk.set(i, Buffer.from(p.p2pk));
    sp.heights[i] = p.height;
    sp.txNums[i] = p.txNum;
  }
}

/** The tx of a block that input `i` belongs to (for error messages only). */
function txOf(cols, i) {
  let lo = 0;
  let hi = cols.txCount - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (cols.inStart[mid] <= i) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function describeInput(cols, t, i) {
  const txid = toDisplayHex(cols.txids.subarray(32 * t, 32 * t + 32));
  const prev = toDisplayHex(cols.prevouts.subarray(36 * i, 36 * i + 32));
  const vout = cols.prevouts.readUInt32LE(36 * i + 32);
  return { txid, prevout: `${prev}:${vout}` };
}

function missing(height, cols, t, i, why) {
  const { txid, prevout } = describeInput(cols, t, i);
  return new SyncError('ERR_MISSING_PREVOUT',
    `block ${height}: tx ${txid} spends ${prevout}, but ${why} — the index and the block source disagree ` +
    '(a block source of another chain, or a damaged index: run "addrindex verify")',
    { height, txid, prevout });
}

function doubleSpend(height, cols, t, i) {
  const { txid, prevout } = describeInput(cols, t, i);
  return new SyncError('ERR_DOUBLE_SPEND', `block ${height}: tx ${txid} spends ${prevout}, which is already spent`,
    { height, txid, prevout });
}

module.exports = { buildDeltas };
