'use strict';

const D = require('./documents');
const { PAGE_ENTRIES, sealedCount } = require('../../core/rules');

/**
 * Reading a history: an account's sealed pages (`history`, PAGE_SIZE entries each, by _id)
 * then its tail (in the account), in TxNum order. A walk reads only the pages it needs, each
 * with one `_id` lookup; a page that starts a bounded or resumed walk is found by binary
 * search over the pages, so a cursor deep in a long history costs log2(pages) lookups.
 */
class HistoryWalk {
  /**
   * @param {import('./reads').Reads} reads
   * @param {string} sh
   * @param {number} order   position of the script hash in the request
   * @param {D.Account} account the version the reader's tip sees
   * @param {number} lo  TxNum range [lo, hi)
   * @param {number} hi
   * @param {boolean} desc
   */
  constructor(reads, sh, order, account, lo, hi, desc) {
    this.reads = reads;
    this.sh = sh;
    this.order = order;
    this.account = account;
    this.lo = lo;
    this.hi = hi;
    this.desc = desc;
    this.sealed = sealedCount(account.txCount) / PAGE_ENTRIES;
    /** chunks: 0..sealed-1 are pages, `sealed` is the tail (when not empty) */
    this.chunks = this.sealed + (account.tail.length > 0 ? 1 : 0);
    this.cache = new Map();
    this.chunk = -1;
    this.entries = null;
    this.pos = 0;
    /** the current entry, or null when the walk is over */
    this.head = null;
  }

  async load(k) {
    if (k === this.sealed) return this.account.tail;
    let e = this.cache.get(k);
    if (!e) {
      e = await this.reads.page(this.sh, k);
      this.cache.set(k, e);
    }
    return e;
  }

  /** Positions the walk on its first entry in range. */
  async start() {
    if (this.chunks === 0) return;
    let k;
    if (!this.desc) {
      // first chunk whose last entry is >= lo
      if (this.lo === 0) k = 0;
      else k = await this.search((c) => c[c.length - 1].txNum >= this.lo, true);
    } else if (this.account.tail.length > 0 && this.hi > this.account.tail[this.account.tail.length - 1].txNum) {
      k = this.chunks - 1;
    } else {
      // last chunk whose first entry is < hi
      k = await this.search((c) => c[0].txNum < this.hi, false);
    }
    if (k < 0 || k >= this.chunks) return;
    this.chunk = k;
    this.entries = await this.load(k);
    this.pos = this.desc ? this.entries.length - 1 : 0;
    await this.settle();
  }

  /**
   * Binary search over chunks for a monotone predicate: the first chunk where it holds
   * (ascending) or the last (descending, the predicate holding for a prefix).
   */
  async search(pred, first) {
    let lo = 0;
    let hi = this.chunks - 1;
    let found = first ? this.chunks : -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const ok = pred(await this.load(mid));
      if (first) {
        if (ok) {
          found = mid;
          hi = mid - 1;
        } else lo = mid + 1;
      } else if (ok) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }

  /** Moves to the first entry at or past the current position that is in range, or ends. */
  async settle() {
    for (;;) {
      if (this.entries === null) {
        this.head = null;
        return;
      }
      if (this.pos < 0 || this.pos >= this.entries.length) {
        const k = this.chunk + (this.desc ? -1 : 1);
        if (k < 0 || k >= this.chunks) {
          this.entries = null;
          continue;
        }
        this.chunk = k;
        this.entries = await this.load(k);
        this.pos = this.desc ? this.entries.length - 1 : 0;
        continue;
      }
      const e = this.entries[this.pos];
      if (!this.desc) {
        if (e.txNum < this.lo) {
          this.pos++;
          continue;
        }
        if (e.txNum >= this.hi) this.entries = null;
      } else {
        if (e.txNum >= this.hi) {
          this.pos--;
          continue;
        }
        if (e.txNum < this.lo) this.entries = null;
      }
      if (this.entries === null) continue;
      this.head = e;
      return;
    }
  }

  async advance() {
    this.pos += this.desc ? -1 : 1;
    await this.settle();
  }
}

/**
 * A walk over entries already in hand, in the walk's order (the script view of an address
 * account with P2PK parts, worked out by lib/core/script-view.js).
 */
class ListWalk {
  /**
   * @param {number} order position of the script hash in the request
   * @param {D.Entry[]} entries
   */
  constructor(order, entries) {
    this.order = order;
    this.entries = entries;
    this.pos = 0;
    this.head = null;
  }

  async start() {
    this.head = this.entries[0] || null;
  }

  async advance() {
    this.pos++;
    this.head = this.entries[this.pos] || null;
  }
}

/**
 * Merges walks into one chain-ordered list: a tx in several histories appears once, its flags
 * or'ed and `order` naming the walks it came from. Reads one entry past `limit` to know
 * whether there is more.
 * @param {HistoryWalk[]} walks
 * @param {number} limit
 * @param {boolean} desc
 * @returns {Promise<{entries: Array<D.Entry & {order: number[]}>, more: boolean}>}
 */
async function mergeWalks(walks, limit, desc) {
  await Promise.all(walks.map((w) => w.start()));
  let live = walks.filter((w) => w.head !== null);
  const entries = [];
  while (live.length > 0) {
    let best = live[0].head.txNum;
    for (const w of live) {
      const t = w.head.txNum;
      if (desc ? t > best : t < best) best = t;
    }
    if (entries.length === limit) return { entries, more: true };
    const at = live.filter((w) => w.head.txNum === best);
    const e = { ...at[0].head, order: [] };
    for (const w of at) {
      e.funded = e.funded || w.head.funded;
      e.spent = e.spent || w.head.spent;
      e.order.push(w.order);
    }
    entries.push(e);
    await Promise.all(at.map((w) => w.advance()));
    live = live.filter((w) => w.head !== null);
  }
  return { entries, more: false };
}

module.exports = { HistoryWalk, ListWalk, mergeWalks };
