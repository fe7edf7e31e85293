'use strict';

const { NodeError } = require('../errors');
const { NETWORKS, getNetwork } = require('../chain/networks');
const { RpcClient } = require('./rpc');
const { TxidList } = require('./txid-list');

/** JSON-RPC codes both nodes use for "no such block / transaction" and an unknown method. */
const RPC_NOT_FOUND = -5;
const RPC_METHOD_NOT_FOUND = -32601;

/**
 * The part of a node's JSON-RPC that Bitcoin Core and btcd answer alike, typed: hashes as
 * display hex, raw blocks, headers and transactions as Buffers. Only these calls are used:
 * getbestblockhash, getblockcount, getblockhash, `getblockheader HASH true|false` (a bool),
 * `getblock HASH 0` (an integer verbosity: btcd refuses `false`), getchaintips,
 * getrawmempool (not verbose), `getrawtransaction TXID 0` (an integer, no block hash),
 * sendrawtransaction, estimatesmartfee (else estimatefee: btcd has only that), in batches
 * where there are many.
 */
class NodeClient {
  /**
   * @param {RpcClient} rpc
   * @param {object} [opts]
   * @param {number} [opts.batchSize=500] calls per HTTP request in the batched reads
   * @param {number} [opts.inflight=2]    such requests at once
   * @param {string|null} [opts.cookieFile] where the credentials come from (for workerConfig)
   */
  constructor(rpc, opts = {}) {
    this.rpc = rpc;
    this.batchSize = opts.batchSize || 500;
    this.inflight = opts.inflight || 2;
    this.cookieFile = opts.cookieFile || null;
  }

  /**
   * @param {import('./endpoint').Endpoint} endpoint
   * @param {object} [opts] RpcClient options (timeoutMs, retryMs, signal, onRetry, maxSockets)
   *   and NodeClient options (batchSize, inflight)
   * @returns {NodeClient}
   */
  static fromEndpoint(endpoint, opts = {}) {
    const rpc = new RpcClient({
      ...opts, url: endpoint.url, credentials: endpoint.credentials, reloadable: endpoint.reloadable, display: endpoint.display,
    });
    return new NodeClient(rpc, { ...opts, cookieFile: endpoint.cookieFile });
  }

  /**
   * What a client on another thread needs to reach the same node the same way (plain data:
   * the URL, the credentials or the cookie file to read them from, the retry settings).
   * @returns {object}
   */
  workerConfig() {
    const r = this.rpc;
    const host = r.host.includes(':') ? `[${r.host}]` : r.host;
    const creds = this.cookieFile ? {} : r.credentials();
    return {
      url: `http://${host}:${r.port}${r.path}`, display: r.display, user: creds.user, pass: creds.pass, cookieFile: this.cookieFile,
      timeoutMs: r.timeoutMs, retryMs: r.retryMs, maxDelayMs: r.maxDelayMs, jsonrpc: r.jsonrpc,
    };
  }

  /** The node's URL as printed (password masked). */
  get display() {
    return this.rpc.display;
  }

  /** @returns {Promise<string>} */
  getBestBlockHash() {
    return this.rpc.call('getbestblockhash');
  }

  /** @returns {Promise<number>} */
  getBlockCount() {
    return this.rpc.call('getblockcount');
  }

  /**
   * @param {number} height
   * @returns {Promise<string|null>} null when the node's best chain is shorter
   */
  async getBlockHash(height) {
    const [hash] = await this.getBlockHashes([height]);
    return hash;
  }

  /**
   * Hashes of the node's best chain at these heights, batched; null past its tip.
   * @param {number[]} heights
   * @returns {Promise<Array<string|null>>}
   */
  async getBlockHashes(heights) {
    const settled = await this.settled(heights.map((h) => ['getblockhash', [h]]));
    return settled.map((s, i) => {
      if (s.error) {
        // out of range: Core -8, btcd -1 ("Block number out of range")
        if (s.error.rpcCode === -8 || s.error.rpcCode === -1) return null;
        throw s.error;
      }
      if (typeof s.result !== 'string' || !/^[0-9a-f]{64}$/.test(s.result)) {
        throw new NodeError('ERR_NODE_PROTOCOL',
          `getblockhash ${heights[i]} from ${this.display}: ${JSON.stringify(s.result).slice(0, 80)} is not a block hash`);
      }
      return s.result;
    });
  }

  /**
   * A header's place in the node's block tree (`getblockheader HASH true`).
   * @param {string} hash
   * @returns {Promise<{hash: string, height: number, prev: string|null, confirmations: number}>}
   *   confirmations -1: not on the best chain
   */
  async getHeaderInfo(hash) {
    const h = await this.rpc.call('getblockheader', [hash, true]);
    if (!h || !Number.isInteger(h.height)) throw new NodeError('ERR_NODE_PROTOCOL', `getblockheader ${hash} from ${this.display}: no height in the answer`);
    return { hash: h.hash, height: h.height, prev: h.previousblockhash || null, confirmations: h.confirmations };
  }

  /**
   * 80-byte headers (`getblockheader HASH false`), batched.
   * @param {string[]} hashes
   * @returns {Promise<Buffer[]>}
   */
  async getRawHeaders(hashes) {
    const res = await this.batched(hashes.map((h) => ['getblockheader', [h, false]]), { binary: true });
    return res.map((hex, i) => {
      const buf = fromHex(this, hex, `getblockheader ${hashes[i]}`);
      if (buf.length !== 80) throw new NodeError('ERR_NODE_PROTOCOL', `getblockheader ${hashes[i]} from ${this.display}: ${buf.length} bytes, not 80`);
      return buf;
    });
  }

  /**
   * Raw blocks (`getblock HASH 0`), in one batch: the caller sizes it.
   * @param {string[]} hashes
   * @returns {Promise<Array<{raw: Buffer}|{error: import('../errors').RpcError}>>} an unknown
   *   or pruned block is an item's error, not a rejection
   */
  async getRawBlocks(hashes) {
    const settled = await this.rpc.batchSettled(hashes.map((h) => ['getblock', [h, 0]]), { binary: true });
    return settled.map((s, i) => (s.error ? s : { raw: fromHex(this, s.result, `getblock ${hashes[i]}`) }));
  }

  /** @returns {Promise<Array<{height: number, hash: string, branchlen: number, status: string}>>} */
  getChainTips() {
    return this.rpc.call('getchaintips');
  }

  /**
   * The node's mempool, txids only (`getrawmempool false`).
   * @returns {Promise<string[]>}
   */
  getRawMempool() {
    return this.rpc.call('getrawmempool', [false]);
  }

  /**
   * The node's mempool and its best block, in one request: `getrawmempool` first, then
   * `getbestblockhash` (both nodes run a batch's calls in order). A block that reaches the
   * node before or between the two calls makes `best` that block, so when `best` is a block
   * the caller read as its own tip before asking, the list is the node's mempool at that tip.
   * The txids come as a TxidList, left in the reply's bytes: a mempool of 150,000 is listed
   * again at every poll, and no string is made for a txid the caller holds (its digits are
   * checked when it reads one, or matches them against the ones it holds).
   * @returns {Promise<{txids: TxidList, best: string}>}
   */
  async getMempoolAndTip() {
    const [listed, best] = await this.rpc.batch([['getrawmempool', [false]], ['getbestblockhash', []]], { txidLists: true });
    const txids = Array.isArray(listed) && listed.length === 0 ? new TxidList(Buffer.alloc(0), new Uint32Array(0)) : listed;
    // anything but strings of 64 characters leaves the list an array JSON.parse made
    if (!(txids instanceof TxidList)) {
      throw new NodeError('ERR_NODE_PROTOCOL', `getrawmempool from ${this.display}: not a list of txids`);
    }
    if (!isHash(best)) throw new NodeError('ERR_NODE_PROTOCOL', `getbestblockhash from ${this.display}: ${JSON.stringify(best).slice(0, 80)} is not a block hash`);
    return { txids, best };
  }

  /**
   * Raw transactions (`getrawtransaction TXID 0`), batched. Without a txindex the node knows
   * only its mempool's (and, Core, those of blocks it is told); a txid it does not know —
   * confirmed, evicted or replaced since it was listed — gives null.
   * @param {string[]} txids
   * @returns {Promise<Array<Buffer|null>>}
   */
  async getRawTransactions(txids) {
    const settled = await this.settled(txids.map((t) => ['getrawtransaction', [t, 0]]), { binary: true });
    return settled.map((s, i) => {
      if (s.error) {
        if (s.error.rpcCode === RPC_NOT_FOUND) return null;
        throw s.error;
      }
      return fromHex(this, s.result, `getrawtransaction ${txids[i]}`);
    });
  }

  /**
   * Broadcasts a transaction. Not retried: a node that took it and then failed to answer
   * would refuse the repeat as already known.
   * @param {Buffer|string} tx raw bytes or hex
   * @returns {Promise<string>} its txid, as the node reports it
   */
  sendRawTransaction(tx) {
    const hex = Buffer.isBuffer(tx) ? tx.toString('hex') : String(tx);
    return this.rpc.call('sendrawtransaction', [hex], { retryMs: 0 });
  }

  /**
   * A fee rate for confirmation within `blocks`: `estimatesmartfee` (Core), else `estimatefee`
   * (btcd, and Core before 0.17).
   * @param {number} blocks
   * @returns {Promise<{btcPerKvB: number|null, blocks: number, method: string}>} null: no estimate yet
   */
  async estimateFee(blocks) {
    try {
      return feeAnswer('estimatesmartfee', blocks, await this.rpc.call('estimatesmartfee', [blocks]));
    } catch (err) {
      if (err.rpcCode !== RPC_METHOD_NOT_FOUND) throw err;
    }
    return feeAnswer('estimatefee', blocks, await this.rpc.call('estimatefee', [blocks]));
  }

  /**
   * Checks that the node follows `network`: its block at height 0 is that network's genesis.
   * @param {string|import('../chain/networks').Network} network
   * @param {string} [genesis] the node's height-0 hash when already asked
   * @returns {Promise<void>} rejects with ERR_NODE_NETWORK
   */
  async checkNetwork(network, genesis) {
    const net = getNetwork(network);
    const got = genesis === undefined ? await this.getBlockHash(0) : genesis;
    if (got === net.genesis) return;
    throw networkError(this.display, net, got);
  }

  /**
   * Any calls, in batches of `batchSize` with `inflight` requests at once; each item settled.
   * @param {Array<[string, Array<any>]>} calls
   * @param {{binary?: boolean}} [opts] RpcClient request options
   * @returns {Promise<import('./rpc').Settled[]>}
   */
  async settled(calls, opts) {
    const out = new Array(calls.length);
    let next = 0;
    const worker = async () => {
      while (next < calls.length) {
        const at = next;
        next += this.batchSize;
        const part = await this.rpc.batchSettled(calls.slice(at, at + this.batchSize), opts);
        for (let k = 0; k < part.length; k++) out[at + k] = part[k];
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.inflight, Math.ceil(calls.length / this.batchSize)) }, worker));
    return out;
  }

  /** Like settled(), rejecting with the first item's error. */
  async batched(calls, opts) {
    const settled = await this.settled(calls, opts);
    return settled.map((s) => {
      if (s.error) throw s.error;
      return s.result;
    });
  }

  close() {
    this.rpc.close();
  }
}

/**
 * ERR_NODE_NETWORK for a node whose genesis is not the network's, naming the network it is on
 * when it is one addrindex knows.
 * @param {string} display
 * @param {import('../chain/networks').Network} net
 * @param {string|null} genesis
 */
function networkError(display, net, genesis) {
  const other = Object.values(NETWORKS).find((n) => n.genesis === genesis);
  const what = other
    ? `is a ${other.name} node (its genesis is ${genesis}), not ${net.name}: pass --network ${other.name}, or point the RPC URL at a ${net.name} node`
    : `follows an unknown chain (its block 0 is ${genesis}, the ${net.name} genesis is ${net.genesis})`;
  return new NodeError('ERR_NODE_NETWORK', `the node at ${display} ${what}`, { network: net.name, genesis, found: other ? other.name : null });
}

/**
 * A 64-digit lower-case hex string (a txid or block hash as the nodes print them). A loop, not
 * a regular expression: a mainnet mempool lists a few hundred thousand every poll.
 */
function isHash(x) {
  if (typeof x !== 'string' || x.length !== 64) return false;
  for (let i = 0; i < 64; i++) {
    const c = x.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}

/**
 * A fee estimate as either call answers it: estimatesmartfee `{feerate, blocks, errors}` (no
 * feerate: not enough data), estimatefee a number (-1, or btcd's 0: no estimate).
 * @param {'estimatesmartfee'|'estimatefee'} method
 * @param {number} blocks the target asked
 * @param {any} r the result
 * @returns {{btcPerKvB: number|null, blocks: number, method: string}}
 */
function feeAnswer(method, blocks, r) {
  if (method === 'estimatesmartfee') {
    const rate = r && typeof r.feerate === 'number' && r.feerate > 0 ? r.feerate : null;
    return { btcPerKvB: rate, blocks: (r && Number.isInteger(r.blocks) && r.blocks) || blocks, method };
  }
  return { btcPerKvB: typeof r === 'number' && r > 0 ? r : null, blocks, method };
}

/** A hex result as bytes (the client's binary parse has already decoded the long ones). */
function fromHex(client, hex, what) {
  if (Buffer.isBuffer(hex)) return hex;
  if (typeof hex !== 'string' || hex.length % 2 !== 0) {
    throw new NodeError('ERR_NODE_PROTOCOL', `${what} from ${client.display}: not a hex string`);
  }
  const buf = Buffer.from(hex, 'hex');
  // Buffer.from stops at the first non-hex digit without a word
  if (buf.length * 2 !== hex.length) throw new NodeError('ERR_NODE_PROTOCOL', `${what} from ${client.display}: not a hex string`);
  return buf;
}

module.exports = { NodeClient, networkError, feeAnswer, isHash, RPC_NOT_FOUND, RPC_METHOD_NOT_FOUND };
