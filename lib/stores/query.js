'use strict';

const layout = require('./layout');
const {
  TXIDS_PER_ROW, TXIDS_AT, Account, txidsCount, readTxidsRow, decodeAccount, decodePage, decodeUtxo, accountSummary,
} = require('../codec/records');
const { FUNDED, SPENT, PAGE_ENTRIES, MAX_TXNUM, utxosInline } = require('../core/rules');
const { txNumBounds, historyCursor, utxoCursor, corrupt } = require('../core/checks');
const { scriptEntries, scriptUtxos, scriptSummary } = require('../core/script-view');
const { toDisplayHex } = require('../chain/hash');
const { decodeRow, withKey } = require('./accounts');

const { P } = layout;

// the account key's length (table byte + hashX), as layout.accountKey writes it
const ACCOUNT_KEY_LEN = layout.accountKey(Buffer.alloc(32), 0).length;

/**
 * The reads of kvstore.js: history pages and merges, UTXO pages, txids by TxNum, cursors.
 * Each function works inside one view (a snapshot, its tip and height index), so an answer
 * never mixes two commits.
 */

/**
 * One page of a script hash's history, in the view asked (`q.view`).
 * @param {{snap: object, heights: import('./heights').HeightIndex}} v
 * @param {Buffer} scripthash
 * @param {import('../core/checks').HistoryQuery} q
 */
async function history(v, scripthash, q) {
  const key = layout.accountKey(scripthash, 0);
  const row = await v.snap.get(key);
  if (!row) return { entries: [], next: null };
  const acc = decodeRow(decodeAccount, row, key, new Account());
  const { lo, hi } = txNumBounds(q, (h) => v.heights.firstTxNum(h));
  const got = new PostingList();
  if (q.view === 'script' && acc.parts) {
    const entries = await scriptEntries(rowsReader(v, scripthash, acc), await partReaders(v, acc, scripthash), acc.parts.both, lo, hi, q.desc, q.limit + 1);
    for (const e of entries) got.push(e.txNum * 4 + e.flags, 0);
  } else {
    await collect(v.snap, scripthash, acc, lo, hi, q.desc, q.limit + 1, got, 0);
  }
  const n = Math.min(got.n, q.limit);
  const txNums = new Float64Array(n);
  for (let i = 0; i < n; i++) txNums[i] = Math.floor(got.p[i] / 4);
  const txids = await readTxidsOf(v.snap, txNums);
  const entries = new Array(n);
  for (let i = 0; i < n; i++) {
    const f = got.p[i] % 4;
    entries[i] = {
      txNum: txNums[i],
      txid: txids.subarray(32 * i, 32 * i + 32),
      height: v.heights.heightOf(txNums[i]),
      funded: (f & FUNDED) !== 0,
      spent: (f & SPENT) !== 0,
    };
  }
  return { entries, next: got.n > q.limit ? historyCursor(txNums[n - 1]) : null };
}

/**
 * One page of the merged histories of script hashes (repeats count once).
 * @param {{snap: object, heights: import('./heights').HeightIndex}} v
 * @param {Buffer[]} list script hashes, checked
 * @param {import('../core/checks').HistoryQuery} q
 */
async function histories(v, list, q) {
  // account rows read in key order: neighbouring reads share B-tree pages (and LevelDB
  // blocks), which for many addresses costs a fraction of reading them in the order asked
  const { shs, order } = distinctInKeyOrder(list);
  const { lo, hi } = txNumBounds(q, (h) => v.heights.firstTxNum(h));
  const got = new PostingList(2 * shs.length);
  const acc = new Account();
  // most accounts hold every entry asked for in their row: read those in one pass, the
  // others (long histories reaching into sealed pages) after it, from a copy of their row
  // (the reader's buffer lasts only the call). One key buffer serves the whole pass: a key per
  // address would be most of the garbage of a large merge.
  const long = [];
  const longRows = [];
  const script = q.view === 'script';
  if (lo < hi) {
    const key = Buffer.allocUnsafeSlow(ACCOUNT_KEY_LEN);
    key[0] = P.account;
    const keyOf = (i) => {
      const sh = shs[order[i]];
      for (let b = 1; b < ACCOUNT_KEY_LEN; b++) key[b] = sh[b - 1];
      return key;
    };
    await eachValueOf(v.snap, order.length, keyOf, (i, row) => {
      if (!row) return;
      // decodeRow's rest arguments would cost an array per row here
      try {
        decodeAccount(row, acc);
      } catch (err) {
        throw withKey(err, Buffer.from(key));
      }
      if (inTail(acc, lo) && !(script && acc.parts)) {
        pushTail(acc, lo, hi, q.desc, q.limit + 1, got, order[i]);
      } else {
        long.push(order[i]);
        longRows.push(Buffer.from(row.subarray(0, row.length))); // LMDB's buffer: its length is the row's, not its view's
      }
    });
  }
  for (let k = 0; k < long.length; k++) {
    const s = long[k];
    decodeAccount(longRows[k], acc); // decoded once already, in the pass above
    if (script && acc.parts) {
      // the scratch account serves the readers: nothing decodes into it until they are done
      const entries = await scriptEntries(rowsReader(v, shs[s], acc), await partReaders(v, acc, shs[s]), acc.parts.both, lo, hi, q.desc, q.limit + 1);
      for (const e of entries) got.push(e.txNum * 4 + e.flags, s);
    } else {
      await collect(v.snap, shs[s], acc, lo, hi, q.desc, q.limit + 1, got, s);
    }
  }
  // one entry per distinct tx, with every script hash it touches, in the order asked:
  // the sorted positions [start[u], end[u]) hold the u-th TxNum
  const all = got.sorted(shs.length);
  const size = Math.min(got.n, q.limit + 1);
  const txNums = new Float64Array(size);
  const start = new Uint32Array(size);
  const end = new Uint32Array(size);
  let u = 0;
  for (let k = 0; k < got.n && u <= q.limit; u++) {
    let a = k;
    let b = k;
    if (q.desc) {
      b = got.n - k;
      a = b - 1;
      while (a > 0 && all.tx[a - 1] === all.tx[b - 1]) a--;
    } else {
      while (b < got.n && all.tx[b] === all.tx[a]) b++;
    }
    txNums[u] = all.tx[a];
    start[u] = a;
    end[u] = b;
    k += b - a;
  }
  const n = Math.min(u, q.limit);
  const txids = await readTxidsOf(v.snap, txNums, n);
  const entries = [];
  // TxNums come in order: the height changes only when one leaves its block's range
  let height = -1;
  let from = 0;
  let to = 0;
  for (let i = 0; i < n; i++) {
    const t = txNums[i];
    if (t < from || t >= to) {
      height = v.heights.heightOf(t);
      from = v.heights.firstTxNum(height);
      to = v.heights.firstTxNum(height + 1);
    }
    let flags = 0;
    let which;
    if (end[i] - start[i] === 1) {
      flags = all.f[start[i]];
      which = [shs[all.s[start[i]]]];
    } else {
      which = new Array(end[i] - start[i]);
      for (let k = start[i]; k < end[i]; k++) {
        flags |= all.f[k];
        which[k - start[i]] = shs[all.s[k]];
      }
    }
    entries.push({
      txNum: t,
      txid: txids.subarray(32 * i, 32 * i + 32),
      height,
      funded: (flags & FUNDED) !== 0,
      spent: (flags & SPENT) !== 0,
      scripthashes: which,
    });
  }
  return { entries, next: u > q.limit ? historyCursor(txNums[n - 1]) : null };
}

/**
 * One page of a script hash's UTXOs in the view asked, from their account row or their utxo rows.
 * @param {{snap: object, heights: import('./heights').HeightIndex}} v
 * @param {Buffer} scripthash
 * @param {number} limit
 * @param {{txNum: number, vout: number}|null} after
 * @param {'address'|'script'} [view='address']
 */
async function utxos(v, scripthash, limit, after, view = 'address') {
  const key = layout.accountKey(scripthash, 0);
  const row = await v.snap.get(key);
  if (!row) return { utxos: [], next: null };
  const acc = decodeRow(decodeAccount, row, key, new Account());
  const list = view === 'script' && acc.parts
    ? await scriptUtxos(rowsReader(v, scripthash, acc), await partReaders(v, acc, scripthash), after, limit + 1)
    : await utxoList(v, scripthash, acc, limit + 1, after);
  const n = Math.min(list.length, limit);
  const txids = await readTxidsOf(v.snap, list.map((u) => u.txNum), n);
  const out = new Array(n);
  for (let i = 0; i < n; i++) {
    out[i] = {
      txid: txids.subarray(32 * i, 32 * i + 32),
      vout: list[i].vout,
      value: list[i].value,
      height: v.heights.heightOf(list[i].txNum),
      txNum: list[i].txNum,
    };
  }
  return { utxos: out, next: list.length > limit ? utxoCursor(list[n - 1].txNum, list[n - 1].vout) : null };
}

/**
 * Up to `want` of an account's unspent outputs after `after`, in (TxNum, vout) order.
 * @param {{snap: object}} v
 * @param {Buffer} scripthash
 * @param {Account} acc its row, decoded
 * @param {number} want
 * @param {{txNum: number, vout: number}|null} after
 * @returns {Promise<Array<{txNum: number, vout: number, value: number}>>}
 */
async function utxoList(v, scripthash, acc, want, after) {
  const out = [];
  if (utxosInline(acc.utxoCount)) {
    for (let i = 0; i < acc.utxoLen && out.length < want; i++) {
      if (after && (acc.utxoTx[i] < after.txNum || (acc.utxoTx[i] === after.txNum && acc.utxoVout[i] <= after.vout))) continue;
      out.push({ txNum: acc.utxoTx[i], vout: acc.utxoVout[i], value: acc.utxoValue[i] });
    }
    return out;
  }
  const all = layout.scan(P.utxo, scripthash, 0);
  const gte = after ? Buffer.concat([layout.utxoKey(scripthash, 0, after.txNum, after.vout), Buffer.from([0])]) : all.gte;
  for await (const { key: k, value: val } of v.snap.range({ gte, lt: all.lt, limit: want })) {
    const id = layout.parseUtxoKey(k);
    if (!id) throw corrupt(`malformed utxo key ${k.toString('hex')}`);
    out.push({ txNum: id.txNum, vout: id.vout, value: decodeRow(decodeUtxo, val, k) });
  }
  return out;
}

// the script view (lib/core/script-view.js) over rows

/**
 * The summary in the script view of an address account with P2PK parts: its P2PKH script's
 * alone, derived from the account and its parts (every other account's is its own).
 * @param {{snap: object, heights: import('./heights').HeightIndex}} v
 * @param {Buffer} scripthash
 * @param {Account} acc its row, decoded (kept by the readers)
 * @returns {Promise<import('./abstract').Summary|null>}
 */
async function accountScriptSummary(v, scripthash, acc) {
  return scriptSummary(rowsReader(v, scripthash, acc), await partReaders(v, acc, scripthash), acc.parts.both, toDisplayHex(scripthash));
}

/**
 * An AccountReader (lib/core/script-view.js) over one account's rows.
 * @param {{snap: object, heights: import('./heights').HeightIndex}} v
 * @param {Buffer} scripthash
 * @param {Account} acc its row, decoded (kept by the reader)
 * @returns {import('../core/script-view').AccountReader}
 */
function rowsReader(v, scripthash, acc) {
  return {
    summary: accountSummary(acc),
    entries: async (lo, hi, desc, want) => {
      const got = new PostingList();
      await collect(v.snap, scripthash, acc, lo, hi, desc, want, got, 0);
      const out = new Array(got.n);
      for (let i = 0; i < got.n; i++) {
        const txNum = Math.floor(got.p[i] / 4);
        out[i] = { txNum, flags: got.p[i] % 4, height: v.heights.heightOf(txNum) };
      }
      return out;
    },
    utxos: (after, want) => utxoList(v, scripthash, acc, want, after),
  };
}

/**
 * Readers of the accounts of an address account's P2PK parts, each account once.
 * @param {{snap: object, heights: import('./heights').HeightIndex}} v
 * @param {Account} acc
 * @param {Buffer} scripthash the address account's, for errors
 */
async function partReaders(v, acc, scripthash) {
  const seen = new Set();
  const shs = [];
  for (const p of acc.parts.p2pk) {
    const k = p.sh.latin1Slice(0, layout.HASHX_LEN);
    if (seen.has(k)) continue;
    seen.add(k);
    shs.push(p.sh);
  }
  const keys = shs.map((sh) => layout.accountKey(sh, 0));
  const rows = await v.snap.getMany(keys);
  return shs.map((sh, i) => {
    if (!rows[i]) throw corrupt(`script hash ${toDisplayHex(scripthash)} counts the P2PK script …${toDisplayHex(sh)} (its hashX), which has no account`);
    return rowsReader(v, sh, decodeRow(decodeAccount, rows[i], keys[i], new Account()));
  });
}

// txids by TxNum

/**
 * The txid of one TxNum: a view of its txids row (copy it to keep it), or null when the
 * index has none.
 * @param {{get: Function}} reader
 * @param {number} txNum
 */
async function txidAt(reader, txNum) {
  const row = txNum - (txNum % TXIDS_PER_ROW);
  const key = layout.txidsKey(row);
  const value = await reader.get(key);
  if (!value || decodeRow(txidsCount, value, key) <= txNum - row) return null;
  return value.subarray(TXIDS_AT + 32 * (txNum - row), TXIDS_AT + 32 + 32 * (txNum - row));
}

/**
 * Where a transaction lies in its block: its offset, and the next transaction's when there is
 * one in the same block (`hasNext`), read from the txids rows.
 * @param {{get: Function}} reader
 * @param {number} txNum
 * @param {boolean} hasNext
 * @returns {Promise<{offset: number, next: number|null}>}
 */
async function txPlace(reader, txNum, hasNext) {
  const row = txNum - (txNum % TXIDS_PER_ROW);
  const key = layout.txidsKey(row);
  const value = await reader.get(key);
  const r = value ? decodeRow(readTxidsRow, value, key) : null;
  if (!r || r.count <= txNum - row) throw corrupt(`the index has no txids row entry for TxNum ${txNum}`);
  const offset = r.offsets[txNum - row];
  if (!hasNext) return { offset, next: null };
  if (txNum + 1 - row < r.count) return { offset, next: r.offsets[txNum + 1 - row] };
  const nextKey = layout.txidsKey(row + TXIDS_PER_ROW);
  const nv = await reader.get(nextKey);
  if (!nv) throw corrupt(`the index has no txids row for TxNum ${txNum + 1}`);
  return { offset, next: decodeRow(readTxidsRow, nv, nextKey).offsets[0] };
}

/**
 * The txids of TxNums [from, to), one Buffer; `priorRow` is the stored row holding `from`.
 */
async function readTxids(snap, from, to) {
  const out = Buffer.allocUnsafe(32 * (to - from));
  const startRow = from - (from % TXIDS_PER_ROW);
  let expect = startRow;
  let priorRow = null;
  for await (const { key, value } of snap.range({ gte: layout.txidsKey(startRow), lt: layout.txidsKey(to - 1 - ((to - 1) % TXIDS_PER_ROW) + TXIDS_PER_ROW) })) {
    const row = layout.readU40(key, 1);
    const n = decodeRow(txidsCount, value, key);
    if (row !== expect) throw corrupt(`the index has no txids row for TxNum ${expect}`);
    if (row === startRow) priorRow = value;
    const a = Math.max(row, from);
    const b = Math.min(row + n, to);
    value.copy(out, 32 * (a - from), TXIDS_AT + 32 * (a - row), TXIDS_AT + 32 * (b - row));
    expect = row + TXIDS_PER_ROW;
  }
  if (expect < to) throw corrupt(`the index has no txids row for TxNum ${expect}`);
  out.priorRow = priorRow;
  return out;
}

/**
 * The txids of any TxNums, one Buffer (32 bytes each, in the order given).
 * @param {{get: Function, getMany: Function}} snap
 * @param {ArrayLike<number>} txNums
 * @param {number} [n=txNums.length]
 */
async function readTxidsOf(snap, txNums, n = txNums.length) {
  const out = Buffer.allocUnsafe(32 * n);
  // entries grouped by txids row: rowOf maps a row to its key index, `next` links the entries
  const rowOf = new Map();
  const keys = [];
  const head = [];
  const next = new Int32Array(n);
  for (let i = n - 1; i >= 0; i--) {
    const row = txNums[i] - (txNums[i] % TXIDS_PER_ROW);
    let k = rowOf.get(row);
    if (k === undefined) {
      k = keys.length;
      rowOf.set(row, k);
      keys.push(layout.txidsKey(row));
      head.push(-1);
    }
    next[i] = head[k];
    head[k] = i;
  }
  let missing = -1;
  await eachValue(snap, keys, (k, value) => {
    const count = value ? decodeRow(txidsCount, value, keys[k]) : 0;
    for (let i = head[k]; i >= 0; i = next[i]) {
      const at = txNums[i] % TXIDS_PER_ROW;
      if (at >= count) {
        missing = txNums[i];
        return;
      }
      // 32 bytes by hand: Buffer#copy's call overhead is most of its cost at this size
      const from = TXIDS_AT + 32 * at;
      const to = 32 * i;
      for (let b = 0; b < 32; b++) out[to + b] = value[from + b];
    }
  });
  if (missing >= 0) throw corrupt(`the index has no txid for TxNum ${missing}`);
  return out;
}

/** Postings with the index of the script hash each came from. */
class PostingList {
  /** @param {number} [capacity] expected postings */
  constructor(capacity = 256) {
    this.p = new Float64Array(Math.max(16, capacity));
    this.s = new Uint32Array(Math.max(16, capacity));
    this.n = 0;
  }

  push(p, s) {
    if (this.n === this.p.length) {
      const p2 = new Float64Array(2 * this.n);
      p2.set(this.p);
      const s2 = new Uint32Array(2 * this.n);
      s2.set(this.s);
      this.p = p2;
      this.s = s2;
    }
    this.p[this.n] = p;
    this.s[this.n] = s;
    this.n++;
  }

  /**
   * The postings sorted by (TxNum, script hash), as parallel arrays.
   * @param {number} S number of script hashes
   * @returns {{tx: Float64Array, s: Uint32Array, f: Uint8Array}}
   */
  sorted(S) {
    const n = this.n;
    const tx = new Float64Array(n);
    const s = new Uint32Array(n);
    const f = new Uint8Array(n);
    let maxTx = 0;
    for (let i = 0; i < n; i++) if (this.p[i] > maxTx) maxTx = this.p[i];
    // script hash slots rounded up to a power of two: every split below is then an exact
    // multiplication and floor, no floating-point remainder
    let S2 = 1;
    while (S2 < S) S2 *= 2;
    if ((maxTx / 4 + 1) * S2 * 4 < Number.MAX_SAFE_INTEGER) {
      // (TxNum, script hash, flags) packed into one exact double: the typed-array sort does the rest
      const keys = new Float64Array(n);
      const p = this.p;
      const sh = this.s;
      for (let i = 0; i < n; i++) {
        const t = Math.floor(p[i] * 0.25);
        keys[i] = ((t * S2 + sh[i]) * 4) + (p[i] - 4 * t);
      }
      keys.sort();
      const inv = 1 / S2;
      for (let i = 0; i < n; i++) {
        const k = keys[i];
        const ts = Math.floor(k * 0.25);
        f[i] = k - 4 * ts;
        const t = Math.floor(ts * inv);
        tx[i] = t;
        s[i] = ts - t * S2;
      }
    } else {
      const idx = new Uint32Array(n);
      for (let i = 0; i < n; i++) idx[i] = i;
      const t = (i) => Math.floor(this.p[i] / 4);
      idx.sort((a, b) => t(a) - t(b) || this.s[a] - this.s[b]);
      for (let i = 0; i < n; i++) {
        tx[i] = t(idx[i]);
        s[i] = this.s[idx[i]];
        f[i] = this.p[idx[i]] % 4;
      }
    }
    return { tx, s, f };
  }
}

/**
 * Whether all of an account's entries from TxNum lo on are in its row (no page to read).
 * @param {Account} acc
 * @param {number} lo
 */
function inTail(acc, lo) {
  return acc.txCount === acc.tailLen || lo >= Math.floor(acc.tail[0] / 4);
}

/**
 * Pushes up to `want` of the row's tail entries with TxNum in [lo, hi), in order.
 * @returns {number} entries pushed
 */
function pushTail(acc, lo, hi, desc, want, sink, s) {
  const tail = acc.tail;
  let got = 0;
  if (!desc) {
    for (let i = 0; i < acc.tailLen && got < want; i++) {
      const t = Math.floor(tail[i] / 4);
      if (t < lo) continue;
      if (t >= hi) break;
      sink.push(tail[i], s);
      got++;
    }
  } else {
    for (let i = acc.tailLen - 1; i >= 0 && got < want; i--) {
      const t = Math.floor(tail[i] / 4);
      if (t >= hi) continue;
      if (t < lo) break;
      sink.push(tail[i], s);
      got++;
    }
  }
  return got;
}

/**
 * Pushes up to `want` postings of one account with TxNum in [lo, hi), in chain order (or
 * newest first), reading sealed pages only when the range reaches below the row's tail.
 */
async function collect(snap, sh, acc, lo, hi, desc, want, sink, s) {
  if (lo >= hi) return;
  if (inTail(acc, lo)) {
    pushTail(acc, lo, hi, desc, want, sink, s);
    return;
  }
  const pages = layout.scan(P.history, sh, 0);
  const buf = new Float64Array(PAGE_ENTRIES);
  let got = 0;
  if (!desc) {
    let gte = pages.gte;
    if (lo > 0) {
      for await (const { key } of snap.range({ gte: pages.gte, lt: layout.pageKey(sh, 0, lo + 1), reverse: true, limit: 1 })) gte = key;
    }
    for await (const { key, value } of snap.range({ gte, lt: pages.lt })) {
      decodeRow(decodePage, value, key, layout.pageKeyTxNum(key), buf, 0);
      for (let i = 0; i < PAGE_ENTRIES; i++) {
        const t = Math.floor(buf[i] / 4);
        if (t < lo) continue;
        if (t >= hi) return;
        sink.push(buf[i], s);
        if (++got >= want) return;
      }
    }
    pushTail(acc, lo, hi, false, want - got, sink, s);
    return;
  }
  got = pushTail(acc, lo, hi, true, want, sink, s);
  if (got >= want) return;
  const lt = hi <= MAX_TXNUM ? layout.pageKey(sh, 0, hi) : pages.lt;
  for await (const { key, value } of snap.range({ gte: pages.gte, lt, reverse: true })) {
    decodeRow(decodePage, value, key, layout.pageKeyTxNum(key), buf, 0);
    for (let i = PAGE_ENTRIES - 1; i >= 0; i--) {
      const t = Math.floor(buf[i] / 4);
      if (t >= hi) continue;
      if (t < lo) return;
      sink.push(buf[i], s);
      if (++got >= want) return;
    }
  }
}

/**
 * Calls fn(i, value) for each key's value (undefined when absent). The value is valid only
 * during the call: backends that can (LMDB) hand out their own buffer instead of a copy,
 * which is most of the cost of reading many small rows.
 * @param {object} reader a snapshot
 * @param {Buffer[]} keys
 * @param {(i: number, value: Buffer|undefined) => void} fn
 */
async function eachValue(reader, keys, fn) {
  if (reader.forEachValue) {
    reader.forEachValue(keys, fn);
    return;
  }
  const rows = await reader.getMany(keys);
  for (let i = 0; i < keys.length; i++) fn(i, rows[i]);
}

/**
 * Like eachValue, for keys made one at a time: keyOf(i) may return the same Buffer each time
 * (filled anew), which the reader copies or uses before asking for the next key.
 * @param {object} reader a snapshot
 * @param {number} n
 * @param {(i: number) => Buffer} keyOf
 * @param {(i: number, value: Buffer|undefined) => void} fn
 */
async function eachValueOf(reader, n, keyOf, fn) {
  if (reader.forEachValueOf) {
    reader.forEachValueOf(n, keyOf, fn);
    return;
  }
  const keys = [];
  for (let i = 0; i < n; i++) keys.push(Buffer.from(keyOf(i)));
  const rows = await reader.getMany(keys);
  for (let i = 0; i < n; i++) {
    keyOf(i);
    fn(i, rows[i]);
  }
}

/**
 * The script hashes without repeats, first occurrence kept, and the order of their account
 * keys. One sort of (first four bytes, position) packed into doubles finds both: repeats are
 * neighbours in it (compared in full only when the four bytes agree).
 * @param {Buffer[]} list
 * @returns {{shs: Buffer[], order: Uint32Array}} order[i]: index in shs of the i-th in key order
 */
function distinctInKeyOrder(list) {
  const n = list.length;
  const SLOT = 0x200000;
  if (n >= SLOT) {
    const shs = distinct(list);
    return { shs, order: Uint32Array.from(shs.keys()) };
  }
  const packed = new Float64Array(n);
  for (let i = 0; i < n; i++) packed[i] = list[i].readUInt32BE(0) * SLOT + i;
  packed.sort();
  const keep = new Uint8Array(n);
  for (let a = 0; a < n;) {
    const head = Math.floor(packed[a] / SLOT);
    let b = a + 1;
    while (b < n && Math.floor(packed[b] / SLOT) === head) b++;
    for (let k = a; k < b; k++) {
      const i = packed[k] % SLOT;
      let seen = false;
      for (let j = a; j < k && !seen; j++) seen = keep[packed[j] % SLOT] === 1 && list[packed[j] % SLOT].equals(list[i]);
      if (!seen) keep[i] = 1;
    }
    a = b;
  }
  const pos = new Uint32Array(n);
  const shs = [];
  for (let i = 0; i < n; i++) {
    if (!keep[i]) continue;
    pos[i] = shs.length;
    shs.push(list[i]);
  }
  const order = new Uint32Array(shs.length);
  for (let k = 0, o = 0; k < n; k++) {
    const i = packed[k] % SLOT;
    if (keep[i]) order[o++] = pos[i];
  }
  return { shs, order };
}

/**
 * The script hashes without repeats, first occurrence kept. Keyed by six bytes as a number
 * (a Map of numbers is several times cheaper than one of strings); the rare equal keys are
 * compared in full.
 * @param {Buffer[]} shs
 * @returns {Buffer[]}
 */
function distinct(shs) {
  const seen = new Map();
  const out = [];
  for (const sh of shs) {
    const k = sh.readUIntLE(0, 6);
    const prev = seen.get(k);
    if (prev === undefined) {
      seen.set(k, [sh]);
    } else {
      if (prev.some((p) => p.equals(sh))) continue;
      prev.push(sh);
    }
    out.push(sh);
  }
  return out;
}

module.exports = { history, histories, utxos, accountScriptSummary, txidAt, txPlace, readTxids, readTxidsOf, eachValue };
