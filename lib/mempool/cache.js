'use strict';

const { mempoolParts, mempoolHead, decodeMempoolTx } = require('../codec/mempool');
const { MempoolView } = require('../core/mempool');

/**
 * The stored mempool snapshot of one process, decoded and indexed (lib/core/mempool.js): every
 * request reads only the snapshot's small head, and a new seq is read once, shared by every
 * request that meets it.
 *
 * A new seq costs what changed, not the mempool's size: the follower keeps each transaction's
 * part of the snapshot byte for byte while its resolution holds (lib/mempool/pool.js), so the
 * parts this process holds already are found by txid and compared, and only the others are
 * decoded; the new view is derived from the last one (MempoolView#next), sharing what it
 * keeps. A snapshot whose kept transactions changed their order (a reorg resolved it anew), or
 * the first one, is decoded and indexed whole.
 */
class MempoolCache {
  /**
   * @param {import('../stores/abstract').AbstractStore} store
   */
  constructor(store) {
    this.store = store;
    /** @type {MempoolView|null} the last snapshot decoded */
    this.current = null;
    /**
     * The parts of the current view's transactions, by latin1 txid: what the next snapshot is
     * compared with.
     * @type {Map<string, {tx: import('../codec/mempool').MempoolTx, part: Buffer, mark: number}>}
     */
    this.parts = new Map();
    this.epoch = 0;
    /** @type {Promise<MempoolView|null>|null} a read under way */
    this.loading = null;
    /** what the last reads did (the bench and the tests read it) */
    this.stats = { full: 0, derived: 0, decoded: 0, kept: 0 };
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
    // and the snapshot are written in one commit, so the second read finds it)
    for (let attempt = 0; attempt < 3 && !(view && view.seq >= seq); attempt++) {
      if (!this.loading) this.loading = this.load().finally(() => { this.loading = null; });
      view = await this.loading;
      if (!view) return null;
    }
    return view;
  }

  async load() {
    const raw = await this.store.getMempool();
    if (!raw) return null;
    const cur = this.current;
    // the head first: a load that lost a race to a newer one walks no parts
    if (cur && mempoolHead(raw).seq <= cur.seq) return cur;
    const { seq, tip, starts } = mempoolParts(raw);
    const view = (cur && this.derive(cur, raw, seq, tip, starts)) || this.build(raw, seq, tip, starts);
    this.current = view;
    return view;
  }

  /** The view of a snapshot from its parts alone. */
  build(raw, seq, tip, starts) {
    const n = starts.length - 1;
    const txs = new Array(n);
    this.parts = new Map();
    const mark = ++this.epoch;
    for (let k = 0; k < n; k++) {
      // views into raw: it lives as long as one of its transactions is in the mempool
      const part = raw.subarray(starts[k], starts[k + 1]);
      const tx = decodeMempoolTx(part);
      txs[k] = tx;
      this.parts.set(part.latin1Slice(0, 32), { tx, part, mark });
    }
    this.stats.full++;
    this.stats.decoded += n;
    return new MempoolView({ seq, tip: Buffer.from(tip), txs });
  }

  /**
   * The view of the next snapshot from the current one, decoding only the parts it does not
   * hold; null when only build() gives it right.
   */
  derive(cur, raw, seq, tip, starts) {
    const n = starts.length - 1;
    const txs = new Array(n);
    const added = [];
    const fresh = [];
    const mark = ++this.epoch;
    for (let k = 0; k < n; k++) {
      const s = starts[k];
      const e = starts[k + 1];
      const key = raw.latin1Slice(s, s + 32);
      const known = this.parts.get(key);
      if (known && known.mark !== mark && known.part.length === e - s && raw.compare(known.part, 0, known.part.length, s, e) === 0) {
        known.mark = mark;
        txs[k] = known.tx;
        continue;
      }
      // a copy of its own: the rest of raw is not kept for it
      const part = Buffer.from(raw.subarray(s, e));
      const tx = decodeMempoolTx(part);
      txs[k] = tx;
      added.push(tx);
      fresh.push({ key, tx, part, mark });
    }
    const removed = [];
    for (const [key, known] of this.parts) {
      if (known.mark === mark) continue;
      removed.push(known.tx);
      this.parts.delete(key);
    }
    for (const f of fresh) this.parts.set(f.key, { tx: f.tx, part: f.part, mark: f.mark });
    const view = cur.next({ seq, tip: Buffer.from(tip), txs }, added, removed, Date.now());
    if (!view) return null;
    this.stats.derived++;
    this.stats.decoded += added.length;
    this.stats.kept += n - added.length;
    return view;
  }
}

module.exports = { MempoolCache };
