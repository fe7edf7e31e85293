'use strict';

const { StoreError, SourceError } = require('../errors');
const { sha256d, toDisplayHex } = require('../chain/hash');
const { BlockReader } = require('../sources/blockreader');
const { indexBlockBytes } = require('../api/txdata');
const { MempoolReader } = require('../mempool/reader');
const { mergeUtxos, unconfirmedBalance } = require('../core/mempool-merge');
const { readConsistent, indexMoving, READ_ATTEMPTS } = require('../core/consistent');
const { mempoolTextOf, mempoolPart, extendMempoolPart } = require('./status');

/**
 * What the Electrum handlers read, and nothing else: a small interface that an index can
 * answer directly. StoreReader implements it over the store contract
 * (lib/stores/abstract.js); README.md lists which store method answers what.
 *
 * Heights are the best chain's. Hashes and txids are 32-byte Buffers in internal order.
 *
 * @typedef {object} ElectrumTip
 * @property {number} height
 * @property {string} hash    display hex
 * @property {Buffer} header  80 bytes
 *
 * @typedef {object} ElectrumHistoryEntry
 * @property {Buffer} txid
 * @property {number} height
 *
 * @typedef {object} ElectrumMempoolEntry
 * @property {Buffer} txid
 * @property {number} height  0, or -1 when one of its inputs is unconfirmed
 * @property {number} fee     satoshis
 *
 * @typedef {object} ElectrumUtxo
 * @property {Buffer} txid
 * @property {number} vout
 * @property {number} value
 * @property {number} height  0 for a mempool output
 */

/**
 * The view of the index every Electrum read asks for (lib/core/p2pk.js): a script hash means
 * exactly sha256 of the output script, as on every Electrum server — a P2PK output is found
 * under its own script's hash and not under its key's P2PKH script hash.
 */
const VIEW = 'script';

/** Blocks whose txids are kept for merkle branches (wallets ask for several txs of a block). */
const TXID_CACHE_BLOCKS = 16;

/**
 * Blocks whose touched script hashes are read for one tip move; a longer move (a worker
 * catching up with a sync of many blocks) checks every subscription's last height instead.
 */
const MAX_TOUCHED_BLOCKS = 100;

class StoreReader {
  /**
   * @param {object} opts
   * @param {import('../stores/abstract').AbstractStore} opts.store open (read-only is enough)
   * @param {BlockReader|null} [opts.blocks] where confirmed transactions' bytes are read (a
   *   blocks dir and/or a node's getblock); null: nowhere
   * @param {MempoolReader} [opts.mempoolReader] the process's, when its REST app has one (a
   *   snapshot is then decoded once for both)
   */
  constructor({ store, blocks = null, mempoolReader = null }) {
    this.store = store;
    this.blocks = blocks;
    /** A script hash means exactly sha256 of the output script: every read asks the store's script view. */
    this.exactScripthash = true;
    this.hasRawTx = Boolean(blocks && (blocks.dir || blocks.fetchFromNode || blocks.fromIndex));
    /** the snapshot and the one pairing rule every reader uses (lib/mempool/reader.js) */
    this.mempoolReader = mempoolReader || new MempoolReader(store);
    /** @type {Map<string, Buffer[]>} block hash → txids, least recently used first */
    this.txidCache = new Map();
  }

  /**
   * Runs `read` so that what it returns belongs to one committed tip (lib/core/consistent.js,
   * as every reader of the index does).
   * @template T
   * @param {(tip: import('../stores/abstract').Tip|null) => Promise<T>} read
   * @returns {Promise<{tip: import('../stores/abstract').Tip|null, value: T}>}
   */
  consistent(read) {
    return readConsistent(this.store, read);
  }

  /**
   * Runs a confirmed read and pairs it with the mempool snapshot resolved against the tip it
   * was read at (lib/mempool/reader.js: the rule, shared with the REST API).
   * @template T
   * @param {() => Promise<T>} read
   * @returns {Promise<{value: T, view: import('../core/mempool').MempoolView|null, tip: string|null}>}
   */
  withMempool(read) {
    return this.mempoolReader.paired(read);
  }

  /**
   * The head of the mempool snapshot that goes with a tip, or null.
   * @param {{hash: string}|null} tip
   * @returns {Promise<{seq: number, tip: string}|null>}
   */
  mempoolHeadAt(tip) {
    return this.mempoolReader.headAt(tip);
  }

  /**
   * The mempool view that goes with a tip, or null.
   * @param {{hash: string}|null} tip
   * @returns {Promise<import('../core/mempool').MempoolView|null>}
   */
  mempoolAt(tip) {
    return this.mempoolReader.at(tip);
  }

  /**
   * The index's tip, without its header (what a poll for new blocks reads).
   * @returns {Promise<{height: number, hash: string}|null>}
   */
  async tip() {
    const t = await this.store.getTip();
    return t && { height: t.height, hash: t.hash };
  }

  /** @returns {Promise<ElectrumTip|null>} the tip with its header */
  async tipHeader() {
    for (let attempt = 1; ; attempt++) {
      const t = await this.store.getTip();
      if (!t) return null;
      // by hash: a block committed between the two reads cannot give another block's header
      const block = await this.store.getBlockByHash(t.hash);
      if (block) return { height: t.height, hash: t.hash, header: block.header };
      if (attempt === READ_ATTEMPTS) throw indexMoving();
    }
  }

  /**
   * @param {string} hash display hex
   * @returns {Promise<Buffer|null>} the block's header, null when the index does not hold it
   *   (any more: a reorg)
   */
  async blockHeader(hash) {
    const block = await this.store.getBlockByHash(hash);
    return block ? block.header : null;
  }

  /**
   * @param {number} height
   * @returns {Promise<string|null>} the block hash (display hex) at a height of the index
   */
  async blockHash(height) {
    return this.store.getBlockHash(height);
  }

  /**
   * Up to `count` headers from `from`: fewer when the chain ends first, none above the tip.
   * @returns {Promise<Buffer[]>}
   */
  async headers(from, count) {
    if (count === 0) return [];
    const all = await this.store.getHeaders(from, count);
    const out = new Array(all.length / 80);
    for (let i = 0; i < out.length; i++) out[i] = all.subarray(i * 80, i * 80 + 80);
    return out;
  }

  /**
   * Block hashes of heights the index holds (the headers hashed: one read for a run).
   * @returns {Promise<Buffer[]>}
   */
  async blockHashes(from, count) {
    const headers = await this.headers(from, count);
    if (headers.length < count) throw new StoreError('ERR_NO_BLOCK', `the index holds no block at height ${from + headers.length}`);
    return headers.map((h) => sha256d(h));
  }

  /**
   * The txids of the block at `height`, in block order (for merkle branches).
   * @returns {Promise<Buffer[]|null>} null above the tip
   */
  async blockTxids(height) {
    const { value } = await this.consistent(async () => {
      const block = await this.store.getBlock(height);
      if (!block) return null;
      let txids = this.txidCache.get(block.hash);
      if (!txids) {
        const all = await this.store.getTxids(block.firstTxNum, block.txCount);
        if (all.length !== block.txCount * 32) throw new StoreError('ERR_CORRUPT', `the index lacks txids of block ${height}`);
        txids = new Array(block.txCount);
        for (let i = 0; i < block.txCount; i++) txids[i] = all.subarray(i * 32, i * 32 + 32);
      }
      return { hash: block.hash, txids };
    });
    if (!value) return null;
    // keyed by block hash: a reorg gives the height another key, never stale txids
    this.txidCache.delete(value.hash);
    this.txidCache.set(value.hash, value.txids);
    if (this.txidCache.size > TXID_CACHE_BLOCKS) this.txidCache.delete(this.txidCache.keys().next().value);
    return value.txids;
  }

  /**
   * Where a confirmed transaction is.
   * @returns {Promise<{height: number, position: number}|null>}
   */
  async txLocation(txid) {
    const loc = await this.store.getTx(txid);
    return loc && { height: loc.height, position: loc.position };
  }

  /**
   * Confirmed history in chain order, at most `limit` entries (one store call: one snapshot),
   * with the mempool's transactions of the script hash when a snapshot goes with that tip.
   * @param {Buffer} scripthash
   * @param {number} limit
   * @returns {Promise<{entries: ElectrumHistoryEntry[], mempool: ElectrumMempoolEntry[], more: boolean, tip: string|null, seq: number|null}>}
   *   more: the history holds more than `limit` entries (none are returned); tip: the block
   *   hash the answer belongs to, when known (see withMempool); seq: the mempool view's
   */
  async history(scripthash, limit) {
    const { value: page, view, tip } = await this.withMempool(() => this.store.getHistory(scripthash, { limit: limit + 1, view: VIEW }));
    const mempool = view ? mempoolEntries(view, scripthash) : [];
    const seq = view ? view.seq : null;
    const more = page.entries.length + mempool.length > limit;
    if (more) return { entries: [], mempool: [], more, tip, seq };
    return { entries: page.entries.map((e) => ({ txid: e.txid, height: e.height })), mempool, more, tip, seq };
  }

  /**
   * Confirmed balance, and what the mempool adds to it (negative when it spends more).
   * @param {Buffer} scripthash
   * @returns {Promise<{confirmed: number, unconfirmed: number}>}
   */
  async balance(scripthash) {
    const { value: s, view } = await this.withMempool(() => this.store.getSummary(scripthash, { view: VIEW }));
    return { confirmed: s ? s.balance : 0, unconfirmed: unconfirmedBalance(view, scripthash, VIEW) };
  }

  /**
   * Unspent outputs: the confirmed ones no mempool transaction spends, in chain order, then
   * those of mempool transactions that no other one spends (height 0), at most `limit`.
   * @returns {Promise<{utxos: ElectrumUtxo[], more: boolean}>}
   */
  async utxos(scripthash, limit) {
    const { value: page, view } = await this.withMempool(() => this.store.getUtxos(scripthash, { limit: limit + 1, view: VIEW }));
    let utxos = page.utxos.map((u) => ({ txid: u.txid, vout: u.vout, value: u.value, height: u.height }));
    const merged = mergeUtxos(view, scripthash, utxos, { view: VIEW });
    // a page cut at limit + 1 is too long whatever the mempool spends of it: `more` holds
    if (utxos.length <= limit) utxos = merged.confirmed;
    for (const u of merged.unconfirmed) utxos.push({ txid: u.tx.txid, vout: u.vout, value: u.value, height: 0 });
    const more = page.utxos.length > limit || utxos.length > limit;
    return { utxos: more ? [] : utxos, more };
  }

  /**
   * Unconfirmed transactions touching the script hash (none without a snapshot of this tip).
   * @param {Buffer} scripthash
   * @returns {Promise<ElectrumMempoolEntry[]>}
   */
  async mempool(scripthash) {
    const view = await this.mempoolAt(await this.store.getTip());
    return view ? mempoolEntries(view, scripthash) : [];
  }

  /**
   * The fee histogram of the snapshot of this tip ([[sat/vB, vsize]], highest rate first), or
   * null when there is none.
   * @returns {Promise<Array<[number, number]>|null>}
   */
  async feeHistogram() {
    const view = await this.mempoolAt(await this.store.getTip());
    return view ? view.feeHistogram() : null;
  }

  /**
   * The height of the last confirmed transaction of each script hash (-1: none), the cheap
   * test of whether a subscribed status can have changed since a height.
   * @param {Buffer[]} scripthashes
   * @returns {Promise<number[]>}
   */
  async lastHeights(scripthashes) {
    const summaries = await this.store.getSummaries(scripthashes, { view: VIEW });
    return summaries.map((s) => (s && s.txCount > 0 ? s.lastHeight : -1));
  }

  /**
   * The script hashes the blocks above `forkHeight` up to `tip` touched, each block's set as
   * the store keeps it (32 bytes each); null when a block's set is not kept (below the undo
   * kept) or there are more than MAX_TOUCHED_BLOCKS of them.
   * @param {number} forkHeight
   * @param {{height: number, hash: string}} tip
   * @returns {Promise<Buffer[]|null>}
   * @throws {StoreError} ERR_INDEX_MOVING when the chain no longer ends at `tip` (the sets read
   *   may belong to another branch)
   */
  async touched(forkHeight, tip) {
    if (tip.height - forkHeight > MAX_TOUCHED_BLOCKS) return null;
    const sets = [];
    for (let h = tip.height; h > forkHeight; h--) {
      const set = await this.store.getTouched(h, { view: VIEW });
      if (!set) return null;
      sets.push(set);
    }
    // a reorg past `tip` replaces its block too: the sets read are the chain's that ends at tip
    if ((await this.store.getBlockHash(tip.height)) !== tip.hash) throw indexMoving();
    return sets;
  }

  /**
   * A transaction's bytes: a confirmed one from its block (blocks dir or node, checked against
   * the block's header and the txid), else one of the mempool snapshot of this tip.
   * @param {Buffer} txid
   * @returns {Promise<Buffer|null>} null when neither the index nor the mempool knows the txid
   * @throws {import('../errors').SourceError} ERR_BLOCK_UNAVAILABLE (or ERR_TX_NOT_IN_BLOCK)
   *   when the index knows it but its bytes cannot be read
   */
  async rawTx(txid) {
    const { value: loc, view } = await this.withMempool(() => this.store.getTx(txid));
    if (!loc) {
      const tx = view && view.get(txid);
      return tx ? Buffer.from(await view.raw(tx)) : null;
    }
    for (let attempt = 1; ; attempt++) {
      const block = await this.store.getBlockByHash(loc.blockHash);
      if (block) {
        if (!this.hasRawTx) throw unavailable(loc.blockHash, 'this server has no blocks dir and no node to read it from');
        const { tx } = await this.blocks.readTx(toDisplayHex(txid), loc.blockHash, block.locator, { offset: loc.offset, length: loc.length });
        return Buffer.from(tx.raw);
      }
      // its block was reverted between the two reads: where is it now?
      if (attempt === READ_ATTEMPTS) throw indexMoving();
      const again = await this.store.getTx(txid);
      if (!again) return null;
      Object.assign(loc, again);
    }
  }

  /** Releases the block reader's files and cache. */
  async close() {
    if (this.blocks) await this.blocks.close();
  }
}

/** The mempool entries of a script hash as Electrum lists them (the script view). */
function mempoolEntries(view, scripthash) {
  return view.transactions(scripthash, VIEW).map((tx) => ({ txid: tx.txid, height: view.hasUnconfirmedInputs(tx) ? -1 : 0, fee: tx.fee }));
}

/**
 * The mempool part of a script hash's status (status.js mempoolText) in the script view, and
 * how many transactions it counts; text null for none. What a subscription's status is
 * computed again from at each new view, for script hashes with thousands of them: no entry
 * object, no txid view.
 * @param {import('../core/mempool').MempoolView} view
 * @param {Buffer} scripthash
 * @returns {{count: number, text: Buffer|null}}
 */
function mempoolStatusText(view, scripthash) {
  return statusTextOfTxs(view, view.transactions(scripthash, VIEW));
}

/** mempoolStatusText() of a script hash's transactions in `view`. */
function statusTextOfTxs(view, txs) {
  return { count: txs.length, text: txs.length ? mempoolTextOf(txidsOf(txs), heightsOf(view, txs)) : null };
}

/**
 * mempoolStatusText() for a subscription that keeps its part when it counts at least
 * `keepFrom` transactions: extended from the part it kept at `changes.since` when only
 * arrivals touched its key since (MempoolView#changesSince), else made anew.
 * @param {import('../core/mempool').MempoolView} view
 * @param {Buffer} scripthash
 * @param {{key: string, kept: (import('./status').MempoolPart & {seq: number})|null,
 *   changes: ReturnType<import('../core/mempool').MempoolView['changesSince']>, keepFrom: number}} opts
 *   key: the script hash's latin1 key
 * @returns {{count: number, text: Buffer|null, part: (import('./status').MempoolPart & {seq: number})|null, extended: boolean}}
 *   extended: from the kept part
 */
function mempoolStatusPart(view, scripthash, { key, kept, changes, keepFrom }) {
  let part;
  const extended = Boolean(kept && changes && kept.seq === changes.since && !changes.removedFrom.has(key));
  if (extended) {
    const added = changes.addedTo.get(key) || [];
    part = added.length ? extendMempoolPart(kept, txidsOf(added), heightsOf(view, added)) : kept;
  } else {
    const txs = view.transactions(scripthash, VIEW);
    if (txs.length < keepFrom) return { ...statusTextOfTxs(view, txs), part: null, extended };
    part = mempoolPart(txidsOf(txs), heightsOf(view, txs));
  }
  part.seq = view.seq;
  const count = part.txids.length;
  return { count, text: count ? part.text : null, part: count >= keepFrom ? part : null, extended };
}

/** @param {import('../core/mempool-tx').ViewTx[]} txs @returns {Buffer[]} each starts with its txid */
function txidsOf(txs) {
  // a transaction's part starts with its txid (lib/codec/mempool.js)
  return txs.map((tx) => tx.part);
}

/** Electrum's heights of a view's transactions: -1 with an unconfirmed input, else 0. */
function heightsOf(view, txs) {
  const heights = new Int8Array(txs.length);
  for (let k = 0; k < txs.length; k++) heights[k] = view.hasUnconfirmedInputs(txs[k]) ? -1 : 0;
  return heights;
}

function unavailable(blockHash, why) {
  return new SourceError('ERR_BLOCK_UNAVAILABLE', `block ${blockHash} cannot be read: ${why}`, { hash: blockHash });
}

/**
 * A StoreReader with its block reader.
 * @param {object} opts
 * @param {import('../stores/abstract').AbstractStore} opts.store
 * @param {string} opts.network
 * @param {string|null} [opts.blocksDir] null: none (see blocksDirOf in lib/api/txdata.js)
 * @param {boolean} [opts.indexKeepsBlocks] the index keeps its blocks' bytes (sync --txstore)
 * @param {((hash: string) => Promise<Buffer|string>)|null} [opts.fetchFromNode] a node's
 *   `getblock HASH 0`, for blocks the dir does not hold (the node source supplies it)
 * @param {MempoolReader} [opts.mempoolReader] see StoreReader
 * @returns {StoreReader}
 */
function createReader({ store, network, blocksDir = null, indexKeepsBlocks = false, fetchFromNode = null, mempoolReader = null }) {
  const fromIndex = indexKeepsBlocks ? indexBlockBytes(store) : null;
  const blocks = blocksDir || fetchFromNode || fromIndex ? new BlockReader({ dir: blocksDir, network, fetchFromNode, fromIndex }) : null;
  return new StoreReader({ store, blocks, mempoolReader });
}

module.exports = { StoreReader, createReader, mempoolEntries, mempoolStatusText, mempoolStatusPart, MAX_TOUCHED_BLOCKS, VIEW };
