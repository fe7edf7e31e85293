'use strict';

const { statusHash } = require('./status');
const { tooLarge, badRequest } = require('./errors');

/** Script hashes whose last heights are read per store call when a block arrives. */
const CHUNK = 2000;

/**
 * The script hash subscriptions of one process, shared by its connections: one entry per
 * script hash (its status, the height of its last confirmed transaction and the tip both were
 * read at) with the sessions subscribed to it, so 10,000 wallets watching one address cost
 * one status, and a new block costs work only for the entries it can have changed.
 *
 * When the tip moves from P to N with fork height F (the highest height whose block both
 * chains share; P's height for a plain extension), a confirmed history changes only above F.
 * So an entry read at P needs a new status only if it had a transaction above F, or has one
 * now: one summary read per entry (its last height), in chunks, then the history of those
 * few. Entries read at neither P nor N (subscribed while the tip moved) are recomputed.
 *
 * An entry is labelled with the tip the watcher had seen when its read began, not the one the
 * read met: the index may already be further on, never behind. That is enough for the rule
 * above (a status read at a later state than its label is checked against a fork at or below
 * that state) and spares two tip reads per subscription.
 */
class Subscriptions {
  /**
   * @param {object} opts
   * @param {import('./reader').StoreReader} opts.reader
   * @param {number} opts.maxHistory
   * @param {() => string|null} opts.seenTip the hash of the tip the watcher has seen last
   * @param {(msg: string) => void} opts.log
   */
  constructor({ reader, maxHistory, seenTip, log }) {
    this.reader = reader;
    this.seenTip = seenTip;
    this.maxHistory = maxHistory;
    this.log = log;
    /** @type {Map<string, {hex: string, sh: Buffer, status: string|null, lastHeight: number, tipHash: string|null, sessions: Set<object>}>} */
    this.entries = new Map();
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
        entry = { hex, sh, ...computed, sessions: new Set() };
        this.entries.set(hex, entry);
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
      if (entry.sessions.size === 0) this.entries.delete(hex);
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
   * Status and last height, labelled with the tip seen before reading them.
   * @param {Buffer} sh
   */
  async compute(sh) {
    const tipHash = this.seenTip();
    const { entries, more } = await this.reader.history(sh, this.maxHistory);
    if (more) throw tooLarge('history', this.maxHistory);
    const mempool = await this.reader.mempool(sh);
    return {
      status: statusHash(entries, mempool),
      lastHeight: entries.length ? entries[entries.length - 1].height : -1,
      tipHash,
    };
  }

  /**
   * Brings every entry to the new tip and returns those whose status changed. Nothing is
   * changed until every read has succeeded: a failed read leaves the entries as they were,
   * and the next attempt at the same move finds the same changes to announce.
   * @param {import('./tip-watcher').TipChange} change
   * @returns {Promise<Array<{hex: string, status: string|null, sessions: Set<object>}>>}
   */
  async onTip({ previous, tip, forkHeight }) {
    const prevHash = previous ? previous.hash : null;
    const candidates = [];
    const atPrevious = [];
    for (const e of this.entries.values()) {
      if (e.tipHash === tip.hash) continue;
      if (e.tipHash === prevHash) atPrevious.push(e);
      else candidates.push(e);
    }
    const unchanged = [];
    for (let i = 0; i < atPrevious.length; i += CHUNK) {
      const chunk = atPrevious.slice(i, i + CHUNK);
      const heights = await this.reader.lastHeights(chunk.map((e) => e.sh));
      chunk.forEach((e, k) => {
        // nothing above the fork, before or after: the status holds
        if (e.lastHeight > forkHeight || heights[k] > forkHeight) candidates.push(e);
        else unchanged.push(e);
      });
    }
    const updates = [];
    const overLimit = [];
    for (const e of candidates) {
      try {
        updates.push([e, await this.compute(e.sh)]);
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
      if (next.status !== was) changed.push(e);
    }
    for (const [e, err] of overLimit) {
      // grew past the bound: the subscription ends (its status could no longer be answered)
      this.log(`electrum: dropping the subscription to ${e.hex}: ${err.message}`);
      for (const s of [...e.sessions]) this.unsubscribe(s, e.hex);
    }
    return changed;
  }
}

module.exports = { Subscriptions };
