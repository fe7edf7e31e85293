'use strict';

const { CodecError } = require('../errors');
const layout = require('./layout');
const { PAGE_ENTRIES, sealedCount, utxosInline, countersHold } = require('../core/rules');
const { corrupt: damaged } = require('../core/checks');
const { addParts, cutParts } = require('../core/p2pk');
const { toDisplayHex } = require('../chain/hash');
const {
  Account, encodeAccount, decodeAccount, encodePage, decodePage, encodeUtxo, decodeUtxo,
} = require('../codec/records');

/**
 * Rewrites the account rows a batch touched — the one step apply and revert share.
 *
 * For each script hash: decode its row, add the counters, change the history (apply appends
 * entries and seals full pages; revert drops entries from a TxNum on and unseals pages), its
 * P2PK parts (lib/core/p2pk.js), the UTXO set (inline up to INLINE_UTXOS, in utxo rows above),
 * and write the row back, or delete it when no history is left. Every layout decision (which entries are sealed, where
 * UTXOs live) is a function of the resulting counts only, so the bytes do not depend on how
 * the blocks were batched or whether they were reverted and applied again.
 *
 * Reads happen only in the rare cases that need rows the account does not hold: a revert
 * that empties the last page, or a UTXO set shrinking back to inline.
 *
 * @param {object} ctx
 * @param {{range: Function}} ctx.reader snapshot the rows were read from
 * @param {import('../codec/io').Writer} ctx.writer
 * @param {import('./kvstore').WriteBatch} ctx.batch
 * @param {import('./heights').HeightIndex} ctx.heights
 * @param {import('./changes').Changes} ch
 * @param {Array<Buffer|undefined>} rows the current rows, by slot
 * @param {Buffer[]} keys their keys
 * @param {number} [cutoff] revert: drop history entries with TxNum >= cutoff; apply when undefined
 */
async function updateAccounts(ctx, ch, rows, keys, cutoff) {
  const acc = new Account();
  const work = new UtxoList();
  const { batch, writer } = ctx;
  for (let j = 0; j < ch.n; j++) {
    const at = 32 * j;
    const key = keys[j];
    if (rows[j]) {
      try {
        decodeAccount(rows[j], acc);
      } catch (err) {
        throw withKey(err, key);
      }
    } else {
      acc.clear();
    }
    const oldUtxos = acc.utxoCount;
    acc.received += ch.received[j];
    acc.sent += ch.sent[j];
    acc.fundedCount += ch.funded[j];
    acc.spentCount += ch.spent[j];
    if (!countersHold(acc)) throw corrupt(ch.shs, at, 'its spends would exceed its receipts');
    if (cutoff === undefined) appendHistory(ctx, acc, ch, j);
    else await cutHistory(ctx, acc, ch, j, cutoff);
    acc.parts = cutoff === undefined ? addParts(acc.parts, ch.parts.get(j), ch.keyBytes) : cutParts(acc.parts, cutoff);
    // a promise only when it must read the account's UTXO rows: an await per account would
    // cost a microtask and its allocations for each of a batch's ~2 accounts per transaction
    const reading = updateUtxos(ctx, acc, ch, j, oldUtxos, work);
    if (reading) await reading;
    if (acc.txCount > 0) {
      batch.put(key, encodeAccount(writer, acc));
    } else {
      if (acc.received !== 0 || acc.fundedCount !== 0 || acc.spentCount !== 0) {
        throw corrupt(ch.shs, at, 'its history is empty but its counters are not');
      }
      if (rows[j]) batch.del(key);
    }
  }
}

/** Appends the batch's entries to the tail and seals every page that filled up. */
function appendHistory(ctx, acc, ch, j) {
  const e = ch.entries;
  const oldSealed = acc.txCount - acc.tailLen;
  let len = acc.tailLen;
  acc.reserveTail(len + ch.entryCount[j]);
  const tail = acc.tail;
  for (let i = ch.entryHead[j]; i >= 0; i = e.next[i]) tail[len++] = e.num[i];
  if (acc.txCount === 0) acc.firstHeight = ch.firstHeight[j];
  acc.txCount += ch.entryCount[j];
  acc.lastHeight = ch.lastHeight[j];
  const newSealed = sealedCount(acc.txCount);
  for (let s = oldSealed; s < newSealed; s += PAGE_ENTRIES) {
    const from = s - oldSealed;
    ctx.batch.put(layout.pageKey(ch.shs, 32 * j, Math.floor(tail[from] / 4)), encodePage(ctx.writer, tail, from));
  }
  if (newSealed > oldSealed) tail.copyWithin(0, newSealed - oldSealed, len);
  acc.tailLen = len - (newSealed - oldSealed);
}

/** Drops entries from TxNum cutoff on; pulls the last surviving page back into the row. */
async function cutHistory(ctx, acc, ch, j, cutoff) {
  const limit = cutoff * 4; // postings below this have TxNum < cutoff
  let k = 0;
  while (k < acc.tailLen && acc.tail[k] < limit) k++;
  let sealed = acc.txCount - acc.tailLen;
  if (k > 0 || sealed === 0) {
    acc.tailLen = k;
    acc.txCount = sealed + k;
  } else {
    acc.tailLen = 0;
    acc.txCount = 0;
    const at = 32 * j;
    acc.reserveTail(PAGE_ENTRIES);
    for await (const { key, value } of ctx.reader.range({ ...layout.scan(layout.P.history, ch.shs, at), reverse: true })) {
      const first = layout.pageKeyTxNum(key);
      ctx.batch.del(key);
      sealed -= PAGE_ENTRIES;
      if (first < cutoff) {
        decodeRow((buf, out) => decodePage(buf, first, out, 0), value, key, acc.tail);
        k = 0;
        while (k < PAGE_ENTRIES && acc.tail[k] < limit) k++;
        acc.tailLen = k;
        acc.txCount = sealed + k;
        break;
      }
    }
    if (acc.txCount === 0 && sealed !== 0) throw corrupt(ch.shs, at, 'its history pages do not match its count');
  }
  if (acc.txCount > 0) {
    const h = ctx.heights.heightOf(Math.floor(acc.tail[acc.tailLen - 1] / 4));
    if (h < 0) throw corrupt(ch.shs, 32 * j, 'its history holds a TxNum the index does not have');
    acc.lastHeight = h;
  }
}

/**
 * Applies the UTXO adds and deletes, moving the set between inline and rows when its size
 * crosses the limit.
 * @returns {Promise<void>|null} a promise when the set moves from its rows into the account
 *   (the rows are read first); null when it is done
 */
function updateUtxos(ctx, acc, ch, j, oldCount, work) {
  const { batch, writer } = ctx;
  const at = 32 * j;
  const shs = ch.shs;
  const newCount = acc.utxoCount;
  const oldInline = utxosInline(oldCount);
  const newInline = utxosInline(newCount);
  const adds = ch.adds;
  const dels = ch.dels;
  if (!oldInline && !newInline) {
    for (let i = ch.delHead[j]; i >= 0; i = dels.next[i]) batch.del(layout.utxoKey(shs, at, dels.num[i], dels.num2[i]));
    for (let i = ch.addHead[j]; i >= 0; i = adds.next[i]) {
      if (!adds.dead[i]) batch.put(layout.utxoKey(shs, at, adds.num[i], adds.num2[i]), encodeUtxo(writer, adds.num3[i]));
    }
    return null;
  }
  work.clear();
  if (oldInline) {
    for (let i = 0; i < acc.utxoLen; i++) work.push(acc.utxoTx[i], acc.utxoVout[i], acc.utxoValue[i]);
    mergeUtxos(ctx, acc, ch, j, work);
    return null;
  }
  return (async () => {
    for await (const { key, value } of ctx.reader.range(layout.scan(layout.P.utxo, shs, at))) {
      const id = layout.parseUtxoKey(key);
      if (!id) throw corrupt(shs, at, `a malformed utxo key ${key.toString('hex')}`);
      work.push(id.txNum, id.vout, decodeRow(decodeUtxo, value, key));
      batch.del(key);
    }
    mergeUtxos(ctx, acc, ch, j, work);
  })();
}

/** The set held (in `work`) less the batch's deletes, plus its adds: into the account or its rows. */
function mergeUtxos(ctx, acc, ch, j, work) {
  const { batch, writer } = ctx;
  const at = 32 * j;
  const shs = ch.shs;
  const adds = ch.adds;
  const dels = ch.dels;
  if (ch.delHead[j] >= 0) {
    work.removeAll(dels, ch.delHead[j], () => corrupt(shs, at, 'a batch spends an output its UTXO set does not hold'));
  }
  for (let i = ch.addHead[j]; i >= 0; i = adds.next[i]) {
    if (!adds.dead[i]) work.push(adds.num[i], adds.num2[i], adds.num3[i]);
  }
  if (work.n !== acc.utxoCount) throw corrupt(shs, at, `it holds ${work.n} unspent outputs but counts ${acc.utxoCount}`);
  if (utxosInline(acc.utxoCount)) {
    work.sort();
    acc.reserveUtxos(work.n);
    // at most 16: a loop, not three subarrays and sets
    for (let i = 0; i < work.n; i++) {
      acc.utxoTx[i] = work.tx[i];
      acc.utxoVout[i] = work.vout[i];
      acc.utxoValue[i] = work.value[i];
    }
    acc.utxoLen = work.n;
  } else {
    for (let i = 0; i < work.n; i++) {
      batch.put(layout.utxoKey(shs, at, work.tx[i], work.vout[i]), encodeUtxo(writer, work.value[i]));
    }
    acc.utxoLen = 0;
  }
}

/** A scratch list of (TxNum, vout, value). */
class UtxoList {
  constructor() {
    this.tx = new Float64Array(64);
    this.vout = new Float64Array(64);
    this.value = new Float64Array(64);
    this.n = 0;
  }

  clear() {
    this.n = 0;
  }

  push(tx, vout, value) {
    if (this.n === this.tx.length) {
      const grow = (a) => { const b = new Float64Array(2 * a.length); b.set(a); return b; };
      this.tx = grow(this.tx);
      this.vout = grow(this.vout);
      this.value = grow(this.value);
    }
    this.tx[this.n] = tx;
    this.vout[this.n] = vout;
    this.value[this.n] = value;
    this.n++;
  }

  /** Removes every (TxNum, vout) of a dels list; each must be present. */
  removeAll(dels, head, onMissing) {
    let missing = 0;
    if (this.n <= 64) {
      // inline-sized: a scan per delete beats building a set
      for (let i = head; i >= 0; i = dels.next[i]) {
        const t = dels.num[i];
        const v = dels.num2[i];
        let k = 0;
        while (k < this.n && !(this.tx[k] === t && this.vout[k] === v)) k++;
        if (k === this.n) {
          missing++;
          continue;
        }
        this.n--;
        this.tx.copyWithin(k, k + 1, this.n + 1);
        this.vout.copyWithin(k, k + 1, this.n + 1);
        this.value.copyWithin(k, k + 1, this.n + 1);
      }
    } else {
      const gone = new Set();
      for (let i = head; i >= 0; i = dels.next[i]) gone.add(`${dels.num[i]}:${dels.num2[i]}`);
      let k = 0;
      for (let i = 0; i < this.n; i++) {
        if (gone.delete(`${this.tx[i]}:${this.vout[i]}`)) continue;
        this.tx[k] = this.tx[i];
        this.vout[k] = this.vout[i];
        this.value[k] = this.value[i];
        k++;
      }
      this.n = k;
      missing = gone.size;
    }
    if (missing > 0) throw onMissing();
  }

  /** Insertion sort by (TxNum, vout): only ever run on inline-sized lists. */
  sort() {
    const { tx, vout, value } = this;
    for (let i = 1; i < this.n; i++) {
      const t = tx[i];
      const v = vout[i];
      const x = value[i];
      let k = i - 1;
      while (k >= 0 && (tx[k] > t || (tx[k] === t && vout[k] > v))) {
        tx[k + 1] = tx[k];
        vout[k + 1] = vout[k];
        value[k + 1] = value[k];
        k--;
      }
      tx[k + 1] = t;
      vout[k + 1] = v;
      value[k + 1] = x;
    }
  }
}

/**
 * Runs a decoder and, when the bytes do not decode, names the row in the error.
 * @template T
 * @param {(buf: Buffer, ...rest: any[]) => T} decode
 * @param {Buffer} buf
 * @param {Buffer} key
 * @param {...any} rest
 * @returns {T}
 */
function decodeRow(decode, buf, key, ...rest) {
  try {
    return decode(buf, ...rest);
  } catch (err) {
    throw withKey(err, key);
  }
}

/**
 * Adds the table and key of the row to a CodecError.
 * @param {Error} err
 * @param {Buffer} key
 */
function withKey(err, key) {
  if (!(err instanceof CodecError) || (err.details && err.details.key)) return err;
  const table = layout.TABLE_OF.get(key[0]) || 'unknown';
  const e = new CodecError(err.code, `${err.message} (${table} row ${key.toString('hex')}): ` +
    'the index is damaged; run "addrindex verify" and re-sync into a new --datadir',
    { ...err.details, table, key: key.toString('hex') });
  return e;
}

function corrupt(shs, at, what) {
  const sh = toDisplayHex(shs.subarray(at, at + 32));
  return damaged(`script hash ${sh}: ${what}`, { scripthash: sh });
}

module.exports = { updateAccounts, decodeRow, withKey };
