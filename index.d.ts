// Type declarations of addrindex's library entry (lib/index.js). Written by hand from the
// JSDoc of the modules they describe; test/lib/types.test.js compiles a consumer against them.

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
  height: number;
  txNum: number;
}

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
  getTouched(height: number): Promise<Buffer | null>;
  /** 36 bytes per outpoint: txid (internal order) + vout (uint32 LE) */
  /** indexed: every outpoint's transaction is known to be in the index (the sync's inputs). */
  getPrevouts(outpoints: Buffer, opts?: { indexed?: boolean }): Promise<Array<Prevout | null>>;
  apply(blocks: BlockDelta[]): Promise<void>;
  revert(height: number): Promise<void>;
  /** The applies until endBulk() may be committed as one (LMDB); this process may read them before. */
  beginBulk(): Promise<void>;
  /** Commits (or with commit: false discards) what beginBulk() opened. */
  endBulk(opts?: { commit?: boolean }): Promise<void>;
  getSummary(scripthash: Buffer): Promise<Summary | null>;
  getSummaries(scripthashes: Buffer[]): Promise<Array<Summary | null>>;
  getHistory(scripthash: Buffer, opts?: HistoryOptions): Promise<{ entries: HistoryEntry[]; next: string | null }>;
  getHistories(scripthashes: Buffer[], opts?: HistoryOptions): Promise<{ entries: Array<HistoryEntry & { scripthashes: Buffer[] }>; next: string | null }>;
  getUtxos(scripthash: Buffer, opts?: { cursor?: string | null; limit?: number }): Promise<{ utxos: Utxo[]; next: string | null }>;
  getTx(txid: Buffer): Promise<TxLocation | null>;
  getTxid(txNum: number): Promise<Buffer | null>;
  /** replaces the mempool snapshot (lib/codec/mempool.js) while the tip is the one it names */
  putMempool(snapshot: Buffer): Promise<boolean>;
  getMempoolHead(): Promise<{ seq: number; tip: string } | null>;
  /** where the sync reads its blocks ({blocksDir}), so a server started later finds them */
  putSourceInfo(info: Record<string, unknown>): Promise<void>;
  getSourceInfo(): Promise<Record<string, unknown> | null>;
  getMempool(): Promise<Buffer | null>;
  stats(): Promise<Stats>;
  verify(opts?: { maxProblems?: number }): Promise<VerifyResult>;
  digest(opts?: { undo?: boolean }): Promise<string>;
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
  scan(): Promise<void>;
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
  });
  run(opts?: { follow?: boolean; signal?: AbortSignal }): Promise<SyncResult>;
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
    /** the node fallback for a block the blocks dir cannot give: `getblock HASH 0`, bytes or hex */
    fetchFromNode?: ((hash: string) => Promise<Buffer | string>) | null;
    /** the block reader's cache of parsed blocks, bytes (default 64 MiB) */
    blockCacheBytes?: number;
    /** Esplora transaction JSON kept, bytes (default 32 MiB) */
    txJsonCacheBytes?: number;
    /** the mempool view a follower keeps (lib/core/mempool.js MempoolView), for unconfirmed spenders */
    mempool?: (() => unknown) | null;
  });
  readonly store: AbstractStore;
  readonly network: Network;
  /** closes the block reader's files (the store stays the caller's); closeGracefully calls it */
  close(): Promise<void>;
  /** the request handler, for http.createServer or an existing server */
  handle(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse): void;
}
/** An http.Server for an app, with the limits a public endpoint needs. */
export function createServer(app: ApiApp): Server;
/** Closes a server gracefully: requests in flight are answered, idle connections closed. */
export function closeGracefully(server: Server, app: ApiApp, graceMs?: number): Promise<{ drained: boolean }>;
