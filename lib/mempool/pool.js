'use strict';

const { fromDisplayHex } = require('../chain/hash');
const { encodeMempoolTx, joinMempool } = require('../codec/mempool');
const { ASK, MISSING, PARENT, UNSPENDABLE } = require('./entry');

/**
 * The transactions of a node's mempool and what they spend, resolved against one confirmed tip
 * of the index: the state a mempool snapshot (lib/codec/mempool.js) is written from.
 *
 * Which transactions a snapshot holds is decided here, once for every store:
 *  - a transaction is in (`included`) when every input spends an output the index holds
 *    unspent at the tip, or an output of an included transaction; so the snapshot is closed
 *    under parents, and a transaction whose parent the node could not give (or which spends
 *    what the index does not know yet, or has seen spent, or an output its parent lacks) is
 *    left out with all its descendants until that changes;
 *  - fee = inputs − outputs (a transaction paying more than it spends is left out), vsize =
 *    BIP141 weight / 4 rounded up, as Esplora and electrs give them;
 *  - the order is parents before children, otherwise the order transactions arrived in.
 *
 * A poll changes little of a large mempool, and the work follows what changed: the included
 * transactions keep their place, their resolution and their encoded part; transactions that
 * arrive (and those still waiting for a parent) are placed after them, parents first, and
 * only their inputs are looked up (in the held set, then in the index, in one call); when an
 * included transaction leaves, the others are checked again, and what spent it is looked up
 * in the index (it was confirmed) or leaves too. A tip that does not extend the last one (a
 * reorg) resolves everything anew.
 */
class MempoolPool {
  constructor() {
    /** @type {Map<string, import('./entry').MempoolEntry>} by display txid, in arrival order */
    this.entries = new Map();
    /** @type {import('./entry').MempoolEntry[]} the included entries, parents first */
    this.order = [];
    /** @type {import('./entry').MempoolEntry[]} held and not included: new, or waiting for what they spend */
    this.waiting = [];
    /** the tip (display hex) of the last resolve */
    this.tip = null;
    /** an included entry left since the last resolve */
    this.dropped = false;
    this.epoch = 0;
    /** the included entries' totals */
    this.totals = { count: 0, vsize: 0, fee: 0 };
  }

  get size() {
    return this.entries.size;
  }

  /** @param {string} id */
  get(id) {
    return this.entries.get(id) || null;
  }

  /**
   * @param {import('./entry').MempoolEntry} entry
   * @returns {boolean} false when one with its txid is held already
   */
  add(entry) {
    if (this.entries.has(entry.id)) return false;
    this.entries.set(entry.id, entry);
    this.waiting.push(entry);
    return true;
  }

  /** @param {string} id @returns {boolean} */
  delete(id) {
    const e = this.entries.get(id);
    if (!e) return false;
    this.entries.delete(id);
    e.alive = false;
    if (e.included) this.dropped = true;
    return true;
  }

  /**
   * Resolves the held transactions against the index at `tip`.
   *
   * What the index answered for an input stays valid at the same tip. At a tip that extends
   * the last one (no block of it reverted) an output found unspent is still unspent — or the
   * new block spent it, and then the node no longer lists the transaction that spends it
   * here — so only what was not found is asked again; any other tip asks everything again.
   *
   * @param {string} tip display hex, the index's tip
   * @param {boolean} extending `tip` descends from the tip of the last resolve
   * @param {(outpoints: Buffer) => Promise<Array<{value: number, scripthash: Buffer}|null>>} lookup
   *   the index's unspent outputs (store.getPrevouts): 36 bytes an outpoint; a scripthash of
   *   zeros is an output the index does not file
   * @returns {Promise<{changed: boolean, asked: number}>} changed: the snapshot differs from
   *   the last resolve's
   */
  async resolve(tip, extending, lookup) {
    const full = !extending || this.tip === null;
    const moved = tip !== this.tip;
    const recheck = full || this.dropped;
    let changed = moved || this.dropped;
    const epoch = ++this.epoch;
    let olds;
    let fresh;
    if (full) {
      for (const e of this.entries.values()) this._findParents(e, 'all');
      olds = [];
      fresh = this._walk(this.entries.values(), epoch);
    } else {
      olds = this.dropped ? this.order.filter((e) => e.alive) : this.order;
      if (this.dropped) {
        // what spent a transaction that left is asked of the index: it was confirmed, or it
        // leaves as well
        for (const e of olds) {
          for (let i = 0; i < e.n; i++) {
            if (e.state(i) === PARENT && !e.refs[i].alive) {
              e.refs[i] = null;
              e.setState(i, ASK);
            }
          }
        }
      }
      for (const e of olds) e.mark = epoch;
      const waiting = this.waiting.filter((e) => e.alive);
      for (const e of waiting) this._findParents(e, moved ? 'missing' : 'none');
      fresh = this._walk(waiting, epoch);
    }
    const asked = await this._ask(recheck ? olds : [], fresh, lookup);

    const order = [];
    const waiting = [];
    const settle = (e) => {
      const was = e.included;
      e.included = e.settle();
      if (e.included !== was) changed = true;
      (e.included ? order : waiting).push(e);
    };
    if (recheck) for (const e of olds) settle(e);
    else for (const e of olds) order.push(e);
    for (const e of fresh) settle(e);

    const totals = { count: 0, vsize: 0, fee: 0 };
    for (const e of order) {
      if (e.record === null) changed = true;
      totals.count++;
      totals.vsize += e.vsize;
      totals.fee += e.fee;
    }
    this.order = order;
    this.waiting = waiting;
    this.tip = tip;
    this.dropped = false;
    this.totals = totals;
    return { changed, asked };
  }

  /**
   * Points each input of `e` at the held transaction it spends, if any; an input whose parent
   * is gone is to be asked of the index, and so are, by `again`, those the index answered
   * ('all': a new tip that does not extend the last) or did not have ('missing': a new tip).
   * @param {import('./entry').MempoolEntry} e
   * @param {'all'|'missing'|'none'} again
   */
  _findParents(e, again) {
    for (let i = 0; i < e.n; i++) {
      const p = this.entries.get(e.parents[i]);
      if (p) {
        e.spendParent(i, p);
        continue;
      }
      const s = e.state(i);
      if (s === PARENT || s === UNSPENDABLE || (again === 'all' && s !== ASK) || (again === 'missing' && s === MISSING)) {
        e.refs[i] = null;
        e.setState(i, ASK);
      }
    }
  }

  /** Looks up, in one call, every input of these entries that is to be asked of the index. */
  async _ask(olds, fresh, lookup) {
    const ask = [];
    for (const list of [olds, fresh]) {
      for (const e of list) for (let i = 0; i < e.n; i++) if (e.state(i) === ASK) ask.push(e, i);
    }
    const k = ask.length / 2;
    if (!k) return 0;
    const outpoints = Buffer.allocUnsafe(36 * k);
    for (let j = 0; j < k; j++) ask[2 * j].copyOutpoint(ask[2 * j + 1], outpoints, 36 * j);
    const found = await lookup(outpoints);
    for (let j = 0; j < k; j++) ask[2 * j].spendConfirmed(ask[2 * j + 1], found[j]);
    return k;
  }

  /**
   * `list` in an order where every entry comes after the held parents it spends (those not
   * marked with `epoch`: marked ones are placed already), otherwise in the list's order: a
   * depth-first walk, iterative (a chain of unconfirmed transactions may be long).
   * @param {Iterable<import('./entry').MempoolEntry>} list
   * @param {number} epoch
   * @returns {import('./entry').MempoolEntry[]}
   */
  _walk(list, epoch) {
    const out = [];
    const stack = [];
    for (const root of list) {
      if (root.mark === epoch) continue;
      root.mark = epoch;
      root.cursor = 0;
      stack.push(root);
      while (stack.length) {
        const e = stack[stack.length - 1];
        let next = null;
        while (e.cursor < e.n) {
          const p = e.refs[e.cursor++];
          if (p !== null && p.mark !== epoch) {
            next = p;
            break;
          }
        }
        if (next) {
          next.mark = epoch;
          next.cursor = 0;
          stack.push(next);
        } else {
          stack.pop();
          out.push(e);
        }
      }
    }
    return out;
  }

  /**
   * The snapshot of the last resolve, encoded (lib/codec/mempool.js): its included entries in
   * order, each encoded once while its resolution holds.
   * @param {number} seq
   * @returns {Buffer}
   */
  encode(seq) {
    if (this.tip === null) throw new Error('MempoolPool#encode before resolve');
    const parts = new Array(this.order.length);
    for (let k = 0; k < parts.length; k++) {
      const e = this.order[k];
      if (e.record === null) e.record = encodeMempoolTx(e.toMempoolTx());
      parts[k] = e.record;
    }
    return joinMempool(seq, fromDisplayHex(this.tip), parts);
  }
}

module.exports = { MempoolPool };
