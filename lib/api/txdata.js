'use strict';

const fs = require('node:fs');
const { StoreError } = require('../errors');
const { toDisplayHex } = require('../chain/hash');
const { PrevoutCache, outpointKey } = require('./prevout-cache');

/**
 * What a served transaction or block needs beyond the store's rows, gathered once for every
 * API family (Esplora, insight, native) and the `addrindex tx` command. The formatters
 * (esplora-format.js, insight-format.js, format.js) turn it into JSON; nothing here shapes an
 * answer.
 *
 * Where the bytes come from: the index keeps each block's place in the blocks dir the sync
 * read (its `l` row) and each transaction's offset and length in its block (`n`); a
 * transaction is read alone from there through the BlockReader, which takes it only when the
 * block's header at that place hashes to the block the index names and the bytes hash to the
 * txid (else it reads and checks the whole block, else asks the node given to it, else
 * fails with ERR_BLOCK_UNAVAILABLE: 503). Nothing here trusts a file over the index.
 *
 * Inputs' previous outputs are read the same way: each input's funding transaction is found
 * with getTx and read alone, and its output taken (docs/FORMAT.md, "Rules": the index keeps
 * no copy of spent outputs; the cost is measured by bench/api.js). Previous outputs read lately
 * are kept by outpoint (prevout-cache.js), and a funding transaction being read for one
 * request is not read again for another. Who spent an output comes from
 * the outputs row (getSpenders).
 *
 * Every method reads the store several times; callers run it inside ApiApp.consistent(), and
 * a read that finds the index changed under it (a row naming a block that is no longer at its
 * height) throws ERR_INDEX_MOVED, which consistent() answers by reading again.
 */

/**
 * @typedef {{height: number, hash: string, time: number}} BlockInfo the confirming block
 * @typedef {{value: number, script: Buffer}} Prevout
 * @typedef {object} Spend who spent an output
 * @property {string} txid display hex
 * @property {number} vin
 * @property {number|null} height null while unconfirmed
 * @property {BlockInfo|null} block null while unconfirmed
 * @typedef {object} FullTx
 * @property {import('../chain/tx').Tx} tx parsed
 * @property {import('../stores/abstract').TxLocation} loc
 * @property {BlockInfo} block
 * @property {Array<Prevout|null>} [prevouts] one per input; [null] for a coinbase
 * @property {Array<Spend|null>} [spends] one per output, null when unspent
 */

/**
 * Where the mempool view of a tip comes from: lib/mempool/reader.js (the stored snapshot and
 * the pairing rule), or viewsFrom() over a hook. A view is valid only for the tip it names;
 * without one the API answers what a confirmed-only server answers.
 * @typedef {{at: (tip: {hash: string}|null) => Promise<import('../core/mempool').MempoolView|null>}} MempoolViews
 */

class TxData {
  /**
   * @param {object} opts
   * @param {import('../stores/abstract').AbstractStore} opts.store
   * @param {import('../sources/blockreader').BlockReader} opts.reader
   * @param {MempoolViews|null} [opts.mempool] unconfirmed transactions and spenders come from here
   * @param {number} [opts.prevoutCacheBytes] previous outputs kept (default 16 MiB)
   */
  constructor({ store, reader, mempool = null, prevoutCacheBytes }) {
    this.store = store;
    this.reader = reader;
    this.mempool = mempool;
    this.cache = new PrevoutCache(prevoutCacheBytes);
    /** @type {Map<string, Promise<import('../chain/tx').Tx>>} funding transactions being read, by latin1 txid */
    this.reading = new Map();
    /** @type {Map<number, import('../stores/abstract').Block>} block rows read lately, by height */
    this.rows = new Map();
  }

  /**
   * A transaction of a mempool view, as the confirmed ones are handed to the formatters (no
   * location, no block), or null when the view does not hold it. Its inputs' previous outputs
   * come from the index or, for a parent in the mempool, from the view.
   * @param {import('../core/mempool').MempoolView} view the view of `opts.tip`
   * @param {Buffer} txid internal order
   * @param {{prevouts?: boolean, spends?: boolean, tip?: object}} [opts]
   * @returns {Promise<(FullTx & {mempool: import('../core/mempool-tx').ViewTx, parentsUnconfirmed: boolean})|null>}
   *   parentsUnconfirmed: it spends an output of another transaction of `view`
   */
  async unconfirmed(view, txid, opts = {}) {
    const m = view.get(txid);
    if (!m) return null;
    const tx = await view.parsed(m);
    const full = { tx, loc: null, block: null, mempool: m, parentsUnconfirmed: view.hasUnconfirmedInputs(m) };
    if (opts.prevouts) full.prevouts = await this.prevouts(tx, view);
    // only the view's own transactions can spend one of its transactions
    if (opts.spends) full.spends = tx.outputs.map((o, vout) => mempoolSpend(view, tx.txid, vout));
    return full;
  }

  /**
   * A confirmed transaction or, failing that, one of the mempool view of `opts.tip`.
   * @param {Buffer} txid
   * @param {{prevouts?: boolean, spends?: boolean, tip?: object, view?: import('../core/mempool').MempoolView|null}} [opts]
   * @returns {Promise<FullTx|null>}
   */
  async anyTx(txid, opts = {}) {
    const confirmed = await this.tx(txid, opts);
    if (confirmed) return confirmed;
    const view = await this._mempool(opts.tip || null, opts.view);
    return view ? this.unconfirmed(view, txid, opts) : null;
  }

  /**
   * A confirmed transaction, read from its block.
   * @param {Buffer} txid internal order
   * @param {{prevouts?: boolean, spends?: boolean, tip?: import('../stores/abstract').Tip|null, view?: import('../core/mempool').MempoolView|null}} [opts]
   *   prevouts: also read every input's previous output; spends: who spent each output (the
   *   mempool's spenders too when `tip` is the one the mempool view names); view: that view,
   *   when the caller already read it (null: none), so it is not read again
   * @returns {Promise<FullTx|null>} null when the index holds no such transaction
   */
  async tx(txid, opts = {}) {
    const loc = await this.store.getTx(txid);
    if (!loc) return null;
    return this.at(loc, opts);
  }

  /**
   * The transaction at a location getTx gave.
   * @param {import('../stores/abstract').TxLocation} loc
   * @param {{prevouts?: boolean, spends?: boolean, tip?: object, view?: import('../core/mempool').MempoolView|null}} [opts]
   * @returns {Promise<FullTx>}
   */
  async at(loc, opts = {}) {
    return this._complete(loc, await this._read(loc), opts);
  }

  /**
   * Where each of these transactions is (a history page's: each must be there).
   * @param {Buffer[]} txids internal order
   * @returns {Promise<import('../stores/abstract').TxLocation[]>}
   */
  async locate(txids) {
    const locs = await Promise.all(txids.map((t) => this.store.getTx(t)));
    locs.forEach((loc, i) => { if (!loc) throw moved(`transaction ${toDisplayHex(txids[i])} left the index during the read`); });
    return locs;
  }

  /**
   * Transactions the index lists (a history page): each must be there.
   * @param {Buffer[]} txids internal order
   * @param {{prevouts?: boolean, spends?: boolean, tip?: object, view?: import('../core/mempool').MempoolView|null}} [opts]
   * @returns {Promise<FullTx[]>}
   */
  async txs(txids, opts = {}) {
    const once = await this._viewOnce(opts);
    return Promise.all(txids.map(async (txid) => {
      const full = await this.tx(txid, once);
      if (!full) throw moved(`transaction ${toDisplayHex(txid)} left the index during the read`);
      return full;
    }));
  }

  /**
   * Transactions [start, start + count) of a block, from one read of the whole block.
   * @param {import('../stores/abstract').Block} row the block's store row
   * @param {number} start
   * @param {number} count
   * @param {{prevouts?: boolean, spends?: boolean, tip?: object, view?: import('../core/mempool').MempoolView|null}} [opts]
   * @returns {Promise<FullTx[]>}
   */
  async blockTxs(row, start, count, opts = {}) {
    const { block } = await this.reader.read(row.hash, row.locator);
    const info = blockInfo(row);
    const txs = block.txs.slice(start, start + count);
    const once = await this._viewOnce(opts);
    return Promise.all(txs.map((tx, i) => {
      const position = start + i;
      const loc = { txNum: row.firstTxNum + position, txid: tx.txid, height: row.height, blockHash: row.hash, position };
      return this._complete(loc, { tx, block: info }, once);
    }));
  }

  /**
   * A block's coinbase, read alone where it can be. A coinbase txid mainnet repeated (BIP30)
   * names the later transaction in the index, so for the earlier block the block is read whole.
   * @param {import('../stores/abstract').Block} row
   * @returns {Promise<import('../chain/tx').Tx>}
   */
  async coinbase(row) {
    const txid = await this.store.getTxids(row.firstTxNum, 1);
    if (txid.length !== 32) throw moved(`the index holds no transaction ${row.firstTxNum} any more`);
    const loc = await this.store.getTx(txid);
    if (loc && loc.txNum === row.firstTxNum) return (await this._read(loc)).tx;
    return (await this.reader.read(row.hash, row.locator)).block.txs[0];
  }

  /**
   * The whole block's bytes, checked.
   * @param {import('../stores/abstract').Block} row
   * @returns {Promise<Buffer>}
   */
  async rawBlock(row) {
    return (await this.reader.read(row.hash, row.locator)).raw;
  }

  /**
   * Who spent one output: the confirmed spender from the index, else the mempool's.
   * An unknown transaction, an output out of range, an unspent one and one a BIP30 coinbase
   * overwrote (no input spent it) all answer null, as Esplora answers them.
   * @param {Buffer} txid internal order
   * @param {number} vout
   * @param {object|null} tip
   * @returns {Promise<Spend|null>}
   */
  async spend(txid, vout, tip) {
    const rows = await this.store.getSpenders(txid);
    const row = rows && rows.find((r) => r.vout === vout);
    if (row) return row.vin === null ? null : this._spend(row);
    const pool = await this._mempool(tip);
    return pool ? mempoolSpend(pool, txid, vout) : null;
  }

  /**
   * @param {Buffer} txid internal order
   * @param {number} outputs how many outputs the transaction has
   * @param {object|null} tip
   * @returns {Promise<Array<Spend|null>>} one per output
   */
  async spends(txid, outputs, tip, view) {
    const out = new Array(outputs).fill(null);
    const rows = (await this.store.getSpenders(txid)) || [];
    const taken = new Set();
    const blocks = new Map(); // height -> Promise<BlockInfo>: spenders often share a block
    await Promise.all(rows.map(async (r) => {
      if (r.vout >= outputs) throw new StoreError('ERR_CORRUPT', `the index says output ${r.vout} of ${toDisplayHex(txid)} was spent; it has ${outputs}`);
      taken.add(r.vout);
      if (r.vin === null) return;
      if (!blocks.has(r.height)) blocks.set(r.height, this.blockAt(r.height));
      out[r.vout] = { txid: toDisplayHex(r.txid), vin: r.vin, height: r.height, block: await blocks.get(r.height) };
    }));
    const pool = await this._mempool(tip, view);
    if (pool) {
      for (let vout = 0; vout < outputs; vout++) if (!taken.has(vout)) out[vout] = mempoolSpend(pool, txid, vout);
    }
    return out;
  }

  /**
   * The previous output of every input (a coinbase: [null]), each read from its funding
   * transaction (once per transaction, however many of its outputs are spent here): from the
   * index, or from `view` when it is a mempool transaction there.
   * @param {import('../chain/tx').Tx} tx
   * @param {import('../core/mempool').MempoolView|null} [view]
   * @returns {Promise<Array<Prevout|null>>}
   */
  async prevouts(tx, view = null) {
    if (tx.coinbase) return [null];
    const out = new Array(tx.inputs.length);
    /** latin1 txid -> the inputs spending it that the cache did not answer */
    const missing = new Map();
    tx.inputs.forEach((input, i) => {
      const hit = this.cache.get(outpointKey(input.txid, input.vout));
      if (hit) {
        out[i] = hit;
        return;
      }
      const k = input.txid.latin1Slice(0, 32);
      if (!missing.has(k)) missing.set(k, []);
      missing.get(k).push(i);
    });
    await Promise.all([...missing].map(async ([k, inputs]) => {
      const parent = view && view.get(tx.inputs[inputs[0]].txid);
      const funding = parent ? await view.parsed(parent) : await this._fundingOnce(k, tx.inputs[inputs[0]].txid, tx);
      for (const i of inputs) {
        const { txid, vout } = tx.inputs[i];
        const o = funding.outputs[vout];
        if (!o) throw new StoreError('ERR_MISSING_PREVOUT', `input ${i} of ${tx.hash} spends ${toDisplayHex(txid)}:${vout}, an output it does not have`);
        out[i] = this.cache.set(outpointKey(txid, vout), o);
      }
    }));
    return out;
  }

  /**
   * A block's store row by hash, with its median time past (Esplora's `mediantime`).
   * @param {string} hash display hex
   * @returns {Promise<(import('../stores/abstract').Block & {mediantime: number})|null>}
   */
  async block(hash) {
    const row = await this.store.getBlockByHash(hash);
    if (!row) return null;
    return { ...row, mediantime: await this.medianTime(row.height) };
  }

  /**
   * The median of the timestamps of the block at `height` and up to 10 before it.
   * @param {number} height
   */
  async medianTime(height) {
    const from = Math.max(0, height - 10);
    const headers = await this.store.getHeaders(from, height - from + 1);
    const times = [];
    for (let p = 0; p < headers.length; p += 80) times.push(headers.readUInt32LE(p + 68));
    if (times.length !== height - from + 1) throw moved(`the index holds no block at height ${height} any more`);
    times.sort((a, b) => a - b);
    return times[times.length >> 1];
  }

  /**
   * The block at a height, as a transaction's status names it.
   * @param {number} height
   * @returns {Promise<BlockInfo>}
   */
  async blockAt(height) {
    const row = await this.store.getBlock(height);
    if (!row) throw moved(`the index holds no block at height ${height} any more`);
    return blockInfo(row);
  }

  async _read(loc) {
    const row = await this._blockRow(loc);
    if (!row || row.hash !== loc.blockHash) throw moved(`block ${loc.blockHash} is no longer at height ${loc.height}`);
    const { tx } = await this.reader.readTx(toDisplayHex(loc.txid), loc.blockHash, row.locator,
      { offset: loc.offset, length: loc.length, position: loc.position });
    return { tx, block: blockInfo(row) };
  }

  /**
   * The block row a location names: a row read lately serves while the location names the same
   * block (its hash, from this very read of the index, says so); another block at that height
   * (a reorg) is read anew.
   */
  async _blockRow(loc) {
    const hit = this.rows.get(loc.height);
    if (hit && hit.hash === loc.blockHash) return hit;
    const row = await this.store.getBlock(loc.height);
    if (row && row.hash === loc.blockHash) {
      this.rows.delete(loc.height);
      this.rows.set(loc.height, row);
      if (this.rows.size > BLOCK_ROWS) this.rows.delete(this.rows.keys().next().value);
    }
    return row;
  }

  /** A funding transaction, read once however many requests ask for it at the same time. */
  _fundingOnce(key, txid, spender) {
    let p = this.reading.get(key);
    if (!p) {
      p = this._funding(txid, spender).finally(() => this.reading.delete(key));
      this.reading.set(key, p);
    }
    return p;
  }

  async _funding(txid, spender) {
    const loc = await this.store.getTx(txid);
    if (!loc) {
      throw new StoreError('ERR_MISSING_PREVOUT', `${spender.hash} spends an output of ${toDisplayHex(txid)}, which the index does not hold`);
    }
    return (await this._read(loc)).tx;
  }

  async _complete(loc, { tx, block }, opts) {
    const full = { tx, loc, block };
    const [prevouts, spends] = await Promise.all([
      opts.prevouts ? this.prevouts(tx) : undefined,
      opts.spends ? this.spends(tx.txid, tx.outputs.length, opts.tip || null, opts.view) : undefined,
    ]);
    if (prevouts) full.prevouts = prevouts;
    if (spends) full.spends = spends;
    return full;
  }

  async _spend(row) {
    return { txid: toDisplayHex(row.txid), vin: row.vin, height: row.height, block: await this.blockAt(row.height) };
  }

  /**
   * The mempool view of this tip: `view` when the caller has it (null: none), else read.
   * @param {object|null} tip
   * @param {import('../core/mempool').MempoolView|null} [view]
   */
  async _mempool(tip, view) {
    if (view !== undefined) return view;
    if (!this.mempool || !tip) return null;
    return this.mempool.at(tip);
  }

  /**
   * opts with the mempool view resolved once, for a call that completes several
   * transactions (each would read the snapshot's head again otherwise).
   */
  async _viewOnce(opts) {
    if (!opts.spends || opts.view !== undefined) return opts;
    return { ...opts, view: await this._mempool(opts.tip || null) };
  }
}

/**
 * Where a reader of an index finds its blocks: the dir given (serve --blocks-dir), else the one
 * `addrindex sync` recorded in the index, else none (only a node could then serve bodies).
 * `readable` says whether the dir can be read now, `why` says it in words for a banner.
 * @param {import('../stores/abstract').AbstractStore} store open
 * @param {string|null|undefined} given
 * @returns {Promise<{dir: string|null, from: 'option'|'index'|null, readable: boolean, why: string}>}
 */
async function blocksDirOf(store, given) {
  const info = given ? null : await store.getSourceInfo();
  const dir = given || (info && typeof info.blocksDir === 'string' ? info.blocksDir : null);
  if (!dir) return { dir: null, from: null, readable: false, why: 'the index records no blocks dir (it was not synced from one)' };
  const from = given ? 'option' : 'index';
  const named = from === 'index' ? `the recorded blocks dir ${dir}` : `the blocks dir ${dir} (--blocks-dir)`;
  try {
    await fs.promises.access(dir, fs.constants.R_OK | fs.constants.X_OK);
    if (!(await fs.promises.stat(dir)).isDirectory()) return { dir, from, readable: false, why: `${named} is not a directory` };
  } catch (err) {
    return { dir, from, readable: false, why: `${named} cannot be read (${err.code || err.message})` };
  }
  return { dir, from, readable: true, why: from === 'index' ? 'recorded by the sync' : 'from --blocks-dir' };
}

/**
 * A BlockReader's `fromIndex` for an index synced with --txstore: the bytes it keeps of a block
 * of its best chain, found by hash.
 * @param {import('../stores/abstract').AbstractStore} store
 * @returns {(hash: string) => Promise<Buffer|null>}
 */
function indexBlockBytes(store) {
  return async (hash) => {
    const row = await store.getBlockByHash(hash);
    return row ? store.getBlockBytes(row.height) : null;
  };
}

/** Block rows kept (a few hundred bytes each: the locator and the header the reads need). */
const BLOCK_ROWS = 4096;

/** @param {import('../stores/abstract').Block} row @returns {BlockInfo} */
function blockInfo(row) {
  return { height: row.height, hash: row.hash, time: row.time };
}

function mempoolSpend(view, txid, vout) {
  const s = view.spender(txid, vout);
  return s ? { txid: toDisplayHex(s.tx.txid), vin: s.vin, height: null, block: null } : null;
}

/** The index committed blocks during a read: ApiApp.consistent() reads again. */
function moved(message) {
  return new StoreError('ERR_INDEX_MOVED', message);
}

module.exports = { TxData, blockInfo, blocksDirOf, indexBlockBytes, moved };
