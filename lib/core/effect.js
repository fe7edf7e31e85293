'use strict';

const { Changes } = require('./changes');
const { FUNDED, SPENT } = require('./rules');
const { corrupt } = require('./checks');

/**
 * The effect of applying or reverting blocks, computed once for every backend, as pure
 * functions of their inputs: what each script hash gains or loses (counters, history entries,
 * unspent outputs), which unspent outputs appear and disappear, which txids map to which
 * TxNums, and the undo record of each block. The rules live here and nowhere else:
 *
 * - The genesis coinbase is not spendable (Bitcoin Core never adds it to its UTXO set): it
 *   gets TxNum 0 and its txid, but none of its outputs is filed anywhere.
 * - Outputs without a script hash (OP_RETURN) are filed nowhere.
 * - BIP30 (mainnet 91842 and 91880), as Bitcoin Core: a coinbase whose txid an earlier
 *   transaction has takes the txid, and the earlier outputs still unspent leave the UTXO set,
 *   counted as spent by the new coinbase. Undo records the earlier TxNum and those outputs, so
 *   a revert restores both.
 *
 * A backend reads what the functions need (the unspent outputs of reused txids; on revert, the
 * undo records and the outputs the reverted transactions left unspent), calls them, and only
 * persists what they return.
 */

/**
 * The outputs of one transaction, as a backend holds them unspent.
 * @typedef {object} TxOutputs
 * @property {number} count
 * @property {ArrayLike<number>} vouts        ascending
 * @property {ArrayLike<number>} values
 * @property {Buffer} scripthashes            32 bytes per output
 */

/**
 * An earlier transaction whose txid a coinbase of the batch repeats (BIP30).
 * @typedef {object} ReusedTx
 * @property {number} txNum
 * @property {number} height
 * @property {TxOutputs|null} outputs  what it still has unspent (null: nothing)
 */

/**
 * One block's undo record: every output its inputs spent (BIP30 replacements first), and the
 * txids its coinbase took from earlier transactions. A backend persists count..dups; `heights`
 * and `txidOf` serve backends that keep them beside it. The arrays are the block's own
 * columns where they can be (no copy per input): read them, do not keep them past the write.
 * @typedef {object} BlockUndo
 * @property {number} count
 * @property {ArrayLike<number>} txNums   TxNum that created each spent output
 * @property {ArrayLike<number>} vouts
 * @property {ArrayLike<number>} values
 * @property {Buffer} shs                 32 bytes each (zero: the output was not indexed)
 * @property {Array<{position: number, oldTxNum: number}>} dups
 * @property {ArrayLike<number>} [heights] height of the block that created each spent output
 * @property {(i: number) => Buffer} [txidOf] the txid of spent output i
 */

/**
 * @typedef {object} ApplyEffect
 * @property {number} first             TxNum of the batch's first transaction
 * @property {number} end               the next TxNum after the batch
 * @property {import('../stores/abstract').BlockDelta[]} blocks
 * @property {Changes} changes          per script hash: counters, entries, UTXOs in and out
 * @property {Uint32Array} txBlock      batch tx (TxNum - first) -> index in `blocks`
 * @property {Uint8Array} replaced      batch txs whose txid a later coinbase of the batch took: no tx row, no outputs
 * @property {Created} created          outputs created by the batch and unspent at its end, in (TxNum, vout) order
 * @property {Map<number, Spends>} spends  every transaction the batch spends from, by TxNum
 *   (those of the batch itself included: TxNum >= first)
 * @property {Array<{txid: Buffer, txNum: number}>} txidsTaken  index txids a coinbase of the batch took, with the TxNum they leave
 * @property {BlockUndo[]} undo         one per block
 */

/**
 * The outputs of one transaction a batch spends, and by what: vouts in the order spent, the
 * spending TxNum and input of each (vin -1: a coinbase's BIP30 replacement took the output,
 * no input spent it).
 * @typedef {object} Spends
 * @property {Buffer} txid       the spent transaction's (internal order)
 * @property {number[]} vouts
 * @property {number[]} by
 * @property {number[]} vins
 * @property {boolean} replaced  a coinbase took its txid (BIP30): every output it had left is among vouts
 */

/**
 * @typedef {object} Created
 * @property {number} n
 * @property {Float64Array} txNums
 * @property {Uint32Array} vouts
 * @property {Float64Array} values
 * @property {Uint32Array} block        index in `blocks` of the block that created it
 * @property {Uint32Array} at           byte offset of its script hash in that block's `cols.scripthashes`
 */

/**
 * The effect of applying blocks to an index.
 * @param {import('../stores/abstract').BlockDelta[]} blocks consecutive, checked to extend the tip
 * @param {Map<string, ReusedTx>} reused  by latin1 txid: the coinbase txids of the batch the index already has
 * @param {{keyBytes?: number}} [opts] bytes of a script hash that name an account (Changes)
 * @returns {ApplyEffect}
 */
function applyEffect(blocks, reused, { keyBytes = 32 } = {}) {
  const first = blocks[0].firstTxNum;
  let T = 0;
  let O = 0;
  for (const b of blocks) {
    T += b.cols.txCount;
    O += b.cols.outStart[b.cols.txCount];
  }
  const ch = new Changes(Math.max(1024, O), keyBytes);
  const outBase = new Uint32Array(T + 1); // batch tx -> index of its first output in the batch
  const txBlock = new Uint32Array(T);
  const addAt = new Int32Array(O).fill(-1); // batch output -> its UTXO add, to cancel it
  const gone = new Uint8Array(O); // batch outputs spent (or replaced) within the batch
  const replaced = new Uint8Array(T);
  const coinbases = new Map(); // latin1 txid -> batch tx, for BIP30 within the batch
  const spends = new Map();
  const txidsTaken = [];
  const undo = new Array(blocks.length);
  const spend = (txNum, txid, vout, by, vin) => {
    let s = spends.get(txNum);
    if (!s) spends.set(txNum, (s = { txid, vouts: [], by: [], vins: [], replaced: false }));
    s.vouts.push(vout);
    s.by.push(by);
    s.vins.push(vin);
    return s;
  };
  let tx = 0;
  let out = 0;
  for (let b = 0; b < blocks.length; b++) {
    const { height, cols, spent, firstTxNum } = blocks[b];
    const { inStart, outStart, idType, values, prevouts } = cols;
    const u = new UndoBuilder();
    for (let t = 0; t < cols.txCount; t++, tx++) {
      const txNum = firstTxNum + t;
      outBase[tx] = out + outStart[t];
      txBlock[tx] = b;
      if (t === 0 && height !== 0) {
        const name = cols.txids.latin1Slice(0, 32);
        const earlier = coinbases.get(name);
        coinbases.set(name, tx);
        if (earlier !== undefined) {
          // the txid of a transaction of this batch: its outputs were never written
          const e = blocks[txBlock[earlier]];
          const ec = e.cols;
          for (let o = ec.outStart[0]; o < ec.outStart[1]; o++) {
            const g = outBase[earlier] + o;
            if (ec.idType[o] === 0 || gone[g] || e.height === 0) continue;
            gone[g] = 1;
            ch.cancelUtxo(addAt[g]);
            const j = ch.touch(ec.scripthashes, 32 * o, height);
            ch.sent[j] += ec.values[o];
            ch.spent[j]++;
            ch.entry(j, txNum, SPENT);
            u.push(e.firstTxNum, o, ec.values[o], ec.scripthashes, 32 * o, e.height, ec.txids.subarray(0, 32));
            spend(e.firstTxNum, ec.txids.subarray(0, 32), o, txNum, -1).replaced = true;
          }
          replaced[earlier] = 1;
          u.dups.push({ position: 0, oldTxNum: e.firstTxNum });
        } else if (reused.has(name)) {
          // the txid of a transaction in the index
          const r = reused.get(name);
          const before = spends.get(r.txNum);
          const rec = r.outputs;
          for (let k = 0; rec && k < rec.count; k++) {
            if (before && before.vouts.includes(rec.vouts[k])) continue;
            const j = ch.touch(rec.scripthashes, 32 * k, height);
            ch.sent[j] += rec.values[k];
            ch.spent[j]++;
            ch.entry(j, txNum, SPENT);
            ch.delUtxo(j, r.txNum, rec.vouts[k]);
            u.push(r.txNum, rec.vouts[k], rec.values[k], rec.scripthashes, 32 * k, r.height, cols.txids.subarray(0, 32));
            spend(r.txNum, cols.txids.subarray(0, 32), rec.vouts[k], txNum, -1);
          }
          if (spends.has(r.txNum)) spends.get(r.txNum).replaced = true;
          txidsTaken.push({ txid: cols.txids.subarray(0, 32), txNum: r.txNum });
          u.dups.push({ position: 0, oldTxNum: r.txNum });
        }
      }
      for (let i = inStart[t]; i < inStart[t + 1]; i++) {
        const prev = spent.txNums[i];
        const vout = prevouts.readUInt32LE(36 * i + 32);
        const j = ch.touch(spent.scripthashes, 32 * i, height);
        ch.sent[j] += spent.values[i];
        ch.spent[j]++;
        ch.entry(j, txNum, SPENT);
        spend(prev, prevouts.subarray(36 * i, 36 * i + 32), vout, txNum, i - inStart[t]);
        if (prev >= first) {
          const o = outBase[prev - first] + vout;
          gone[o] = 1;
          if (addAt[o] >= 0) ch.cancelUtxo(addAt[o]);
        } else {
          ch.delUtxo(j, prev, vout);
        }
      }
      if (height === 0) continue; // the genesis outputs are not spendable: filed nowhere
      for (let o = outStart[t]; o < outStart[t + 1]; o++) {
        if (idType[o] === 0) continue;
        const j = ch.touch(cols.scripthashes, 32 * o, height);
        ch.received[j] += values[o];
        ch.funded[j]++;
        ch.entry(j, txNum, FUNDED);
        addAt[out + o] = ch.addUtxo(j, txNum, o - outStart[t], values[o]);
      }
    }
    undo[b] = u.finish(blocks[b]);
    out += outStart[cols.txCount];
  }
  outBase[T] = out;

  // the outputs left unspent at the batch's end
  let n = 0;
  for (let k = 0; k < O; k++) if (addAt[k] >= 0 && !gone[k]) n++;
  const created = {
    n, txNums: new Float64Array(n), vouts: new Uint32Array(n), values: new Float64Array(n), block: new Uint32Array(n), at: new Uint32Array(n),
  };
  let c = 0;
  tx = 0;
  for (let b = 0; b < blocks.length; b++) {
    const { height, cols, firstTxNum } = blocks[b];
    const { outStart, idType, values } = cols;
    for (let t = 0; t < cols.txCount; t++, tx++) {
      if (replaced[tx] || height === 0) continue;
      const base = outBase[tx] - outStart[t];
      for (let o = outStart[t]; o < outStart[t + 1]; o++) {
        if (idType[o] === 0 || gone[base + o]) continue;
        created.txNums[c] = firstTxNum + t;
        created.vouts[c] = o - outStart[t];
        created.values[c] = values[o];
        created.block[c] = b;
        created.at[c] = 32 * o;
        c++;
      }
    }
  }

  return { first, end: first + T, blocks, changes: ch, txBlock, replaced, created, spends, txidsTaken, undo };
}

/**
 * The effect of reverting the blocks above a height.
 * @param {object} input
 * @param {number} input.cutoff        first TxNum reverted
 * @param {number} input.end           the next TxNum before the revert
 * @param {number} input.fromHeight    the first block reverted
 * @param {BlockUndo[]} input.undos    the undo of each reverted block, from fromHeight up
 * @param {number[]} input.firstTxNums the first TxNum of each reverted block
 * @param {Buffer} input.txids         the txids of TxNums [cutoff, end), 32 bytes each
 * @param {Iterable<TxOutputs & {txNum: number, height: number}>} input.created  the outputs
 *   of reverted transactions still unspent
 * @param {number} [input.keyBytes=32]
 * @returns {{changes: Changes, restore: Map<number, Array<{vout: number, value: number, shs: Buffer, at: number, undo: number, index: number}>>,
 *   txidsReleased: number[], txidsReturned: Array<{at: number, txNum: number}>}}
 *   restore: outputs of earlier transactions that are unspent again, by TxNum (`undo`/`index`
 *   name the record they come from); txidsReleased: offsets in `txids` whose TxNums go;
 *   txidsReturned: txids a reverted coinbase had taken, back to their earlier TxNum
 */
function revertEffect({ cutoff, end, fromHeight, undos, firstTxNums, txids, created, keyBytes = 32 }) {
  // txids a reverted coinbase had taken map to their earlier TxNum again (BIP30)
  const reborn = new Map(); // latin1 txid -> old TxNum
  for (let k = 0; k < undos.length; k++) {
    for (const d of undos[k].dups) {
      const at = 32 * (firstTxNums[k] + d.position - cutoff);
      if (d.oldTxNum < cutoff) reborn.set(txids.latin1Slice(at, at + 32), d.oldTxNum);
    }
  }
  const txidsReleased = [];
  const txidsReturned = [];
  for (let t = 0; t < end - cutoff; t++) {
    txidsReleased.push(32 * t);
    const old = reborn.get(txids.latin1Slice(32 * t, 32 * t + 32));
    if (old !== undefined) txidsReturned.push({ at: 32 * t, txNum: old });
  }

  // per script hash: outputs the reverted txs created (still unspent, or spent within the
  // reverted blocks), and outputs they spent
  const ch = new Changes(1024, keyBytes);
  for (const rec of created) {
    for (let o = 0; o < rec.count; o++) {
      const j = ch.touch(rec.scripthashes, 32 * o, rec.height);
      ch.received[j] -= rec.values[o];
      ch.funded[j]--;
      ch.delUtxo(j, rec.txNum, rec.vouts[o]);
    }
  }
  const restore = new Map();
  for (let k = 0; k < undos.length; k++) {
    const u = undos[k];
    for (let i = 0; i < u.count; i++) {
      const prev = u.txNums[i];
      const j = ch.touch(u.shs, 32 * i, fromHeight + k);
      ch.sent[j] -= u.values[i];
      ch.spent[j]--;
      if (prev >= cutoff) {
        ch.received[j] -= u.values[i]; // created and spent within the reverted blocks
        ch.funded[j]--;
      } else {
        ch.addUtxo(j, prev, u.vouts[i], u.values[i]);
        let list = restore.get(prev);
        if (!list) restore.set(prev, (list = []));
        list.push({ vout: u.vouts[i], value: u.values[i], shs: u.shs, at: 32 * i, undo: k, index: i });
      }
    }
  }
  for (const [txNum, list] of restore) {
    list.sort((a, b) => a.vout - b.vout);
    for (let k = 1; k < list.length; k++) {
      if (list[k].vout === list[k - 1].vout) throw corrupt(`undo puts back output ${txNum}:${list[k].vout} twice`);
    }
  }
  return { changes: ch, restore, txidsReleased, txidsReturned };
}

/**
 * One block's undo record: the outputs BIP30 takes (met one by one, rare), then every input's
 * spent output, which the block's own columns already hold.
 */
class UndoBuilder {
  constructor() {
    this.extra = [];
    this.dups = [];
  }

  /** An output a coinbase's BIP30 replacement takes. */
  push(txNum, vout, value, shs, at, height, txid) {
    this.extra.push({ txNum, vout, value, sh: shs.subarray(at, at + 32), height, txid });
  }

  /**
   * @param {import('../stores/abstract').BlockDelta} block
   * @returns {BlockUndo}
   */
  finish({ cols, spent }) {
    const I = cols.inStart[cols.txCount];
    const x = this.extra.length;
    const vouts = new Float64Array(x + I);
    for (let i = 0; i < I; i++) vouts[x + i] = cols.prevouts.readUInt32LE(36 * i + 32);
    const inputTxid = (i) => cols.prevouts.subarray(36 * i, 36 * i + 32);
    if (x === 0) {
      return {
        count: I, txNums: spent.txNums.subarray(0, I), vouts, values: spent.values.subarray(0, I),
        shs: spent.scripthashes.subarray(0, 32 * I), dups: this.dups, heights: spent.heights.subarray(0, I), txidOf: inputTxid,
      };
    }
    const cat = (A, pick, from) => {
      const out = new A(x + I);
      this.extra.forEach((e, k) => { out[k] = pick(e); });
      out.set(from.subarray(0, I), x);
      return out;
    };
    const shs = Buffer.allocUnsafe(32 * (x + I));
    this.extra.forEach((e, k) => e.sh.copy(shs, 32 * k));
    spent.scripthashes.copy(shs, 32 * x, 0, 32 * I);
    this.extra.forEach((e, k) => { vouts[k] = e.vout; });
    return {
      count: x + I,
      txNums: cat(Float64Array, (e) => e.txNum, spent.txNums),
      vouts,
      values: cat(Float64Array, (e) => e.value, spent.values),
      shs,
      dups: this.dups,
      heights: cat(Uint32Array, (e) => e.height, spent.heights),
      txidOf: (i) => (i < x ? this.extra[i].txid : inputTxid(i - x)),
    };
  }
}

/**
 * The script hashes a block touched — its outputs' and those of the outputs its inputs spent —
 * each once: whose history, balance or UTXOs the block changed (what a subscriber is told).
 * @param {import('../stores/abstract').BlockDelta} block
 * @param {BlockUndo} undo the block's own
 * @returns {Buffer} 32 bytes each, internal order
 */
function touchedBy(block, undo) {
  const seen = new Set();
  const add = (buf, at) => {
    for (let k = 0; k < 32; k++) {
      if (buf[at + k] !== 0) {
        seen.add(buf.latin1Slice(at, at + 32));
        return;
      }
    }
  };
  const { cols } = block;
  if (block.height !== 0) for (let o = 0; o < cols.outStart[cols.txCount]; o++) if (cols.idType[o] !== 0) add(cols.scripthashes, 32 * o);
  for (let i = 0; i < undo.count; i++) add(undo.shs, 32 * i);
  return Buffer.from([...seen].join(''), 'latin1');
}

/**
 * The height and txid of a transaction of an applied batch.
 * @param {ApplyEffect} effect
 * @param {number} txNum in [effect.first, effect.end)
 * @returns {{height: number, txid: Buffer}}
 */
function batchTx(effect, txNum) {
  const b = effect.blocks[effect.txBlock[txNum - effect.first]];
  const t = txNum - b.firstTxNum;
  return { height: b.height, txid: b.cols.txids.subarray(32 * t, 32 * t + 32) };
}

module.exports = { applyEffect, revertEffect, batchTx, touchedBy };
