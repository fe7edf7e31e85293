// Type declarations of addrindex's library entry (lib/index.js). Written by hand from the
// JSDoc of the modules they describe; test/lib/entry.test.js compiles a consumer against them.

/// <reference types="node" />

import type { Server } from 'node:http';

export type NetworkName = 'main' | 'testnet' | 'testnet4' | 'signet' | 'regtest';

export interface Network {
  name: NetworkName;
  /** blocks-file / p2p magic, as the big-endian uint32 of its 4 bytes on disk */
  magic: number;
  p2pkh: number;
  p2sh: number;
  hrp: string;
  /** genesis block hash, display hex */
  genesis: string;
}

export const NETWORKS: Readonly<Record<NetworkName, Network>>;
/** Looks a network up by name (aliases such as "mainnet" and "livenet" accepted). */
export function getNetwork(name: string | Network): Network;

// ---- errors: every error addrindex throws on purpose has a stable `code` ----------------

export class AddrIndexError extends Error {
  constructor(code: string, message: string, details?: object);
  code: string;
  details?: Record<string, unknown>;
}
export class ParseError extends AddrIndexError {}
export class AddressError extends AddrIndexError {}
export class SourceError extends AddrIndexError {}
/** A node that cannot be used: ERR_NODE_UNAVAILABLE, ERR_NODE_AUTH, ERR_NODE_NETWORK, ERR_NODE_PROTOCOL, ERR_ABORTED. */
export class NodeError extends AddrIndexError {}
/** A JSON-RPC error the node answered (code ERR_NODE_RPC); `rpcCode` is the node's own code. */
export class RpcError extends NodeError {
  method?: string;
  rpcCode?: number;
  static from(method: string, error: { code: number; message: string }): RpcError;
}
export class UsageError extends AddrIndexError {}
export class StoreError extends AddrIndexError {}
export class CodecError extends AddrIndexError {}
export class SyncError extends AddrIndexError {}
export const errors: {
  AddrIndexError: typeof AddrIndexError;
  ParseError: typeof ParseError;
  AddressError: typeof AddressError;
  SourceError: typeof SourceError;
  NodeError: typeof NodeError;
  RpcError: typeof RpcError;
  UsageError: typeof UsageError;
  StoreError: typeof StoreError;
  CodecError: typeof CodecError;
  SyncError: typeof SyncError;
};

// ---- addresses and hashes ---------------------------------------------------------------

/**
 * What a query names: an address or an Electrum script hash (64 hex digits, display order).
 * `scripthash` is in internal order, as every store takes it.
 */
export function parseTarget(str: string, network: string | Network): { scripthash: Buffer; address: string | null };
/** The address of an output script, or null when it has none. */
export function encodeAddress(script: Buffer, network: string | Network): string | null;
/** The output script of an address. */
export function decodeAddress(address: string, network: string | Network): Buffer;
export function toDisplayHex(hash: Buffer): string;
export function fromDisplayHex(hex: string): Buffer;

// ---- the store contract (lib/stores/abstract.js) ----------------------------------------

export interface Tip {
  height: number;
  /** display hex */
  hash: string;
  /** the TxNum the next block's coinbase gets */
  nextTxNum: number;
}

export interface BlockInfo {
  height: number;
  hash: string;
  time: number;
  firstTxNum: number;
  txCount: number;
  /** the 80 header bytes */
  header: Buffer;
  size: number;
  weight: number;
  /** where the sync read it in a blocks dir; null when it came from a node */
  locator: { file: number; offset: number; length: number } | null;
}

export interface Prevout {
  value: number;
  scripthash: Buffer;
  /** a P2PK output's own script hash (its `scripthash` is its key's P2PKH one), else null */
  p2pk: Buffer | null;
  height: number;
  txNum: number;
}

/**
 * Which view of a script hash a read answers: 'address' (the default, the REST API's: a P2PK
 * output counts toward its key's P2PKH script hash) or 'script' (Electrum's: exactly sha256 of
 * the output script). docs/FORMAT.md, "Two views".
 */
export type View = 'address' | 'script';

export interface Summary {
  balance: number;
  received: number;
  sent: number;
  txCount: number;
  fundedCount: number;
  spentCount: number;
  utxoCount: number;
  firstHeight: number;
  lastHeight: number;
}

export interface HistoryEntry {
  txNum: number;
  /** 32 bytes, internal order */
  txid: Buffer;
  height: number;
  funded: boolean;
  spent: boolean;
}

export interface HistoryOptions {
  /** opaque, from a previous page's `next` */
  cursor?: string | null;
  limit?: number;
  fromHeight?: number;
  toHeight?: number;
  order?: 'asc' | 'desc';
  view?: View;
}

export interface Utxo {
  txid: Buffer;
  vout: number;
  value: number;
  height: number;
  txNum: number;
}

export interface TxLocation {
  txNum: number;
  txid: Buffer;
  height: number;
  blockHash: string;
  position: number;
  /** its first byte within its block's bytes */
  offset: number;
  length: number;
}

export interface Spender {
  vout: number;
  txNum: number;
  txid: Buffer;
  /** null: a coinbase that reused the txid took the output (BIP30) */
  vin: number | null;
  height: number;
}

export interface Stats {
  store: 'lmdb' | 'level' | 'mongo';
  tip: Tip | null;
  tables: Record<string, { rows: number; bytes: number }>;
  bytes: number;
  diskBytes: number;
  historyEntries: number;
  utxos: number;
  engine: Record<string, unknown>;
}

export interface VerifyResult {
  ok: boolean;
  checked: Record<string, number>;
  problems: string[];
  problemCount: number;
}

/** A block ready to apply: built by the sync from a parsed block and its inputs' prevouts. */
export interface BlockDelta {
  height: number;
  firstTxNum: number;
  cols: { hash: string; prev: string; time: number; txCount: number; [column: string]: unknown };
  spent: { values: Float64Array; scripthashes: Buffer; heights: Uint32Array; txNums: Float64Array };
}

export interface StoreOptions {
  network: string | Network;
  /** blocks of undo kept, the deepest reorg followed (default 100) */
  undoDepth?: number;
  /** open beside a writer in another process */
  readOnly?: boolean;
  /** keep every block's bytes in the index (chosen at creation; undefined: what the index says) */
  txstore?: boolean;
  /** LMDB: the writer's reads ahead of its batches (default 'auto': while the index outgrows half the memory) */
  prefetch?: 'auto' | 'on' | 'off';
  /** LMDB: bytes the writer's map leaves free beyond the data at least (a mempool follower's rows; default 0) */
  mapRoom?: number;
}

export abstract class AbstractStore {
  constructor(opts: StoreOptions);
  readonly network: NetworkName;
  readonly undoDepth: number;
  readonly readOnly: boolean;
  /** the index keeps its blocks' bytes (created with txstore: true); known once open */
  readonly keepsTransactions: boolean;
  /** the storage engine's cheap readings (no walk): LMDB adds mapBytes and usedBytes */
  engineStats(): Promise<{ store: StoreName; mapBytes?: number; usedBytes?: number; [reading: string]: unknown }>;
  describe(): string;
  open(): Promise<void>;
  close(): Promise<void>;
  getTip(): Promise<Tip | null>;
  getBlockHash(height: number): Promise<string | null>;
  getBlock(height: number): Promise<BlockInfo | null>;
  getBlockByHash(hash: string): Promise<BlockInfo | null>;
  /** 80 bytes per height of [from, from + count), fewer past the tip */
  getHeaders(from: number, count: number): Promise<Buffer>;
  /** 32 bytes per TxNum of [from, from + count), fewer past the tip */
  getTxids(from: number, count: number): Promise<Buffer>;
  /** a block's bytes, when the index keeps them (txstore); else null */
  getBlockBytes(height: number): Promise<Buffer | null>;
  getSpenders(txid: Buffer): Promise<Spender[] | null>;
  /** the script hashes a block touched, 32 bytes each; null below the undo kept */
  getTouched(height: number, opts?: { view?: View }): Promise<Buffer | null>;
  /** 36 bytes per outpoint: txid (internal order) + vout (uint32 LE) */
  /** indexed: every outpoint's transaction is known to be in the index (the sync's inputs). */
  getPrevouts(outpoints: Buffer, opts?: { indexed?: boolean }): Promise<Array<Prevout | null>>;
  apply(blocks: BlockDelta[]): Promise<void>;
  revert(height: number): Promise<void>;
  /**
   * The applies until endBulk() may be committed as one (LMDB); this process may read them before.
   * whole: a reorg's revert and new branch, which readers must see together (LevelDB: reads
   * waiting on untilGroupEnds(); MongoDB: a lease its readers wait out).
   */
  beginBulk(opts?: { whole?: boolean }): Promise<void>;
  /** Commits (or with commit: false discards) what beginBulk() opened. */
  endBulk(opts?: { commit?: boolean }): Promise<void>;
  /** Settles once no whole group is open in this process (at once when none is). */
  untilGroupEnds(): Promise<void>;
  /** A hint: these parsed blocks come next; a store that reads ahead starts (settles when done; null: it does not). */
  prefetch(blocks: Array<{ cols: object }>): Promise<void> | null;
  getSummary(scripthash: Buffer, opts?: { view?: View }): Promise<Summary | null>;
  getSummaries(scripthashes: Buffer[], opts?: { view?: View }): Promise<Array<Summary | null>>;
  getHistory(scripthash: Buffer, opts?: HistoryOptions): Promise<{ entries: HistoryEntry[]; next: string | null }>;
  getHistories(scripthashes: Buffer[], opts?: HistoryOptions): Promise<{ entries: Array<HistoryEntry & { scripthashes: Buffer[] }>; next: string | null }>;
  getUtxos(scripthash: Buffer, opts?: { cursor?: string | null; limit?: number; view?: View }): Promise<{ utxos: Utxo[]; next: string | null }>;
  getTx(txid: Buffer): Promise<TxLocation | null>;
  getTxid(txNum: number): Promise<Buffer | null>;
  /** stores a poll's mempool change (lib/codec/mempool.js encodeChange) while the tip is the one it names */
  putMempool(change: Buffer): Promise<boolean>;
  getMempoolHead(): Promise<MempoolHead | null>;
  /** the stored changes after seq `after` up to the head's, or null when a reader at `after` must read the whole */
  getMempoolChanges(after: number): Promise<Buffer[] | null>;
  /** where the sync reads its blocks ({blocksDir}), so a server started later finds them */
  putSourceInfo(info: Record<string, unknown>): Promise<void>;
  getSourceInfo(): Promise<Record<string, unknown> | null>;
  /** the whole snapshot (lib/codec/mempool.js encodeWhole); `raws`: each part with its transaction's bytes */
  getMempool(opts?: { raws?: boolean }): Promise<Buffer | null>;
  /** the bytes of mempool transaction `txid` (internal order) at `place` in the snapshot, or null when that place holds them no more */
  getMempoolRaw(place: number, txid: Buffer): Promise<Buffer | null>;
  stats(): Promise<Stats>;
  verify(opts?: { maxProblems?: number }): Promise<VerifyResult>;
  digest(opts?: { undo?: boolean }): Promise<string>;
  /** bitcore v8 wallets (not chain data): created once per key */
  createWallet(fields: { pubKey: string; name: string; path?: string | null; singleAddress?: boolean | null; chain: string; network: string }): Promise<{ wallet: Wallet; created: boolean }>;
  /** adds addresses after those the wallet holds (one it holds is left where it is); null: no such wallet */
  addWalletAddresses(pubKey: string, entries: WalletAddress[]): Promise<{ wallet: Wallet; added: number } | null>;
  getWallet(pubKey: string): Promise<Wallet | null>;
  getWalletAddresses(walletId: string, opts?: { from?: number; limit?: number }): Promise<{ addresses: WalletAddress[]; next: number | null }>;
  getWalletsOf(scripthashes: Buffer[]): Promise<Array<Array<{ id: string; pubKey: string }>>>;
}

/** A bitcore v8 wallet (lib/core/wallets.js). */
export interface Wallet {
  /** 24 hex digits */
  id: string;
  pubKey: string;
  name: string;
  path: string | null;
  singleAddress: boolean | null;
  chain: string;
  network: string;
  /** how many addresses it holds */
  addresses: number;
}

export interface WalletAddress {
  address: string;
  /** 32 bytes, internal order */
  scripthash: Buffer;
}

export const READ_METHODS: ReadonlyArray<string>;
export const WRITE_METHODS: ReadonlyArray<string>;

export class LmdbStore extends AbstractStore {
  constructor(opts: StoreOptions & { datadir: string });
}
export class LevelStore extends AbstractStore {
  constructor(opts: StoreOptions & { datadir: string });
}
export class MongoStore extends AbstractStore {
  constructor(opts: StoreOptions & {
    url?: string;
    mongodbUrl?: string;
    dbName?: string;
    maxUpdatesPerCommand?: number;
    retryTimeoutMs?: number;
    repairSettleMs?: number;
  });
  static open(opts: ConstructorParameters<typeof MongoStore>[0]): Promise<MongoStore>;
}

export type StoreName = 'lmdb' | 'level' | 'mongo';
export const STORE_NAMES: ReadonlyArray<StoreName>;

export interface OpenOptions {
  store?: StoreName;
  datadir?: string;
  mongodbUrl?: string;
  retryTimeoutMs?: number;
  undoDepth?: number;
  readOnly?: boolean;
  txstore?: boolean;
  /** LMDB: the writer's reads ahead (default 'auto') */
  prefetch?: 'auto' | 'on' | 'off';
  /** LMDB: bytes the writer's map leaves free beyond the data at least (default 0) */
  mapRoom?: number;
}

/** Opens (creating when writable and empty) an index of a given network. */
export function openStore(opts: OpenOptions & { network: string | Network; url?: string }): Promise<AbstractStore>;
/** Opens an existing index on the network its meta record names (read-only unless asked). */
export function openIndex(opts: OpenOptions & { network?: string }): Promise<AbstractStore>;

// ---- block sources and the sync ---------------------------------------------------------

export interface SourceBlock {
  height: number;
  hash: string;
  prev: string;
  raw: Buffer;
}

export interface BlockSource {
  /** learns the source's best chain (what it answers differs by source; tip() and hashAt() read it) */
  scan(): Promise<unknown>;
  tip(): { height: number; hash: string } | null;
  hashAt(height: number): string | null;
  blocks(from: number, to: number): AsyncIterable<SourceBlock>;
  close?(): Promise<void>;
}

/** A Bitcoin Core blocks directory: best chain in height order, headers-first files, xor.dat. */
export class BlocksDirSource implements BlockSource {
  constructor(opts: { dir: string; network?: string | Network; readAhead?: number; maxOpenFiles?: number });
  scan(): Promise<void>;
  tip(): { height: number; hash: string } | null;
  hashAt(height: number): string | null;
  heightOf(hash: string): number;
  /** where a block seen by the last scan lies (best chain or not), as a block reader takes it */
  locate(hash: string): { file: number; offset: number; length: number } | null;
  /** cumulative proof of work up to and including a block linked to genesis */
  chainWork(hash: string): bigint | null;
  blocks(fromHeight?: number, toHeight?: number): AsyncGenerator<SourceBlock>;
  close(): Promise<void>;
}

/** Where a node is and how to log in (lib/node/endpoint.js). */
export interface Endpoint {
  /** http://HOST:PORT/PATH, without credentials */
  url: string;
  /** the URL with the user and a masked password, for messages */
  display: string;
  cookieFile: string | null;
  /** the credentials come from a cookie file, rewritten at every node start */
  reloadable: boolean;
  credentials(reload?: boolean): { user: string; pass: string };
}

/**
 * A node named by `rpcUrl` (http://USER:PASS@HOST:PORT; else $ADDRINDEX_RPC_URL in `env`), or
 * by `rpcCookie` (Bitcoin Core's .cookie) with `rpcHost`; a missing port is the network's Core
 * default. Null when no node is named.
 */
export function resolveEndpoint(opts: {
  rpcUrl?: string;
  rpcCookie?: string;
  rpcHost?: string;
  network?: string | Network;
  env?: Record<string, string | undefined>;
}): Endpoint | null;

/** The JSON-RPC subset Bitcoin Core and btcd answer alike, with batches, retries and typed errors (NodeError). */
export class NodeClient {
  static fromEndpoint(endpoint: Endpoint, opts?: {
    /** a node silent this long fails the call (ERR_NODE_UNAVAILABLE once retries are spent) */
    timeoutMs?: number;
    /** how long an unreachable, restarting or busy node is retried, with backoff */
    retryMs?: number;
    signal?: AbortSignal;
    /** calls per HTTP request in batched reads (default 500) */
    batchSize?: number;
    /** such requests at once (default 2) */
    inflight?: number;
    /** told before each pause between attempts */
    onRetry?: (info: { error: Error; attempt: number; delayMs: number; what: string }) => void;
  }): NodeClient;
  /** the node's URL as printed (password masked) */
  readonly display: string;
  getBestBlockHash(): Promise<string>;
  getBlockCount(): Promise<number>;
  /** null past the node's tip */
  getBlockHash(height: number): Promise<string | null>;
  /** `getrawmempool false`: txids */
  getRawMempool(): Promise<string[]>;
  /** `getrawmempool` then `getbestblockhash` in one batch: the list is the mempool at `best` */
  getMempoolAndTip(): Promise<{ txids: string[]; best: string }>;
  /** `getrawtransaction TXID 0`, batched; null for a txid the node no longer knows */
  getRawTransactions(txids: string[]): Promise<Array<Buffer | null>>;
  /** sent once, never retried */
  sendRawTransaction(tx: Buffer | string): Promise<string>;
  /** estimatesmartfee, else estimatefee (btcd); FeeEstimator batches and keeps them */
  estimateFee(blocks: number): Promise<{ btcPerKvB: number | null; blocks: number; method: string }>;
  /** rejects with ERR_NODE_NETWORK for a node of another network */
  checkNetwork(network: string | Network, genesis?: string): Promise<void>;
  close(): void;
}

/** What both node sources answer: the node's best chain, read over JSON-RPC. */
export interface NodeChainSource extends BlockSource {
  /** the node's URL as printed (password masked) */
  readonly nodeUrl: string;
  scan(): Promise<{ tip: { height: number; hash: string }; changed: boolean }>;
  tip(): { height: number; hash: string } | null;
  hashAt(height: number): string | null;
  blocks(fromHeight?: number, toHeight?: number): AsyncGenerator<SourceBlock>;
  close(): Promise<void>;
}

/** A node's best chain over JSON-RPC: hashes and headers scanned in batches, blocks fetched ahead on a worker thread. */
export class NodeSource {
  constructor(opts: {
    /** closed by close() */
    client: NodeClient;
    network?: string | Network;
    /** raw block bytes aimed at per getblock request (default 4 MiB) */
    requestBytes?: number;
    /** getblock requests at once (default 4) */
    inflight?: number;
    /** blocks fetched ahead of the caller, at most (default 64 MiB) */
    aheadBytes?: number;
  });
}
export interface NodeSource extends NodeChainSource {}

/** A blocks dir serving the blocks it holds of a node's best chain, the node the rest. */
export class CombinedSource {
  constructor(opts: { dir: string; client: NodeClient; network?: string | Network });
}
export interface CombinedSource extends NodeChainSource {}

/**
 * The block source a deployment names, as `addrindex sync` builds it from its flags: a blocks
 * dir, a node (rpcUrl, or rpcCookie with rpcHost), or both. UsageError ERR_NO_SOURCE when
 * neither is named.
 */
export function openSource(opts: {
  network: string | Network;
  blocksDir?: string;
  rpcUrl?: string;
  rpcCookie?: string;
  rpcHost?: string;
  /** how long an unreachable node is retried (default 60 s) */
  retryMs?: number;
  /** where ADDRINDEX_RPC_URL is read (default process.env; {} for none) */
  env?: Record<string, string | undefined>;
  signal?: AbortSignal;
  log?: (line: string) => void;
  onNodeError?: (code: string) => void;
}): BlocksDirSource | NodeSource | CombinedSource;

/** One raw block or one blk file, in file order. */
export function openFile(file: string, opts?: { network?: string | Network; xorKey?: Buffer | null }): AsyncGenerator<{ raw: Buffer; offset: number }>;

export interface SyncProgress {
  phase: 'scan' | 'reorg' | 'batch' | 'caught-up' | 'behind';
  height: number;
  target: number;
  hash?: string;
  blocks: number;
  txs: number;
  bytes: number;
  elapsedMs: number;
  batch?: { blocks: number; txs: number; bytes: number; ms: number };
  reorg?: { fromHeight: number; forkHeight: number; depth: number };
}

export interface SyncResult {
  tip: Tip | null;
  blocks: number;
  txs: number;
  bytes: number;
  reorgs: Array<{ fromHeight: number; forkHeight: number; depth: number }>;
  behind: boolean;
  elapsedMs: number;
}

export class SyncService {
  constructor(opts: {
    source: BlockSource;
    store: AbstractStore;
    network: string | Network;
    batch?: { maxBlocks?: number; maxBytes?: number; maxMs?: number };
    threads?: number;
    undoDepth?: number;
    onProgress?: (p: SyncProgress) => void;
    pollMs?: number;
    ahead?: number;
    parseAheadBytes?: number;
    /**
     * While catching up, commit up to this many batches at once (store.beginBulk/endBulk;
     * default 1). Only for a process with no other readers of the store: they would see the
     * group's blocks before its commit. `addrindex sync` uses Infinity, with bulkBytes.
     */
    bulkBatches?: number;
    /** A group also ends once its batches hold this many raw block bytes (default Infinity). */
    bulkBytes?: number;
    /** Awaited once when the index first catches up, before 'caught-up' is reported (addrindex sync compacts LMDB there). */
    onFirstCatchUp?: (run: { txs: number; tip: Tip | null }) => Promise<void>;
  });
  run(opts?: { follow?: boolean; signal?: AbortSignal }): Promise<SyncResult>;
}

// ---- a node's mempool and fee estimates ------------------------------------------------

export interface FeeEstimate {
  /** null: the node has no estimate for this target */
  btcPerKvB: number | null;
  satPerVb: number | null;
  blocks: number;
  method: string;
}
/** The node's fee estimates: estimatesmartfee, else estimatefee (btcd); kept `ttlMs`. */
export class FeeEstimator {
  constructor(client: NodeClient, opts?: { ttlMs?: number; now?: () => number });
  estimate(blocks: number): Promise<FeeEstimate>;
  estimateMany(targets: number[]): Promise<FeeEstimate[]>;
  /** Esplora's /api/fee-estimates: target → sat/vB, the targets without an estimate left out */
  estimates(targets?: readonly number[]): Promise<Record<string, number>>;
}

/** The stored mempool snapshot's head (docs/FORMAT.md, `M` rows, format 3). */
export interface MempoolHead {
  seq: number;
  /** the tip it was resolved against, display hex */
  tip: string;
  count: number;
  vsize: number;
  fee: number;
  /** transactions the follower evicted so far (--mempool-max-mb) */
  evicted: number;
  /** the lowest seq a reader may hold and catch up from by getMempoolChanges */
  from: number;
  /** a head of format 2's whole snapshot: its seq only is read */
  legacy?: true;
}

export interface MempoolPoll {
  outcome: 'written' | 'unchanged' | 'waiting' | 'refused' | 'empty';
  seq: number;
  tip: string | null;
  listed: number;
  added: number;
  removed: number;
  missing: number;
  rejected: number;
  asked: number;
  txs: number;
  held: number;
  vsize: number;
  bytes: number;
  stored: number;
  upserts: number;
  dropped: number;
  evicted: number;
  memBytes: number;
  ms: number;
  busyMs: number;
  fetchMs: number;
  resolveMs: number;
  writeMs: number;
}

/** Keeps the index's mempool snapshot (store.putMempool) at a node's mempool (lib/mempool/README.md). */
export class MempoolFollower {
  constructor(opts: {
    store: AbstractStore;
    client: NodeClient;
    network: string | Network;
    pollMs?: number;
    tipGraceMs?: number;
    /** what the held transactions may take in memory (default 300e6; 0: no bound) */
    maxBytes?: number;
    onPoll?: (poll: MempoolPoll) => void;
    onError?: (err: Error, fatal: boolean) => void;
    now?: () => number;
  });
  /** the stored snapshot's seq (0: none) */
  readonly seq: number;
  readonly last: MempoolPoll | null;
  /** settles when the polling ends: after stop(), or with the error that stopped it */
  readonly stopped: Promise<void> | undefined;
  start(): Promise<void>;
  wake(): void;
  stop(): Promise<void>;
  load(): Promise<number>;
  poll(): Promise<MempoolPoll>;
}

// ---- the REST API -----------------------------------------------------------------------

export class ApiApp {
  constructor(opts: {
    store: AbstractStore;
    network: string | Network;
    storeKind: StoreName;
    timeoutMs?: number;
    log?: (msg: string) => void;
    /** where transactions and blocks are read: the blocks dir the index was synced from (getSourceInfo) */
    blocksDir?: string | null;
    /** the index keeps its blocks' bytes (synced with txstore: store.keepsTransactions): read from it first */
    indexKeepsBlocks?: boolean;
    /** a node's tip is fed through setNodeTip(): /ready checks the lag, /api/v1/status reports it */
    nodeConfigured?: boolean;
    /** where that tip is read, for /api/v1/status */
    nodeSource?: 'rpc' | 'blocks-dir';
    /** /ready: the most blocks the index may be behind the node */
    maxLag?: number;
    /** answers of minBytes (default 1024) or more gzip- or brotli-encoded when accepted; encodings [] turns it off */
    compression?: { minBytes?: number; encodings?: Array<'br' | 'gzip'> };
    /** at most `limit` requests per client in each window (429 past it); none by default */
    rateLimit?: { limit: number; windowMs: number; trustProxy?: boolean };
    /** origins allowed by CORS ('*' for any); none by default */
    cors?: string[];
    /** the node fallback for a block the blocks dir cannot give: `getblock HASH 0`, bytes or hex */
    fetchFromNode?: ((hash: string) => Promise<Buffer | string>) | null;
    /** the block reader's cache of parsed blocks, bytes (default 64 MiB) */
    blockCacheBytes?: number;
    /** Esplora transaction JSON kept, bytes (default 32 MiB) */
    txJsonCacheBytes?: number;
    /**
     * where mempool views (lib/core/mempool.js MempoolView) come from instead of the snapshot a
     * follower writes into the index (the default); each is used only with the tip it names
     */
    mempool?: (() => unknown) | null;
    /**
     * the reader of the index's snapshot (lib/mempool/reader.js MempoolReader) to share with the
     * host's other readers of the store, so a snapshot is decoded once per process (default: its own)
     */
    mempoolReader?: object;
    /** the node behind the server (lib/node/serve-node.js ServeNode): broadcast, fee estimates; null: those routes answer 503 */
    node?: object | null;
    /** serve insight-ui 0.4.0 at /insight/ (a browser opening / is sent there) */
    explorer?: boolean;
    /** insight's socket.io live feed at /socket.io/ (createServer attaches it, start() starts its watcher); websocketOnly with several processes */
    live?: { pollMs?: number; websocketOnly?: boolean } | null;
  });
  readonly store: AbstractStore;
  readonly network: Network;
  /** starts the live feed's watcher, when there is a feed */
  start(): Promise<void>;
  /** closes the live feed and the block reader's files (the store stays the caller's); closeGracefully calls it */
  close(): Promise<void>;
  /** the node's tip as last read, with nodeConfigured (null: not known) */
  setNodeTip(tip: { height: number; hash: string } | null): void;
  /** the request handler, for http.createServer or an existing server */
  handle(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse): void;
}
/** An http.Server for an app, with the limits a public endpoint needs. */
export function createServer(app: ApiApp): Server;
/** Closes a server gracefully: requests in flight are answered, idle connections closed. */
export function closeGracefully(server: Server, app: ApiApp, graceMs?: number): Promise<{ drained: boolean }>;
