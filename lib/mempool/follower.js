'use strict';

const { performance } = require('node:perf_hooks');
const { decodeWhole, decodeMempoolTx, encodeChange } = require('../codec/mempool');
const { fromDisplayHex } = require('../chain/hash');
const { getNetwork } = require('../chain/networks');
const { ParseError, NodeError, CodecError, StoreError } = require('../errors');
const { MempoolPool } = require('./pool');
const { ListMatch } = require('./list-match');
const { mempoolEntry } = require('./entry');
const { parseBlock } = require('../chain/block');
const { MemoryReturn } = require('../ops/free-memory');

/**
 * @typedef {object} MempoolPoll  what one poll did
 * @property {'written'|'unchanged'|'waiting'|'refused'|'empty'} outcome  written: a new
 *   snapshot is stored; unchanged: the stored one still holds; waiting: the node's tip is not
 *   the index's yet (the stored snapshot, of the index's tip, stays); refused: the index's tip
 *   moved while this poll resolved (polled again at once); empty: the index has no block yet
 * @property {number} seq       the stored snapshot's seq after the poll (0: none)
 * @property {string|null} tip  the index's tip the poll resolved against
 * @property {number} listed    txids the node listed (0: the poll took blocks instead)
 * @property {number} blocks    blocks the poll took instead of the node's list (a block step:
 *   the index connected them on the last poll's tip)
 * @property {number} added     transactions fetched and held
 * @property {number} removed   transactions the node no longer lists, let go (a block step:
 *   those the blocks confirmed and the conflicts)
 * @property {number} conflicts of them, a block step's conflicts: held transactions spending
 *   what a block spent, and their descendants
 * @property {number} missing   listed transactions the node could not give (gone meanwhile)
 * @property {number} rejected  transactions whose bytes did not parse or hash to their txid
 * @property {number} asked     inputs looked up in the index
 * @property {number} txs       transactions in the snapshot (resolved)
 * @property {number} held      transactions held (resolved or not)
 * @property {number} vsize     of the snapshot's transactions
 * @property {number} bytes     of the change written (when written)
 * @property {number} stored    what the poll stored (when written): the change, the rows it put
 *   (key and value) and the head; a key-value store writes this, MongoDB its documents of it
 * @property {number} upserts   transactions the change wrote (entered, or their part or place changed)
 * @property {number} dropped   transactions the change took out of the snapshot
 * @property {number} evicted   transactions evicted by this poll (--mempool-max-mb)
 * @property {number} memBytes  what the held transactions take in memory (estimated, MempoolEntry#bytes)
 * @property {number} ms        wall time of the poll
 * @property {number} busyMs    of it, time the main thread was busy (not waiting for the node or
 *   the store's I/O; whatever else the process runs meanwhile counts too)
 * @property {number} fetchMs   of it, listing and fetching from the node
 * @property {number} listMs    of that, the node's answer to the list request (getrawmempool
 *   and getbestblockhash), read and parsed; a block step's: to getblock
 * @property {number} resolveMs of it, resolving (the index's lookups included)
 * @property {number} writeMs   of it, encoding and storing the change
 */

/**
 * Keeps the index's mempool snapshot (store.putMempool; docs/FORMAT.md, `M` rows) at a
 * node's mempool, as `sync --follow` runs it beside the block sync, or in any process that
 * holds a writable store and a node client:
 *
 *   const follower = new MempoolFollower({ store, client, network: 'main', pollMs: 2000 });
 *   await follower.start();       // loads the stored snapshot, then polls in the background
 *   follower.wake();              // a block was committed: poll now rather than at the next tick
 *   await follower.stop();
 *
 * A poll: `getrawmempool` and `getbestblockhash` in one request; the txids not held are
 * fetched with batched `getrawtransaction TXID 0` and parsed; those the node no longer lists
 * are let go (confirmed, evicted, replaced); everything is resolved against the index's tip
 * (lib/mempool/pool.js) and, when that changes the snapshot, what changed is written as the
 * next seq's change (transactions that left, those that entered or changed, the new head):
 * a poll writes in proportion to what changed, not to the mempool. The store refuses a change
 * of a tip that moved meanwhile: the follower polls again at once, against the new tip. Past
 * `maxBytes` the lowest fee-rate packages are evicted as Bitcoin Core evicts them.
 *
 * A poll that finds a few blocks the index connected on the last poll's tip takes those
 * blocks instead (`getblock HASH 0`, checked against the index's hashes and their merkle
 * roots): what they confirm leaves, and every held transaction spending what they spend, with
 * its descendants, as Core's mempool drops them in the step that connects the block. That is
 * a mempool the node had at the new tip, written without listing the whole pool; the next poll
 * lists as ever.
 *
 * A listed snapshot is written only when the node's best block is the index's tip, so every
 * stored (tip, snapshot) pair is a mempool the node had at that tip. While the two differ (a
 * block the sync has not committed yet, a reorg under way) the stored snapshot — of the
 * index's own tip — stays, unless that lasts longer than `tipGraceMs`: then the index is
 * behind (a slow sync, or no sync at all in this process) and the snapshot is resolved
 * against the index's tip as it is, without what spends blocks the index lacks.
 *
 * A node that stops answering is retried by its client (`retryMs`); a poll that still fails
 * (ERR_NODE_UNAVAILABLE, or a node error of that poll alone) is reported (`onError(err,
 * false)`) and the next poll tries again, the stored snapshot unchanged. Any other error
 * (credentials, a store failure) stops the follower: `onError(err, true)`, and `stopped`
 * rejects with it. start() checks that the node is on `network` (ERR_NODE_NETWORK).
 */
class MempoolFollower {
  /**
   * @param {object} opts
   * @param {import('../stores/abstract').AbstractStore} opts.store  open, writable
   * @param {import('../node/client').NodeClient} opts.client  not closed by stop()
   * @param {string|import('../chain/networks').Network} opts.network
   * @param {number} [opts.pollMs=2000]     pause between polls
   * @param {number} [opts.tipGraceMs=10000] how long a node tip the index does not have holds
   *   the stored snapshot before the follower writes one against the index's tip anyway
   * @param {(poll: MempoolPoll) => void} [opts.onPoll]
   * @param {(err: Error, fatal: boolean) => void} [opts.onError]
   * @param {() => number} [opts.now=Date.now] the clock of first-seen times and of the tip's grace
   * @param {number} [opts.maxBytes=300e6] what the held transactions may take in memory
   *   (--mempool-max-mb); past it the lowest fee-rate packages are evicted as Bitcoin Core
   *   evicts them (MempoolPool#trim), and not fetched again while the node lists them
   * @param {number} [opts.blockStepMax=6] a poll that finds at most this many blocks connected
   *   on the last poll's tip takes them (from the sync beside it, offerBlock, else from the
   *   node: getblock) instead of listing the whole mempool; 0: always list
   */
  constructor(opts) {
    if (!opts || !opts.store || !opts.client) throw new TypeError('MempoolFollower needs a store and a node client');
    this.store = opts.store;
    this.client = opts.client;
    this.network = getNetwork(opts.network);
    this.pollMs = opts.pollMs === undefined ? 2000 : opts.pollMs;
    this.tipGraceMs = opts.tipGraceMs === undefined ? 10000 : opts.tipGraceMs;
    this.onPoll = opts.onPoll || (() => {});
    this.onError = opts.onError || (() => {});
    this.now = opts.now || Date.now;
    this.maxBytes = opts.maxBytes === undefined ? DEFAULT_MAX_BYTES : opts.maxBytes;
    this.blockStepMax = opts.blockStepMax === undefined ? 6 : opts.blockStepMax;
    /** @type {Map<string, Buffer>} the last blocks the sync handed over, by hash (offerBlock) */
    this.offered = new Map();
    /** the allocator's free pages given back after a poll that took or let go of many */
    this.memoryReturn = new MemoryReturn();
    this.pool = new MempoolPool();
    /** the node's list matched in its own order against the last poll's (list-match.js) */
    this.listMatch = new ListMatch(this.pool.index);
    /** the next change replaces whatever the store holds (it holds a snapshot this follower could not take) */
    this.reset = false;
    /** @type {Map<string, number>} txids evicted → the poll that last listed them; forgotten when the node stops listing them */
    this.evicted = new Map();
    /** transactions evicted so far, as the stored head counts them */
    this.evictedTotal = 0;
    /** the stored snapshot's seq (0: none) */
    this.seq = 0;
    /** the index tip of the last resolve, {height, hash} */
    this.lastTip = null;
    /** the pool differs from the stored snapshot */
    this.unwritten = true;
    /** when the node's tip was first seen to differ from the index's (0: they agree) */
    this.mismatchSince = 0;
    /** @type {Map<string, number>} txids whose bytes were refused → the poll that last listed them; forgotten when the node stops listing them */
    this.rejected = new Map();
    this.epoch = 0;
    this.stats = { polls: 0, writes: 0, refused: 0, fetched: 0, rejected: 0, failures: 0, evicted: 0 };
    /** @type {MempoolPoll|null} */
    this.last = null;
    this.loaded = false;
    this._running = false;
    this._again = false;
    this._wake = null;
    this._loop = null;
    /** the poll under way (polls never overlap) */
    this._polling = Promise.resolve();
  }

  /**
   * Loads the stored snapshot (its transactions are not fetched again, their first-seen times
   * kept) and starts polling. Resolves once the loop runs; its end is `stopped`.
   */
  async start() {
    if (this._running) return;
    await this.client.checkNetwork(this.network);
    await this.load();
    this._running = true;
    this._loop = this._run();
    /** settles when the loop ends: after stop(), or with the error that stopped it */
    this.stopped = this._loop;
    this.stopped.catch(() => {});
  }

  /**
   * A block the sync beside this follower is about to apply: a poll that finds it connected
   * takes it from here rather than from the node (a block of 3,000 transactions is ~1.5 MB of
   * hex over JSON-RPC). It is checked as the node's would be (its hash, the index's chain).
   * The last blockStepMax are kept.
   * @param {string} hash
   * @param {Buffer} raw not changed by the follower
   */
  offerBlock(hash, raw) {
    if (this.blockStepMax < 1) return;
    this.offered.delete(hash);
    this.offered.set(hash, raw);
    if (this.offered.size > this.blockStepMax) this.offered.delete(this.offered.keys().next().value);
  }

  /** Polls at once (the sync committed a block, say), or right after the poll under way. */
  wake() {
    this._again = true;
    if (this._wake) this._wake();
  }

  /** Stops polling; resolves after the poll under way ends. The store and the client stay open. */
  async stop() {
    if (!this._running) return;
    this._running = false;
    if (this._wake) this._wake();
    try {
      await this._loop;
    } catch {
      // reported through onError
    }
  }

  /**
   * Takes the stored snapshot as the starting state (once; start() does it).
   * @returns {Promise<number>} transactions taken
   */
  async load() {
    if (this.loaded) return 0;
    this.loaded = true;
    const head = await this.store.getMempoolHead();
    if (!head) return 0;
    this.seq = head.seq;
    this.evictedTotal = head.evicted || 0;
    const raw = head.legacy ? null : await this.store.getMempool({ raws: true });
    if (!raw) {
      // a snapshot of format 2 (or one gone meanwhile): the first change replaces it
      this.reset = true;
      return 0;
    }
    const whole = decodeWhole(raw);
    this.seq = Math.max(this.seq, whole.seq);
    for (const row of whole.rows) {
      try {
        const t = decodeMempoolTx(row.part);
        // the entry keeps none of the bytes (the store holds them), and a copy of the part
        // until its own is compared with it
        const e = mempoolEntry(row.raw, t.time);
        if (!this.pool.add(e)) continue;
        e.markLoaded(row.rank, row.part);
        // whatever does not settle again leaves the stored snapshot
        this.pool.leaving.push(e);
        if (row.rank > this.pool.lastRank) this.pool.lastRank = row.rank;
      } catch (err) {
        if (!(err instanceof ParseError) && !(err instanceof CodecError)) throw err;
        // a row this follower cannot take: it cannot say it left either, so it rewrites all
        this.reset = true;
      }
    }
    return this.pool.size;
  }

  /**
   * One poll (the loop's step; tests, benchmarks and a sync's reorg commit call it directly):
   * polls run one at a time.
   * @returns {Promise<MempoolPoll>}
   */
  poll() {
    const p = this._polling.then(() => this._poll());
    this._polling = p.catch(() => {});
    return p;
  }

  /** @private */
  async _poll() {
    /** @type {import('./entry').MempoolEntry[]} the entries this poll fetched (their bytes share one buffer: packed()) */
    this.fetched = [];
    let res = null;
    try {
      res = await this._pollOnce();
      return res;
    } finally {
      // the entries not stored take their bytes out of the poll's buffer, which goes then
      for (const e of this.fetched) e.ownRaw();
      this.fetched = [];
      // a first load, a reorg's list: what it fetched, encoded and wrote is freed now
      this.memoryReturn.after(res ? res.added + res.removed : 0);
    }
  }

  /**
   * The bytes of the entries a change is to write again (their part or place changed) or
   * takes out of the snapshot while the pool keeps them, where the entry let them go when the
   * store took them: read back from the store, at the place it holds them.
   * @private
   * @param {{removed: import('./entry').MempoolEntry[], upserts: import('./entry').MempoolEntry[]}} c
   */
  async _readRaws(c) {
    const need = [];
    for (const e of c.upserts) if (e.raw === null) need.push(e);
    for (const e of c.removed) if (e.raw === null && e.alive) need.push(e);
    if (!need.length) return;
    const raws = await Promise.all(need.map((e) => this.store.getMempoolRaw(e.storedRank, e.txid)));
    for (let k = 0; k < need.length; k++) {
      const e = need[k];
      if (raws[k] === null) {
        throw new StoreError('ERR_MEMPOOL_SEQ', `the store no longer holds the bytes of mempool transaction ${e.id} at place ${e.storedRank}, ` +
          'where this follower stored them: another follower wrote the snapshot');
      }
      // the read's own copy (KvStore, MongoStore): kept as it is
      e.setRaw(raws[k]);
    }
  }

  /** @private */
  async _pollOnce() {
    if (!this.loaded) await this.load();
    const t0 = performance.now();
    const elu0 = performance.eventLoopUtilization();
    const tip = await this.store.getTip();
    this.stats.polls++;
    const res = {
      outcome: 'unchanged', seq: this.seq, tip: tip ? tip.hash : null, listed: 0, blocks: 0, added: 0, removed: 0, conflicts: 0,
      missing: 0, rejected: 0, asked: 0, txs: 0, held: 0, vsize: 0, bytes: 0, stored: 0, upserts: 0, dropped: 0, evicted: 0, memBytes: 0,
      ms: 0, busyMs: 0, fetchMs: 0, listMs: 0, resolveMs: 0, writeMs: 0,
    };
    const blocks = tip ? await this._connectedBlocks(tip, res) : null;
    if (blocks) {
      // blocks the index connected on the last resolve's tip: what they confirm and what
      // conflicts with them leave, as they leave Core's mempool in the step that connects them
      const txs = [];
      for (const b of blocks) for (const tx of b.txs) txs.push(tx);
      const { confirmed, conflicts } = this.pool.confirm(txs);
      res.blocks = blocks.length;
      res.removed = confirmed + conflicts.length;
      res.conflicts = conflicts.length;
    } else {
      const best = await this._list(res);
      if (!tip) {
        res.outcome = 'empty';
        return this._done(res, t0, elu0);
      }
      if (best !== tip.hash) {
        const now = this.now();
        if (!this.mismatchSince) this.mismatchSince = now;
        if (now - this.mismatchSince < this.tipGraceMs) {
          res.outcome = 'waiting';
          return this._done(res, t0, elu0);
        }
      } else {
        this.mismatchSince = 0;
      }
    }
    const t1 = performance.now();
    res.fetchMs = t1 - t0;
    const seen = this.epoch;

    // the block step checked that the blocks stand on the last tip
    const extending = blocks ? true : await this._extends(tip);
    const lookup = (outpoints) => this.store.getPrevouts(outpoints);
    let { changed, asked } = await this.pool.resolve(tip.hash, extending, lookup);
    const evicted = this.maxBytes > 0 ? this.pool.trim(this.maxBytes) : [];
    if (evicted.length) {
      for (const id of evicted) this.evicted.set(id, seen);
      res.evicted = evicted.length;
      this.stats.evicted += evicted.length;
      this.evictedTotal += evicted.length;
      // the snapshot without them (their descendants went with them: nothing else moves)
      asked += (await this.pool.resolve(tip.hash, true, lookup)).asked;
      changed = true;
    }
    this.lastTip = { height: tip.height, hash: tip.hash };
    res.asked = asked;
    const t2 = performance.now();
    res.resolveMs = t2 - t1;
    if (changed) this.unwritten = true;
    if (this.unwritten) {
      const seq = this.seq + 1;
      const c = this.pool.changes();
      const { count, vsize, fee } = this.pool.totals;
      // a row that moves leaves its stored place too
      const leave = c.moved.length ? c.removed.concat(c.moved) : c.removed;
      await this._readRaws(c);
      const change = encodeChange({
        seq, prev: this.seq, tip: fromDisplayHex(tip.hash), count, vsize, fee, evicted: this.evictedTotal, reset: this.reset,
        removed: leave.map((e) => e.txid), removedRanks: leave.map((e) => e.storedRank),
        upserts: c.upserts.map((e) => ({ rank: e.rank, part: e.record, raw: e.raw })),
      });
      // a part's row and its bytes' row (txid, bytes)
      let rowBytes = 0;
      for (const e of c.upserts) rowBytes += 2 * ROW_OVERHEAD + e.record.length + 32 + e.size;
      const stored = await this.store.putMempool(change);
      res.writeMs = performance.now() - t2;
      if (stored) {
        this.pool.markStored(c);
        this.seq = seq;
        this.reset = false;
        this.unwritten = false;
        this.stats.writes++;
        res.outcome = 'written';
        res.bytes = change.length;
        res.stored = change.length + HEAD_BYTES + rowBytes;
        res.upserts = c.upserts.length;
        res.dropped = c.removed.length;
      } else {
        // a block was committed meanwhile: resolve again, against it
        this.stats.refused++;
        this._again = true;
        res.outcome = 'refused';
      }
    }
    res.seq = this.seq;
    return this._done(res, t0, elu0);
  }

  /**
   * The node's whole list (and its best block) against the held set: what it no longer lists
   * is let go, what is new fetched and held.
   * @private
   * @param {MempoolPoll} res
   * @returns {Promise<string>} the node's best block hash
   */
  async _list(res) {
    const tList = performance.now();
    const { txids, best } = await this.client.getMempoolAndTip();
    res.listMs = performance.now() - tList;
    res.listed = txids.length;

    // the diff: let go of what the node no longer lists, fetch what is new; a held txid is
    // matched by its digits in the reply, a string made only for the others
    const seen = ++this.epoch;
    const fresh = [];
    /** by fresh txid: its place in the list */
    const freshAt = new Map();
    let matched = 0;
    const { body, offsets } = txids;
    const held = this.pool.index;
    const list = this.listMatch;
    list.begin(txids);
    for (let k = 0; k < txids.length; k++) {
      let slot = list.slotOf(k);
      if (slot < 0) {
        // not held, or not as its lower-case digits
        const id = txids.id(k);
        if (id === null) throw new NodeError('ERR_NODE_PROTOCOL', `getrawmempool from ${this.client.display}: ${JSON.stringify(body.latin1Slice(offsets[k], offsets[k] + 64))} is not a txid`);
        const e = this.pool.get(id);
        if (e) {
          slot = e.slot;
          list.note(k, slot);
        } else {
          if (this.rejected.has(id)) this.rejected.set(id, seen);
          else if (this.evicted.has(id)) this.evicted.set(id, seen);
          else {
            fresh.push(id);
            freshAt.set(id, k);
          }
          continue;
        }
      }
      if (held.mark(slot, seen)) matched++;
    }
    list.end();
    // every held entry listed again: none left (a poll that only adds walks no entry)
    const gone = matched === this.pool.size ? [] : held.unmarked(seen).map((e) => e.id);
    for (const id of gone) this.pool.delete(id);
    res.removed = gone.length;
    for (const [id, at] of this.rejected) if (at !== seen) this.rejected.delete(id);
    for (const [id, at] of this.evicted) if (at !== seen) this.evicted.delete(id);
    // in txid order: the node lists its mempool in no set order (btcd: a Go map's), and the
    // snapshot is then a function of what was listed, not of how
    fresh.sort();
    if (fresh.length) {
      await this._fetch(fresh, res);
      for (const e of this.fetched) list.learn(freshAt.get(e.id), e.slot);
    }
    return best;
  }

  /** Fetches, checks and parses new transactions into the pool. */
  async _fetch(ids, res) {
    const raws = packed(await this.client.getRawTransactions(ids));
    const time = Math.floor(this.now() / 1000);
    for (let k = 0; k < ids.length; k++) {
      const raw = raws[k];
      if (raw === null) {
        // gone between the list and the fetch (confirmed, evicted, replaced): its descendants
        // cannot resolve either, and stay out of the snapshot
        res.missing++;
        continue;
      }
      try {
        const e = mempoolEntry(raw, time, ids[k]);
        this.pool.add(e);
        this.fetched.push(e);
        res.added++;
      } catch (err) {
        if (!(err instanceof ParseError)) throw err;
        this.rejected.set(ids[k], this.epoch);
        res.rejected++;
        this.stats.rejected++;
        this.onError(new ParseError(err.code, `the node's mempool transaction ${ids[k]} is left out: ${err.message}`), false);
      }
    }
    this.stats.fetched += res.added;
  }

  /**
   * The blocks from the last poll's tip to `tip`, checked, when the index connected a few on it
   * and the node gives them: the poll then takes them as Bitcoin Core's mempool takes a block
   * (MempoolPool#confirm), not the node's whole list, a tenth of a second at 150,000. Core
   * removes what a block confirms and what conflicts with it in the step that connects it, so
   * the last snapshot without them is a mempool the node had at `tip`; what arrived meanwhile
   * comes with the next list. null: list instead (a first poll, a reorg, many blocks, a block
   * the node no longer has).
   * @private
   * @param {{height: number, hash: string}} tip the index's
   * @param {MempoolPoll} res its listMs: the node's answer to getblock
   * @returns {Promise<import('../chain/block').Block[]|null>}
   */
  async _connectedBlocks(tip, res) {
    const last = this.lastTip;
    if (!last || this.reset || this.pool.tip !== last.hash) return null;
    const k = tip.height - last.height;
    if (k < 1 || k > this.blockStepMax) return null;
    const hashes = [];
    for (let h = last.height; h <= tip.height; h++) hashes.push(await this.store.getBlockHash(h));
    if (hashes[0] !== last.hash || hashes[k] !== tip.hash) return null;
    // the blocks the sync beside this follower handed over (offerBlock), the others from the node
    const want = hashes.slice(1);
    const answers = want.map((h) => (this.offered.has(h) ? { raw: this.offered.get(h), offered: true } : null));
    const ask = want.filter((h, j) => answers[j] === null);
    if (ask.length) {
      const asked = performance.now();
      const fetched = await this.client.getRawBlocks(ask);
      res.listMs = performance.now() - asked;
      for (let j = 0, f = 0; j < k; j++) if (answers[j] === null) answers[j] = fetched[f++];
    }
    const blocks = [];
    for (let j = 0; j < k; j++) {
      const a = answers[j];
      // a block the node cannot give (pruned, or not its own): its list says what it holds
      if (a.error) return null;
      // a block that is not the one asked for is the node's fault, said, and the list is
      // what this poll goes by
      let block;
      try {
        block = parseBlock(a.raw);
        if (block.hash !== hashes[j + 1] || block.prev !== hashes[j]) {
          throw new NodeError('ERR_NODE_PROTOCOL', `the node gave block ${block.hash} (on ${block.prev})`);
        }
      } catch (err) {
        if (!(err instanceof ParseError) && !(err instanceof NodeError)) throw err;
        const from = a.offered ? `block ${hashes[j + 1]} as the sync gave it` : `getblock ${hashes[j + 1]} from ${this.client.display}`;
        this.onError(new NodeError('ERR_NODE_PROTOCOL', `${from}: ${err.message}; the mempool is listed instead`), false);
        return null;
      }
      blocks.push(block);
    }
    return blocks;
  }

  /** Whether `tip` descends from the tip of the last resolve (no block of it reverted). */
  async _extends(tip) {
    const last = this.lastTip;
    if (!last) return false;
    if (last.hash === tip.hash) return true;
    if (tip.height <= last.height) return false;
    return (await this.store.getBlockHash(last.height)) === last.hash;
  }

  _done(res, t0, elu0) {
    res.held = this.pool.size;
    res.txs = this.pool.totals.count;
    res.vsize = this.pool.totals.vsize;
    res.memBytes = this.pool.bytes;
    res.ms = performance.now() - t0;
    res.busyMs = performance.eventLoopUtilization(elu0).active;
    this.last = res;
    this.onPoll(res);
    return res;
  }

  async _run() {
    try {
      await this._polls();
    } finally {
      this._running = false;
    }
  }

  async _polls() {
    while (this._running) {
      this._again = false;
      try {
        await this.poll();
      } catch (err) {
        // the client's signal aborted (the process is stopping): a stop, not a failure
        if (err.code === 'ERR_ABORTED') break;
        this.stats.failures++;
        if (passing(err)) {
          // the client retried for its retryMs, or the node answered one poll badly: report,
          // keep the stored snapshot, poll again
          this.onError(err, false);
        } else {
          this._running = false;
          this.onError(err, true);
          throw err;
        }
      }
      if (!this._running) break;
      if (this._again) continue;
      await new Promise((resolve) => {
        const timer = setTimeout(done, this.pollMs);
        const self = this;
        function done() {
          clearTimeout(timer);
          self._wake = null;
          resolve();
        }
        this._wake = done;
      });
    }
  }
}

/**
 * The transactions' bytes copied into one buffer, each a view of it. The node's client decodes
 * each into a small buffer of Node's shared pool; 150,000 of those, let go as the poll went on,
 * lay between the entries' own buffers, and the allocator kept the pages they left (~100 MB of
 * the follower's memory after a first load of 150,000). Copied out at once, they leave their
 * pool buffers to the entries. An entry the poll stored lets its bytes go (the store holds
 * them); at the poll's end any other copies its own out (MempoolEntry#ownRaw), and the one
 * buffer goes whole.
 * @param {Array<Buffer|null>} raws
 * @returns {Array<Buffer|null>}
 */
function packed(raws) {
  let total = 0;
  for (const r of raws) if (r) total += r.length;
  const all = Buffer.allocUnsafeSlow(total);
  let at = 0;
  return raws.map((r) => {
    if (!r) return r;
    r.copy(all, at);
    at += r.length;
    return all.subarray(at - r.length, at);
  });
}

/** A transaction row's key (docs/FORMAT.md, `M 04`: its value is the part), and the head with its key: MempoolPoll#stored. */
const ROW_OVERHEAD = 8;
const HEAD_BYTES = 2 + 64;

/**
 * Errors a later poll may not meet: the node unreachable (after the client's retries), a
 * JSON-RPC error or an answer that is not one. Refused credentials, a node of another
 * network, a store failure stop the follower.
 */
function passing(err) {
  return err instanceof NodeError && (err.code === 'ERR_NODE_UNAVAILABLE' || err.code === 'ERR_NODE_RPC' || err.code === 'ERR_NODE_PROTOCOL');
}

/** --mempool-max-mb's default, Bitcoin Core's `maxmempool` (MB) */
const DEFAULT_MAX_BYTES = 300e6;

module.exports = { MempoolFollower, DEFAULT_MAX_BYTES };
