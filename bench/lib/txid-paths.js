'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { parseTransaction } = require('../../lib/chain/tx');
const { txPlace } = require('../../lib/stores/query');
const { percentile } = require('./http');

/**
 * Does the TxNum -> txid table pay for itself? Two read paths over the same index, side by
 * side in one process:
 *
 *  A (the index today): a history entry's txid comes from the `n` rows (32 bytes each);
 *  B (electrs' way): the index keeps no txids, only each transaction's place (its block's
 *    locator and its offset in it, as `n` keeps them besides the txids), and a txid is had by
 *    reading the transaction's bytes from its blk file and hashing them.
 *
 * Measured on the two answers that list transactions: the merged history of a wallet
 * (POST /api/v1/addresses/history: txids only, so B reads and hashes every entry) and an
 * address's newest 25 whole transactions (/api/address/:a/txs: both read the bodies; B finds
 * them by place instead of by txid). B's txid -> TxNum lookups (the `x` rows, kept: a
 * candidate is confirmed by hashing its bytes instead of comparing with `n`) cost what
 * reading the funding transactions costs in A, so the prevouts are read the same way in both.
 */
class TxidPaths {
  /**
   * @param {import('../../lib/stores/abstract').AbstractStore} store a key-value store (`kv` is read)
   * @param {import('../../lib/api/txdata').TxData} data
   * @param {string} blocksDir plain blk files (no xor.dat)
   */
  constructor(store, data, blocksDir) {
    this.store = store;
    this.data = data;
    this.blocksDir = blocksDir;
    this.fds = new Map();
  }

  fd(file) {
    let fd = this.fds.get(file);
    if (fd === undefined) {
      fd = fs.openSync(path.join(this.blocksDir, `blk${String(file).padStart(5, '0')}.dat`), 'r');
      this.fds.set(file, fd);
    }
    return fd;
  }

  /** B: a transaction found by its TxNum and height alone, read and hashed. */
  async byPlace(txNum, height, rows) {
    let row = rows.get(height);
    if (!row) rows.set(height, (row = await this.store.getBlock(height)));
    const position = txNum - row.firstTxNum;
    const { offset, next } = await txPlace(this.store.kv, txNum, position + 1 < row.txCount);
    const length = (next === null ? row.size : next) - offset;
    const buf = Buffer.allocUnsafe(length);
    await new Promise((resolve, reject) => {
      fs.read(this.fd(row.locator.file), buf, 0, length, row.locator.offset + offset, (err, n) => (err || n !== length ? reject(err || new Error('short read')) : resolve()));
    });
    return parseTransaction(buf);
  }

  /** A: the merged history, txids from the index. */
  mergedA(shs) {
    return this.store.getHistories(shs, { limit: 5000 });
  }

  /** B: the same entries, each txid read from the blocks and hashed. */
  async mergedB(shs) {
    const page = await this.store.getHistories(shs, { limit: 5000 });
    const rows = new Map();
    const txs = await Promise.all(page.entries.map((e) => this.byPlace(e.txNum, e.height, rows)));
    return { ...page, txids: txs.map((t) => t.txid) };
  }

  /** A: an address's newest 25 transactions with their prevouts, found by txid. */
  async txsA(sh) {
    const page = await this.store.getHistory(sh, { order: 'desc', limit: 25 });
    return this.data.txs(page.entries.map((e) => e.txid), { prevouts: true });
  }

  /** A without the prevouts: what a copy of every spent output in the index could at best bring it to. */
  async txsBare(sh) {
    const page = await this.store.getHistory(sh, { order: 'desc', limit: 25 });
    return this.data.txs(page.entries.map((e) => e.txid), {});
  }

  /** B: the same, found by place and hashed; prevouts as in A. */
  async txsB(sh) {
    const page = await this.store.getHistory(sh, { order: 'desc', limit: 25 });
    const rows = new Map();
    return Promise.all(page.entries.map(async (e) => {
      const tx = await this.byPlace(e.txNum, e.height, rows);
      return { tx, prevouts: await this.data.prevouts(tx) };
    }));
  }

  /**
   * Both paths, interleaved, `rounds` times each over the same inputs; checks B finds A's txids.
   * @param {Buffer[]} wallet script hashes of the wallet
   * @param {Buffer[]} busy script hashes with >= 25 transactions
   * @param {number} rounds
   */
  async compare(wallet, busy, rounds) {
    const a = await this.mergedA(wallet);
    const b = await this.mergedB(wallet);
    b.txids.forEach((t, i) => { if (!t.equals(a.entries[i].txid)) throw new Error(`path B read another transaction at entry ${i}`); });
    const time = async (fn) => {
      const t0 = process.hrtime.bigint();
      await fn();
      return Number(process.hrtime.bigint() - t0) / 1e6;
    };
    const lat = { mergedA: [], mergedB: [], txsA: [], txsB: [], txsBare: [] };
    for (let r = 0; r < rounds; r++) {
      lat.mergedA.push(await time(() => this.mergedA(wallet)));
      lat.mergedB.push(await time(() => this.mergedB(wallet)));
      for (const sh of busy) {
        lat.txsA.push(await time(() => this.txsA(sh)));
        lat.txsB.push(await time(() => this.txsB(sh)));
        lat.txsBare.push(await time(() => this.txsBare(sh)));
      }
    }
    const out = { entries: a.entries.length, wallet: wallet.length, busy: busy.length, rounds };
    for (const [k, v] of Object.entries(lat)) {
      v.sort((x, y) => x - y);
      out[k] = { p50: percentile(v, 50), p90: percentile(v, 90) };
    }
    out.mergedRatio = out.mergedB.p50 / out.mergedA.p50;
    out.txsRatio = out.txsB.p50 / out.txsA.p50;
    return out;
  }

  close() {
    for (const fd of this.fds.values()) fs.closeSync(fd);
    this.fds.clear();
  }
}

module.exports = { TxidPaths };
