'use strict';

const { countersHold } = require('./rules');
const { corrupt } = require('./checks');

/**
 * The script view of an address account that counts P2PK outputs (lib/core/p2pk.js): its
 * P2PKH script alone, derived from what the index holds — the address account, the accounts of
 * its P2PK parts and its "both" entries — once for every backend. Every other account's script
 * view is the account itself: only these need deriving.
 *
 * A backend hands each account to these functions as an AccountReader over its own rows or
 * documents. The reads walk the address account in chunks and drop the entries and outputs of
 * its parts: the work is the part's entries passed over, nothing else.
 */

/**
 * @typedef {object} ReaderEntry
 * @property {number} txNum
 * @property {number} flags   FUNDED | SPENT
 * @property {number} height
 */

/**
 * One account, as a backend reads it.
 * @typedef {object} AccountReader
 * @property {import('../stores/abstract').Summary} summary
 * @property {(lo: number, hi: number, desc: boolean, want: number) => Promise<ReaderEntry[]>} entries
 *   up to `want` (Infinity: all) history entries with TxNum in [lo, hi), in chain order or reversed;
 *   a backend may add fields of its own to each, which are handed back untouched
 * @property {(after: {txNum: number, vout: number}|null, want: number) => Promise<Array<{txNum: number, vout: number, value: number}>>} utxos
 *   up to `want` unspent outputs after `after`, in (TxNum, vout) order (fields of its own kept too)
 */

/**
 * The entries of the script view, TxNums in [lo, hi), in the order asked, at most `want`.
 * @param {AccountReader} account the address account
 * @param {AccountReader[]} parts the accounts of its P2PK parts
 * @param {number[]} both its "both" postings (txNum * 4 + flags of the P2PKH script)
 * @param {number} lo
 * @param {number} hi
 * @param {boolean} desc
 * @param {number} want
 * @returns {Promise<ReaderEntry[]>} the address account's entries with their P2PKH flags
 */
async function scriptEntries(account, parts, both, lo, hi, desc, want) {
  const bothFlags = new Map();
  for (const p of both) bothFlags.set(Math.floor(p / 4), p % 4);
  const out = [];
  const chunk = Math.max(64, Math.min(want, 4096));
  while (out.length < want && lo < hi) {
    const got = await account.entries(lo, hi, desc, chunk);
    if (got.length === 0) break;
    const edge = got[got.length - 1].txNum;
    // a part's entries are the address account's too: those of the span are at most the chunk
    const spanLo = desc ? edge : got[0].txNum;
    const spanHi = (desc ? got[0].txNum : edge) + 1;
    const inParts = new Set();
    for (const p of parts) for (const e of await p.entries(spanLo, spanHi, desc, Infinity)) inParts.add(e.txNum);
    for (const e of got) {
      let flags = e.flags;
      if (inParts.has(e.txNum)) {
        flags = bothFlags.get(e.txNum) || 0;
        if (flags === 0) continue;
      }
      out.push(flags === e.flags ? e : { ...e, flags });
      if (out.length === want) break;
    }
    if (got.length < chunk) break;
    if (desc) hi = edge;
    else lo = edge + 1;
  }
  return out;
}

/**
 * The unspent outputs of the script view after `after`, at most `want`.
 * @param {AccountReader} account
 * @param {AccountReader[]} parts
 * @param {{txNum: number, vout: number}|null} after
 * @param {number} want
 */
async function scriptUtxos(account, parts, after, want) {
  const out = [];
  const chunk = Math.max(64, Math.min(want, 4096));
  for (;;) {
    const got = await account.utxos(after, chunk);
    if (got.length === 0) break;
    const last = got[got.length - 1];
    // a part's outputs are the address account's too: those up to `last` are at most the chunk
    const theirs = new Set();
    for (const p of parts) {
      for (const u of await p.utxos(after, got.length)) {
        if (u.txNum < last.txNum || (u.txNum === last.txNum && u.vout <= last.vout)) theirs.add(`${u.txNum}:${u.vout}`);
      }
    }
    for (const u of got) {
      if (theirs.has(`${u.txNum}:${u.vout}`)) continue;
      out.push(u);
      if (out.length === want) return out;
    }
    if (got.length < chunk) break;
    after = { txNum: last.txNum, vout: last.vout };
  }
  return out;
}

/**
 * The Summary of the script view, or null when the P2PKH script has no history of its own.
 * @param {AccountReader} account
 * @param {AccountReader[]} parts distinct accounts (a part named twice counts once)
 * @param {number[]} both
 * @param {string} name the script hash, for errors
 * @returns {Promise<import('../stores/abstract').Summary|null>}
 */
async function scriptSummary(account, parts, both, name) {
  const a = account.summary;
  const s = { received: a.received, sent: a.sent, fundedCount: a.fundedCount, spentCount: a.spentCount };
  for (const p of parts) {
    s.received -= p.summary.received;
    s.sent -= p.summary.sent;
    s.fundedCount -= p.summary.fundedCount;
    s.spentCount -= p.summary.spentCount;
  }
  if (!countersHold(s) || s.received < 0 || s.fundedCount < 0) throw corrupt(`script hash ${name}: its P2PK parts hold more than the account`);
  let txCount;
  if (parts.length === 1) {
    // every entry of the part is the account's; the "both" ones stay in the script view
    txCount = a.txCount - parts[0].summary.txCount + both.length;
  } else {
    // two P2PK scripts in one account: only when two keys' script hashes share their first
    // bytes (docs/FORMAT.md, hashX); counted the long way
    txCount = (await scriptEntries(account, parts, both, 0, Infinity, false, Infinity)).length;
  }
  if (txCount < 0) throw corrupt(`script hash ${name}: its P2PK parts have more entries than the account`);
  if (txCount === 0) {
    if (s.received !== 0 || s.fundedCount !== 0) throw corrupt(`script hash ${name}: no history of its own, but outputs`);
    return null;
  }
  const [firstEntry] = await scriptEntries(account, parts, both, 0, Infinity, false, 1);
  const [lastEntry] = await scriptEntries(account, parts, both, 0, Infinity, true, 1);
  if (!firstEntry) throw corrupt(`script hash ${name}: ${txCount} entries of its own are counted, none is found`);
  return {
    balance: s.received - s.sent,
    received: s.received,
    sent: s.sent,
    txCount,
    fundedCount: s.fundedCount,
    spentCount: s.spentCount,
    utxoCount: s.fundedCount - s.spentCount,
    firstHeight: firstEntry.height,
    lastHeight: lastEntry.height,
  };
}

module.exports = { scriptEntries, scriptUtxos, scriptSummary };
