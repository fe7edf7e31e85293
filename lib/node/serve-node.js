'use strict';

const { NodeError } = require('../errors');
const { RPC_METHOD_NOT_FOUND } = require('./client');
const { FeeEstimator, ESPLORA_TARGETS, RECOMMENDED_TARGETS, recommendedFees } = require('./fees');

/**
 * What `addrindex serve` asks of the node behind it (`--rpc-url`, `--rpc-cookie`), over the
 * subset Bitcoin Core and btcd answer alike (client.js): its tip for the lag, a block the
 * blocks dir does not hold, broadcasts, fee estimates and the relay fee, a mempool transaction
 * the snapshot does not hold. One object serves the REST routes and Electrum (whose node
 * interface, lib/electrum/README.md, this implements).
 */

class ServeNode {
  /**
   * @param {import('./client').NodeClient} client
   * @param {{now?: () => number}} [opts]
   */
  constructor(client, { now = Date.now } = {}) {
    this.client = client;
    /** fee estimates, kept 30 s (they change with blocks, not requests) */
    this.fees = new FeeEstimator(client, { now });
    /** @type {{at: number, answer: Promise<number>}|null} the relay fee, kept as the estimates are */
    this.relay = null;
    /** 'getnetworkinfo' | 'getinfo' once learnt */
    this.relayMethod = null;
  }

  /** The node's URL as printed (password masked). */
  get display() {
    return this.client.display;
  }

  /**
   * The node's best-chain tip: its hash, then that block's height (so the two always agree).
   * @returns {Promise<{height: number, hash: string}>}
   */
  async tip() {
    const hash = await this.client.getBestBlockHash();
    const { height } = await this.client.getHeaderInfo(hash);
    return { height, hash };
  }

  /**
   * A block's bytes (`getblock HASH 0`): the block reader's fallback, which checks them.
   * @param {string} hash display hex
   * @returns {Promise<Buffer>}
   */
  async block(hash) {
    const [r] = await this.client.getRawBlocks([hash]);
    if (r.error) throw r.error;
    return r.raw;
  }

  /**
   * Broadcasts a transaction through the node (sent once).
   * @param {Buffer|string} raw bytes or hex
   * @returns {Promise<string>} its txid, as the node reports it
   * @throws {NodeError} ERR_NODE_REJECTED (details.rpcCode, the node's own message) when the
   *   node refuses it; the client's errors (ERR_NODE_UNAVAILABLE, ERR_NODE_AUTH) when it cannot ask
   */
  async broadcast(raw) {
    try {
      return await this.client.sendRawTransaction(raw);
    } catch (err) {
      if (err.code !== 'ERR_NODE_RPC') throw err;
      // the node answered, and said no: its words are the client's reason
      const reason = (err.details && err.details.rpcMessage) || err.message;
      throw new NodeError('ERR_NODE_REJECTED', reason, { rpcCode: err.rpcCode, rpcMessage: reason });
    }
  }

  /**
   * A fee rate for confirmation within `blocks`, BTC/kvB, -1 when the node has none (Electrum's
   * blockchain.estimatefee).
   * @param {number} blocks
   * @returns {Promise<number>}
   */
  async estimateFee(blocks) {
    // Electrum's parameter is any unsigned number: a target of 0 blocks has no estimate
    if (!Number.isInteger(blocks) || blocks < 1) return -1;
    const r = await this.fees.estimate(blocks);
    return r.btcPerKvB === null ? -1 : r.btcPerKvB;
  }

  /**
   * Esplora's /fee-estimates: {target: sat/vB} for the targets the node can estimate (one
   * batch of `estimatesmartfee`, else of `estimatefee` on btcd; a target it cannot estimate is
   * left out, as electrs does), kept for 30 s.
   * @returns {Promise<Record<string, number>>}
   */
  feeEstimates() {
    return this.fees.estimates(ESPLORA_TARGETS);
  }

  /**
   * mempool.space's /api/v1/fees/recommended (lib/node/fees.js recommendedFees): the node's
   * estimates for 1, 3 and 6 blocks (one batch, kept as the others) and its relay fee.
   * @returns {Promise<{fastestFee: number, halfHourFee: number, hourFee: number, economyFee: number, minimumFee: number}>}
   */
  async recommendedFees() {
    const names = Object.keys(RECOMMENDED_TARGETS);
    const [estimates, relay] = await Promise.all([this.fees.estimateMany(names.map((n) => RECOMMENDED_TARGETS[n])), this.relayFee()]);
    return recommendedFees(Object.fromEntries(names.map((n, i) => [n, estimates[i].satPerVb])), relay);
  }

  /**
   * The node's minimum relay fee, BTC/kvB (`getnetworkinfo`; btcd has only `getinfo`), kept as
   * long as the fee estimates (wallets ask for it on every connection).
   * @returns {Promise<number>}
   */
  relayFee() {
    const t0 = this.fees.now();
    if (!this.relay || t0 - this.relay.at >= this.fees.ttlMs) {
      const answer = this._askRelayFee();
      const kept = { at: t0, answer };
      answer.catch(() => { if (this.relay === kept) this.relay = null; }); // a failure is not kept
      this.relay = kept;
    }
    return this.relay.answer;
  }

  async _askRelayFee() {
    let info = null;
    if (this.relayMethod !== 'getinfo') {
      try {
        info = await this.client.rpc.call('getnetworkinfo');
        this.relayMethod = 'getnetworkinfo';
      } catch (err) {
        // btcd lists getnetworkinfo but answers it "Command unimplemented" (-1)
        if (!(err.rpcCode === RPC_METHOD_NOT_FOUND || (err.rpcCode === -1 && /unimplemented/i.test(err.message)))) throw err;
        this.relayMethod = 'getinfo';
      }
    }
    if (this.relayMethod === 'getinfo') info = await this.client.rpc.call('getinfo');
    if (!info || typeof info.relayfee !== 'number') throw new NodeError('ERR_NODE_PROTOCOL', `the node at ${this.display} reports no relay fee`);
    return info.relayfee;
  }

  /**
   * A transaction the node holds in its mempool (`getrawtransaction TXID 0`), or null.
   * @param {Buffer} txid internal order
   * @returns {Promise<Buffer|null>}
   */
  async rawTx(txid) {
    const [raw] = await this.client.getRawTransactions([Buffer.from(txid).reverse().toString('hex')]);
    return raw;
  }

  /**
   * Mines `n` blocks on a test network (`generate`: btcd, Bitcoin Core before 0.19), as
   * bitcore-node's generateBlock asked its node; a node without it refuses (its RPC error).
   * @param {number} n
   * @returns {Promise<string[]>} the new blocks' hashes
   */
  async generate(n) {
    return this.client.rpc.call('generate', [n], { retryMs: 0 });
  }

  close() {
    this.client.close();
  }
}

module.exports = { ServeNode, ESPLORA_TARGETS };

/**
 * The node the command line names (`--rpc-url`, `--rpc-cookie`, `--rpc-host`, or
 * $ADDRINDEX_RPC_URL), as a ServeNode; null when none is named.
 * @param {object} opts
 * @param {{rpcUrl?: string, rpcCookie?: string, rpcHost?: string}} opts.node the options' values
 * @param {string|import('../chain/networks').Network} opts.network
 * @param {number} [opts.retryMs] how long a failed call is retried (RpcClient's retryMs)
 * @param {number} [opts.timeoutMs]
 * @param {NodeJS.ProcessEnv} [opts.env]
 * @returns {ServeNode|null}
 */
function openServeNode({ node, network, retryMs, timeoutMs, env = process.env }) {
  const { resolveEndpoint } = require('./endpoint');
  const { NodeClient } = require('./client');
  const endpoint = resolveEndpoint({ rpcUrl: node.rpcUrl, rpcCookie: node.rpcCookie, rpcHost: node.rpcHost, network, env });
  if (!endpoint) return null;
  return new ServeNode(NodeClient.fromEndpoint(endpoint, { retryMs, timeoutMs }));
}

module.exports.openServeNode = openServeNode;
