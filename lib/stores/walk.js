'use strict';

const crypto = require('node:crypto');
const layout = require('./layout');
const records = require('../codec/records');
const { PAGE_ENTRIES, utxosInline } = require('../core/rules');
const {
  Account, TXIDS_PER_ROW, TXIDS_AT,
  decodeBlock, decodeBlockHeight, decodeLocator, txidsCount, readTxidsRow, decodeTxNums, decodeOutputs, decodeAccount, decodePage, decodeUtxo,
  decodeUndo, decodeTouched,
} = require('../codec/records');
const { decodeMempool, decodeMempoolHead, decodeTxidKeyedRow, decodeMempoolTx, decodeMempoolRaw, decodeChange } = require('../codec/mempool');
const { sha256d } = require('../chain/hash');
const { Problems, BlockChainCheck, checkAccount, checkParts } = require('../core/verify');
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
 * Rows and bytes per table and the logical totals (the Stats of the contract without its
 * `store` and `tip`, which the store adds).
 * @param {object} snap
 */
async function stats(snap) {
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
  return { tables, bytes, historyEntries, utxos };
}

/** Tables that are not chain data: where one blocks dir holds the blocks, the mempool, wallets. */
const NOT_CHAIN = new Set([P.mempool, P.locator, P.source, P.wallet]);

/**
 * SHA-256 over every row of the chain in key order (not the mempool's, nor the locators and the
 * source info, which say where one blocks dir holds the blocks, nor the wallets):
 * varint(key length) key varint(value length) value.
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
    if ((!opts.undo && (key[0] === P.undo || key[0] === P.touched)) || NOT_CHAIN.has(key[0])) continue;
    putLen(key.length);
    put(key);
    putLen(value.length);
    put(value);
  }
  h.update(chunk.subarray(0, pos));
  return h.digest('hex');
}

/**
 * Checks the index against itself: the shared checks of lib/core/verify.js (the chain of
 * blocks, every account's summary against its history and UTXOs), and the key-value schema's
 * own: txid <-> TxNum both ways, every UTXO against the outputs row of its outpoint, the page
 * and UTXO rows against the accounts that own them. Values that do not decode throw
 * CodecError (naming the row).
 * @param {{snap: object, tip: object|null, heights: import('./heights').HeightIndex}} v
 * @param {{maxProblems?: number}} opts
 */
async function verify(v, opts) {
  const { snap, tip, heights } = v;
  const problems = new Problems(opts.maxProblems);
  const problem = (msg) => problems.add(msg);
  const checked = {
    blocks: 0, blockHashes: 0, txids: 0, txRows: 0, outputRows: 0, accounts: 0, historyEntries: 0, pages: 0, utxos: 0, utxoRows: 0, p2pkParts: 0, undo: 0,
  };
  const next = tip ? tip.nextTxNum : 0;

  const chain = new BlockChainCheck(problems);
  for await (const { key, value } of snap.range(layout.scan(P.block))) {
    const b = decodeRow(decodeBlock, value, key);
    const h = key.readUInt32BE(1);
    if (!sha256d(b.header).equals(b.hash)) problem(`blocks: block ${h}'s header does not hash to its hash`);
    chain.block(h, { hash: toDisplayHex(b.hash), prev: h === 0 ? undefined : toDisplayHex(b.header.subarray(4, 36)), firstTxNum: b.firstTxNum, txCount: b.txCount });
    const ref = await snap.get(layout.blockHashKey(b.hash));
    if (!ref || decodeRow(decodeBlockHeight, ref, layout.blockHashKey(b.hash)) !== h) problem(`blocks: block ${h} is not found by its hash`);
    checked.blocks++;
  }
  chain.end(tip && { height: tip.height, hash: toDisplayHex(tip.hash), nextTxNum: next });
  for await (const { key } of snap.range(layout.scan(P.blockHash))) {
    checked.blockHashes++;
    if (key.length !== 33) problem(`block hashes: malformed key ${key.toString('hex')}`);
  }
  if (checked.blockHashes !== checked.blocks) problem(`block hashes: ${checked.blockHashes} rows for ${checked.blocks} blocks`);

  // TxNum -> txid -> TxNum
  let expectRow = 0;
  let reused = 0;
  for await (const { key, value } of snap.range(layout.scan(P.txids))) {
    const row = layout.readU40(key, 1);
    const n = decodeRow(readTxidsRow, value, key).count;
    if (row !== expectRow) problem(`txids: row ${row} where ${expectRow} was expected`);
    const want = Math.min(TXIDS_PER_ROW, next - row);
    if (n !== want) problem(`txids: row ${row} holds ${n} txids, expected ${want}`);
    expectRow = row + TXIDS_PER_ROW;
    const txids = Buffer.from(value.subarray(TXIDS_AT, TXIDS_AT + 32 * n));
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
    // a P2PK output is unspent in its key's account and in its own script's
    txOutputs += rec.count + (rec.p2pk ? rec.p2pk.size : 0);
    if (txNum >= next) problem(`outputs: row for TxNum ${txNum}, past the tip`);
    for (let i = 0; i < rec.spent.count; i++) {
      if (rec.spent.txNums[i] >= next) problem(`outputs: ${txNum}:${rec.spent.vouts[i]} spent by TxNum ${rec.spent.txNums[i]}, past the tip`);
      if (rec.vouts.includes(rec.spent.vouts[i])) problem(`outputs: ${txNum}:${rec.spent.vouts[i]} both unspent and spent`);
    }
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
  const heightOf = (txNum) => heights.heightOf(txNum);
  for await (const { key, value } of snap.range(layout.scan(P.account))) {
    checked.accounts++;
    decodeRow(decodeAccount, value, key, acc);
    const sh = key.subarray(1);
    const rows = [];
    for await (const row of snap.range(layout.scan(P.utxo, sh, 0))) rows.push(row);
    const name = `account ${await accountName(sh, acc, rows, outputsOf)}`;
    // history: sealed pages in key order, then the tail
    const pagesWanted = (acc.txCount - acc.tailLen) / PAGE_ENTRIES;
    pagesExpected += pagesWanted;
    const { hist, pages } = await historyOf(snap, sh, acc, page);
    if (pages !== pagesWanted) problem(`${name}: ${pages} history pages, expected ${pagesWanted}`);
    checked.historyEntries += hist.length;
    // UTXOs: inline or rows
    const utxos = [];
    if (utxosInline(acc.utxoCount)) {
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
    checkAccount(problems, name, acc, hist, utxos, heightOf);
    // each UTXO is the unspent output its outputs row says (a P2PK script's own account: by
    // its own script hash)
    for (const [txNum, vout, val] of utxos) {
      const rec = await outputsOf(txNum);
      const at = rec ? rec.vouts.indexOf(vout) : -1;
      const own = at >= 0 && rec.p2pk ? rec.p2pk.get(at) : undefined;
      if (at < 0) problem(`${name}: UTXO ${txNum}:${vout} is not in the outputs row of its tx`);
      else if (rec.values[at] !== val || !(rec.scripthashes.subarray(32 * at, 32 * at + sh.length).equals(sh) || (own && own.subarray(0, sh.length).equals(sh)))) {
        problem(`${name}: UTXO ${txNum}:${vout} differs from the outputs row of its tx`);
      }
    }
    if (acc.parts) {
      // the P2PK scripts it counts: their accounts, within this one
      const parts = [];
      for (const p of acc.parts.p2pk) {
        const pkey = layout.accountKey(p.sh, 0);
        const prow = await snap.get(pkey);
        // a part is stored by its hashX: named by the end of its display hex, as accountName does
        if (!prow) {
          problem(`${name}: counts the P2PK script …${toDisplayHex(p.sh)}, which has no account`);
          continue;
        }
        const pacc = decodeRow(decodeAccount, prow, pkey, new Account());
        parts.push({ sh: `…${toDisplayHex(p.sh)}`, first: p.first, summary: records.accountSummary(pacc), hist: (await historyOf(snap, pkey.subarray(1), pacc, page)).hist });
      }
      checked.p2pkParts += parts.length;
      checkParts(problems, name, acc, hist, parts);
    }
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

  // undo and touched rows decode, sit at or below the tip, and come in pairs
  const undoHeights = new Set();
  for await (const { key, value } of snap.range(layout.scan(P.undo))) {
    decodeRow(decodeUndo, value, key);
    checked.undo++;
    const h = key.readUInt32BE(1);
    undoHeights.add(h);
    if (!tip || h > tip.height) problem(`undo: row for height ${h} above the tip`);
  }
  for await (const { key, value } of snap.range(layout.scan(P.touched))) {
    decodeRow(decodeTouched, value, key);
    if (!undoHeights.delete(key.readUInt32BE(1))) problem(`touched: row for height ${key.readUInt32BE(1)} without undo`);
  }
  for (const h of undoHeights) problem(`touched: no row for height ${h}, which has undo`);

  return problems.result(checked);
}

/**
 * An account's history: its sealed pages in key order, then its tail.
 * @param {object} snap
 * @param {Buffer} hashX
 * @param {Account} acc its row, decoded
 * @param {Float64Array} page scratch
 * @returns {Promise<{hist: number[], pages: number}>} postings, and the pages read
 */
async function historyOf(snap, hashX, acc, page) {
  const hist = [];
  let pages = 0;
  for await (const row of snap.range(layout.scan(P.history, hashX, 0))) {
    decodeRow(decodePage, row.value, row.key, layout.pageKeyTxNum(row.key), page, 0);
    for (let i = 0; i < PAGE_ENTRIES; i++) hist.push(page[i]);
    pages++;
  }
  for (let i = 0; i < acc.tailLen; i++) hist.push(acc.tail[i]);
  return { hist, pages };
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
  for (const sh of at < 0 ? [] : [rec.scripthashes.subarray(32 * at, 32 * at + 32), rec.p2pk && rec.p2pk.get(at)]) {
    if (sh && sh.subarray(0, hashX.length).equals(hashX)) return toDisplayHex(sh);
  }
  return `…${toDisplayHex(hashX)}`;
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
    case P.source: return { table, value: records.decodeSource(value) };
    case P.tip: return { table, value: records.decodeTip(value) };
    case P.block: return { table, value: decodeBlock(value) };
    case P.blockHash: return { table, value: decodeBlockHeight(value) };
    case P.locator: return { table, value: decodeLocator(value) };
    case P.body: return { table, value: records.decodeBody(value, Buffer.alloc(80)) };
    case P.touched: return { table, value: decodeTouched(value) };
    case P.mempool: {
      // head, format 2's whole, a row of formats 3-4, a change, a part (format 6; format 5's
      // held the bytes: its head is of version 4), -, a transaction's bytes
      const decode = [decodeMempoolHead, decodeMempool, decodeTxidKeyedRow, decodeChange, decodeMempoolTx, null, decodeMempoolRaw][key[1]];
      return { table, value: decode ? decode(value) : null };
    }
    case P.txids: return { table, value: readTxidsRow(value) };
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
