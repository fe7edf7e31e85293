'use strict';

const { createHash } = require('node:crypto');
const { statusPrefix, statusOfText, mempoolText, mempoolPart } = require('./status');
const { tooLarge, badRequest } = require('./errors');
const { mempoolStatusText, mempoolStatusPart, VIEW } = require('./reader');

/** Script hashes whose last heights are read per store call when touched sets are not kept. */
const CHUNK = 2000;
/**
 * An entry keeps its mempool part from one status to the next (status.js MempoolPart) from
 * this many unconfirmed transactions on: ~85 bytes a transaction, for the few busy script
 * hashes whose part a poll extends by a few rather than writes again whole.
 */
const KEEP_MEMPOOL_FROM = 1000;

/**
 * The script hash subscriptions of one process, shared by its connections: one entry per
 * script hash (its status, the height of its last confirmed transaction, the tip and the
 * mempool entries both were read with) with the sessions subscribed to it, so 10,000 wallets
 * watching one address cost one status, and a change costs work only for the entries it can
 * have changed.
 *
 * Blocks. When the tip moves from P to N with fork height F (the highest height whose block
 * both chains share; P's height for a plain extension), a confirmed history changes only above
 * F. An entry read at P needs a new status only if it had a transaction above F (the blocks
 * reverted) or one of the blocks F+1..N touched it (the index keeps each recent block's touched
 * script hashes: getTouched). When those sets are not kept (a move longer than the undo kept),
 * every entry's last height is read instead (getSummaries, in chunks). Entries read at neither
 * P nor N (subscribed while the tip moved) are recomputed.
 *
 * An entry is labelled with the tip its read belongs to when a mempool snapshot was paired with
 * it (exact), else with the tip the watcher had seen when its read began: the index may already
 * be further on, never behind. That is enough for the rule above (a status read at a later
 * state than its label is checked against a fork at or below that state) and spares two tip
 * reads per subscription.
 *
 * Mempool. An entry keeps the mempool transactions its status counted (txid and height); when
 * the snapshot changes, the entries that counted some and the subscribed script hashes the new
 * snapshot touches are compared with it, and those that differ are recomputed. When the
 * snapshot's line of views knows what changed since the view the entries were last brought to
 * (MempoolView#changesSince), only the subscriptions to the script hashes those changes
 * touched are compared; and an entry whose confirmed part is of the current tip is recomputed
 * from the hash state after its confirmed history (status.js statusPrefix), without reading
 * the store: a mempool poll costs in proportion to what it changed. A script hash with
 * thousands of unconfirmed transactions keeps its mempool part in order (status.js
 * MempoolPart), and a poll that only adds to it puts the new ones in their places.
 */
class Subscriptions {
  /**
   * @param {object} opts
   * @param {import('./reader').StoreReader} opts.reader
   * @param {number} opts.maxHistory
   * @param {() => string|null} opts.seenTip the hash of the tip the watcher has seen last
   * @param {(msg: string) => void} opts.log
   * @param {number} [opts.keepMempoolFrom] see KEEP_MEMPOOL_FROM
   */
  constructor({ reader, maxHistory, seenTip, log, keepMempoolFrom = KEEP_MEMPOOL_FROM }) {
    this.reader = reader;
    this.keepMempoolFrom = keepMempoolFrom;
    this.seenTip = seenTip;
    this.maxHistory = maxHistory;
    this.log = log;
    /**
     * @type {Map<string, {hex: string, sh: Buffer, key: string, status: string|null, lastHeight: number,
     *   tipHash: string|null, mempool: string, sessions: Set<object>}>}
     */
    this.entries = new Map();
    /** @type {Map<string, object>} the same entries by script hash (internal order, latin1), as touched sets and the mempool view key them */
    this.byKey = new Map();
    /** @type {Set<object>} entries whose status counts mempool transactions */
    this.withMempool = new Set();
    /** the seq of the mempool view the entries were last brought to (null: none) */
    this.checkedSeq = null;
    /** @type {Set<object>} entries made since (their mempool part may be of an older view) */
    this.fresh = new Set();
    /**
     * tip moves resolved from the touched sets, and by reading every last height instead;
     * mempool views met through their changes (the script hashes they touched), and by looking
     * at every subscription instead
     */
    this.stats = { touched: 0, scanned: 0, mempoolChanges: 0, mempoolScans: 0, fromPrefix: 0, extended: 0 };
  }

  /**
   * Subscribes a session (an object with a `subs` Set and `notify(method, params)`).
   * @param {object} session
   * @param {string} hex the script hash as the protocol shows it (lower case)
   * @param {Buffer} sh internal order
   * @param {number} maxPerSession
   * @returns {Promise<string|null>} the status
   */
  async subscribe(session, hex, sh, maxPerSession = Infinity) {
    if (!session.subs.has(hex) && session.subs.size >= maxPerSession) {
      throw badRequest(`subscription limit of ${maxPerSession} script hashes per connection reached`);
    }
    let entry = this.entries.get(hex);
    if (!entry) {
      const computed = await this.compute(sh);
      entry = this.entries.get(hex); // another session may have subscribed meanwhile
      if (!entry) {
        entry = { hex, sh, key: sh.latin1Slice(0, 32), ...computed, sessions: new Set() };
        this.entries.set(hex, entry);
        this.byKey.set(entry.key, entry);
        this.fresh.add(entry);
        if (entry.mempool) this.withMempool.add(entry);
      }
    }
    if (session.closed) return entry.status;
    entry.sessions.add(session);
    session.subs.add(hex);
    return entry.status;
  }

  /**
   * @returns {boolean} whether the session was subscribed
   */
  unsubscribe(session, hex) {
    if (!session.subs.delete(hex)) return false;
    const entry = this.entries.get(hex);
    if (entry) {
      entry.sessions.delete(session);
      if (entry.sessions.size === 0) {
        this.entries.delete(hex);
        this.byKey.delete(entry.key);
        this.withMempool.delete(entry);
        this.fresh.delete(entry);
      }
    }
    return true;
  }

  /** Forgets a closed session's subscriptions. */
  removeSession(session) {
    for (const hex of [...session.subs]) this.unsubscribe(session, hex);
  }

  /** @returns {number} script hashes subscribed (by any session) */
  get size() {
    return this.entries.size;
  }

  /**
   * Status, last height and mempool part, labelled with the tip they belong to (see above).
   * @param {Buffer} sh
   */
  async compute(sh) {
    const seen = this.seenTip();
    const { entries, mempool, more, tip, seq } = await this.reader.history(sh, this.maxHistory);
    if (more) throw tooLarge('history', this.maxHistory);
    const prefix = statusPrefix(entries);
    // a busy script hash's part kept for the polls that follow (recomputeMempool)
    const part = mempool.length >= this.keepMempoolFrom ? mempoolPart(mempool.map((e) => e.txid), Int8Array.from(mempool, (e) => e.height)) : null;
    if (part) part.seq = seq;
    const text = part ? part.text : mempool.length ? mempoolText(mempool) : null;
    return {
      status: statusOfText(prefix, text),
      lastHeight: entries.length ? entries[entries.length - 1].height : -1,
      tipHash: tip || seen,
      mempool: signatureOf(text),
      prefix,
      part,
    };
  }

  /**
   * compute() for an entry whose confirmed part is of `view`'s tip: only its mempool part is
   * read (from the view), and for a busy script hash extended from the part it kept when only
   * arrivals touched it since (`changes`: since the view the entries were last brought to);
   * null when the history would be past the bound (compute() says so).
   */
  recomputeMempool(e, view, changes) {
    const { count, text, part, extended } = mempoolStatusPart(view, e.sh, { key: e.key, kept: e.part, changes, keepFrom: this.keepMempoolFrom });
    if (e.prefix.count + count > this.maxHistory) return null;
    const signature = signatureOf(text);
    this.stats.fromPrefix++;
    if (extended) this.stats.extended++;
    if (signature === e.mempool) return { status: e.status, lastHeight: e.lastHeight, tipHash: e.tipHash, mempool: e.mempool, prefix: e.prefix, part };
    return { status: statusOfText(e.prefix, text), lastHeight: e.lastHeight, tipHash: e.tipHash, mempool: signature, prefix: e.prefix, part };
  }

  /**
   * Brings every entry to the new tip and mempool snapshot and returns those whose status
   * changed. Nothing is changed until every read has succeeded: a failed read leaves the
   * entries as they were, and the next attempt at the same change finds the same changes to
   * announce.
   * @param {import('./tip-watcher').IndexChange} change
   * @returns {Promise<Array<{hex: string, status: string|null, sessions: Set<object>}>>}
   */
  async onChange({ previous, tip, forkHeight, moved, mempool }) {
    const candidates = new Set();
    const unchanged = moved ? await this.blockCandidates(previous, tip, forkHeight, candidates) : [];
    const view = await mempool();
    const fresh = [...this.fresh];
    const byMempool = new Set();
    const changes = view && this.checkedSeq !== null && this.entries.size ? view.changesSince(this.checkedSeq, VIEW) : null;
    if (this.entries.size) {
      for (const e of this.mempoolCandidates(view, changes)) {
        if (!candidates.has(e)) byMempool.add(e);
        candidates.add(e);
      }
    }
    // a candidate of the mempool alone whose confirmed part is of this tip: its prefix holds
    const current = !moved && view && view.tip === tip.hash;

    const updates = [];
    const overLimit = [];
    for (const e of candidates) {
      try {
        const quick = current && byMempool.has(e) && e.prefix && e.tipHash === tip.hash ? this.recomputeMempool(e, view, changes) : null;
        updates.push([e, quick || await this.compute(e.sh)]);
      } catch (err) {
        if (err.rpcCode === undefined) throw err;
        overLimit.push([e, err]);
      }
    }
    for (const e of unchanged) e.tipHash = tip.hash;
    const changed = [];
    for (const [e, next] of updates) {
      if (this.entries.get(e.hex) !== e) continue; // unsubscribed meanwhile
      const was = e.status;
      Object.assign(e, next);
      if (e.mempool) this.withMempool.add(e);
      else this.withMempool.delete(e);
      if (next.status !== was) changed.push(e);
    }
    this.checkedSeq = view ? view.seq : null;
    for (const e of fresh) this.fresh.delete(e);
    for (const [e, err] of overLimit) {
      // grew past the bound: the subscription ends (its status could no longer be answered)
      this.log(`electrum: dropping the subscription to ${e.hex}: ${err.message}`);
      for (const s of [...e.sessions]) this.unsubscribe(s, e.hex);
    }
    return changed;
  }

  /**
   * Adds to `candidates` the entries a tip move can have changed (see the class comment).
   * @returns {Promise<object[]>} the entries read at the previous tip that it cannot have changed
   */
  async blockCandidates(previous, tip, forkHeight, candidates) {
    const prevHash = previous ? previous.hash : null;
    const atPrevious = [];
    for (const e of this.entries.values()) {
      if (e.tipHash === tip.hash) continue;
      // read elsewhere, or had a transaction in a block reverted: recomputed
      if (e.tipHash !== prevHash || e.lastHeight > forkHeight) candidates.add(e);
      else atPrevious.push(e);
    }
    if (!atPrevious.length) return [];
    const sets = await this.reader.touched(forkHeight, tip);
    if (sets) {
      this.stats.touched++;
      for (const set of sets) {
        for (let at = 0; at < set.length; at += 32) {
          const e = this.byKey.get(set.latin1Slice(at, at + 32));
          if (e && e.tipHash === prevHash && !candidates.has(e)) candidates.add(e);
        }
      }
    } else {
      this.stats.scanned++;
      for (let i = 0; i < atPrevious.length; i += CHUNK) {
        const chunk = atPrevious.slice(i, i + CHUNK);
        const heights = await this.reader.lastHeights(chunk.map((e) => e.sh));
        chunk.forEach((e, k) => { if (heights[k] > forkHeight) candidates.add(e); });
      }
    }
    return atPrevious.filter((e) => !candidates.has(e));
  }

  /**
   * The entries whose mempool part differs from what `view` (null: none) gives them. When the
   * view's line knows what changed since the view the entries were last brought to, only the
   * subscriptions to the script hashes those changes touched are looked at (and those made
   * since): the work follows the change, not the subscriptions or the mempool. Otherwise (the
   * first view, one built anew, or none): those that counted mempool transactions and the
   * subscribed script hashes the view touches.
   * @param {import('../core/mempool').MempoolView|null} view
   * @param {ReturnType<import('../core/mempool').MempoolView['changesSince']>} changes since the
   *   view the entries were last brought to (null: not known)
   * @returns {object[]}
   */
  mempoolCandidates(view, changes) {
    const check = new Set(this.fresh);
    if (changes) {
      this.stats.mempoolChanges++;
      for (const k of changes.keys) {
        const e = this.byKey.get(k);
        if (e) check.add(e);
      }
      // the caller compares those it recomputes from their prefix itself (recomputeMempool)
      return [...check].filter((e) => (e.prefix && e.tipHash === view.tip) || e.mempool !== signatureOf(mempoolStatusText(view, e.sh).text));
    }
    this.stats.mempoolScans++;
    for (const e of this.withMempool) check.add(e);
    if (view) {
      // from the smaller side: the view's script hashes, or the subscriptions
      if (view.scripthashBound(VIEW) < this.byKey.size) {
        for (const k of view.scripthashKeys(VIEW)) {
          const e = this.byKey.get(k);
          if (e) check.add(e);
        }
      } else {
        for (const e of this.entries.values()) if (view.touchesKey(e.key, VIEW)) check.add(e);
      }
    }
    const out = [];
    for (const e of check) {
      if (e.mempool !== (view ? signatureOf(mempoolStatusText(view, e.sh).text) : '')) out.push(e);
    }
    return out;
  }
}

/**
 * What a status counts of the mempool, as a string to compare: a digest of its part of the
 * status preimage (each transaction's txid and whether its height is 0 or -1, in the
 * protocol's order; '' for none). A digest, not the text: a busy script hash's text is
 * megabytes.
 * @param {Buffer|null} text mempoolText(), null for no mempool transaction
 * @returns {string}
 */
function signatureOf(text) {
  return text ? createHash('sha256').update(text).digest('latin1') : '';
}

module.exports = { Subscriptions };
