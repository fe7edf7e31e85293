'use strict';

const { ASK, MISSING, PARENT, UNSPENDABLE } = require('./entry');
const { TxidIndex } = require('./txid-index');

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
    /** @type {import('./entry').MempoolEntry[]} included entries that left since the last resolve */
    this.departed = [];
    /** @type {Set<import('./entry').MempoolEntry>} entries that left since the last resolve because a block confirmed them (confirm()) */
    this.confirmed = new Set();
    this.epoch = 0;
    /** the included entries' totals */
    this.totals = { count: 0, vsize: 0, fee: 0 };
    /** the last place given (ranks increase parents before children; docs/FORMAT.md `M` rows) */
    this.lastRank = 0;
    /** @type {import('./entry').MempoolEntry[]} entries the store holds that may have left the snapshot since the last change stored */
    this.leaving = [];
    /** what the held entries take in memory, by MempoolEntry#bytes */
    this.bytes = 0;
    /** @type {Set<import('./entry').MempoolEntry>} included entries settled since the store last took their parts: changes() looks at these only */
    this.pending = new Set();
    /**
     * The held entries by txid, in flat arrays (txid-index.js): a poll matches the node's
     * list and a resolve each input's parent by bytes, with no string made for either.
     * @type {TxidIndex<import('./entry').MempoolEntry>}
     */
    this.index = new TxidIndex();
    /**
     * Every held entry's inputs as (a tag of the outpoint it spends: spendTag(), the entry's
     * slot), appended as entries arrive: confirm() finds what spends a block's outpoints in
     * one pass over these flat arrays, not a visit to each of 150,000 entries scattered in
     * memory. A departed entry's pairs stay until the arrays are rebuilt (more dead than live):
     * a pass checks each candidate's inputs themselves.
     */
    this.spendTags = new Uint32Array(1024);
    this.spendSlots = new Int32Array(1024);
    this.spendLen = 0;
    /** the held entries' inputs */
    this.spendLive = 0;
    /** find(), bound: what an entry's inputs look their parents up with */
    this._find = (buf, at) => this.find(buf, at);
  }

  get size() {
    return this.entries.size;
  }

  /** @param {string} id */
  get(id) {
    return this.entries.get(id) || null;
  }

  /**
   * The held entry of a txid.
   * @param {Buffer} buf
   * @param {number} at where the txid's 32 bytes (internal order) start in `buf`
   * @returns {import('./entry').MempoolEntry|null}
   */
  find(buf, at) {
    const slot = this.index.find(buf, at, isTxidOf);
    return slot < 0 ? null : this.index.get(slot);
  }

  /**
   * @param {import('./entry').MempoolEntry} entry
   * @returns {boolean} false when one with its txid is held already
   */
  add(entry) {
    if (this.entries.has(entry.id)) return false;
    this.entries.set(entry.id, entry);
    entry.slot = this.index.add(entry.mem, entry.at, entry);
    this._addSpends(entry);
    this.waiting.push(entry);
    this.bytes += entry.bytes;
    return true;
  }

  /** @param {string} id @returns {boolean} */
  delete(id) {
    const e = this.entries.get(id);
    if (!e) return false;
    this.entries.delete(id);
    this.index.remove(e.slot);
    this.spendLive -= e.n;
    this.bytes -= e.bytes;
    e.alive = false;
    if (e.included) this.departed.push(e);
    // its parents forget it (a parent that stays a long while sees children come and go)
    for (let i = 0; i < e.n; i++) {
      const p = e.ref(i);
      if (p !== null) p.forgetKid(e);
    }
    if (e.stored) this.leaving.push(e);
    return true;
  }

  /** @private Appends `e`'s inputs to the spend tags (those of departed entries dropped first when they are most). */
  _addSpends(e) {
    const n = e.n;
    if (this.spendLen + n > this.spendTags.length) {
      if (this.spendLen > 2 * this.spendLive) this._rebuildSpends(e);
      let cap = this.spendTags.length;
      while (this.spendLen + n > cap) cap *= 2;
      if (cap !== this.spendTags.length) {
        const tags = new Uint32Array(cap);
        tags.set(this.spendTags.subarray(0, this.spendLen));
        const slots = new Int32Array(cap);
        slots.set(this.spendSlots.subarray(0, this.spendLen));
        this.spendTags = tags;
        this.spendSlots = slots;
      }
    }
    const buf = e.mem;
    for (let i = 0; i < n; i++) {
      this.spendTags[this.spendLen] = spendTag(buf, e._outpointAt(i));
      this.spendSlots[this.spendLen++] = e.slot;
    }
    this.spendLive += n;
  }

  /** @private The spend tags of the held entries but `e` (held already, its tags not yet added) alone. */
  _rebuildSpends(e) {
    this.spendLen = 0;
    this.spendLive = 0;
    for (const held of this.entries.values()) if (held !== e) this._addSpends(held);
  }

  /**
   * Takes blocks the index connected on the pool's tip as Bitcoin Core's mempool takes a block
   * it connects (removeForBlock), in the same step: the held transactions they confirm leave,
   * and so does every held transaction that spends an output one of theirs spends (a
   * conflict), with its descendants. What spent a confirmed one then spends a confirmed output
   * the block itself shows: resolve() settles it from the parent it held, with no lookup.
   * @param {import('../chain/tx').Tx[]} txs the blocks' transactions, in chain order
   * @returns {{confirmed: number, conflicts: string[]}} conflicts: the txids that left as
   *   conflicts or their descendants
   */
  confirm(txs) {
    /** by outpoint (36 bytes, latin1): what the blocks spend */
    const spent = new Set();
    // a first look by a tag of the outpoint: a held input is turned into a key only when its
    // tag is among the blocks' (a pool of 150,000 holds some 300,000 inputs)
    const seen = new Uint32Array(1 << (SEEN_BITS - 5));
    let confirmed = 0;
    for (const tx of txs) {
      if (tx.coinbase) continue;
      const buf = tx.buf;
      for (const input of tx.inputs) {
        // the outpoint's 36 bytes as serialized, read where they lie in the block
        const at = input.txid.byteOffset - buf.byteOffset;
        spent.add(buf.latin1Slice(at, at + 36));
        const h = spendTag(buf, at) >>> (32 - SEEN_BITS);
        seen[h >>> 5] |= 1 << (h & 31);
      }
      const e = this.find(tx.txid, 0);
      if (e === null) continue;
      this.delete(e.id);
      this.confirmed.add(e);
      confirmed++;
    }
    const conflicts = [];
    if (!spent.size) return { confirmed, conflicts };
    const found = [];
    const { spendTags, spendSlots, spendLen } = this;
    for (let j = 0; j < spendLen; j++) {
      const h = spendTags[j] >>> (32 - SEEN_BITS);
      if ((seen[h >>> 5] & (1 << (h & 31))) === 0) continue;
      const e = this.index.get(spendSlots[j]);
      if (e === undefined || !e.alive) continue;
      const buf = e.mem;
      for (let i = 0; i < e.n; i++) {
        const at = e._outpointAt(i);
        if (spent.has(buf.latin1Slice(at, at + 36))) {
          found.push(e);
          break;
        }
      }
    }
    // each with its descendants, as Core's removeConflicts takes them
    const stack = found;
    while (stack.length) {
      const e = stack.pop();
      if (!e.alive) continue;
      this.delete(e.id);
      conflicts.push(e.id);
      for (const kid of e.kids()) if (kid.alive) stack.push(kid);
    }
    return { confirmed, conflicts };
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
    const dropped = this.departed.length > 0;
    let changed = moved || dropped;
    const epoch = ++this.epoch;
    /** the included entries kept (still held), in place order */
    let olds;
    let fresh;
    /** kept entries one of whose parents left: what they spent of it is asked of the index */
    let orphans = [];
    /** waiting entries left as they were */
    let unchecked = [];
    if (full) {
      for (const e of this.entries.values()) this._findParents(e, 'all');
      olds = [];
      fresh = this._walk(this.entries.values(), epoch);
    } else {
      olds = dropped ? without(this.order, this.departed) : this.order;
      // a transaction that left was confirmed (then what spent it is unspent in the index), or
      // its spenders leave as well: only they are asked again
      if (dropped) orphans = orphansOf(this.departed, this.confirmed);
      const waiting = this.waiting.filter((e) => e.alive);
      // at the same tip with nothing gone, what waited waits on unless what it spends arrived
      const check = moved || dropped ? waiting : this._reachable(waiting);
      for (const e of check) this._findParents(e, moved ? 'missing' : 'none');
      // kept entries are placed already (known by being included)
      fresh = this._walk(check, epoch, true);
      if (check !== waiting) {
        const checked = new Set(check);
        unchecked = waiting.filter((e) => !checked.has(e));
      }
    }
    const asked = await this._ask(orphans, fresh, lookup);

    // the kept entries stay as they are when every orphan stays in: the order grows by what
    // is new, in place; else (an orphan whose parent was not confirmed: the node dropped it,
    // or will) every kept entry is settled again, parents first, and its descendants leave
    let order = olds;
    let again = full;
    for (const e of orphans) {
      if (!e.settle()) {
        again = true;
        break;
      }
      this.pending.add(e);
      if (e.partChanged()) changed = true;
    }
    if (again) order = [];
    const settled = [];
    const waiting = [];
    const settle = (e) => {
      const was = e.included;
      e.included = e.settle();
      e.arrived = false;
      if (e.included !== was) {
        changed = true;
        if (!e.included) {
          e.rank = 0;
          if (e.stored) this.leaving.push(e);
        }
      }
      if (e.included) {
        order.push(e);
        settled.push(e);
        this.pending.add(e);
        e.parentIdList = null;
      } else {
        waiting.push(e);
      }
    };
    if (again) for (const e of olds) settle(e);
    for (const e of fresh) settle(e);

    this._place(again ? order : settled, full);
    let totals;
    if (again) {
      totals = { count: 0, vsize: 0, fee: 0 };
      for (const e of order) addTotals(totals, e);
    } else {
      // the kept entries' figures stand (an orphan that stays in pays the same fee)
      totals = { ...this.totals };
      for (const e of this.departed) addTotals(totals, e, -1);
      for (const e of settled) addTotals(totals, e);
    }
    for (const e of settled) if (e.partChanged()) changed = true;
    this.order = order;
    this.waiting = unchecked.length ? unchecked.concat(waiting) : waiting;
    this.tip = tip;
    this.departed = [];
    this.confirmed.clear();
    this.totals = totals;
    return { changed, asked };
  }

  /**
   * The waiting entries a poll at the same tip has to look at again: those that arrived, and
   * those waiting for one of them (or for one of those, and so on), as Bitcoin Core looks at
   * its orphans when their parent arrives.
   * @param {import('./entry').MempoolEntry[]} waiting
   * @returns {import('./entry').MempoolEntry[]}
   */
  _reachable(waiting) {
    const out = new Set(waiting.filter((e) => e.arrived));
    if (!out.size || out.size === waiting.length) return out.size ? waiting : [];
    /** @type {Map<string, import('./entry').MempoolEntry[]>} */
    const byParent = new Map();
    for (const w of waiting) {
      if (w.arrived) continue;
      for (const id of w.parentIds()) {
        const list = byParent.get(id);
        if (list) list.push(w);
        else byParent.set(id, [w]);
      }
    }
    const queue = [...out];
    while (queue.length) {
      for (const w of byParent.get(queue.pop().id) || []) {
        if (!out.has(w)) {
          out.add(w);
          queue.push(w);
        }
      }
    }
    return waiting.filter((e) => out.has(e));
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
      const p = e.findParent(i, this._find);
      if (p) {
        e.spendParent(i, p);
        continue;
      }
      const s = e.state(i);
      if (s === PARENT || s === UNSPENDABLE || (again === 'all' && s !== ASK) || (again === 'missing' && s === MISSING)) {
        e.setRef(i, null);
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
   * @param {boolean} [includedPlaced] an included parent is placed already (the kept entries,
   *   when they are not checked again)
   * @returns {import('./entry').MempoolEntry[]}
   */
  _walk(list, epoch, includedPlaced = false) {
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
          const p = e.ref(e.cursor++);
          if (p !== null && p.mark !== epoch && !(includedPlaced && p.included)) {
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
   * Gives places (ranks) to the included entries that have none, or one not after every
   * included parent's (a full resolve may order them anew), so that rank order is an order
   * parents first; `order` ends in rank order.
   * @param {import('./entry').MempoolEntry[]} order parents first
   * @param {boolean} full everything was resolved anew (else only the entries without a place
   *   are new, and they come after the others)
   */
  _place(order, full) {
    let moved = false;
    for (const e of order) {
      if (!full) {
        if (!e.rank) e.rank = ++this.lastRank;
        continue;
      }
      let after = 0;
      for (let i = 0; i < e.n; i++) if (e.state(i) === PARENT && e.ref(i).rank > after) after = e.ref(i).rank;
      if (!e.rank || e.rank <= after) {
        e.rank = ++this.lastRank;
        moved = true;
      }
    }
    if (full && moved) order.sort((a, b) => a.rank - b.rank);
  }

  /**
   * What the store is to change since the last change it stored: the entries that left the
   * snapshot, those that entered it or whose part or place changed, and of those the ones whose
   * row moves to another place (`moved`: they leave their stored place as well), each encoded
   * once while its resolution holds. Only the entries settled since (`pending`) are looked at:
   * a poll that adds 500 looks at those 500. markStored() records them as stored once the
   * store took them.
   * @returns {{removed: import('./entry').MempoolEntry[], moved: import('./entry').MempoolEntry[], upserts: import('./entry').MempoolEntry[]}}
   */
  changes() {
    if (this.tip === null) throw new Error('MempoolPool#changes before resolve');
    const upserts = [];
    const moved = [];
    for (const e of this.pending) {
      if (!e.alive || !e.included) {
        // left meanwhile: `leaving` has it
        this.pending.delete(e);
        continue;
      }
      if (e.storedCurrent && e.storedRank === e.rank) {
        this.pending.delete(e);
        continue;
      }
      e.encoded();
      // a loaded entry's part is compared once: the same bytes are the same row
      if (e.loadedPart !== null && e.storedRank === e.rank && e.loadedPart.equals(e.record)) {
        e.markStored();
        this.pending.delete(e);
        continue;
      }
      upserts.push(e);
      if (e.stored && e.storedRank !== e.rank) moved.push(e);
    }
    // in place order, as a follower writing the same pool twice writes the same bytes
    upserts.sort((a, b) => a.rank - b.rank);
    moved.sort((a, b) => a.storedRank - b.storedRank);
    const removed = [];
    const seen = new Set();
    for (const e of this.leaving) {
      if (!e.stored || (e.alive && e.included) || seen.has(e)) continue;
      seen.add(e);
      removed.push(e);
    }
    return { removed, moved, upserts };
  }

  /**
   * The store took these changes.
   * @param {{removed: import('./entry').MempoolEntry[], upserts: import('./entry').MempoolEntry[]}} c
   */
  markStored(c) {
    for (const e of c.removed) e.markUnstored();
    for (const e of c.upserts) {
      e.markStored();
      this.pending.delete(e);
    }
    this.leaving = [];
  }

  /**
   * Evicts, as Bitcoin Core trims its mempool to `maxmempool`, until the held entries take at
   * most `maxBytes`: first the entries that are not in the snapshot (waiting for what they
   * spend: Core keeps those as orphans, apart and few), then the included one of the lowest
   * descendant score — the higher of its own fee rate and that of it with all its
   * descendants — with all its descendants, so no transaction stays without its parents.
   * Scores are computed once per trim (Core recomputes them after each package; the order of
   * the packages evicted may differ where one package's descendants were another's), each
   * over at most DESCENDANT_LIMIT descendants (Core's package limit: its mempool holds no
   * longer chain), so a trim costs O(n log n) whatever the chains; an eviction takes every
   * descendant all the same.
   * @param {number} maxBytes
   * @returns {string[]} the txids evicted
   */
  trim(maxBytes) {
    if (this.bytes <= maxBytes) return [];
    const out = [];
    const drop = (e) => {
      out.push(e.id);
      this.delete(e.id);
    };
    for (const e of [...this.waiting].sort((a, b) => a.time - b.time)) {
      if (this.bytes <= maxBytes) return out;
      if (e.alive && !e.included) drop(e);
    }
    /** @type {Map<import('./entry').MempoolEntry, import('./entry').MempoolEntry[]>} */
    const children = new Map();
    for (const e of this.order) {
      for (let i = 0; i < e.n; i++) {
        if (e.state(i) !== PARENT) continue;
        const p = e.ref(i);
        const list = children.get(p);
        if (list) list.push(e);
        else children.set(p, [e]);
      }
    }
    const descendants = (root, limit = Infinity) => {
      const seen = new Set([root]);
      const stack = [root];
      while (stack.length && seen.size <= limit) {
        for (const c of children.get(stack.pop()) || []) {
          if (!seen.has(c) && c.alive) {
            seen.add(c);
            stack.push(c);
          }
        }
      }
      return seen;
    };
    const scored = this.order.map((e) => {
      let fee = 0;
      let vsize = 0;
      for (const d of descendants(e, DESCENDANT_LIMIT)) {
        fee += d.fee;
        vsize += d.vsize;
      }
      return { e, score: Math.max(e.fee / e.vsize, fee / vsize) };
    });
    scored.sort((a, b) => a.score - b.score);
    for (const { e } of scored) {
      if (this.bytes <= maxBytes) break;
      if (!e.alive) continue;
      for (const d of descendants(e)) drop(d);
    }
    return out;
  }
}

/** @param {import('./entry').MempoolEntry} e @param {Buffer} buf @param {number} at */
const isTxidOf = (e, buf, at) => e.isTxid(buf, at);

/**
 * The kept entries that spent an output of a transaction that left: the departed ones' children
 * still in. Such an input spends, if a block confirmed that parent (confirm()), the output as
 * the parent held it; else it is to be asked of the index (ASK).
 * @param {import('./entry').MempoolEntry[]} departed
 * @param {Set<import('./entry').MempoolEntry>} confirmed
 * @returns {import('./entry').MempoolEntry[]} in place order
 */
function orphansOf(departed, confirmed) {
  const out = new Set();
  for (const d of departed) {
    for (const c of d.kids()) {
      if (!c.alive || !c.included || out.has(c)) continue;
      for (let i = 0; i < c.n; i++) {
        if (c.state(i) !== PARENT) continue;
        const p = c.ref(i);
        if (p.alive) continue;
        if (confirmed.has(p)) {
          c.spendConfirmedParent(i, p);
        } else {
          c.setRef(i, null);
          c.setState(i, ASK);
        }
        out.add(c);
      }
    }
  }
  return [...out].sort((a, b) => a.rank - b.rank);
}

/**
 * `order` (in place order) without the departed entries, found by their places: a block's
 * few thousand leave a mempool's hundred thousand without a look at each of those.
 * @param {import('./entry').MempoolEntry[]} order
 * @param {import('./entry').MempoolEntry[]} departed each one of `order`
 * @returns {import('./entry').MempoolEntry[]}
 */
function without(order, departed) {
  const at = [];
  for (const d of departed) {
    let lo = 0;
    let hi = order.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const r = order[mid].rank;
      if (r === d.rank) {
        if (order[mid] === d) at.push(mid);
        break;
      }
      if (r < d.rank) lo = mid + 1;
      else hi = mid - 1;
    }
  }
  if (at.length !== departed.length) return order.filter((e) => e.alive);
  at.sort((a, b) => a - b);
  const out = new Array(order.length - at.length);
  let o = 0;
  let from = 0;
  for (const k of at) {
    for (let j = from; j < k; j++) out[o++] = order[j];
    from = k + 1;
  }
  for (let j = from; j < order.length; j++) out[o++] = order[j];
  return out;
}

/** @param {{count: number, vsize: number, fee: number}} totals @param {import('./entry').MempoolEntry} e @param {1|-1} [sign] */
function addTotals(totals, e, sign = 1) {
  totals.count += sign;
  totals.vsize += sign * e.vsize;
  totals.fee += sign * e.fee;
}

/**
 * Four bytes of an outpoint (36 bytes at `at`: txid, vout) for confirm()'s first look: the
 * txid's first four (random) mixed with the vout, so that the spenders of a transaction's
 * other outputs do not all pass it (a fan-out's hundreds).
 * @param {Buffer} buf
 * @param {number} at
 * @returns {number}
 */
function spendTag(buf, at) {
  return (buf.readUInt32LE(at) ^ Math.imul(buf.readUInt32LE(at + 32), 0x9e3779b1)) >>> 0;
}

/** log2 of the bits of confirm()'s first look at an input (2^20: 128 KB, ~1 % false hits for a block's 7,000 inputs) */
const SEEN_BITS = 20;

/** Descendants a score counts (Bitcoin Core's -limitdescendantcount default). */
const DESCENDANT_LIMIT = 25;

module.exports = { MempoolPool };
