'use strict';

/**
 * The two answers whose size grows with a history, written straight into bytes: a status
 * (the "txid:height:" text hashed) and get_history's JSON. A 10,000-entry history as objects
 * costs 10,000 hex strings and objects for JSON.stringify to walk; here each txid is turned
 * into hex in place, reversed, in one buffer.
 */

const HEX = Buffer.from('0123456789abcdef', 'latin1');

/**
 * Writes a 32-byte hash as display hex (bytes reversed) at `at`.
 * @returns {number} the offset after it
 */
function writeDisplayHex(out, at, hash) {
  for (let i = 31; i >= 0; i--) {
    const b = hash[i];
    out[at++] = HEX[b >> 4];
    out[at++] = HEX[b & 15];
  }
  return at;
}

/** Writes an integer (any sign) in decimal ASCII at `at`; returns the offset after it. */
function writeInt(out, at, n) {
  // -1: a mempool transaction with an unconfirmed input, thousands in a busy status
  if (n < 0 && n >= -0xffffffff) {
    out[at] = 0x2d;
    return writeInt(out, at + 1, -n);
  }
  if (n < 0 || n > 0xffffffff) return at + out.write(String(n), at, 'latin1');
  let digits = 1;
  for (let v = n; v >= 10; v = Math.floor(v / 10)) digits++;
  for (let i = at + digits - 1, v = n; i >= at; i--, v = Math.floor(v / 10)) out[i] = 0x30 + (v % 10);
  return at + digits;
}

/** Reused for statuses (hashed at once, never handed out): no allocation per status. */
let scratch = Buffer.allocUnsafe(64 * 1024);

/**
 * The status preimage: "txid:height:" for each entry, in the order given.
 * @param {Array<{txid: Buffer, height: number}>} entries
 * @param {boolean} [shared=false] write into a buffer reused by the next call (the caller
 *   hashes it at once)
 * @returns {Buffer}
 */
function statusText(entries, shared = false) {
  const out = textBuffer(entries.length, shared);
  let at = 0;
  for (const e of entries) at = writeStatusEntry(out, at, e.txid, e.height);
  return out.subarray(0, at);
}

/**
 * statusText() of entries given apart: txids[order[k]] and heights[order[k]], k = 0, 1, …
 * (a busy script hash's thousands of mempool transactions, with no object made for each).
 * @param {ArrayLike<Uint8Array>} txids each holds a txid's 32 bytes (internal order) at its start
 * @param {ArrayLike<number>} heights
 * @param {ArrayLike<number>} order
 * @param {Uint32Array|null} [ends] given: ends[k] is set to where the k-th entry's text ends
 * @returns {Buffer}
 */
function statusTextOf(txids, heights, order, ends = null) {
  const out = textBuffer(order.length, false);
  let at = 0;
  for (let k = 0; k < order.length; k++) {
    at = writeStatusEntry(out, at, txids[order[k]], heights[order[k]]);
    if (ends !== null) ends[k] = at;
  }
  return out.subarray(0, at);
}

function textBuffer(count, shared) {
  // 64 hex + 2 colons + up to 11 characters of height
  const size = count * 77;
  if (shared && scratch.length < size) scratch = Buffer.allocUnsafe(size);
  return shared ? scratch : Buffer.allocUnsafe(size);
}

/** "txid:height:" at `at`; returns the offset after it. */
function writeStatusEntry(out, at, txid, height) {
  at = writeDisplayHex(out, at, txid);
  out[at++] = 0x3a;
  at = writeInt(out, at, height);
  out[at++] = 0x3a;
  return at;
}

const OPEN = Buffer.from('{"tx_hash":"', 'latin1');
const HEIGHT = Buffer.from('","height":', 'latin1');

/**
 * get_history's confirmed part as a JSON array: [{"tx_hash": "...", "height": N}, ...]. Equal
 * to JSON.stringify(entries.map((e) => ({tx_hash: displayHex(e.txid), height: e.height}))).
 * @param {Array<{txid: Buffer, height: number}>} entries
 * @returns {string}
 */
function historyJSON(entries) {
  const per = OPEN.length + 64 + HEIGHT.length + 12 + 1;
  const out = Buffer.allocUnsafe(2 + entries.length * per);
  let at = 0;
  out[at++] = 0x5b; // [
  for (let i = 0; i < entries.length; i++) {
    if (i) out[at++] = 0x2c; // ,
    at += OPEN.copy(out, at);
    at = writeDisplayHex(out, at, entries[i].txid);
    at += HEIGHT.copy(out, at);
    at = writeInt(out, at, entries[i].height);
    out[at++] = 0x7d; // }
  }
  out[at++] = 0x5d; // ]
  return out.toString('latin1', 0, at);
}

module.exports = { writeDisplayHex, statusText, statusTextOf, historyJSON };
