'use strict';

const path = require('node:path');
const { EventEmitter } = require('node:events');
const { Readable } = require('node:stream');
const { AddrIndexError, UsageError } = require('../errors');
const { openIndex } = require('../stores');
const { hostBitcore, networkOf } = require('./host');
const { parseAddresses } = require('./addresses');
const { AddressIndex } = require('./address-index');
const { AddressApi, DEFAULTS } = require('./address-api');
const { ChainApi } = require('./chain-api');
const { ApiApp } = require('../api/server');
const { IndexBlocks } = require('./blocks');
const { startFollower } = require('./follower');
const { openServeNode } = require('../node/serve-node');
const { MempoolReader } = require('../mempool/reader');
const { PairedReads } = require('./paired');
const { TipWatcher, addedHeights } = require('./tip');
const { Subscriptions } = require('./subscriptions');
const { Announcer } = require('./announce');
const { feedAddresses } = require('../api/insight-feed');
const { parseTransaction } = require('../chain/tx');
const { Broadcaster } = require('./broadcast');
const status = require('./status');
const { serviceFailure, rpcError } = require('./rpc-error');

/** Blocks announced one by one when the tip moves; a longer jump announces its tip only. */
const MAX_ANNOUNCED = 10;
/** The node's tip is asked again at most this often (syncPercentage, isSynced, `synced`). */
const NODE_TIP_MS = 1000;
/** The node behind the service: a failed call is retried this long, each waits at most this. */
const NODE_RETRY_MS = 5000;
const NODE_TIMEOUT_MS = 10000;

/**
 * addrindex as bitcore-node 3's `bitcoind` service: a drop-in for
 * bitcore-node/lib/services/bitcoind.js, so insight-api and other services written for it
 * run unchanged on an addrindex index instead of bitpay's patched bitcoind.
 *
 * Configured by `servicesConfig.bitcoind` in bitcore-node.json with addrindex's own options:
 *
 *   datadir      the index (`addrindex sync` keeps it), relative to the config's directory
 *   store        lmdb (default) | level | mongo;  mongodbUrl for mongo
 *   network      optional; must agree with the node's and the index's
 *   blocksDir    the Bitcoin Core blocks dir the index is synced from, where blocks and
 *                transactions are read (default: the one the sync recorded in the index; an
 *                index synced with --txstore needs none; without any, the address methods
 *                still work)
 *   tipPollMs    how often the index's tip and mempool snapshot are checked (default 1000)
 *   rpcUrl       a node's JSON-RPC (http://USER:PASS@HOST:PORT; or rpcCookie with rpcHost):
 *                sendTransaction, estimateFee and generateBlock go to it, getInfo's relay fee
 *                and syncPercentage come from it, and it gives the blocks the index and the
 *                blocks dir cannot (getblock)
 *   broadcastWaitMs  how long sendTransaction waits for the index's mempool to show what it
 *                sent (default 5000; 0: not at all; broadcast.js)
 *   follow       true: keep the index in this process (follower.js), from blocksDir and/or a
 *                node (rpcUrl, or rpcCookie with rpcHost), and with a node its mempool,
 *                instead of a separate `addrindex sync --follow`; followPollMs, threads,
 *                undoDepth as sync's, mempoolPollMs as sync's --mempool-poll-ms
 *   routePrefix  where bitcore-node's web service mounts addrindex's own REST API (native,
 *                Esplora, insight; docs/API.md), default "addrindex": /addrindex/api/v1/…
 *   maxTxids, maxTransactionHistory, maxAddressesQuery, transactionConcurrency: as bitcore-node
 *
 * It reads the index and its mempool snapshot; one writer keeps them: `addrindex sync
 * --follow` beside it, or its own follower (`follow: true`). Every method of the original's
 * getAPIMethods() is here with its arity, callback and result shape (address-api.js and
 * chain-api.js say how each is answered). What needs a node, a mempool or fee data is
 * answered as README.md in this folder lists.
 */
class BitcoindService extends EventEmitter {
  /**
   * @param {object} options servicesConfig.bitcoind, plus `node` and `name` from bitcore-node
   */
  constructor(options) {
    super();
    this.options = options;
    this.node = options.node;
    this.name = options.name;
    this.bitcore = hostBitcore(this.node, this.node && this.node.configPath ? path.dirname(this.node.configPath) : process.cwd());
    this.network = networkOf(this.node, options.network);
    this.log = (this.node && this.node.log) || null;
    /** @type {number} the index's height, as bitcore-node's `height` */
    this.height = -1;
    /** @type {string|undefined} the index's tip hash, as bitcore-node's `tiphash` */
    this.tiphash = undefined;
    this.subscriptions = new Subscriptions({
      isAddress: (a) => { try { return parseAddresses(a, this.network, this.node).length === 1; } catch { return false; } },
      log: this.log,
    });
    this.announce = new Announcer({ emitter: this, subscriptions: this.subscriptions, addressesOf: (raw) => this._addressesOf(raw) });
    // bitcore-node logs service errors instead of crashing on an unheard 'error' event
    this.on('error', (err) => { if (this.log) this.log.error(err.stack || String(err)); });
    this.store = null;
    this.blocks = null;
    this.api = null;
    this.follower = null;
    /** @type {MempoolReader|null} the index's mempool snapshot, shared by every reader here */
    this.mempool = null;
    /** @type {PairedReads|null} reads at one tip, with the snapshot of that tip */
    this.reads = null;
    /** @type {import('../node/serve-node').ServeNode|null} the node behind the service (rpcUrl) */
    this.nodeRpc = null;
    this.nodeTip = { at: 0, height: null };
    /** @type {Broadcaster|null} */
    this.broadcaster = null;
  }

  /** Paths in the config are relative to the config file's directory, as bitcore-node's are. */
  _path(p) {
    if (!p) return p;
    const base = this.node && this.node.configPath ? path.dirname(this.node.configPath) : process.cwd();
    return path.resolve(base, p);
  }

  /**
   * Called by the Node: opens the index (and the blocks dir), reads the tip, starts watching it.
   * @param {(err?: Error) => void} callback
   */
  start(callback) {
    this._start().then(() => setImmediate(callback), (err) => setImmediate(callback, err));
  }

  async _start() {
    const o = this.options;
    if (o.spawn || o.connect) {
      throw new UsageError('ERR_BITCORE_CONFIG',
        'servicesConfig.bitcoind is addrindex\'s: { "datadir": "<index>", "blocksDir": "<bitcoin blocks dir>" }, not bitcore-node\'s "spawn"/"connect"');
    }
    if (!o.datadir && o.store !== 'mongo') {
      throw new UsageError('ERR_BITCORE_CONFIG', 'servicesConfig.bitcoind.datadir is missing: the addrindex index to serve');
    }
    try {
      if (o.follow) {
        this.follower = await startFollower({
          config: o, network: this.network, resolve: (p) => this._path(p),
          log: (line) => { if (this.log) this.log.warn(line); },
          onError: (err) => this.emit('error', new Error(`the follower stopped, the index stays at its last block: ${err.message}`)),
          onMempoolError: (err) => this.emit('error', new Error(`the mempool follower stopped, the snapshot stays as last written: ${err.message}`)),
        });
        this.store = this.follower.store;
      } else {
        this.store = await openIndex({
          store: o.store || 'lmdb', datadir: this._path(o.datadir), mongodbUrl: o.mongodbUrl, network: this.network.name, readOnly: true,
        });
      }
      this.nodeRpc = openServeNode({
        node: { rpcUrl: o.rpcUrl, rpcCookie: o.rpcCookie ? this._path(o.rpcCookie) : undefined, rpcHost: o.rpcHost },
        network: this.network, retryMs: NODE_RETRY_MS, timeoutMs: NODE_TIMEOUT_MS, env: {},
      });
      // one clear error at start for a node of another network or refused credentials
      if (this.nodeRpc) await this.nodeRpc.client.checkNetwork(this.network);
      this.blocks = await IndexBlocks.open({
        store: this.store, network: this.network, dir: o.blocksDir ? this._path(o.blocksDir) : null, maxBytes: o.blockCacheBytes,
        fetchFromNode: this.nodeRpc ? (hash) => this.nodeRpc.block(hash) : null,
      });
      // one reader of the snapshot (decoded once per seq) for the service and the REST routes
      this.mempool = new MempoolReader(this.store);
      // an answer read at a newer tip than the watcher has seen moves `height` with it: insight
      // counts confirmations from `height`, and a transaction of a block just indexed must not
      // show 0 (the block's events still come from the watcher)
      this.reads = new PairedReads(this.store, this.mempool, {
        onTip: (tip) => { if (tip.height > this.height) this._setTip(tip); },
      });
      const limits = {};
      for (const k of Object.keys(DEFAULTS)) if (o[k]) limits[k] = o[k];
      this.chainApi = new ChainApi({
        store: this.store, blocks: this.blocks, network: this.network, bitcore: this.bitcore, node: this.node, reads: this.reads,
      });
      this.addressApi = new AddressApi({
        index: new AddressIndex(this.store),
        reads: this.reads,
        detailedTx: (txid, at) => this.chainApi.getDetailedTransaction(txid, at),
        height: () => this.height,
        network: this.network,
        bitcore: this.bitcore,
        node: this.node,
        limits,
      });
      if (this.nodeRpc) {
        this.broadcaster = new Broadcaster({
          node: this.nodeRpc, reads: this.reads, host: this.node, waitMs: o.broadcastWaitMs,
          wake: this.follower ? () => this.follower.wake() : undefined,
          warn: (msg) => { if (this.log) this.log.warn(msg); },
        });
      }
      this.api = new ApiApp({
        store: this.store, network: this.network, storeKind: this.options.store || 'lmdb',
        blocksDir: this.blocks.dir, indexKeepsBlocks: this.store.keepsTransactions, node: this.nodeRpc,
        nodeConfigured: Boolean(this.nodeRpc), mempoolReader: this.mempool,
        fetchFromNode: this.nodeRpc ? (hash) => this.nodeRpc.block(hash) : null,
        log: (msg) => this.emit('error', new Error(msg)),
      });
      this.watcher = new TipWatcher(this.store, {
        pollMs: o.tipPollMs || 1000,
        onChange: (tip, prev) => this._onTip(tip, prev),
        mempool: this.mempool,
        onMempool: (view, prev) => this._onMempool(view, prev),
      });
      this.watcher.on('error', (err) => this.emit('error', err));
      this._setTip(await this.watcher.start());
    } catch (err) {
      await this._close();
      throw err;
    }
    this.emit('ready');
    if (this.log) {
      this.log.info(`addrindex ${this.network.name} index ${this.store.describe()}, tip ${this.height}, ${this.blocks.describe()}`);
    }
  }

  _setTip(tip) {
    this.height = tip ? tip.height : -1;
    this.tiphash = tip ? tip.hash : undefined;
  }

  /**
   * A new tip: announce its blocks as bitcore-node relayed the node's ZMQ messages (each
   * block's transactions as `tx`, then the block as `block` and bitcoind/hashblock), then
   * `tip` and, when caught up with the block source, `synced`.
   */
  async _onTip(tip, prev) {
    this._setTip(tip);
    this.chainApi.resetCaches();
    this.addressApi.resetCaches();
    for (const h of await addedHeights(this.store, tip, prev, MAX_ANNOUNCED)) {
      const hash = await this.store.getBlockHash(h);
      if (!hash) break; // moved again meanwhile: the next poll announces it
      if (this.blocks.readable) this.announce.block((await this.blocks.read(hash)).block);
      this.emit('block', Buffer.from(hash, 'hex'));
      this.subscriptions.hashblock(hash);
    }
    this.emit('tip', this.height);
    if (Math.round(await this._syncPercentage()) >= 100) this.emit('synced', this.height);
  }

  /**
   * A new mempool snapshot of the tip: what changed in it is forgotten by the caches, and the
   * transactions that entered it are announced as bitcore-node relayed the node's ZMQ `rawtx`
   * (`tx`, bitcoind/rawtransaction, bitcoind/addresstxid).
   */
  async _onMempool(view, prev) {
    this.chainApi.resetCaches();
    await this.announce.mempool(view, prev);
  }

  /**
   * bitcore-node's `_getAddressesFromTransaction`: the addresses a transaction names, distinct,
   * inputs first (lib/api/insight-feed.js, shared with `addrindex serve`'s feed). Unlike the
   * bitcore-lib it asked, a P2PK output names its key's P2PKH address, the address the index
   * counts it for, so an address page hears of such a payment.
   */
  _addressesOf(raw) {
    return feedAddresses(parseTransaction(raw, { detail: true }), this.network);
  }

  /** Called by the Node. */
  stop(callback) {
    this._close().then(() => setImmediate(callback), (err) => setImmediate(callback, err));
  }

  async _close() {
    if (this.follower) await this.follower.stop();
    if (this.watcher) await this.watcher.stop();
    if (this.api) await this.api.close();
    if (this.blocks) await this.blocks.close();
    if (this.store) await this.store.close();
    if (this.nodeRpc) this.nodeRpc.close();
    this.nodeRpc = null;
    this.broadcaster = null;
    this.follower = null;
    this.watcher = null;
    this.api = null;
    this.blocks = null;
    this.store = null;
  }

  /** The methods bitcore-node copies onto the Node, with the original's names and arities. */
  getAPIMethods() {
    return [
      ['getBlock', this, this.getBlock, 1],
      ['getRawBlock', this, this.getRawBlock, 1],
      ['getBlockHeader', this, this.getBlockHeader, 1],
      ['getBlockOverview', this, this.getBlockOverview, 1],
      ['getBlockHashesByTimestamp', this, this.getBlockHashesByTimestamp, 2],
      ['getBestBlockHash', this, this.getBestBlockHash, 0],
      ['getSpentInfo', this, this.getSpentInfo, 1],
      ['getInfo', this, this.getInfo, 0],
      ['syncPercentage', this, this.syncPercentage, 0],
      ['isSynced', this, this.isSynced, 0],
      ['getRawTransaction', this, this.getRawTransaction, 1],
      ['getTransaction', this, this.getTransaction, 1],
      ['getDetailedTransaction', this, this.getDetailedTransaction, 1],
      ['sendTransaction', this, this.sendTransaction, 1],
      ['estimateFee', this, this.estimateFee, 1],
      ['getAddressTxids', this, this.getAddressTxids, 2],
      ['getAddressBalance', this, this.getAddressBalance, 2],
      ['getAddressUnspentOutputs', this, this.getAddressUnspentOutputs, 2],
      ['getAddressHistory', this, this.getAddressHistory, 2],
      ['getAddressSummary', this, this.getAddressSummary, 1],
      ['generateBlock', this, this.generateBlock, 1],
    ];
  }

  /** Where bitcore-node's web service mounts addrindex's own REST API (setupRoutes). */
  getRoutePrefix() {
    return this.options.routePrefix || 'addrindex';
  }

  /**
   * Called by bitcore-node's web service with an express app mounted at getRoutePrefix():
   * addrindex's REST API (lib/api) over the same index and blocks, answered by its own
   * handler. Requests reach it after the web service's JSON body parser, whose limit
   * (`jsonRequestLimit`, 100 kB by default) then bounds the POST bodies, and which has spent
   * the request's stream: such a request is handed on with its body as bytes again.
   * @param {object} app the express sub-app
   */
  setupRoutes(app) {
    app.use((req, res) => {
      if (!this.api) {
        res.writeHead(503, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 'ERR_NOT_READY', message: 'the addrindex service has not started' } }));
        return;
      }
      this.api.handle(req._body === true ? unparsed(req) : req, res);
    });
  }

  /** The bus events (subscriptions.js). */
  getPublishEvents() {
    return this.subscriptions.publishEvents(this);
  }

  // ---- address methods (address-api.js) ----

  getAddressBalance(addressArg, options, callback) {
    reply(() => this.addressApi.getAddressBalance(addressArg, options), options, callback);
  }

  getAddressUnspentOutputs(addressArg, options, callback) {
    reply(() => this.addressApi.getAddressUnspentOutputs(addressArg, options), options, callback);
  }

  getAddressTxids(addressArg, options, callback) {
    reply(() => this.addressApi.getAddressTxids(addressArg, options), options, callback);
  }

  getAddressHistory(addressArg, options, callback) {
    reply(() => this.addressApi.getAddressHistory(addressArg, options), options, callback);
  }

  getAddressSummary(addressArg, options, callback) {
    reply(() => this.addressApi.getAddressSummary(addressArg, options), options, callback);
  }

  // ---- blocks and transactions (chain-api.js) ----

  getBlock(blockArg, callback) {
    reply(() => this.chainApi.getBlock(blockArg), callback);
  }

  getRawBlock(blockArg, callback) {
    reply(() => this.chainApi.getRawBlock(blockArg), callback);
  }

  getBlockHeader(blockArg, callback) {
    reply(() => this.chainApi.getBlockHeader(blockArg), callback);
  }

  getBlockOverview(blockArg, callback) {
    reply(() => this.chainApi.getBlockOverview(blockArg), callback);
  }

  getBlockHashesByTimestamp(high, low, options, callback) {
    reply(() => this.chainApi.getBlockHashesByTimestamp(high, low, typeof options === 'function' ? {} : options), options, callback);
  }

  getRawTransaction(txid, callback) {
    reply(() => this.chainApi.getRawTransaction(txid), callback);
  }

  getTransaction(txid, callback) {
    reply(() => this.chainApi.getTransaction(txid), callback);
  }

  getDetailedTransaction(txid, callback) {
    reply(() => this.chainApi.getDetailedTransaction(txid), callback);
  }

  getSpentInfo(options, callback) {
    reply(() => this.chainApi.getSpentInfo(options), callback);
  }

  // ---- the chain's state (status.js) ----

  getBestBlockHash(callback) {
    reply(async () => {
      const tip = await this.store.getTip();
      return tip ? tip.hash : null;
    }, callback);
  }

  async _syncPercentage() {
    const tip = await this.store.getTip();
    return status.syncPercentage(tip ? tip.height : -1, await this._targetHeight());
  }

  /** The best height of the block source: the node's when there is one, else the blocks dir's. */
  async _targetHeight() {
    if (!this.nodeRpc) return this.blocks.tipHeight();
    if (Date.now() - this.nodeTip.at >= NODE_TIP_MS) {
      const tip = await this.nodeRpc.tip();
      this.nodeTip = { at: Date.now(), height: tip.height };
      // the lag addrindex's own routes report (/addrindex/api/v1/status, /ready)
      if (this.api) this.api.setNodeTip(tip);
    }
    return this.nodeTip.height;
  }

  syncPercentage(callback) {
    reply(() => this._syncPercentage(), callback);
  }

  isSynced(callback) {
    reply(async () => Math.round(await this._syncPercentage()) >= 100, callback);
  }

  getInfo(callback) {
    reply(async () => {
      const tip = await this.store.getTip();
      const row = tip ? await this.store.getBlock(tip.height) : null;
      const bits = row ? row.header.readUInt32LE(72) : null;
      return status.info({
        blocks: tip ? tip.height : -1, bits, network: this.network, networkName: this.node ? this.node.getNetworkName() : this.network.name,
        relayFee: this.nodeRpc ? await this.nodeRpc.relayFee() : null,
      });
    }, callback);
  }

  estimateFee(blocks, callback) {
    reply(async () => (this.nodeRpc ? this.nodeRpc.estimateFee(blocks) : status.NO_FEE_ESTIMATE), callback);
  }

  // ---- what only a node can do ----

  /**
   * Through the node (`rpcUrl`; broadcast.js): its txid once the index's mempool shows the
   * transaction, or the node's refusal with its own code and words (insight answers 400).
   * `allowAbsurdFees` is not passed on: the node's own fee limit applies.
   */
  sendTransaction(tx, options, callback) {
    reply(async () => {
      if (!this.broadcaster) throw needsNode('sendTransaction');
      return this.broadcaster.send(Buffer.isBuffer(tx) ? tx : String(tx));
    }, options, callback);
  }

  /** The node's `generate` (regtest), as bitcore-node asked its node. */
  generateBlock(num, callback) {
    reply(async () => {
      if (!this.nodeRpc) throw needsNode('generateBlock');
      try {
        return await this.nodeRpc.generate(num);
      } catch (err) {
        if (err.code !== 'ERR_NODE_RPC') throw err;
        throw rpcError(this.node, err.rpcCode, (err.details && err.details.rpcMessage) || err.message);
      }
    }, callback);
  }
}

BitcoindService.dependencies = [];

/**
 * A request whose JSON body bitcore-node's web service parsed (body-parser sets `_body` and
 * spends the stream), as lib/api reads requests: the same URL, method, headers and socket, and
 * the body as bytes once more.
 * @param {import('node:http').IncomingMessage & {body: unknown}} req
 * @returns {Readable}
 */
function unparsed(req) {
  const bytes = Buffer.from(JSON.stringify(req.body));
  const again = Readable.from([bytes]);
  again.url = req.url;
  again.method = req.method;
  again.socket = req.socket;
  again.headers = { ...req.headers, 'content-length': String(bytes.length) };
  delete again.headers['content-encoding'];
  return again;
}

function needsNode(method) {
  const err = new Error(`${method} needs a connection to a node, which this addrindex service does not have`);
  err.name = 'NoNodeError';
  return err;
}

/**
 * Runs a method and calls back as bitcore-node does: asynchronously, once, with the error
 * (index failures without a code, see rpc-error.js) or the result. The callback may come
 * in the options' place, as `method(arg, callback)`.
 * @param {() => Promise<unknown>} run
 * @param {Function|unknown} optionsOrCallback
 * @param {Function} [callback]
 */
function reply(run, optionsOrCallback, callback) {
  const cb = typeof callback === 'function' ? callback : optionsOrCallback;
  if (typeof cb !== 'function') throw new TypeError('a callback is expected');
  let p;
  try {
    p = Promise.resolve(run());
  } catch (err) {
    p = Promise.reject(err);
  }
  p.then(
    (result) => setImmediate(cb, null, result),
    (err) => setImmediate(cb, err instanceof AddrIndexError ? serviceFailure(err) : err),
  );
}

module.exports = { BitcoindService };
