'use strict';

const { Changes } = require('./changes');
const { FUNDED, SPENT } = require('./rules');
const { corrupt } = require('./checks');
const { TxMix } = require('./p2pk');
const { p2pkOf } = require('../chain/columns');

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
 * - P2PK (lib/core/p2pk.js): an output counts toward its key's P2PKH script hash (the address
 *   view) and toward its own script's account (the script view), and the address account
 *   records the P2PK scripts it counts and its "both" entries.
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
 * @property {Map<number, Buffer>|null} [p2pk] the own script hash of output k when it is P2PK
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
 * @property {Map<number, Buffer>} p2pk    the own script hash of spent output i when it was P2PK
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
 * @property {Array<BlockUndo|null>} undo one per block; null below `undoFrom` (not built)
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
 * @property {Map<number, Buffer>} p2pk  the own script hash of created output c when it is P2PK
 */

/**
 * The effect of applying blocks to an index.
 * @param {import('../stores/abstract').BlockDelta[]} blocks consecutive, checked to extend the tip
 * @param {Map<string, ReusedTx>} reused  by latin1 txid: the coinbase txids of the batch the index already has
 * @param {{keyBytes?: number, undoFrom?: number}} [opts] keyBytes: bytes of a script hash that
 *   name an account (Changes); undoFrom: the lowest height whose undo record the caller keeps
 *   (rules.js undoFloor), the blocks below get none
 * @returns {ApplyEffect}
 */
function applyEffect(blocks, reused, { keyBytes = 32, undoFrom = -1 } = {}) {
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
  const ownAt = new Int32Array(O).fill(-1); // batch P2PK output -> its UTXO add in its own script's account
  const gone = new Uint8Array(O); // batch outputs spent (or replaced) within the batch
  const replaced = new Uint8Array(T);
  const coinbases = new Map(); // latin1 txid -> batch tx, for BIP30 within the batch
  const spends = new Map();
  const txidsTaken = [];
  const undo = new Array(blocks.length);
  const mix = new TxMix(ch);
  let mixing = false; // the tx being applied touches a P2PK script: its touches are noted
  const spend = (txNum, txid, vout, by, vin) => {
    let s = spends.get(txNum);
    if (s) {
      s.vouts.push(vout);
      s.by.push(by);
      s.vins.push(vin);
    } else {
      // lists of one to start: most transactions have one output spent per batch, and an empty
      // list's first push takes room for 17
      spends.set(txNum, (s = { txid, vouts: [vout], by: [by], vins: [vin], replaced: false }));
    }
    return s;
  };
  // An output leaves its account, and its P2PK script's own when `own` is given: counters and
  // history; the caller moves the UTXO (`ownSlot`: the P2PK account's slot, or -1).
  let ownSlot = -1;
  const leave = (shs, at, value, own, txNum, height) => {
    const j = ch.touch(shs, at, height);
    ch.sent[j] += value;
    ch.spent[j]++;
    ch.entry(j, txNum, SPENT);
    if (mixing) mix.note(j, SPENT, own);
    ownSlot = -1;
    if (own) {
      ownSlot = ch.touch(own, 0, height);
      ch.sent[ownSlot] += value;
      ch.spent[ownSlot]++;
      ch.entry(ownSlot, txNum, SPENT);
    }
    return j;
  };
  let tx = 0;
  let out = 0;
  for (let b = 0; b < blocks.length; b++) {
    const { height, cols, spent, firstTxNum } = blocks[b];
    const { inStart, outStart, idType, values, prevouts, p2pkOuts, p2pkShs } = cols;
    const spentOwn = spent.p2pk && spent.p2pk.size > 0 ? spent.p2pk : null;
    let pk = 0; // the next of the block's P2PK outputs
    const u = new UndoBuilder();
    for (let t = 0; t < cols.txCount; t++, tx++) {
      const txNum = firstTxNum + t;
      outBase[tx] = out + outStart[t];
      txBlock[tx] = b;
      mixing = pk < p2pkOuts.length && p2pkOuts[pk] < outStart[t + 1];
      for (let i = inStart[t]; spentOwn && !mixing && i < inStart[t + 1]; i++) mixing = spentOwn.has(i);
      if (t === 0 && height !== 0) {
        const name = cols.txids.latin1Slice(0, 32);
        const earlier = coinbases.get(name);
        coinbases.set(name, tx);
        if (earlier !== undefined) {
          // the txid of a transaction of this batch: its outputs were never written
          const e = blocks[txBlock[earlier]];
          const ec = e.cols;
          for (let o = ec.outStart[0]; o < ec.outStart[1] && !mixing; o++) mixing = p2pkOf(ec, o) !== null;
          if (mixing) mix.begin();
          for (let o = ec.outStart[0]; o < ec.outStart[1]; o++) {
            const g = outBase[earlier] + o;
            if (ec.idType[o] === 0 || gone[g] || e.height === 0) continue;
            gone[g] = 1;
            ch.cancelUtxo(addAt[g]);
            const own = p2pkOf(ec, o);
            leave(ec.scripthashes, 32 * o, ec.values[o], own, txNum, height);
            if (own) ch.cancelUtxo(ownAt[g]);
            u.push(e.firstTxNum, o, ec.values[o], ec.scripthashes, 32 * o, e.height, ec.txids.subarray(0, 32), own);
            spend(e.firstTxNum, ec.txids.subarray(0, 32), o, txNum, -1).replaced = true;
          }
          replaced[earlier] = 1;
          u.dups.push({ position: 0, oldTxNum: e.firstTxNum });
        } else if (reused.has(name)) {
          // the txid of a transaction in the index
          const r = reused.get(name);
          const before = spends.get(r.txNum);
          const rec = r.outputs;
          if (rec && rec.p2pk && rec.p2pk.size > 0) mixing = true;
          if (mixing) mix.begin();
          for (let k = 0; rec && k < rec.count; k++) {
            if (before && before.vouts.includes(rec.vouts[k])) continue;
            const own = (rec.p2pk && rec.p2pk.get(k)) || null;
            const j = leave(rec.scripthashes, 32 * k, rec.values[k], own, txNum, height);
            ch.delUtxo(j, r.txNum, rec.vouts[k]);
            if (own) ch.delUtxo(ownSlot, r.txNum, rec.vouts[k]);
            u.push(r.txNum, rec.vouts[k], rec.values[k], rec.scripthashes, 32 * k, r.height, cols.txids.subarray(0, 32), own);
            spend(r.txNum, cols.txids.subarray(0, 32), rec.vouts[k], txNum, -1);
          }
          if (spends.has(r.txNum)) spends.get(r.txNum).replaced = true;
          txidsTaken.push({ txid: cols.txids.subarray(0, 32), txNum: r.txNum });
          u.dups.push({ position: 0, oldTxNum: r.txNum });
        } else if (mixing) {
          mix.begin();
        }
      } else if (mixing) {
        mix.begin();
      }
      for (let i = inStart[t]; i < inStart[t + 1]; i++) {
        const prev = spent.txNums[i];
        const vout = prevouts.readUInt32LE(36 * i + 32);
        const own = spentOwn ? spentOwn.get(i) || null : null;
        const j = leave(spent.scripthashes, 32 * i, spent.values[i], own, txNum, height);
        spend(prev, prevouts.subarray(36 * i, 36 * i + 32), vout, txNum, i - inStart[t]);
        if (prev >= first) {
          const o = outBase[prev - first] + vout;
          gone[o] = 1;
          if (addAt[o] >= 0) ch.cancelUtxo(addAt[o]);
          if (ownAt[o] >= 0) ch.cancelUtxo(ownAt[o]);
        } else {
          ch.delUtxo(j, prev, vout);
          if (own) ch.delUtxo(ownSlot, prev, vout);
        }
      }
      if (height === 0) continue; // the genesis outputs are not spendable: filed nowhere
      for (let o = outStart[t]; o < outStart[t + 1]; o++) {
        const own = pk < p2pkOuts.length && p2pkOuts[pk] === o ? p2pkShs.subarray(32 * pk, 32 * pk++ + 32) : null;
        if (idType[o] === 0) continue;
        const j = ch.touch(cols.scripthashes, 32 * o, height);
        ch.received[j] += values[o];
        ch.funded[j]++;
        ch.entry(j, txNum, FUNDED);
        addAt[out + o] = ch.addUtxo(j, txNum, o - outStart[t], values[o]);
        if (mixing) mix.note(j, FUNDED, own);
        if (own) {
          const jp = ch.touch(own, 0, height);
          ch.received[jp] += values[o];
          ch.funded[jp]++;
          ch.entry(jp, txNum, FUNDED);
          ownAt[out + o] = ch.addUtxo(jp, txNum, o - outStart[t], values[o]);
        }
      }
      if (mixing) mix.end(txNum);
    }
    undo[b] = height >= undoFrom ? u.finish(blocks[b]) : null;
    out += outStart[cols.txCount];
  }
  outBase[T] = out;

  // the outputs left unspent at the batch's end
  let n = 0;
  for (let k = 0; k < O; k++) if (addAt[k] >= 0 && !gone[k]) n++;
  const created = {
    n, txNums: new Float64Array(n), vouts: new Uint32Array(n), values: new Float64Array(n), block: new Uint32Array(n), at: new Uint32Array(n), p2pk: new Map(),
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
        if (ownAt[base + o] >= 0) created.p2pk.set(c, p2pkOf(cols, o));
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
 * @returns {{changes: Changes, restore: Map<number, Array<{vout: number, value: number, shs: Buffer, at: number, undo: number, index: number, own: Buffer|null}>>,
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
  // (a P2PK output the same way in its own script's account)
  const ch = new Changes(1024, keyBytes);
  for (const rec of created) {
    for (let o = 0; o < rec.count; o++) {
      const own = (rec.p2pk && rec.p2pk.get(o)) || null;
      for (const j of slots(ch, rec.scripthashes, 32 * o, own, rec.height)) {
        ch.received[j] -= rec.values[o];
        ch.funded[j]--;
        ch.delUtxo(j, rec.txNum, rec.vouts[o]);
      }
    }
  }
  const restore = new Map();
  for (let k = 0; k < undos.length; k++) {
    const u = undos[k];
    for (let i = 0; i < u.count; i++) {
      const prev = u.txNums[i];
      const own = u.p2pk.get(i) || null;
      for (const j of slots(ch, u.shs, 32 * i, own, fromHeight + k)) {
        ch.sent[j] -= u.values[i];
        ch.spent[j]--;
        if (prev >= cutoff) {
          ch.received[j] -= u.values[i]; // created and spent within the reverted blocks
          ch.funded[j]--;
        } else {
          ch.addUtxo(j, prev, u.vouts[i], u.values[i]);
        }
      }
      if (prev < cutoff) {
        let list = restore.get(prev);
        if (!list) restore.set(prev, (list = []));
        list.push({ vout: u.vouts[i], value: u.values[i], shs: u.shs, at: 32 * i, undo: k, index: i, own });
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

/** The slots an output counts toward: its account's, and its P2PK script's own when it has one. */
function slots(ch, shs, at, own, height) {
  const j = ch.touch(shs, at, height);
  return own ? [j, ch.touch(own, 0, height)] : [j];
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

  /** An output a coinbase's BIP30 replacement takes (`own`: its P2PK script's hash, or null). */
  push(txNum, vout, value, shs, at, height, txid, own) {
    this.extra.push({ txNum, vout, value, sh: shs.subarray(at, at + 32), height, txid, own });
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
    const p2pk = new Map();
    this.extra.forEach((e, k) => { if (e.own) p2pk.set(k, e.own); });
    if (spent.p2pk) for (const [i, own] of spent.p2pk) p2pk.set(x + i, own);
    if (x === 0) {
      return {
        count: I, txNums: spent.txNums.subarray(0, I), vouts, values: spent.values.subarray(0, I),
        shs: spent.scripthashes.subarray(0, 32 * I), p2pk, dups: this.dups, heights: spent.heights.subarray(0, I), txidOf: inputTxid,
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
      p2pk,
      dups: this.dups,
      heights: cat(Uint32Array, (e) => e.height, spent.heights),
      txidOf: (i) => (i < x ? this.extra[i].txid : inputTxid(i - x)),
    };
  }
}

/**
 * The script hashes a block touched — its outputs' and those of the outputs its inputs spent —
 * each once: whose history, balance or UTXOs the block changed (what a subscriber is told).
 * `both`: changed in both views (a P2PK output's own script hash among them); `addressOnly`:
 * changed in the address view only — a key's P2PKH script hash that the block touched only
 * through its P2PK script (the address account changed, the P2PKH script's own view did not).
 * @param {import('../stores/abstract').BlockDelta} block
 * @param {BlockUndo} undo the block's own
 * @returns {{both: Buffer, addressOnly: Buffer}} 32 bytes each, internal order
 */
function touchedBy(block, undo) {
  const seen = new Set();
  const viaP2pk = new Set();
  const add = (buf, at, own) => {
    for (let k = 0; k < 32; k++) {
      if (buf[at + k] !== 0) {
        const sh = buf.latin1Slice(at, at + 32);
        if (!own) seen.add(sh);
        else {
          viaP2pk.add(sh);
          seen.add(own.latin1Slice(0, 32));
        }
        return;
      }
    }
  };
  const { cols } = block;
  if (block.height !== 0) {
    for (let o = 0, pk = 0; o < cols.outStart[cols.txCount]; o++) {
      const own = pk < cols.p2pkOuts.length && cols.p2pkOuts[pk] === o ? cols.p2pkShs.subarray(32 * pk, 32 * pk++ + 32) : null;
      if (cols.idType[o] !== 0) add(cols.scripthashes, 32 * o, own);
    }
  }
  for (let i = 0; i < undo.count; i++) add(undo.shs, 32 * i, undo.p2pk.get(i) || null);
  const addressOnly = [...viaP2pk].filter((sh) => !seen.has(sh));
  return { both: Buffer.from([...seen].join(''), 'latin1'), addressOnly: Buffer.from(addressOnly.join(''), 'latin1') };
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
