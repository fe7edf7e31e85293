'use strict';

const { sha256 } = require('../../chain/hash');
const { feeOf, VIEW } = require('./reads');
const S = require('./shapes');

/**
 * A wallet's transactions as bitcore-node v8 lists them (its ListTransactionsStream): one line
 * per output, NDJSON. A transaction spending a coin of the wallet is a send: each of its
 * outputs is a `send` line (to an address outside the wallet) or a `move` line (back into it),
 * negative, then one `fee` line; any other is a receive: one `receive` line per output paying
 * the wallet. Confirmed transactions come from the merged history of the wallet's script
 * hashes (one cursor over all of them, as the native API's), in chain order, then the mempool's.
 */

/**
 * @param {import('./reads').V8Reads} reads
 * @param {Buffer[]} hashes the wallet's script hashes, distinct
 * @param {object} q
 * @param {number} [q.fromHeight]
 * @param {number} [q.toHeight]
 * @param {boolean} q.mempool whether the mempool's transactions follow the confirmed ones
 * @param {number} [q.limit] confirmed transactions at most (an addrindex extension; none: all)
 * @param {string} [q.cursor] resume after the page that gave it
 * @param {object|null} tip
 * @param {import('../../core/mempool').MempoolView|null} pool
 * @returns {Promise<{lines: object[], next: string|null}>}
 */
async function walletTransactions(reads, hashes, q, tip, pool) {
  const mine = new Set(hashes.map((h) => h.latin1Slice(0, 32)));
  const blockAt = reads.blocks();
  const lines = [];
  const next = await reads.eachHistory(hashes, q, async (entries) => {
    const fulls = await reads.app.txdata.txs(entries.map((e) => e.txid), { prevouts: true });
    for (let k = 0; k < entries.length; k++) {
      const { tx, loc } = fulls[k];
      const t = {
        id: S.confirmedId(loc.txNum), txid: tx.hash, fee: feeOf(fulls[k]), size: tx.size, height: loc.height,
        blockTime: S.iso(await reads.normalizedMs(loc.height)),
      };
      linesOf(lines, t, tx, entries[k].spent, mine, reads.net);
    }
  });
  if (q.mempool && pool && next === null) {
    const seen = new Map();
    for (const sh of hashes) {
      for (const e of pool.entries(sh, VIEW)) {
        const was = seen.get(e.tx);
        seen.set(e.tx, Boolean(was) || e.spent);
      }
    }
    const txs = [...seen.keys()].sort((a, b) => a.time - b.time || Buffer.compare(a.txid, b.txid));
    const parsed = await Promise.all(txs.map((m) => pool.parsed(m)));
    txs.forEach((m, k) => {
      const tx = parsed[k];
      linesOf(lines, { id: S.mempoolId(m.txid), txid: tx.hash, fee: m.fee, size: tx.size, height: S.SPENT.pending }, tx, seen.get(m), mine, reads.net);
    });
  }
  return { lines, next };
}

/** Appends one transaction's lines. `t.blockTime` absent: in the mempool (bitcore leaves it out). */
function linesOf(lines, t, tx, sending, mine, net) {
  const when = t.blockTime === undefined ? {} : { blockTime: t.blockTime };
  if (sending) {
    tx.outputs.forEach((o, vout) => {
      const ours = mine.has(sha256(o.script).latin1Slice(0, 32));
      lines.push({
        id: t.id, txid: t.txid, fee: t.fee, size: t.size, category: ours ? 'move' : 'send', satoshis: -o.value, height: t.height,
        address: S.coinAddress(o.script, net), outputIndex: vout, ...when,
      });
    });
    if (t.fee > 0) lines.push({ id: t.id, txid: t.txid, category: 'fee', satoshis: -t.fee, height: t.height, ...when });
    return;
  }
  tx.outputs.forEach((o, vout) => {
    if (!mine.has(sha256(o.script).latin1Slice(0, 32))) return;
    lines.push({
      id: t.id, txid: t.txid, fee: t.fee, size: t.size, category: 'receive', satoshis: o.value, height: t.height,
      address: S.coinAddress(o.script, net), outputIndex: vout, ...when,
    });
  });
}

module.exports = { walletTransactions };
