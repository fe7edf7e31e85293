'use strict';

const { storeOptions } = require('../core/checks');

/**
 * The store contract. Every backend (lmdb.js, level.js, mongo.js) implements exactly these
 * operations with exactly these promises, and test/stores/conformance.js runs the same suite
 * against each one, so a backend cannot quietly skip a behaviour.
 *
 * Identity: every indexed output is filed under its Electrum script hash (32 bytes, internal
 * order: sha256 of the canonical scriptPubKey; P2PK counts as its key's P2PKH script). Address
 * strings are decoded to that hash before they reach a store; stores never see addresses.
 *
 * Views: the per-script-hash reads answer in one of two views (`opts.view`, lib/core/p2pk.js).
 * 'address' (the default, the REST API's): a P2PKH script hash counts the P2PK outputs of its
 * key too. 'script' (Electrum's): a script hash means exactly sha256 of the output script, so a
 * P2PKH script hash answers without them. A P2PK script's own hash answers its own outputs in
 * both; every other script hash answers the same in both.
 *
 * TxNum: every transaction of the best chain has a global number in chain order (genesis
 * coinbase = 0). History and UTXO rows hold TxNums, never 32-byte txids.
 */

/**
 * A block ready to apply: the parsed columns plus, for every input, the output it spends.
 * Built by lib/sync from a BlockColumns and prevouts resolved from the batch or the store.
 *
 * @typedef {object} BlockDelta
 * @property {number} height
 * @property {number} firstTxNum  TxNum of the block's coinbase; must equal the store's next TxNum
 * @property {import('../chain/columns').BlockColumns} cols
 *   the block (hash, prev, time, txids, inStart/outStart, prevouts, values, idType, scripthashes)
 * @property {SpentOutputs} spent  aligned with cols' inputs (input i of the block = index i)
 * @property {{file: number, offset: number, length: number}|null} [locator] where its bytes lie in
 *   the blocks dir the sync read (null when they came from a node)
 * @property {Buffer} [raw] the block's bytes: given when the store keeps transactions (--txstore)
 */

/**
 * The outputs a block's inputs spend, one entry per input, as flat arrays.
 * @typedef {object} SpentOutputs
 * @property {Float64Array} values        satoshis
 * @property {Buffer} scripthashes        32 bytes per input; all zero when the spent output was not indexed
 * @property {Map<number, Buffer>} [p2pk] by input: the spent output's own script hash when it is a
 *   P2PK output (absent or empty: none is)
 * @property {Uint32Array} heights        height of the block that created the spent output
 * @property {Float64Array} txNums        TxNum of the transaction that created it
 */

/**
 * What the store says about one outpoint it holds unspent.
 * @typedef {object} Prevout
 * @property {number} value
 * @property {Buffer} scripthash   32 bytes (zero when the output is not indexed)
 * @property {Buffer|null} p2pk    a P2PK output's own script hash (its scripthash is the key's P2PKH one), else null
 * @property {number} height
 * @property {number} txNum
 */

/**
 * @typedef {object} Tip
 * @property {number} height
 * @property {string} hash        display hex
 * @property {number} nextTxNum   the TxNum the next block's coinbase gets
 */

/**
 * Balance and counters of one script hash, kept current on every block (one read answers it).
 * @typedef {object} Summary
 * @property {number} balance      received - sent, satoshis
 * @property {number} received     sum of all outputs paying it
 * @property {number} sent         sum of its outputs that were spent
 * @property {number} txCount      distinct transactions in its history
 * @property {number} fundedCount  outputs paying it (Esplora's funded_txo_count)
 * @property {number} spentCount   those outputs spent (spent_txo_count)
 * @property {number} utxoCount    fundedCount - spentCount
 * @property {number} firstHeight
 * @property {number} lastHeight
 */

/**
 * One history entry: a transaction that funds and/or spends the script hash.
 * @typedef {object} HistoryEntry
 * @property {number} txNum
 * @property {Buffer} txid     32 bytes, internal order
 * @property {number} height
 * @property {boolean} funded  the tx has an output paying the script hash
 * @property {boolean} spent   the tx spends an output of the script hash
 */

/**
 * @typedef {object} HistoryOptions
 * @property {string} [cursor]      opaque, from a previous page's `next`; resumes after the last entry returned
 * @property {number} [limit=50]
 * @property {number} [fromHeight]  inclusive
 * @property {number} [toHeight]    inclusive
 * @property {'asc'|'desc'} [order='asc']  chain order or newest first
 * @property {'address'|'script'} [view='address']  see "Views" above
 */

/**
 * @typedef {object} Utxo
 * @property {Buffer} txid   32 bytes, internal order
 * @property {number} vout
 * @property {number} value
 * @property {number} height
 * @property {number} txNum
 */

/**
 * Where a transaction sits.
 * @typedef {object} TxLocation
 * @property {number} txNum
 * @property {Buffer} txid
 * @property {number} height
 * @property {string} blockHash  display hex
 * @property {number} position   index within its block
 * @property {number} offset     its first byte within the block's bytes
 * @property {number} length     its bytes
 */

/**
 * A block of the index.
 * @typedef {object} Block
 * @property {number} height
 * @property {string} hash        display hex
 * @property {number} time
 * @property {number} firstTxNum
 * @property {number} txCount
 * @property {Buffer} header      80 bytes
 * @property {number} size        bytes
 * @property {number} weight      BIP141
 * @property {{file: number, offset: number, length: number}|null} locator  where the sync read it in a
 *   blocks dir (blk file number, offset of the block's bytes, their length); null when it came from a node
 */

class AbstractStore {
  /**
   * The share of `--cache-mb` one batch holds while the sync catches up (catchUpLimits): an
   * eighth, where a group of batches commits together and its pages are the cache, and on
   * LevelDB, where every batch is a commit of its own and lands whole in its memory table. A
   * larger LevelDB batch writes less (a row two batches change is written once) but holds
   * more of the process's memory; since the sync hands the allocator's free pages back after
   * each batch, 32 MiB against 16 went 17,244-17,309 against 15,158 tx/s on the 5M chain in
   * 1 GiB, and 17,352-19,300 against 18,498 on the 10M chain in 2 GiB, within the noise
   * (docs/SCALING.md, session 16); before that, 32 MiB ran slower in both.
   */
  static catchUpBatchShare = 8;

  /**
   * @param {object} opts
   * @param {string} opts.network         network name; a datadir of another network refuses to open
   * @param {number} [opts.undoDepth=100] blocks of undo data kept (the deepest reorg possible)
   * @param {boolean} [opts.readOnly=false] open for reading beside a writer in another process
   * @param {boolean} [opts.txstore] keep the blocks' transactions (chosen when the index is created;
   *   undefined takes what an existing index says)
   */
  constructor(opts) {
    // checked once for every backend (lib/core/checks.js): a bad network or undo depth is
    // the same UsageError whichever store is asked
    const { network, undoDepth, readOnly, txstore } = storeOptions(opts);
    this.opts = opts;
    /** @type {string} the network's name */
    this.network = network;
    /** @type {number} blocks of undo kept; SyncService reads the deepest reorg it can follow from it */
    this.undoDepth = undoDepth;
    /** @type {boolean} */
    this.readOnly = readOnly;
    /** @type {boolean|undefined} what this run asked about --txstore (undefined: the index decides) */
    this.txstoreAsked = txstore;
    /** @type {boolean} whether the index keeps its blocks' transactions (set on open, from its meta) */
    this.keepsTransactions = false;
  }

  /**
   * Where the index lives, for messages ("LMDB datadir /x").
   * @returns {string}
   */
  describe() { throw new Error('Abstract method.'); }

  /**
   * Opens (creating when empty and writable). Rejects with StoreError ERR_WRONG_NETWORK for a
   * datadir of another network, ERR_SCHEMA_VERSION for another format version.
   * @returns {Promise<void>}
   */
  async open() { throw new Error('Abstract method.'); }

  /** @returns {Promise<void>} */
  async close() { throw new Error('Abstract method.'); }

  /**
   * The last applied block, or null for an empty index.
   * @returns {Promise<Tip|null>}
   */
  async getTip() { throw new Error('Abstract method.'); }

  /**
   * The best-chain block hash at a height the index holds, else null.
   * @param {number} height
   * @returns {Promise<string|null>}
   */
  async getBlockHash(height) { throw new Error('Abstract method.'); }

  /**
   * A block of the index by height.
   * @param {number} height
   * @returns {Promise<Block|null>}
   */
  async getBlock(height) { throw new Error('Abstract method.'); }

  /**
   * A block of the index by hash.
   * @param {string} hash display hex
   * @returns {Promise<Block|null>}
   */
  async getBlockByHash(hash) { throw new Error('Abstract method.'); }

  /**
   * The 80-byte headers of heights [from, from + count), fewer past the tip.
   * @param {number} from
   * @param {number} count
   * @returns {Promise<Buffer>} 80 bytes each
   */
  async getHeaders(from, count) { throw new Error('Abstract method.'); }

  /**
   * The txids of TxNums [from, from + count), fewer past the tip (a block's: its firstTxNum
   * and txCount).
   * @param {number} from
   * @param {number} count
   * @returns {Promise<Buffer>} 32 bytes each, internal order
   */
  async getTxids(from, count) { throw new Error('Abstract method.'); }

  /**
   * The bytes of a block, when the index keeps its transactions (--txstore); else null.
   * @param {number} height
   * @returns {Promise<Buffer|null>}
   */
  async getBlockBytes(height) { throw new Error('Abstract method.'); }

  /**
   * Who spent the outputs of a transaction: one entry per spent indexed output, in vout order
   * (vin null: a coinbase that reused the txid took it, BIP30). null when the index has no
   * such transaction.
   * @param {Buffer} txid 32 bytes, internal order
   * @returns {Promise<Array<{vout: number, txNum: number, txid: Buffer, vin: number|null, height: number}>|null>}
   */
  async getSpenders(txid) { throw new Error('Abstract method.'); }

  /**
   * The script hashes a block touched (its outputs' and those its inputs spent) whose answers in
   * the view asked it changed, kept for the blocks whose undo is kept; null for a block below
   * them or above the tip. In the script view, a P2PK output touches its own script hash and not
   * its key's P2PKH one; in the address view, both.
   * @param {number} height
   * @param {{view?: 'address'|'script'}} [opts]
   * @returns {Promise<Buffer|null>} 32 bytes each, internal order
   */
  async getTouched(height, opts) { throw new Error('Abstract method.'); }

  /**
   * Looks up unspent outputs by outpoint, for resolving inputs during sync.
   * @param {Buffer} outpoints  36 bytes each: txid (internal order) + vout (uint32 LE)
   * @param {{indexed?: boolean}} [opts] indexed: the caller knows every outpoint's transaction
   *   is in the index (the inputs of valid blocks: a sync's lookup), so a store may skip checks
   *   that only tell an unknown txid apart (the key-value stores: the full-txid read behind a
   *   unique prefix), and may keep what it read for the apply that follows (the key-value
   *   stores do, until that apply); other lookups (a mempool follower's) keep nothing
   * @returns {Promise<Array<Prevout|null>>} null where the store holds no such unspent output
   */
  async getPrevouts(outpoints, opts) { throw new Error('Abstract method.'); }

  /**
   * Applies blocks in order, in one atomic commit that also moves the tip to the last one:
   * after a crash the store holds all of them or none. Each block must extend the tip
   * (prev = tip hash, height = tip height + 1, firstTxNum = tip nextTxNum), else StoreError
   * ERR_NOT_EXTENDING and nothing is written. Keeps undo data for the last `undoDepth` blocks;
   * given the source's best height, may write none for blocks further than `undoDepth` below
   * it (lib/core/rules.js undoFloor: the key-value stores do; MongoDB's writer needs its undo
   * documents to finish an interrupted apply and writes them all).
   * @param {BlockDelta[]} blocks
   * @param {{chainHeight?: number}} [opts] chainHeight: the best chain's height, as the source said
   * @returns {Promise<void>}
   */
  async apply(blocks, opts) { throw new Error('Abstract method.'); }

  /**
   * A hint from a writer with no readers in its own process: the applies until endBulk() may
   * be committed as one (still atomic with their tip: after a crash the store holds the
   * blocks up to a commit, never part of one). A store that gains nothing from it ignores it,
   * which is what this base does. Meanwhile this process's own reads may see the group's
   * uncommitted blocks; other processes see only commits.
   *
   * `whole`: the group is a reorg's revert and the new branch it leads to, which readers must
   * see together or not at all. A store whose group is one commit has nothing more to do; one
   * whose group is several commits makes its readers wait while it is open (untilGroupEnds()
   * for readers in this process; MongoDB: a marker other processes' readers wait on).
   * @param {{whole?: boolean}} [opts]
   * @returns {Promise<void>}
   */
  async beginBulk(opts) {}

  /**
   * A hint from the writer: these blocks are the next to be applied (after the ones being
   * applied now). A store that can read what they will need ahead of time starts doing so
   * and returns a promise that settles (never rejects) when it is done; the writer waits for
   * it before applying them. Null when the store does nothing, which is what this base does.
   * @param {BlockDelta[]|Array<{cols: object}>} blocks parsed, not yet resolved
   * @returns {Promise<void>|null}
   */
  prefetch(blocks) {
    return null;
  }

  /**
   * Ends what beginBulk() opened: commits the group, or with `{commit: false}` discards it
   * (the store is then back at the last commit). Nothing to do when no group is open.
   * @param {{commit?: boolean}} [opts]
   * @returns {Promise<void>}
   */
  async endBulk(opts) {}

  /**
   * Resolves once no `whole` bulk group is open in this process (at once when none is). A
   * store whose groups are not one commit (LevelDB) shows a group's blocks one by one to reads
   * in the writer's own process; one that reads on behalf of others there (serve's primary
   * answering its workers, lib/cluster/forward.js) waits on this first, so that a reorg's revert
   * and its new branch reach those readers together: the old tip's answers or the new tip's,
   * never the fork point's. The writer's own reads do not wait.
   * @returns {Promise<void>}
   */
  untilGroupEnds() {
    return Promise.resolve();
  }

  /**
   * Reverts blocks above `height` exactly (the index equals one that never saw them), in one
   * atomic commit. StoreError ERR_UNDO_MISSING when undo for a block is no longer kept.
   * @param {number} height
   * @returns {Promise<void>}
   */
  async revert(height) { throw new Error('Abstract method.'); }

  /**
   * @param {Buffer} scripthash
   * @param {{view?: 'address'|'script'}} [opts]
   * @returns {Promise<Summary|null>} null when the script hash has no history (in that view)
   */
  async getSummary(scripthash, opts) { throw new Error('Abstract method.'); }

  /**
   * @param {Buffer[]} scripthashes
   * @param {{view?: 'address'|'script'}} [opts]
   * @returns {Promise<Array<Summary|null>>}
   */
  async getSummaries(scripthashes, opts) { throw new Error('Abstract method.'); }

  /**
   * One page of a script hash's history in chain order (or reversed).
   * @param {Buffer} scripthash
   * @param {HistoryOptions} [opts]
   * @returns {Promise<{entries: HistoryEntry[], next: string|null}>}
   */
  async getHistory(scripthash, opts) { throw new Error('Abstract method.'); }

  /**
   * The histories of several script hashes merged into one chain-ordered list (a tx touching
   * several of them appears once, with `scripthashes` naming which), paged by one cursor.
   * @param {Buffer[]} scripthashes
   * @param {HistoryOptions} [opts]
   * @returns {Promise<{entries: Array<HistoryEntry & {scripthashes: Buffer[]}>, next: string|null}>}
   */
  async getHistories(scripthashes, opts) { throw new Error('Abstract method.'); }

  /**
   * Unspent outputs of a script hash in chain order.
   * @param {Buffer} scripthash
   * @param {{cursor?: string, limit?: number, view?: 'address'|'script'}} [opts]
   * @returns {Promise<{utxos: Utxo[], next: string|null}>}
   */
  async getUtxos(scripthash, opts) { throw new Error('Abstract method.'); }

  /**
   * @param {Buffer} txid 32 bytes, internal order
   * @returns {Promise<TxLocation|null>}
   */
  async getTx(txid) { throw new Error('Abstract method.'); }

  /**
   * @param {number} txNum
   * @returns {Promise<Buffer|null>} the txid (internal order)
   */
  async getTxid(txNum) { throw new Error('Abstract method.'); }

  /**
   * Records where the sync reads its blocks (e.g. `{blocksDir: '/abs/path'}`), so a server
   * started later finds them. Not chain data.
   * @param {object} info a small JSON object
   * @returns {Promise<void>}
   */
  async putSourceInfo(info) { throw new Error('Abstract method.'); }

  /**
   * What putSourceInfo last recorded, or null.
   * @returns {Promise<object|null>}
   */
  async getSourceInfo() { throw new Error('Abstract method.'); }

  /**
   * Stores what one poll of the mempool follower changed (an encoded lib/codec/mempool.js
   * change: the transactions that leave, those that enter or changed, the new head), only
   * while the confirmed tip is still the one the change names; false, and nothing written,
   * when the tip has moved. The rows, the change and the head are written together: a reader
   * sees the snapshot before it or after it. The snapshot is not chain data: confirmed rows,
   * digest() and verify() never see it (docs/FORMAT.md, `M` rows).
   * @param {Buffer} change
   * @returns {Promise<boolean>}
   * @throws {StoreError} ERR_MEMPOOL_SEQ when the change does not apply to the stored snapshot
   *   (its `prev` is not the stored seq, and it is no reset)
   */
  async putMempool(change) { throw new Error('Abstract method.'); }

  /**
   * The stored snapshot's head (cheap: readers read it on every request), or null when there
   * is none. `from`: the lowest seq a reader may hold and catch up from by getMempoolChanges.
   * @returns {Promise<{seq: number, tip: string, count: number, vsize: number, fee: number, evicted: number, from: number}|null>}
   *   tip in display hex
   */
  async getMempoolHead() { throw new Error('Abstract method.'); }

  /**
   * The whole stored snapshot (lib/codec/mempool.js encodeWhole: every transaction's place and
   * part, in place order), or null: what a reader that holds nothing, or fell behind, reads.
   * @param {{raws?: boolean}} [opts] raws: each part followed by its transaction's bytes (what
   *   a follower starting again takes; readers read the bytes when an answer needs them)
   * @returns {Promise<Buffer|null>}
   */
  async getMempool(opts) { throw new Error('Abstract method.'); }

  /**
   * The bytes of the mempool transaction `txid` that the snapshot holds at `place`, or null when
   * that place holds it no more: it left longer ago than the changes kept (LMDB, LevelDB), or
   * left at all (MongoDB).
   * @param {number} place its place (rank) in the snapshot
   * @param {Buffer} txid 32 bytes, internal order
   * @returns {Promise<Buffer|null>}
   */
  async getMempoolRaw(place, txid) { throw new Error('Abstract method.'); }

  /**
   * The stored changes that lead from snapshot `after` to the head's, in order; [] when `after`
   * is the head's seq; null when a reader at `after` must read the whole (they are no longer
   * kept, or one was too large to keep).
   * @param {number} after
   * @returns {Promise<Buffer[]|null>}
   */
  async getMempoolChanges(after) { throw new Error('Abstract method.'); }

  /**
   * Row counts and sizes, for `addrindex status` and the benchmarks.
   * @returns {Promise<Stats>}
   */
  async stats() { throw new Error('Abstract method.'); }

  /**
   * The storage engine's own readings, cheap enough for every metrics scrape (stats() walks
   * the index; this does not): `store` names the backend; LMDB adds `mapBytes` (the map's
   * size) and `usedBytes` (pages up to the last one written); other engines what they count.
   * @returns {Promise<{store: string, mapBytes?: number, usedBytes?: number, [reading: string]: unknown}>}
   */
  async engineStats() { throw new Error('Abstract method.'); }

  /**
   * Walks the whole index for `addrindex verify`: the chain of blocks, txid⇄TxNum both ways,
   * and every summary recomputed from its history and UTXOs (lib/core/verify.js).
   * @param {{maxProblems?: number}} [opts] problems listed (default 20); the rest are counted
   * @returns {Promise<VerifyResult>}
   */
  async verify(opts) { throw new Error('Abstract method.'); }

  /**
   * A SHA-256 over every logical record of the index in a fixed order, so two indexes of the
   * same chain in the same store have equal digests however they got there (batches, crashes,
   * restarts, reorgs). Undo records are included unless `undo: false`: they are the one thing a
   * path can change, since a revert deeper than the undo kept cannot recreate undo pruned
   * earlier.
   * @param {{undo?: boolean}} [opts]
   * @returns {Promise<string>} hex
   */
  async digest(opts) { throw new Error('Abstract method.'); }

  // ---- bitcore v8 wallets (lib/core/wallets.js): not chain data; digest() and verify() never
  // see them. One process writes them (serve's primary: lib/cluster/wallet-writes.js).

  /**
   * Creates a wallet unless one with its pubKey exists (then that one is answered, unchanged).
   * @param {{pubKey: string, name: string, path?: string, singleAddress?: boolean, chain: string, network: string}} fields
   * @returns {Promise<{wallet: import('../core/wallets').Wallet, created: boolean}>}
   * @throws {import('../errors').UsageError} ERR_WALLET_FIELD
   */
  async createWallet(fields) { throw new Error('Abstract method.'); }

  /**
   * Adds addresses to a wallet, after those it holds; one it holds already (same script hash)
   * is left where it is.
   * @param {string} pubKey
   * @param {import('../core/wallets').WalletAddress[]} entries
   * @returns {Promise<{wallet: import('../core/wallets').Wallet, added: number}|null>} null: no such wallet
   */
  async addWalletAddresses(pubKey, entries) { throw new Error('Abstract method.'); }

  /**
   * @param {string} pubKey
   * @returns {Promise<import('../core/wallets').Wallet|null>}
   */
  async getWallet(pubKey) { throw new Error('Abstract method.'); }

  /**
   * A wallet's addresses in the order they were added, `limit` of them from position `from`.
   * @param {string} walletId
   * @param {{from?: number, limit?: number}} [opts]
   * @returns {Promise<{addresses: import('../core/wallets').WalletAddress[], next: number|null}>}
   *   next: the position to ask from for the rest, null when there is none
   */
  async getWalletAddresses(walletId, opts) { throw new Error('Abstract method.'); }

  /**
   * The wallets that hold each script hash (the live feed's wallet rooms).
   * @param {Buffer[]} scripthashes
   * @returns {Promise<Array<Array<{id: string, pubKey: string}>>>} aligned with scripthashes
   */
  async getWalletsOf(scripthashes) { throw new Error('Abstract method.'); }
}

/**
 * @typedef {object} Stats
 * @property {'lmdb'|'level'|'mongo'} store
 * @property {Tip|null} tip
 * @property {Object<string, {rows: number, bytes: number}>} tables  per table (key-value) or
 *   collection (MongoDB): rows and their logical bytes (keys and values, or BSON documents)
 * @property {number} bytes           the logical bytes of every table
 * @property {number} diskBytes       what the index takes on disk (its files, or the server's storage and indexes)
 * @property {number} historyEntries  history entries of all script hashes
 * @property {number} utxos           unspent outputs indexed
 * @property {object} engine          the backend's own figures (LMDB's B-tree, LevelDB's, the MongoDB server's)
 */

/**
 * @typedef {object} VerifyResult
 * @property {boolean} ok
 * @property {Object<string, number>} checked  what was walked, by kind
 * @property {string[]} problems   at most maxProblems, then one "… and N more" line
 * @property {number} problemCount
 */

/** The reads of the contract: what a reader process may call (lib/cluster/forward.js forwards these). */
const READ_METHODS = Object.freeze([
  'getTip', 'getBlock', 'getBlockHash', 'getBlockByHash', 'getHeaders', 'getTxids', 'getBlockBytes', 'getSpenders', 'getTouched', 'getPrevouts', 'getSummary', 'getSummaries', 'getHistory', 'getHistories',
  'getUtxos', 'getTx', 'getTxid', 'getMempoolHead', 'getMempool', 'getMempoolRaw', 'getMempoolChanges', 'getSourceInfo', 'stats', 'engineStats', 'verify', 'digest',
  'getWallet', 'getWalletAddresses', 'getWalletsOf',
]);

/** The writes: only the one writer calls these. (beginBulk and endBulk are hints with a no-op default, not in this list.) */
const WRITE_METHODS = Object.freeze(['apply', 'revert', 'putMempool', 'putSourceInfo']);

/** The wallet writes: `serve`'s workers send these to their primary (lib/cluster/wallet-writes.js). */
const WALLET_WRITE_METHODS = Object.freeze(['createWallet', 'addWalletAddresses']);

module.exports = { AbstractStore, READ_METHODS, WRITE_METHODS, WALLET_WRITE_METHODS };
