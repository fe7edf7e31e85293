'use strict';

/**
 * The index model's numbers and rules, in one place: every backend lays its rows out by
 * these, so the key-value schema and the MongoDB documents agree on what an account holds.
 */

/** A history entry's flags: the transaction pays the script hash, spends from it, or both. */
const FUNDED = 1;
const SPENT = 2;

/** History entries per sealed page; an account keeps the last 1..PAGE_ENTRIES itself. */
const PAGE_ENTRIES = 64;

/** Unspent outputs an account keeps inline; above this they live in rows of their own. */
const INLINE_UTXOS = 16;

/** TxNums are 40-bit numbers (5-byte keys, exact in a double as txNum * 4 + flags). */
const MAX_TXNUM = 2 ** 40 - 1;

/** Blocks of undo kept by default: the deepest reorg an index follows. */
const DEFAULT_UNDO_DEPTH = 100;

/** Problems `verify()` lists before it only counts the rest. */
const DEFAULT_MAX_PROBLEMS = 20;

/**
 * How many of an account's entries sit in sealed pages: every full page but the last, so
 * the account always keeps 1..PAGE_ENTRIES entries (0 only when it has none). Depends on the
 * count alone, so the bytes do not depend on batching or reorgs.
 * @param {number} txCount
 */
function sealedCount(txCount) {
  return txCount === 0 ? 0 : Math.floor((txCount - 1) / PAGE_ENTRIES) * PAGE_ENTRIES;
}

/**
 * Whether an account with this many unspent outputs keeps them inline.
 * @param {number} utxoCount
 */
function utxosInline(utxoCount) {
  return utxoCount <= INLINE_UTXOS;
}

/**
 * Whether an account's counters can be: nothing negative, no more spent than received. An
 * update that breaks this met rows that do not belong to the chain being applied.
 * @param {{received: number, sent: number, fundedCount: number, spentCount: number}} a
 */
function countersHold(a) {
  return a.sent >= 0 && a.spentCount >= 0 && a.sent <= a.received && a.spentCount <= a.fundedCount;
}

/**
 * The lowest height whose undo a commit writes: undoDepth blocks below the higher of the new
 * tip and the best chain's height as the writer knows it. A block further below the chain
 * than that can only be reverted by a reorg deeper than undoDepth, which is refused anyway
 * (ERR_REORG_TOO_DEEP), so a catch-up far behind its source writes no undo that the next
 * batches would delete unread (as ElectrumX keeps undo only within its reorg limit of the
 * daemon's height). Which rows leave still follows the tip alone: once caught up, the index
 * holds undo for exactly its last undoDepth blocks, however it got there.
 * @param {number} tipHeight the height of the commit's last block
 * @param {number|undefined} chainHeight the source's best height, when the writer knows it
 * @param {number} undoDepth
 */
function undoFloor(tipHeight, chainHeight, undoDepth) {
  return Math.max(tipHeight, chainHeight ?? tipHeight) - undoDepth + 1;
}

module.exports = {
  FUNDED, SPENT, PAGE_ENTRIES, INLINE_UTXOS, MAX_TXNUM, DEFAULT_UNDO_DEPTH, DEFAULT_MAX_PROBLEMS,
  sealedCount, utxosInline, countersHold, undoFloor,
};
