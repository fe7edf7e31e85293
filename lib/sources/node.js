'use strict';

const { SourceError, NodeError } = require('../errors');
const { getNetwork } = require('../chain/networks');
const { sha256d, toDisplayHex } = require('../chain/hash');
const { HashChain } = require('./hash-chain');
const { BlockFetcher } = require('../node/block-fetcher');

const ZERO_HASH = Buffer.alloc(32);

/** How many times a scan starts again when the node's chain moves under it, before giving up. */
const SCAN_ATTEMPTS = 5;

/**
 * Blocks from a running node over JSON-RPC (Bitcoin Core, btcd): the block source SyncService
 * reads, like BlocksDirSource but with no file of the node's at hand.
 *
 * `scan()` learns the node's best chain as a list of block hashes by height: from the hash
 * the node calls best, back to where that chain meets the one known from the last scan
 * (binary search over `getblockhash`), then every new height forward with batched
 * `getblockhash` and `getblockheader HASH false`. Each header must hash to the hash asked
 * for and name the one before it as its parent, so the list is one chain even when the node
 * reorganizes during the scan (then the scan starts again). A scan that finds the best hash
 * unchanged costs one HTTP request.
 *
 * `blocks()` fetches the scanned chain's blocks by hash with batched `getblock HASH 0` on a
 * worker thread (lib/node/block-fetcher.js), several requests in flight, each sized to about
 * `requestBytes` of blocks by the sizes seen so far (at most `maxBlocksPerRequest` blocks),
 * up to `aheadBytes` ahead of the caller. A block is checked against the scan (its header
 * hashes to the scanned hash and names the previous height's as parent) before it is handed
 * on, so a reorganization of the node between scan and read never mixes two chains: the
 * scanned chain is read to its end (nodes keep stale blocks) and the next scan finds the
 * fork. A block the node no longer has ends the read with ERR_SOURCE_CHANGED when its best
 * chain moved (SyncService rescans) or ERR_NODE_BLOCK_MISSING when it did not (a pruned node).
 */
class NodeSource {
  /**
   * @param {object} opts
   * @param {import('../node/client').NodeClient} opts.client  closed by close()
   * @param {string|import('../chain/networks').Network} [opts.network='main']
   * @param {number} [opts.requestBytes=4 MiB] raw block bytes aimed at per getblock request
   * @param {number} [opts.maxBlocksPerRequest=16] a bound on one answer's size when block sizes jump
   * @param {number} [opts.inflight=4]  getblock requests at once (btcd serves 10 clients by default)
   * @param {number} [opts.aheadBytes=64 MiB] blocks fetched ahead of the caller, at most (about one
   *   sync batch: the fetch goes on while the batch before commits)
   * @param {number} [opts.headersPerRound=20000] heights whose hashes and headers one scan round fetches
   */
  constructor({
    client, network = 'main', requestBytes = 4 << 20, maxBlocksPerRequest = 16, inflight = 4, aheadBytes = 64 << 20,
    headersPerRound = 20000,
  }) {
    if (!client) throw new TypeError('NodeSource needs a client');
    this.client = client;
    this.network = getNetwork(network);
    this.fetchOpts = { requestBytes, maxBlocksPerRequest, inflight: Math.max(1, inflight), aheadBytes };
    this.headersPerRound = headersPerRound;
    this.chain = new HashChain();
    this.fetcher = null; // a BlockFetcher, started at the first read
    this.counts = { scans: 0, headers: 0, blocks: 0, bytes: 0 };
    this._scanning = null;
    this.closed = false;
  }

  /**
   * Learns the node's best chain. Concurrent calls share one scan.
   * @returns {Promise<{tip: {height: number, hash: string}, changed: boolean}>}
   */
  scan() {
    if (this.closed) return Promise.reject(closedError());
    if (!this._scanning) this._scanning = this._scan().finally(() => { this._scanning = null; });
    return this._scanning;
  }

  async _scan() {
    for (let attempt = 1; ; attempt++) {
      // one request: the best hash, and block 0 to be sure the node is still the network's
      const [best, genesis] = await this.client.rpc.batch([['getbestblockhash'], ['getblockhash', [0]]]);
      await this.client.checkNetwork(this.network, genesis);
      this.counts.scans++;
      if (this.chain.length && this.chain.hexAt(this.chain.tipHeight) === best) return { tip: this.tip(), changed: false };
      const { height } = await this.client.getHeaderInfo(best);
      const fork = await this._forkWithNode(height);
      const segment = await this._headers(fork, height, best);
      if (segment) {
        this.chain.truncate(fork + 1);
        this.chain.append(segment);
        return { tip: this.tip(), changed: true };
      }
      if (attempt >= SCAN_ATTEMPTS) {
        throw new SourceError('ERR_SOURCE_CHANGED',
          `the best chain of the node at ${this.client.display} changed during each of ${attempt} scans in a row`);
      }
    }
  }

  /**
   * The highest height at which the known chain and the node's best chain hold the same
   * hash (-1: nothing known yet). Both are chains: they agree below the fork and nowhere
   * above, so a binary search over `getblockhash` finds it.
   */
  async _forkWithNode(nodeHeight) {
    const top = Math.min(this.chain.tipHeight, nodeHeight);
    if (top < 0) return -1;
    if ((await this.client.getBlockHash(top)) === this.chain.hexAt(top)) return top;
    let lo = 0; // block 0 is the network's genesis on both sides (checked)
    let hi = top;
    while (hi - lo > 1) {
      const mid = (lo + hi) >>> 1;
      if ((await this.client.getBlockHash(mid)) === this.chain.hexAt(mid)) lo = mid;
      else hi = mid;
    }
    return lo;
  }

  /**
   * The node's hashes for heights fork+1..height, each header checked to hash to its hash and
   * to link to the one before, ending at `best`. Null when the node's chain moved meanwhile.
   * @returns {Promise<HashChain|null>}
   */
  async _headers(fork, height, best) {
    const segment = new HashChain(Math.max(1, height - fork));
    let prev = fork >= 0 ? Buffer.from(this.chain.at(fork)) : ZERO_HASH;
    for (let start = fork + 1; start <= height; start += this.headersPerRound) {
      const heights = [];
      for (let h = start; h <= Math.min(height, start + this.headersPerRound - 1); h++) heights.push(h);
      const hashes = await this.client.getBlockHashes(heights);
      if (hashes.includes(null)) return null; // the node's chain got shorter
      const headers = await this.client.getRawHeaders(hashes);
      for (let k = 0; k < headers.length; k++) {
        const hash = sha256d(headers[k]);
        if (toDisplayHex(hash) !== hashes[k]) {
          throw new NodeError('ERR_NODE_PROTOCOL',
            `the node at ${this.client.display} answered getblockheader ${hashes[k]} with a header hashing to ${toDisplayHex(hash)}`);
        }
        if (!headers[k].subarray(4, 36).equals(prev)) return null; // heights answered from two chains
        segment.push(hash);
        prev = hash;
      }
      this.counts.headers += headers.length;
    }
    return toDisplayHex(prev) === best ? segment : null;
  }

  /**
   * Takes a chain known from elsewhere (a blocks dir's best chain) as what the next scan
   * starts from: the scan checks it against the node like any chain it read itself, and
   * fetches only the heights past the point where the two agree.
   * @param {HashChain} chain
   */
  assume(chain) {
    this.chain = new HashChain(chain.length);
    this.chain.append(chain);
  }

  /** @returns {string} the node's URL as printed (password masked) */
  get nodeUrl() {
    return this.client.display;
  }

  /** @returns {{height: number, hash: string}|null} the best chain's tip as of the last scan */
  tip() {
    return this.chain.length ? { height: this.chain.tipHeight, hash: this.chain.hexAt(this.chain.tipHeight) } : null;
  }

  /**
   * @param {number} height
   * @returns {string|null} the hash at `height` of the node's best chain as of the last scan
   */
  hashAt(height) {
    return this.chain.hexAt(height);
  }

  /**
   * Counts, for logs, tests and benchmarks: rpc sums both clients' (scans on this thread,
   * block fetches on the fetcher's), fetch is the fetcher's alone.
   */
  stats() {
    const own = this.client.rpc.stats;
    const fetch = this.fetcher ? this.fetcher.stats() : { requests: 0, calls: 0, retries: 0, bytesIn: 0, bytesOut: 0 };
    const rpc = {};
    for (const k of Object.keys(own)) rpc[k] = own[k] + (fetch[k] || 0);
    return { ...this.counts, height: this.chain.tipHeight, rpc, fetch };
  }

  /**
   * Raw blocks of the chain as of the last scan, in height order, fetched by hash on the
   * fetcher's thread.
   * @param {number} [fromHeight=0]
   * @param {number} [toHeight=tip height]
   * @returns {AsyncGenerator<{height: number, hash: string, prev: string, raw: Buffer}>}
   */
  async *blocks(fromHeight = 0, toHeight = this.chain.tipHeight) {
    if (this.closed) throw closedError();
    const tipHeight = this.chain.tipHeight;
    if (tipHeight < 0) throw new SourceError('ERR_NOT_SCANNED', 'blocks() before a successful scan()');
    if (!Number.isInteger(fromHeight) || !Number.isInteger(toHeight) || fromHeight < 0 || toHeight > tipHeight) {
      throw new SourceError('ERR_RANGE', `blocks(${fromHeight}, ${toHeight}): heights must be integers within 0..${tipHeight}`);
    }
    if (fromHeight > toHeight) return;
    // a copy: a scan during the read must not change what this read checks against
    const hashes = this.chain.copyRange(fromHeight, toHeight);
    let prev = fromHeight > 0 ? Buffer.from(this.chain.at(fromHeight - 1)) : ZERO_HASH;
    if (!this.fetcher) {
      this.fetcher = new BlockFetcher(this.client.workerConfig(), { signal: this.client.rpc.signal, onRetry: this.client.rpc.onRetry });
    }
    let k = 0;
    try {
      for await (const raw of this.fetcher.stream(hashes, this.fetchOpts)) {
        const want = hashes.subarray(32 * k, 32 * k + 32);
        const height = fromHeight + k;
        if (raw.length < 80) {
          throw new NodeError('ERR_NODE_PROTOCOL', `the node at ${this.client.display} answered getblock ${toDisplayHex(want)} with ${raw.length} bytes`);
        }
        const hash = sha256d(raw.subarray(0, 80));
        if (!hash.equals(want)) {
          throw new SourceError('ERR_SOURCE_MISMATCH',
            `the node at ${this.client.display} answered getblock ${toDisplayHex(want)} with block ${toDisplayHex(hash)}`, { height });
        }
        if (!raw.subarray(4, 36).equals(prev)) {
          throw new SourceError('ERR_SOURCE_MISMATCH',
            `block ${height} (${toDisplayHex(want)}) from the node does not link to block ${height - 1} (${toDisplayHex(prev)})`, { height });
        }
        prev = want;
        k++;
        this.counts.blocks++;
        this.counts.bytes += raw.length;
        yield { height, hash: toDisplayHex(want), prev: toDisplayHex(raw.subarray(4, 36)), raw };
      }
    } catch (err) {
      if (err.code === 'ERR_NODE_RPC' && err.details && Number.isInteger(err.details.index)) {
        const at = err.details.index;
        throw await this._missing(fromHeight + at, toDisplayHex(hashes.subarray(32 * at, 32 * at + 32)), err);
      }
      throw err;
    }
    if (k !== hashes.length / 32) {
      throw new NodeError('ERR_NODE_PROTOCOL', `the block fetch from ${this.client.display} ended after ${k} of ${hashes.length / 32} blocks`);
    }
  }

  /** The error for a scanned block the node would not give: the chain moved, or the block is gone. */
  async _missing(height, hash, rpcErr) {
    const now = await this.client.getBlockHash(height);
    if (now !== hash) {
      return new SourceError('ERR_SOURCE_CHANGED',
        `the node at ${this.client.display} no longer has block ${height} (${hash}) of the chain it was read from ` +
        `(${rpcErr.rpcMessage || rpcErr.message}): its best chain changed`, { height, hash });
    }
    return new SourceError('ERR_NODE_BLOCK_MISSING',
      `the node at ${this.client.display} has block ${height} (${hash}) in its best chain but does not serve it: ` +
      `${rpcErr.rpcMessage || rpcErr.message} — a pruned node has deleted old blocks: give --blocks-dir with a copy of them, or use a node that keeps them`,
      { height, hash, rpcCode: rpcErr.rpcCode });
  }

  /** Closes the client's connections and stops the fetcher. The source cannot be used afterwards. */
  async close() {
    this.closed = true;
    this.client.close();
    if (this.fetcher) await this.fetcher.close();
  }
}

function closedError() {
  return new SourceError('ERR_SOURCE_CLOSED', 'the node source is closed');
}

module.exports = { NodeSource };
