'use strict';

const crypto = require('node:crypto');
const layout = require('./layout');
const records = require('../codec/records');
const {
  Account, PAGE_ENTRIES, TXIDS_PER_ROW, utxosInline,
  decodeBlock, txidsCount, decodeTxNums, decodeOutputs, decodeAccount, decodePage, decodeUtxo, decodeUndo,
} = require('../codec/records');
const { FUNDED, SPENT } = require('../codec/postings');
const { decodeRow } = require('./accounts');
const { findTxNums } = require('./update');
const { txidAt } = require('./query');
const { toDisplayHex } = require('../chain/hash');

const { P } = layout;

/**
 * Whole-index walks for `addrindex status`, `addrindex verify` and the digest. They only read,
 * through one snapshot, so they run beside a writer.
 */

/**
 * Rows and bytes per table, the logical totals, and the engine's own figures.
 * @param {object} kv
 */
async function stats(kv) {
  const snap = await kv.snapshot();
  try {
    const tables = {};
    for (const name of Object.keys(P)) tables[name] = { rows: 0, bytes: 0 };
    const acc = new Account();
    let historyEntries = 0;
    let utxos = 0;
    for await (const { key, value } of snap.range({})) {
      const t = tables[layout.TABLE_OF.get(key[0])];
      if (!t) continue;
      t.rows++;
      t.bytes += key.length + value.length;
      if (key[0] === P.account) {
        decodeRow(decodeAccount, value, key, acc);
        historyEntries += acc.txCount;
        utxos += acc.utxoCount;
      }
    }
    let bytes = 0;
    for (const t of Object.values(tables)) bytes += t.bytes;
    tables.account.historyEntries = historyEntries;
    tables.account.utxos = utxos;
    return {
      tables,
      bytes,
      historyEntries,
      utxos,
      bytesPerHistoryEntry: historyEntries ? (tables.account.bytes + tables.history.bytes) / historyEntries : 0,
      diskBytes: await kv.sizeOnDisk(),
      engine: await kv.engineStats(),
    };
  } finally {
    snap.release();
  }
}

/**
 * SHA-256 over every row in key order: varint(key length) key varint(value length) value.
 * @param {object} snap
 * @param {{undo: boolean}} opts
 */
async function digest(snap, opts) {
  const h = crypto.createHash('sha256');
  const chunk = Buffer.allocUnsafe(1 << 16);
  let pos = 0;
  const put = (buf) => {
    if (pos + buf.length > chunk.length) {
      h.update(chunk.subarray(0, pos));
      pos = 0;
      if (buf.length > chunk.length) {
        h.update(buf);
        return;
      }
    }
    pos += buf.copy(chunk, pos);
  };
  const len = Buffer.allocUnsafe(8);
  const putLen = (n) => {
    let k = 0;
    while (n >= 0x80) {
      len[k++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    len[k++] = n;
    put(len.subarray(0, k));
  };
  for await (const { key, value } of snap.range({})) {
    if (!opts.undo && key[0] === P.undo) continue;
    putLen(key.length);
    put(key);
    putLen(value.length);
    put(value);
  }
  h.update(chunk.subarray(0, pos));
  return h.digest('hex');
}

/**
 * Checks the index against itself: the block chain of rows, txid <-> TxNum both ways, every
 * account's summary recomputed from its history and UTXOs, every UTXO against the tx row of
 * its outpoint, and the row counts of pages and UTXO rows against the accounts. Values that
 * do not decode throw CodecError (naming the row).
 * @param {{snap: object, tip: object|null, heights: import('./heights').HeightIndex}} v
 * @param {{maxProblems: number}} opts
 */
async function verify(v, opts) {
  const { snap, tip, heights } = v;
  const problems = [];
  let count = 0;
  const problem = (msg) => {
    count++;
    if (problems.length < opts.maxProblems) problems.push(msg);
  };
  const checked = { blocks: 0, txids: 0, txRows: 0, outputRows: 0, accounts: 0, historyEntries: 0, pages: 0, utxos: 0, utxoRows: 0, undo: 0 };
  const next = tip ? tip.nextTxNum : 0;

  // blocks: heights 0..tip, TxNums chained, the tip's hash
  let first = 0;
  let height = 0;
  let lastHash = null;
  for await (const { key, value } of snap.range(layout.scan(P.block))) {
    const h = key.readUInt32BE(1);
    const b = decodeRow(decodeBlock, value, key);
    if (h !== height) problem(`blocks: row for height ${h} where ${height} was expected`);
    if (b.firstTxNum !== first) problem(`blocks: height ${h} starts at TxNum ${b.firstTxNum}, expected ${first}`);
    first = b.firstTxNum + b.txCount;
    height = h + 1;
    lastHash = b.hash;
    checked.blocks++;
  }
  if (tip) {
    if (height !== tip.height + 1) problem(`blocks: rows end at height ${height - 1}, the tip is ${tip.height}`);
    if (first !== next) problem(`blocks: TxNums end at ${first}, the tip says ${next}`);
    if (lastHash && !lastHash.equals(tip.hash)) problem(`blocks: the tip hash ${toDisplayHex(tip.hash)} is not the last block's`);
  } else if (checked.blocks > 0) {
    problem('blocks: rows exist but there is no tip');
  }

  // TxNum -> txid -> TxNum
  let expectRow = 0;
  let reused = 0;
  for await (const { key, value } of snap.range(layout.scan(P.txids))) {
    const row = layout.readU40(key, 1);
    const n = decodeRow(txidsCount, value, key);
    if (row !== expectRow) problem(`txids: row ${row} where ${expectRow} was expected`);
    const want = Math.min(TXIDS_PER_ROW, next - row);
    if (n !== want) problem(`txids: row ${row} holds ${n} txids, expected ${want}`);
    expectRow = row + TXIDS_PER_ROW;
    const txids = Buffer.from(value.subarray(1, 1 + 32 * n));
    const found = await findTxNums(snap, txids, Array.from({ length: n }, (_, i) => 32 * i));
    for (let i = 0; i < n; i++) {
      const txNum = row + i;
      checked.txids++;
      const t = found[i];
      if (t === txNum) continue;
      const name = toDisplayHex(txids.subarray(32 * i, 32 * i + 32));
      // BIP30: a later tx with the same txid took the row
      if (t !== null && t > txNum && t < next) reused++;
      else problem(`txids: TxNum ${txNum} (${name}) maps to ${t === null ? 'no tx row' : `TxNum ${t}`}`);
    }
  }
  if (expectRow < next) problem(`txids: rows end before TxNum ${next}`);

  // tx rows: each TxNum they list is below the tip and its txid starts with the row's key
  for await (const { key, value } of snap.range(layout.scan(P.tx))) {
    if (key.length !== 1 + layout.TX_PREFIX_LEN) problem(`tx rows: malformed key ${key.toString('hex')}`);
    for (const txNum of decodeRow(decodeTxNums, value, key)) {
      checked.txRows++;
      const txid = txNum < next ? await txidAt(snap, txNum) : null;
      if (!txid || !txid.subarray(0, key.length - 1).equals(key.subarray(1))) {
        problem(`tx rows: ${key.subarray(1).toString('hex')} lists TxNum ${txNum}, whose txid does not start so`);
      }
    }
  }
  if (checked.txRows + reused !== checked.txids) {
    problem(`tx rows: ${checked.txRows} rows + ${reused} reused txids for ${checked.txids} TxNums`);
  }

  // outputs rows: below the tip; their outputs are counted against the accounts' UTXOs
  let txOutputs = 0;
  for await (const { key, value } of snap.range(layout.scan(P.outputs))) {
    const txNum = layout.readU40(key, 1);
    const rec = decodeRow(decodeOutputs, value, key, txNum);
    checked.outputRows++;
    txOutputs += rec.count;
    if (txNum >= next) problem(`outputs: row for TxNum ${txNum}, past the tip`);
  }

  // accounts
  const acc = new Account();
  const page = new Float64Array(PAGE_ENTRIES);
  let pagesExpected = 0;
  let utxoRowsExpected = 0;
  let accountUtxos = 0;
  const outCache = new Map();
  const outputsOf = async (txNum) => {
    if (outCache.has(txNum)) return outCache.get(txNum);
    if (outCache.size > 10000) outCache.clear();
    const key = layout.outputsKey(txNum);
    const value = await snap.get(key);
    const rec = value ? decodeRow(decodeOutputs, value, key, txNum) : null;
    outCache.set(txNum, rec);
    return rec;
  };
  for await (const { key, value } of snap.range(layout.scan(P.account))) {
    checked.accounts++;
    decodeRow(decodeAccount, value, key, acc);
    const sh = key.subarray(1);
    const rows = [];
    for await (const row of snap.range(layout.scan(P.utxo, sh, 0))) rows.push(row);
    const name = `account ${await accountName(sh, acc, rows, outputsOf)}`;
    // history: sealed pages in key order, then the tail
    const hist = [];
    let expectPages = (acc.txCount - acc.tailLen) / PAGE_ENTRIES;
    pagesExpected += expectPages;
    for await (const row of snap.range(layout.scan(P.history, sh, 0))) {
      const firstTx = layout.pageKeyTxNum(row.key);
      decodeRow(decodePage, row.value, row.key, firstTx, page, 0);
      for (let i = 0; i < PAGE_ENTRIES; i++) hist.push(page[i]);
      expectPages--;
    }
    if (expectPages !== 0) problem(`${name}: ${(acc.txCount - acc.tailLen) / PAGE_ENTRIES - expectPages} history pages, expected ${(acc.txCount - acc.tailLen) / PAGE_ENTRIES}`);
    for (let i = 0; i < acc.tailLen; i++) hist.push(acc.tail[i]);
    checked.historyEntries += hist.length;
    let fundedEntries = 0;
    let spentEntries = 0;
    for (let i = 0; i < hist.length; i++) {
      if (i > 0 && hist[i] <= hist[i - 1]) problem(`${name}: history out of chain order at entry ${i}`);
      const f = hist[i] % 4;
      if (f & FUNDED) fundedEntries++;
      if (f & SPENT) spentEntries++;
    }
    if (hist.length !== acc.txCount) problem(`${name}: txCount ${acc.txCount}, history holds ${hist.length}`);
    if (hist.length > 0) {
      const firstH = heights.heightOf(Math.floor(hist[0] / 4));
      const lastH = heights.heightOf(Math.floor(hist[hist.length - 1] / 4));
      if (lastH < 0) problem(`${name}: history reaches TxNum ${Math.floor(hist[hist.length - 1] / 4)}, past the tip`);
      if (firstH !== acc.firstHeight) problem(`${name}: firstHeight ${acc.firstHeight}, history starts at ${firstH}`);
      if (lastH !== acc.lastHeight) problem(`${name}: lastHeight ${acc.lastHeight}, history ends at ${lastH}`);
    }
    if (fundedEntries > acc.fundedCount || (fundedEntries === 0) !== (acc.fundedCount === 0)) {
      problem(`${name}: fundedCount ${acc.fundedCount} with ${fundedEntries} funding transactions`);
    }
    if (spentEntries > acc.spentCount || (spentEntries === 0) !== (acc.spentCount === 0)) {
      problem(`${name}: spentCount ${acc.spentCount} with ${spentEntries} spending transactions`);
    }
    // UTXOs: inline or rows, summing to the balance, each the unspent output of a funding tx
    const utxos = [];
    const inline = utxosInline(acc.utxoCount);
    if (inline) {
      for (let i = 0; i < acc.utxoLen; i++) utxos.push([acc.utxoTx[i], acc.utxoVout[i], acc.utxoValue[i]]);
      if (rows.length) problem(`${name}: ${rows.length} utxo rows beside its inline UTXOs`);
    } else {
      utxoRowsExpected += acc.utxoCount;
      for (const row of rows) {
        const id = layout.parseUtxoKey(row.key);
        if (!id) problem(`${name}: malformed utxo key ${row.key.toString('hex')}`);
        else utxos.push([id.txNum, id.vout, decodeRow(decodeUtxo, row.value, row.key)]);
      }
    }
    accountUtxos += utxos.length;
    checked.utxos += utxos.length;
    if (utxos.length !== acc.utxoCount) problem(`${name}: utxoCount ${acc.utxoCount}, holds ${utxos.length}`);
    let sum = 0;
    let h = 0;
    for (const [txNum, vout, val] of utxos) {
      sum += val;
      while (h < hist.length && Math.floor(hist[h] / 4) < txNum) h++;
      if (h >= hist.length || Math.floor(hist[h] / 4) !== txNum || !(hist[h] % 4 & FUNDED)) {
        problem(`${name}: UTXO ${txNum}:${vout} is not from a funding entry of its history`);
      }
      const rec = await outputsOf(txNum);
      const at = rec ? rec.vouts.indexOf(vout) : -1;
      if (at < 0) problem(`${name}: UTXO ${txNum}:${vout} is not in the outputs row of its tx`);
      else if (rec.values[at] !== val || !rec.scripthashes.subarray(32 * at, 32 * at + sh.length).equals(sh)) {
        problem(`${name}: UTXO ${txNum}:${vout} differs from the outputs row of its tx`);
      }
    }
    if (sum !== acc.received - acc.sent) problem(`${name}: balance ${acc.received - acc.sent}, its UTXOs sum to ${sum}`);
  }
  if (accountUtxos !== txOutputs) problem(`UTXOs: accounts hold ${accountUtxos}, outputs rows ${txOutputs}`);

  // rows no account owns
  for await (const row of snap.range(layout.scan(P.history))) {
    checked.pages++;
    if (row.key.length !== layout.PAGE_KEY_LEN) problem(`history: malformed key ${row.key.toString('hex')}`);
  }
  if (checked.pages !== pagesExpected) problem(`history: ${checked.pages} pages, accounts expect ${pagesExpected}`);
  for await (const row of snap.range(layout.scan(P.utxo))) {
    checked.utxoRows++;
    if (!layout.parseUtxoKey(row.key)) problem(`utxo: malformed key ${row.key.toString('hex')}`);
  }
  if (checked.utxoRows !== utxoRowsExpected) problem(`utxo: ${checked.utxoRows} rows, accounts expect ${utxoRowsExpected}`);

  // undo rows decode and sit at or below the tip
  for await (const { key, value } of snap.range(layout.scan(P.undo))) {
    decodeRow(decodeUndo, value, key);
    checked.undo++;
    const h = key.readUInt32BE(1);
    if (!tip || h > tip.height) problem(`undo: row for height ${h} above the tip`);
  }

  return { ok: count === 0, checked, problems, problemCount: count };
}

/**
 * How verify names an account: the display hex of its script hash, which the key holds only
 * the first bytes of; the whole of it comes from the outputs row of one of its UTXOs. An
 * account with none is named by its key bytes in display order: the end of the display hex.
 */
async function accountName(hashX, acc, rows, outputsOf) {
  let id = null;
  if (utxosInline(acc.utxoCount) && acc.utxoLen > 0) id = { txNum: acc.utxoTx[0], vout: acc.utxoVout[0] };
  else if (rows.length > 0) id = layout.parseUtxoKey(rows[0].key);
  const rec = id ? await outputsOf(id.txNum) : null;
  const at = rec ? rec.vouts.indexOf(id.vout) : -1;
  const sh = at >= 0 ? rec.scripthashes.subarray(32 * at, 32 * at + 32) : null;
  return sh && sh.subarray(0, hashX.length).equals(hashX) ? toDisplayHex(sh) : `…${toDisplayHex(hashX)}`;
}

/**
 * Decodes any row by its table (for dumps and the codec fuzz test).
 * @param {Buffer} key
 * @param {Buffer} value
 * @returns {{table: string, value: any}}
 */
function decodeRecord(key, value) {
  const table = layout.TABLE_OF.get(key[0]);
  switch (key[0]) {
    case P.meta: return { table, value: records.decodeMeta(value) };
    case P.tip: return { table, value: records.decodeTip(value) };
    case P.block: return { table, value: decodeBlock(value) };
    case P.txids: return { table, value: txidsCount(value) };
    case P.tx: return { table, value: decodeTxNums(value) };
    case P.outputs: return { table, value: decodeOutputs(value, layout.readU40(key, 1)) };
    case P.account: return { table, value: decodeAccount(value, new Account()) };
    case P.history: {
      const out = new Float64Array(PAGE_ENTRIES);
      decodePage(value, layout.pageKeyTxNum(key), out, 0);
      return { table, value: out };
    }
    case P.utxo: return { table, value: decodeUtxo(value) };
    case P.undo: return { table, value: decodeUndo(value) };
    default: return { table: 'unknown', value: null };
  }
}

module.exports = { stats, digest, verify, decodeRecord };
