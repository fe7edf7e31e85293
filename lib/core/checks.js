'use strict';

const { StoreError, UsageError } = require('../errors');
const { getNetwork } = require('../chain/networks');
const { MAX_TXNUM, DEFAULT_UNDO_DEPTH } = require('./rules');
const { writeU40, readU40 } = require('../codec/io');

/**
 * Every check the store contract makes before a backend touches its data, and the errors it
 * answers with, in one place: a backend calls these and never words them itself, so every
 * store refuses the same input with the same code and message.
 */

// ---------------------------------------------------------------------------------------
// constructor options

/**
 * The options every store takes, checked: a known network (its name), a whole undo depth,
 * and whether the index keeps transactions (--txstore: decided when it is created; undefined
 * takes what the index says).
 * @param {{network?: string|object, undoDepth?: number, readOnly?: boolean, txstore?: boolean}} opts
 * @returns {{network: string, undoDepth: number, readOnly: boolean, txstore: boolean|undefined}}
 */
function storeOptions(opts) {
  if (!opts || typeof opts !== 'object') throw new UsageError('ERR_USAGE', 'a store takes an options object');
  if (opts.network === undefined || opts.network === null) throw new UsageError('ERR_USAGE', 'a store needs a network name');
  const network = getNetwork(opts.network).name;
  const undoDepth = opts.undoDepth === undefined ? DEFAULT_UNDO_DEPTH : opts.undoDepth;
  if (!Number.isInteger(undoDepth) || undoDepth < 0) {
    throw new UsageError('ERR_BAD_UNDO_DEPTH', `undo depth must be a whole number of blocks, got ${opts.undoDepth}`);
  }
  if (opts.txstore !== undefined && typeof opts.txstore !== 'boolean') {
    throw new UsageError('ERR_USAGE', `txstore is true, false or left out, got ${opts.txstore}`);
  }
  return { network, undoDepth, readOnly: Boolean(opts.readOnly), txstore: opts.txstore };
}

// ---------------------------------------------------------------------------------------
// arguments of the reads and writes

/**
 * @param {unknown} h
 * @param {'txid'|'script hash'} what
 * @returns {Buffer}
 */
function checkHash(h, what) {
  if (!Buffer.isBuffer(h) || h.length !== 32) {
    throw new UsageError(what === 'txid' ? 'ERR_BAD_TXID' : 'ERR_BAD_SCRIPTHASH', `a ${what} is a 32-byte Buffer`);
  }
  return h;
}

/**
 * @param {unknown} list
 * @param {string} method
 * @returns {Buffer[]}
 */
function checkHashes(list, method) {
  if (!Array.isArray(list)) throw new UsageError('ERR_BAD_SCRIPTHASH', `${method} takes an array of script hashes`);
  for (const sh of list) checkHash(sh, 'script hash');
  return list;
}

/**
 * A block hash as the contract takes it: display hex (64 digits).
 * @param {unknown} hash
 * @returns {Buffer} internal order
 */
function checkBlockHash(hash) {
  if (typeof hash !== 'string' || !/^[0-9a-fA-F]{64}$/.test(hash)) {
    throw new UsageError('ERR_BAD_BLOCK_HASH', 'a block hash is 64 hex digits');
  }
  return Buffer.from(hash, 'hex').reverse();
}

/**
 * A range of heights or TxNums: a start and a count, both whole.
 * @param {unknown} from
 * @param {unknown} count
 * @param {string} what
 * @returns {{from: number, n: number}}
 */
function checkRange(from, count, what) {
  if (!Number.isInteger(from) || from < 0 || !Number.isInteger(count) || count < 0) {
    throw new UsageError('ERR_BAD_RANGE', `a range of ${what}s is a start >= 0 and a count >= 0, got ${from} and ${count}`);
  }
  return { from, n: count };
}

/** @param {unknown} outpoints 36 bytes each: txid + vout LE */
function checkOutpoints(outpoints) {
  if (!Buffer.isBuffer(outpoints) || outpoints.length % 36 !== 0) {
    throw new UsageError('ERR_BAD_OUTPOINTS', 'outpoints must be a Buffer of 36-byte txid+vout records');
  }
  return outpoints;
}

/** @param {unknown} blocks */
function checkBlocks(blocks) {
  if (!Array.isArray(blocks)) throw new UsageError('ERR_BAD_BLOCKS', 'apply takes an array of block deltas');
  return blocks;
}

/** @param {unknown} height a revert target: -1 empties the index */
function checkRevertHeight(height) {
  if (!Number.isInteger(height) || height < -1) {
    throw new UsageError('ERR_BAD_HEIGHT', `revert takes a height >= -1, got ${height}`);
  }
  return height;
}

/** @param {unknown} seq a mempool snapshot's seq a reader holds (getMempoolChanges) */
function checkSeq(seq) {
  if (!Number.isSafeInteger(seq) || seq < 0) throw new UsageError('ERR_BAD_SEQ', `a mempool seq is an integer >= 0, got ${seq}`);
  return seq;
}

/** @param {unknown} place a mempool transaction's place in its snapshot (getMempoolRaw) */
function checkPlace(place) {
  if (!Number.isSafeInteger(place) || place < 0 || place >= 2 ** 48) throw new UsageError('ERR_BAD_PLACE', `a mempool place is an integer from 0 below 2^48, got ${place}`);
  return place;
}

/** @param {unknown} change an encoded mempool change (putMempool) */
function checkChange(change) {
  if (!Buffer.isBuffer(change)) throw new UsageError('ERR_BAD_CHANGE', 'putMempool takes an encoded mempool change (a Buffer; lib/codec/mempool.js encodeChange)');
  return change;
}

/** Whether a height or TxNum argument can name anything (reads answer null otherwise). */
const isHeight = (h) => Number.isInteger(h) && h >= 0 && h <= 0xffffffff;
const isTxNum = (t) => Number.isInteger(t) && t >= 0 && t <= MAX_TXNUM;

function parseLimit(limit) {
  if (limit === undefined || limit === null) return 50;
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError('ERR_BAD_LIMIT', `limit must be a positive integer, got ${limit}`);
  return limit;
}

function parseHeight(h, what) {
  if (h === undefined || h === null) return null;
  if (!Number.isInteger(h) || h < 0) throw new UsageError('ERR_BAD_HEIGHT', `${what} must be a height >= 0, got ${h}`);
  return h;
}

/**
 * @typedef {object} HistoryQuery
 * @property {number} limit
 * @property {boolean} desc
 * @property {number|null} after       TxNum of the cursor's last entry
 * @property {number|null} fromHeight
 * @property {number|null} toHeight
 * @property {'address'|'script'} view
 */

/**
 * @param {import('../stores/abstract').HistoryOptions} [opts]
 * @returns {HistoryQuery}
 */
function parseQuery(opts = {}) {
  const order = opts.order === undefined ? 'asc' : opts.order;
  if (order !== 'asc' && order !== 'desc') throw new UsageError('ERR_BAD_ORDER', `order is "asc" or "desc", got ${order}`);
  return {
    limit: parseLimit(opts.limit),
    desc: order === 'desc',
    after: opts.cursor === undefined || opts.cursor === null ? null : decodeCursor(opts.cursor, CURSOR_HISTORY).txNum,
    fromHeight: parseHeight(opts.fromHeight, 'fromHeight'),
    toHeight: parseHeight(opts.toHeight, 'toHeight'),
    view: parseView(opts),
  };
}

/**
 * @param {{cursor?: string, limit?: number, view?: string}} [opts]
 * @returns {{limit: number, after: {txNum: number, vout: number}|null, view: 'address'|'script'}}
 */
function parseUtxoQuery(opts = {}) {
  return {
    limit: parseLimit(opts.limit),
    after: opts.cursor === undefined || opts.cursor === null ? null : decodeCursor(opts.cursor, CURSOR_UTXO),
    view: parseView(opts),
  };
}

/**
 * Which view of a script hash a read answers (lib/core/p2pk.js): 'address' (the default: a
 * P2PK output counts toward its key's P2PKH script hash, the REST API's rule) or 'script'
 * (exactly sha256 of the output script, Electrum's).
 * @param {{view?: string}|undefined|null} opts
 * @returns {'address'|'script'}
 */
function parseView(opts) {
  const view = opts === undefined || opts === null || opts.view === undefined ? 'address' : opts.view;
  if (view !== 'address' && view !== 'script') throw new UsageError('ERR_BAD_VIEW', `view is "address" or "script", got ${view}`);
  return view;
}

/**
 * The TxNum range [lo, hi) a history query covers: its height bounds and its cursor.
 * @param {HistoryQuery} q
 * @param {(height: number) => number} firstTxNum first TxNum of a block (the next TxNum above the tip)
 */
function txNumBounds(q, firstTxNum) {
  let lo = q.fromHeight === null ? 0 : firstTxNum(q.fromHeight);
  let hi = q.toHeight === null ? Infinity : firstTxNum(q.toHeight + 1);
  if (q.after !== null) {
    if (q.desc) hi = Math.min(hi, q.after);
    else lo = Math.max(lo, q.after + 1);
  }
  return { lo, hi };
}

// cursors: base64url of a kind byte and a position; opaque to callers, the same for every store

const CURSOR_HISTORY = 0x01;
const CURSOR_UTXO = 0x02;

/** @param {number} txNum the last entry of the page */
function historyCursor(txNum) {
  const b = Buffer.allocUnsafe(6);
  b[0] = CURSOR_HISTORY;
  writeU40(b, 1, txNum);
  return b.toString('base64url');
}

/** @param {number} txNum @param {number} vout the last output of the page */
function utxoCursor(txNum, vout) {
  const b = Buffer.allocUnsafe(10);
  b[0] = CURSOR_UTXO;
  writeU40(b, 1, txNum);
  b.writeUInt32BE(vout, 6);
  return b.toString('base64url');
}

function decodeCursor(str, kind) {
  const b = typeof str === 'string' && /^[A-Za-z0-9_-]+$/.test(str) ? Buffer.from(str, 'base64url') : null;
  if (!b || b[0] !== kind || b.length !== (kind === CURSOR_HISTORY ? 6 : 10) || b.toString('base64url') !== str) {
    throw new UsageError('ERR_BAD_CURSOR', `not a ${kind === CURSOR_HISTORY ? 'history' : 'UTXO'} cursor of this index: ${String(str).slice(0, 40)}`);
  }
  const txNum = readU40(b, 1);
  return kind === CURSOR_HISTORY ? { txNum } : { txNum, vout: b.readUInt32BE(6) };
}

// ---------------------------------------------------------------------------------------
// the state of an index: open, writable, its meta, the blocks a write may add

/**
 * A stored meta record against what this run expects.
 * @param {{schemaVersion: number, network: string, txstore?: boolean}} found
 * @param {{schemaVersion: number, network: string, txstore?: boolean}} expected txstore undefined: either
 * @param {string} where the index, for messages ("LMDB datadir /x", "MongoDB database y at …")
 */
function checkMeta(found, expected, where) {
  if (found.schemaVersion !== expected.schemaVersion) {
    throw new StoreError('ERR_SCHEMA_VERSION', `${where} holds an index in schema version ${found.schemaVersion}; ` +
      `this addrindex reads version ${expected.schemaVersion}: sync into a new location (or use the addrindex release that wrote it)`,
    { found: found.schemaVersion, expected: expected.schemaVersion });
  }
  if (found.network !== expected.network) {
    throw new StoreError('ERR_WRONG_NETWORK', `${where} holds a ${found.network} index; this run asked for ${expected.network}`,
      { found: found.network, expected: expected.network });
  }
  if (expected.txstore !== undefined && Boolean(found.txstore) !== expected.txstore) {
    throw new StoreError('ERR_TXSTORE', `${where} was created ${found.txstore ? 'with' : 'without'} --txstore; ` +
      `this run asked ${expected.txstore ? 'for' : 'to do without'} it: it is chosen when an index is created ` +
      '(sync into a new location to change it)', { found: Boolean(found.txstore), expected: expected.txstore });
  }
}

/** @param {string} where */
function noIndex(where) {
  return new StoreError('ERR_NO_INDEX', `${where} holds no index yet: run "addrindex sync" first`);
}

/** @param {string} where @param {string} what what was found there instead */
function notAnIndex(where, what) {
  return new StoreError('ERR_NOT_AN_INDEX', `${where} holds ${what}, not an addrindex index`);
}

function closed() {
  return new StoreError('ERR_CLOSED', 'the store is not open');
}

/** @param {string} where */
function readOnly(where) {
  return new StoreError('ERR_READ_ONLY', `${where} was opened read-only; only the sync process writes`);
}

/** @param {string} where */
function concurrentWrite(where) {
  return new StoreError('ERR_CONCURRENT_WRITE', `another process moved the tip of ${where} while this one was writing; ` +
    'nothing was written: run one addrindex sync per index');
}

/**
 * Blocks a write may add: consecutive, the first on the tip (height, parent, TxNum).
 * @param {{height: number, hash: string, nextTxNum: number}|null} tip hash in display hex
 * @param {import('../stores/abstract').BlockDelta[]} blocks
 * @param {string} where
 */
function checkExtends(tip, blocks, where) {
  let height = tip ? tip.height + 1 : 0;
  let prev = tip ? tip.hash : null;
  let txNum = tip ? tip.nextTxNum : 0;
  for (const b of blocks) {
    const why = b.height !== height ? `its height is ${b.height}, the next is ${height}`
      : prev !== null && b.cols.prev !== prev ? `its parent is ${b.cols.prev}, the tip is ${prev}`
        : b.firstTxNum !== txNum ? `its first TxNum is ${b.firstTxNum}, the next is ${txNum}` : null;
    if (why) {
      throw new StoreError('ERR_NOT_EXTENDING', `block ${b.cols.hash} does not extend ${where}: ${why}; nothing was written`,
        { height: b.height, hash: b.cols.hash });
    }
    height++;
    prev = b.cols.hash;
    txNum += b.cols.txCount;
  }
  if (txNum - 1 > MAX_TXNUM) throw new StoreError('ERR_TXNUM_RANGE', `TxNum ${txNum - 1} does not fit the 40-bit TxNums`);
}

/**
 * A revert below the undo kept.
 * @param {string} where
 * @param {{height: number, missing: number, tip: number, undoDepth: number}} at
 */
function undoMissing(where, { height, missing, tip, undoDepth }) {
  return new StoreError('ERR_UNDO_MISSING', `cannot revert ${where} to height ${height}: undo data for ` +
    `block ${missing} is not kept (undo is kept for the last ${undoDepth} blocks below the tip, ${tip}, ` +
    `and only for blocks within ${undoDepth} of the best chain known when they were indexed). ` +
    'Re-sync into a new location, or sync with a larger --undo-depth to follow reorgs this deep',
  { height, missing, tip, undoDepth });
}

/**
 * Rows or documents that contradict each other: the index is damaged.
 * @param {string} what
 * @param {object} [details]
 */
function corrupt(what, details) {
  return new StoreError('ERR_CORRUPT', `${what}: the index is damaged or was written by another chain; ` +
    'run "addrindex verify" and re-sync into a new location', details);
}

module.exports = {
  storeOptions,
  checkHash, checkHashes, checkBlockHash, checkRange, checkOutpoints, checkBlocks, checkRevertHeight, checkSeq, checkPlace, checkChange, isHeight, isTxNum,
  parseLimit, parseQuery, parseUtxoQuery, parseView, txNumBounds,
  historyCursor, utxoCursor, decodeCursor, CURSOR_HISTORY, CURSOR_UTXO,
  checkMeta, noIndex, notAnIndex, closed, readOnly, concurrentWrite, checkExtends, undoMissing, corrupt,
};
