'use strict';

const { decodeWhole, decodeChange, decodeMempoolTx, CHANGE_VERSION } = require('../codec/mempool');
const { MempoolView, ViewTx } = require('../core/mempool');
const { RANK } = require('../core/mempool-tx');
const { MemoryReturn } = require('../ops/free-memory');

/**
 * The stored mempool snapshot of one process, decoded and indexed (lib/core/mempool.js): every
 * request reads only the snapshot's small head, and a new seq is read once, shared by every
 * request that meets it.
 *
 * A new seq costs what changed, not the mempool's size: the store keeps each poll's change
 * (docs/FORMAT.md, `M` rows), and a process that holds the view of an earlier seq reads the
 * changes since (store.getMempoolChanges), decodes the transactions that entered and derives
 * the next view from the last (MempoolView#next), sharing its indexes. It reads the whole
 * (store.getMempool) only when it holds nothing yet, or fell behind the changes the store keeps.
 */
class MempoolCache {
  /**
   * @param {import('../stores/abstract').AbstractStore} store
   */
  constructor(store) {
    this.store = store;
    /** @type {MempoolView|null} the last snapshot decoded */
    this.current = null;
    /** @type {Promise<MempoolView|null>|null} a read under way */
    this.loading = null;
    /** what the last reads did (the bench and the tests read it) */
    this.stats = { full: 0, derived: 0, decoded: 0, changes: 0 };
    /** the allocator's free pages given back after a whole read (the whole, decoded, goes) */
    this.memoryReturn = new MemoryReturn();
  }

  /**
   * The view of the snapshot with this seq, or of a newer one when the follower replaced it
   * meanwhile (the caller checks the view's tip); null when the store holds none any more.
   * @param {number} seq from getMempoolHead()
   * @returns {Promise<MempoolView|null>}
   */
  async view(seq) {
    let view = this.current;
    // a read that began before this seq was written returns an older one: read again (the head
    // and its rows are written in one commit, so the second read finds it)
    for (let attempt = 0; attempt < 3 && !(view && view.seq >= seq); attempt++) {
      if (!this.loading) this.loading = this.load().finally(() => { this.loading = null; });
      view = await this.loading;
      if (!view) return null;
    }
    return view;
  }

  async load() {
    const cur = this.current;
    if (cur) {
      const changes = await this.store.getMempoolChanges(cur.seq);
      const view = changes && this.derive(cur, changes);
      if (view) {
        this.current = view;
        this.memoryReturn.after(0);
        return view;
      }
    }
    const raw = await this.store.getMempool();
    if (!raw) return null;
    const view = viewOfWhole(raw);
    // the line's transactions' bytes, read where the store keeps them when an answer needs them
    view.line.readRaw = (tx) => this.store.getMempoolRaw(tx[RANK], tx.txid);
    // a load that lost a race to a newer one keeps the newer
    if (this.current && view.seq <= this.current.seq) return this.current;
    this.stats.full++;
    this.stats.decoded += view.txs.length;
    this.current = view;
    this.memoryReturn.after(view.txs.length);
    return view;
  }

  /**
   * The view after these changes (in order, from `cur`'s seq on), or null when only the whole
   * gives it (a reset among them, or places that do not fit).
   * @param {MempoolView} cur
   * @param {Buffer[]} changes
   * @returns {MempoolView|null}
   */
  derive(cur, changes) {
    let view = cur;
    for (const raw of changes) {
      const c = decodeChange(raw);
      if (c.reset || c.prev !== view.seq || c.version !== CHANGE_VERSION) return null;
      const removed = [];
      const gone = new Set();
      const leave = (txid) => {
        const tx = view.get(txid);
        if (tx && !gone.has(tx)) {
          gone.add(tx);
          removed.push(tx);
        }
      };
      for (const txid of c.removed) leave(txid);
      const ranks = new Map();
      const decoded = [];
      const added = c.upserts.map((u) => {
        // a copy of its own: the rest of the change is not kept for it
        const part = Buffer.from(u.part);
        const d = decodeMempoolTx(part);
        const tx = new ViewTx(part, d);
        decoded.push(d);
        leave(tx.txid);
        ranks.set(tx, u.rank);
        return tx;
      });
      view = view.next({ seq: c.seq, tip: c.tip, evicted: c.evicted }, added, removed, (tx) => ranks.get(tx), Date.now(), decoded);
      if (!view) return null;
      this.stats.changes++;
      this.stats.decoded += added.length;
    }
    if (view !== cur) this.stats.derived++;
    return view;
  }
}

/**
 * The view of a whole stored snapshot (store.getMempool), the first of its line.
 * @param {Uint8Array} raw lib/codec/mempool.js encodeWhole
 * @returns {MempoolView}
 */
function viewOfWhole(raw) {
  const whole = decodeWhole(raw);
  // each part a copy of its own: the whole is not kept for the parts that stay
  const parts = whole.rows.map((row) => Buffer.from(row.part));
  return new MempoolView({ seq: whole.seq, tip: Buffer.from(whole.tip), evicted: whole.evicted, txs: parts, ranks: whole.rows.map((row) => row.rank) });
}

module.exports = { MempoolCache, viewOfWhole };
