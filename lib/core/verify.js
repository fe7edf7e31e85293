'use strict';

const { FUNDED, SPENT, DEFAULT_MAX_PROBLEMS } = require('./rules');

/**
 * What `verify()` checks, whatever the backend: the chain of blocks and every account's
 * summary against its history and unspent outputs. A backend walks its own rows or documents
 * and hands each block and account to these checks; it adds only the checks of its own
 * persistence (that a copy kept in two places agrees, that keys are well formed).
 */

/** The problems a walk finds: the first `max` worded, all of them counted. */
class Problems {
  /** @param {number} [max] */
  constructor(max = DEFAULT_MAX_PROBLEMS) {
    this.max = max;
    this.list = [];
    this.count = 0;
  }

  /** @param {string} msg */
  add(msg) {
    this.count++;
    if (this.list.length < this.max) this.list.push(msg);
  }

  /**
   * @param {Object<string, number>} checked
   * @returns {import('../stores/abstract').VerifyResult}
   */
  result(checked) {
    return { ok: this.count === 0, checked, problems: this.list, problemCount: this.count };
  }
}

/**
 * The blocks of an index, walked in height order: heights from 0 without gaps, each block's
 * first TxNum where the previous one's transactions end, parents linked when the backend
 * keeps them, ending at the tip.
 */
class BlockChainCheck {
  /** @param {Problems} problems */
  constructor(problems) {
    this.problems = problems;
    this.height = 0;
    this.next = 0;
    this.hash = null;
    this.count = 0;
  }

  /**
   * @param {number} height
   * @param {{hash: string, prev?: string, firstTxNum: number, txCount: number}} b  hashes in display hex
   */
  block(height, b) {
    const p = this.problems;
    if (height !== this.height) p.add(`blocks: block ${height} where height ${this.height} was expected`);
    if (b.prev !== undefined && this.hash !== null && b.prev !== this.hash) {
      p.add(`blocks: block ${height}'s parent ${b.prev} is not block ${height - 1}'s hash ${this.hash}`);
    }
    if (b.firstTxNum !== this.next) p.add(`blocks: block ${height} starts at TxNum ${b.firstTxNum}, expected ${this.next}`);
    this.height = height + 1;
    this.next = b.firstTxNum + b.txCount;
    this.hash = b.hash;
    this.count++;
  }

  /** @param {{height: number, hash: string, nextTxNum: number}|null} tip */
  end(tip) {
    const p = this.problems;
    if (!tip) {
      if (this.count > 0) p.add(`blocks: ${this.count} blocks but no tip`);
      return;
    }
    if (this.height !== tip.height + 1) p.add(`blocks: they end at height ${this.height - 1}, the tip is ${tip.height}`);
    if (this.next !== tip.nextTxNum) p.add(`blocks: TxNums end at ${this.next}, the tip says ${tip.nextTxNum}`);
    if (this.hash !== null && this.hash !== tip.hash) p.add(`blocks: the tip hash ${tip.hash} is not the last block's ${this.hash}`);
  }
}

/**
 * One account against itself: its history in chain order and within the tip, its counters
 * against the entries' flags, its heights against the first and last entry, and its unspent
 * outputs against its balance and its funding entries.
 * @param {Problems} problems
 * @param {string} name how the account is named in messages
 * @param {{received: number, sent: number, txCount: number, fundedCount: number, spentCount: number,
 *   firstHeight: number, lastHeight: number}} acc
 * @param {ArrayLike<number>} hist  the history as postings (txNum * 4 + flags), in stored order
 * @param {Array<[number, number, number]>} utxos (TxNum, vout, value), in (TxNum, vout) order
 * @param {(txNum: number) => number} heightOf -1 past the tip
 */
function checkAccount(problems, name, acc, hist, utxos, heightOf) {
  const p = (msg) => problems.add(`${name}: ${msg}`);
  let funded = 0;
  let spent = 0;
  for (let i = 0; i < hist.length; i++) {
    if (i > 0 && hist[i] <= hist[i - 1]) p(`history out of chain order at entry ${i}`);
    const f = hist[i] % 4;
    if (f === 0) p(`TxNum ${Math.floor(hist[i] / 4)} neither funds nor spends it`);
    if (f & FUNDED) funded++;
    if (f & SPENT) spent++;
  }
  if (hist.length !== acc.txCount) p(`txCount ${acc.txCount}, history holds ${hist.length}`);
  if (hist.length > 0) {
    const firstH = heightOf(Math.floor(hist[0] / 4));
    const lastTx = Math.floor(hist[hist.length - 1] / 4);
    const lastH = heightOf(lastTx);
    if (lastH < 0) p(`history reaches TxNum ${lastTx}, past the tip`);
    if (firstH !== acc.firstHeight) p(`firstHeight ${acc.firstHeight}, history starts at ${firstH}`);
    if (lastH !== acc.lastHeight) p(`lastHeight ${acc.lastHeight}, history ends at ${lastH}`);
  }
  if (funded > acc.fundedCount || (funded === 0) !== (acc.fundedCount === 0)) p(`fundedCount ${acc.fundedCount} with ${funded} funding transactions`);
  if (spent > acc.spentCount || (spent === 0) !== (acc.spentCount === 0)) p(`spentCount ${acc.spentCount} with ${spent} spending transactions`);
  const utxoCount = acc.fundedCount - acc.spentCount;
  if (utxos.length !== utxoCount) p(`utxoCount ${utxoCount}, holds ${utxos.length}`);
  let sum = 0;
  let h = 0;
  for (let k = 0; k < utxos.length; k++) {
    const [txNum, vout, value] = utxos[k];
    if (k > 0 && (txNum < utxos[k - 1][0] || (txNum === utxos[k - 1][0] && vout <= utxos[k - 1][1]))) p(`UTXO ${txNum}:${vout} out of order`);
    sum += value;
    while (h < hist.length && Math.floor(hist[h] / 4) < txNum) h++;
    if (h >= hist.length || Math.floor(hist[h] / 4) !== txNum || !(hist[h] % 4 & FUNDED)) {
      p(`UTXO ${txNum}:${vout} is not from a funding entry of its history`);
    }
  }
  if (sum !== acc.received - acc.sent) p(`balance ${acc.received - acc.sent}, its UTXOs sum to ${sum}`);
}

/**
 * An address account's P2PK parts (lib/core/p2pk.js) against its history and their accounts:
 * each part's history is within the account's (every entry a transaction of the account, its
 * flags among the account's) and starts at the TxNum the part names; the "both" entries are
 * entries of a part whose other flags the account has too; and what the parts hold leaves the
 * P2PKH script counters that can be (its script view, lib/core/script-view.js).
 * @param {Problems} problems
 * @param {string} name
 * @param {{received: number, sent: number, fundedCount: number, spentCount: number, parts: import('./p2pk').Parts}} acc
 * @param {number[]} hist the account's postings, in chain order
 * @param {Array<{sh: string, first: number, summary: import('../stores/abstract').Summary, hist: number[]}>} parts
 *   each part's account as found (script hash in display hex)
 */
function checkParts(problems, name, acc, hist, parts) {
  const p = (msg) => problems.add(`${name}: ${msg}`);
  const flagsOf = new Map();
  for (const e of hist) flagsOf.set(Math.floor(e / 4), e % 4);
  const inParts = new Set();
  const left = { received: acc.received, sent: acc.sent, fundedCount: acc.fundedCount, spentCount: acc.spentCount };
  for (const part of parts) {
    for (const k of Object.keys(left)) left[k] -= part.summary[k];
    if (part.hist.length === 0 || Math.floor(part.hist[0] / 4) !== part.first) p(`its P2PK part ${part.sh} names TxNum ${part.first} as its first entry`);
    for (const e of part.hist) {
      const t = Math.floor(e / 4);
      inParts.add(t);
      const f = flagsOf.get(t);
      if (f === undefined || (f & e % 4) !== e % 4) p(`its P2PK part ${part.sh} has an entry at TxNum ${t} that it does not`);
    }
  }
  for (const e of acc.parts.both) {
    const t = Math.floor(e / 4);
    const f = flagsOf.get(t);
    if (!inParts.has(t) || f === undefined || (f & e % 4) !== e % 4) p(`a "both" entry at TxNum ${t} that is not an entry of it and of a part`);
  }
  if (left.sent < 0 || left.spentCount < 0 || left.sent > left.received || left.spentCount > left.fundedCount) {
    p('its P2PK parts hold more than it does');
  }
}

module.exports = { Problems, BlockChainCheck, checkAccount, checkParts };
