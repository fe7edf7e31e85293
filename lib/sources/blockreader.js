'use strict';

const { SourceError, ParseError, StoreError, CodecError } = require('../errors');
const { getNetwork } = require('../chain/networks');
const { parseBlock } = require('../chain/block');
const { parseTransaction } = require('../chain/tx');
const { sha256d, toDisplayHex } = require('../chain/hash');
const { HEADER_SIZE } = require('../chain/header');
const { readXorKey } = require('./xor');
const { BlkHandles } = require('./handles');
const { RECORD_HEADER_SIZE, MAX_BLOCK_SIZE } = require('./blkfile');

/**
 * Where a block's bytes lie in a Bitcoin Core blocks dir: what sync records for each block.
 * @typedef {object} BlockLocator
 * @property {number} file   blk file number (blk00042.dat → 42)
 * @property {number} offset where the block starts in the file (after its 8-byte record header)
 * @property {number} length block size in bytes
 */

/**
 * @typedef {object} ReadBlock
 * @property {string} hash
 * @property {Buffer} raw the block's bytes
 * @property {import('../chain/block').Block} block parsed, merkle root checked
 * @property {'index'|'file'|'node'} from where the bytes came from (a cached block keeps its origin)
 */

/**
 * Reads whole blocks by hash, for serving transactions and blocks: from the index itself when
 * it keeps them (--txstore), else from the blk file and offset sync recorded, else (or when
 * that file no longer holds the block) from a node.
 *
 * A block is returned only when its header hashes to the hash asked for and its transactions
 * hash to the header's merkle root, whatever the source: a pruned, reindexed or moved blk file
 * can make a locator point at other bytes, and a wrong transaction must never be served.
 * When no source can deliver, the error is a SourceError with code ERR_BLOCK_UNAVAILABLE
 * (details.reasons says why for each source tried), which an API answers with 503.
 *
 * Parsed blocks stay in an LRU bounded by bytes (raw size plus an estimate of the parsed
 * objects, measured by bench/txformat.js); concurrent reads of one block share one read.
 */
const SOURCE_NAME = { index: 'the index', file: 'the recorded location', node: 'the node' };

class BlockReader {
  /**
   * @param {object} opts
   * @param {string|null} [opts.dir] the blocks dir (null: node only)
   * @param {string|import('../chain/networks').Network} [opts.network='main']
   * @param {number} [opts.maxBytes=64 MiB] cache budget
   * @param {number} [opts.maxOpenFiles=8]
   * @param {((hash: string) => Promise<Buffer|string>)|null} [opts.fetchFromNode] the node
   *   fallback, e.g. `getblock HASH 0` over JSON-RPC: raw bytes or their hex
   * @param {number} [opts.headerTtlMs=10000] readTx: how long a header checked at a place is
   *   trusted without reading it again (0: read it every time)
   * @param {((hash: string) => Promise<Buffer|null>)|null} [opts.fromIndex] the block's bytes as
   *   an index synced with --txstore keeps them (null: not kept); tried first
   */
  constructor({ dir = null, network = 'main', maxBytes = 64 << 20, maxOpenFiles = 8, fetchFromNode = null, headerTtlMs = 10000, fromIndex = null } = {}) {
    this.dir = dir;
    this.fromIndex = fromIndex;
    this.network = getNetwork(network);
    this.maxBytes = maxBytes;
    this.fetchFromNode = fetchFromNode;
    this.handles = dir ? new BlkHandles(dir, maxOpenFiles) : null;
    /** @type {Map<string, {entry: ReadBlock, cost: number}>} least recently used first */
    this.cache = new Map();
    this.cachedBytes = 0;
    /** @type {Map<string, Promise<ReadBlock>>} reads under way */
    this.pending = new Map();
    this.key = undefined;
    this.stats = { hits: 0, indexReads: 0, fileReads: 0, nodeReads: 0, mismatches: 0, txReads: 0, txMisses: 0, headerReads: 0 };
    /** @type {Map<string, {hash: string, at: number}>} "file:offset" -> the header found there lately */
    this.headers = new Map();
    this.headerTtlMs = headerTtlMs;
    this.closed = false;
  }

  /**
   * The block with this hash.
   * @param {string} hash display hex
   * @param {BlockLocator|null} [locator] where sync saw it in the blocks dir
   * @returns {Promise<ReadBlock>}
   * @throws {SourceError} ERR_BLOCK_UNAVAILABLE
   */
  async read(hash, locator = null) {
    if (this.closed) throw new SourceError('ERR_SOURCE_CLOSED', 'the block reader is closed');
    if (typeof hash !== 'string' || !/^[0-9a-f]{64}$/.test(hash)) {
      throw new SourceError('ERR_BAD_HASH', `not a block hash (64 lower-case hex digits): ${String(hash).slice(0, 80)}`);
    }
    const hit = this.cache.get(hash);
    if (hit) {
      this.cache.delete(hash); // re-insert: most recently used last
      this.cache.set(hash, hit);
      this.stats.hits++;
      return hit.entry;
    }
    let p = this.pending.get(hash);
    if (!p) {
      p = this._load(hash, locator).finally(() => this.pending.delete(hash));
      this.pending.set(hash, p);
    }
    return p;
  }

  async _load(hash, locator) {
    const reasons = [];
    if (this.fromIndex) {
      // checked like any other source: the bytes were the sync's, but a damaged row must not
      // become a wrong answer
      try {
        const raw = await this.fromIndex(hash);
        if (raw) {
          this.stats.indexReads++;
          return this._remember(hash, raw, 'index');
        }
        reasons.push({ source: 'index', code: 'ERR_NOT_KEPT', message: 'the index does not hold this block' });
      } catch (err) {
        if (!(err instanceof SourceError || err instanceof ParseError || err instanceof StoreError || err instanceof CodecError)) throw err;
        reasons.push({ source: 'index', code: err.code, message: err.message });
      }
    }
    if (locator && this.dir) {
      try {
        const raw = await this._readFile(locator);
        this.stats.fileReads++;
        return this._remember(hash, raw, 'file');
      } catch (err) {
        if (!(err instanceof SourceError || err instanceof ParseError)) throw err;
        if (err.code === 'ERR_BLOCK_MISMATCH') this.stats.mismatches++;
        this.headers.delete(`${locator.file}:${locator.offset}`); // whatever was seen there lately is gone
        reasons.push({ source: 'file', code: err.code, message: err.message });
      }
    } else {
      reasons.push({ source: 'file', code: 'ERR_NO_LOCATOR', message: locator ? 'no blocks dir' : 'no recorded location' });
    }
    if (this.fetchFromNode) {
      try {
        let raw = await this.fetchFromNode(hash);
        if (typeof raw === 'string') raw = Buffer.from(raw, 'hex');
        if (!Buffer.isBuffer(raw)) throw new SourceError('ERR_NODE_ANSWER', 'the node returned neither bytes nor hex');
        this.stats.nodeReads++;
        return this._remember(hash, raw, 'node');
      } catch (err) {
        reasons.push({ source: 'node', code: err.code || 'ERR_NODE', message: err.message });
      }
    }
    throw new SourceError('ERR_BLOCK_UNAVAILABLE',
      `block ${hash} cannot be read: ${reasons.map((r) => `${r.source}: ${r.message}`).join('; ')}`, { hash, reasons });
  }

  async _readFile(locator) {
    checkLocator(locator);
    return this._readRange(locator.file, locator.offset, locator.length);
  }

  async _readRange(file, pos, length) {
    if (this.key === undefined) this.key = await readXorKey(this.dir);
    const name = blkName(file);
    try {
      return await this.handles.use(file, name, this.key, (blk) => blk.read(pos, length));
    } catch (err) {
      if (err instanceof SourceError) throw err;
      throw new SourceError('ERR_NO_FILE', `${name}: ${err.message}`, { file });
    }
  }

  /** Checks the bytes are the block asked for, parses them and caches the result. */
  _remember(hash, raw, from) {
    if (raw.length < HEADER_SIZE || toDisplayHex(sha256d(raw.subarray(0, HEADER_SIZE))) !== hash) {
      const what = raw.length < HEADER_SIZE ? `${raw.length} bytes` : `block ${toDisplayHex(sha256d(raw.subarray(0, HEADER_SIZE)))}`;
      throw new SourceError('ERR_BLOCK_MISMATCH', `${SOURCE_NAME[from]} holds ${what}, not block ${hash}`, { hash });
    }
    const block = parseBlock(raw); // checks the merkle root: the transactions are this header's
    const entry = { hash, raw, block, from };
    const cost = estimateCost(block);
    if (cost <= this.maxBytes) {
      this.cache.set(hash, { entry, cost });
      this.cachedBytes += cost;
      for (const [h, c] of this.cache) {
        if (this.cachedBytes <= this.maxBytes) break;
        this.cache.delete(h);
        this.cachedBytes -= c.cost;
      }
    }
    return entry;
  }

  /**
   * One transaction, read alone from its place in its block (an offset table's entry): taken
   * when the header at the locator hashes to `blockHash` and the bytes at the place hash to
   * `txid`. Both are needed: the txid does not cover the witness, and only the block's header
   * (through its merkle root and witness commitment) pins the witness this block holds. When
   * either check fails or the bytes cannot be read, the whole block is read (and checked) as
   * read() does and the transaction taken from it. A few hundred bytes instead of a block.
   *
   * A header checked at a place within the last `headerTtlMs` is not read again (a page of
   * transactions and their funding transactions hits the same blocks; on a cold disk the
   * header is a second random read per transaction). The transaction's bytes must still hash
   * to its txid, so a file rewritten in those seconds goes unnoticed only if the same
   * transaction lies at the very same place of the rewritten file with another witness.
   * @param {string} txid display hex
   * @param {string} blockHash display hex
   * @param {BlockLocator|null} locator
   * @param {{offset: number, length: number, position?: number}|null} place the transaction's
   *   bytes within the block; with `position` (its index in the block) a cached block is not searched
   * @returns {Promise<{tx: import('../chain/tx').Tx, from: 'tx'|'file'|'node'}>}
   * @throws {SourceError} ERR_BLOCK_UNAVAILABLE, or ERR_TX_NOT_IN_BLOCK when the (checked)
   *   block does not hold the transaction
   */
  async readTx(txid, blockHash, locator, place) {
    if (this.closed) throw new SourceError('ERR_SOURCE_CLOSED', 'the block reader is closed');
    const cached = this.cache.get(blockHash);
    if (cached && place && Number.isInteger(place.position)) {
      const tx = cached.entry.block.txs[place.position];
      if (tx && tx.hash === txid) {
        this.stats.hits++;
        return { tx, from: cached.entry.from };
      }
    }
    if (!cached && locator && place && this.dir && Number.isInteger(place.offset) && Number.isInteger(place.length) &&
        place.offset >= HEADER_SIZE + 1 && place.length >= 60 && place.offset + place.length <= locator.length) {
      try {
        checkLocator(locator);
        const where = `${locator.file}:${locator.offset}`;
        const seen = this.headers.get(where);
        const fresh = seen !== undefined && Date.now() - seen.at < this.headerTtlMs;
        // the header (unless checked there lately) and the transaction: small reads, issued together
        const [head, raw] = await Promise.all([
          fresh ? null : this._readRange(locator.file, locator.offset, HEADER_SIZE),
          this._readRange(locator.file, locator.offset + place.offset, place.length),
        ]);
        let found = fresh ? seen.hash : null;
        if (head) {
          this.stats.headerReads++;
          found = toDisplayHex(sha256d(head));
          this._noteHeader(where, found);
        }
        const tx = found === blockHash ? parseTransaction(raw) : null;
        if (tx && tx.hash === txid) {
          this.stats.txReads++;
          return { tx, from: 'tx' };
        }
      } catch (err) {
        if (!(err instanceof SourceError || err instanceof ParseError)) throw err;
      }
      this.stats.txMisses++;
    }
    const { block, from } = await this.read(blockHash, locator);
    const tx = block.txs.find((t) => t.hash === txid);
    if (!tx) throw new SourceError('ERR_TX_NOT_IN_BLOCK', `block ${blockHash} does not hold transaction ${txid}`, { txid, blockHash });
    return { tx, from };
  }

  /** Remembers which block's header a place held when it was last read. */
  _noteHeader(where, hash) {
    this.headers.delete(where);
    this.headers.set(where, { hash, at: Date.now() });
    if (this.headers.size > HEADER_MEMORY) this.headers.delete(this.headers.keys().next().value);
  }

  /** Forgets every cached block. */
  clear() {
    this.headers.clear();
    this.cache.clear();
    this.cachedBytes = 0;
  }

  async close() {
    this.closed = true;
    this.clear();
    if (this.handles) await this.handles.closeAll();
  }
}

/** Places whose header readTx remembers (a few hundred bytes each). */
const HEADER_MEMORY = 4096;

// What a parsed block holds beyond its raw bytes, per object (measured on node 20 by
// bench/txformat.js: a Tx with its two arrays, a TxInput or TxOutput with its Buffer view).
const TX_COST = 260;
const IO_COST = 180;

/**
 * Bytes a parsed block keeps alive: its raw bytes plus the parsed objects.
 * @param {import('../chain/block').Block} block
 * @returns {number}
 */
function estimateCost(block) {
  let ios = 0;
  for (const tx of block.txs) ios += tx.inputs.length + tx.outputs.length;
  return block.size + TX_COST * block.txs.length + IO_COST * ios;
}

/** Throws ERR_BAD_LOCATOR unless `loc` can point at a block. */
function checkLocator(loc) {
  const { file, offset, length } = loc;
  if (!Number.isInteger(file) || file < 0 || !Number.isSafeInteger(offset) || offset < RECORD_HEADER_SIZE ||
      !Number.isInteger(length) || length <= HEADER_SIZE || length > MAX_BLOCK_SIZE) {
    throw new SourceError('ERR_BAD_LOCATOR', `not a block location: file ${file}, offset ${offset}, length ${length}`);
  }
}

/** @param {number} file @returns {string} blk00042.dat for 42 */
function blkName(file) {
  return `blk${String(file).padStart(5, '0')}.dat`;
}

module.exports = { BlockReader, estimateCost };
