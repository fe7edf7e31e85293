'use strict';

const { decodeMempool } = require('../codec/mempool');
const { MempoolView } = require('../core/mempool');

/**
 * The stored mempool snapshot of one process, decoded and indexed (lib/core/mempool.js) once
 * per seq: the follower replaces the snapshot whole, every request reads only its small head,
 * and a new seq costs one read and one decode, shared by every request that meets it.
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
    const view = new MempoolView(decodeMempool(raw));
    if (!this.current || view.seq >= this.current.seq) this.current = view;
    return this.current;
  }
}

module.exports = { MempoolCache };
