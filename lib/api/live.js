'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { EventEmitter } = require('node:events');
const { parseTransaction } = require('../chain/tx');
const { TipWatcher, addedHeights } = require('../bitcore/tip');
const { Subscriptions } = require('../bitcore/subscriptions');
const { Announcer } = require('../bitcore/announce');
const { feedAddresses, invTx } = require('./insight-feed');
const validate = require('./validate');

/** Blocks announced one by one when the tip moves; a longer jump announces its tip only. */
const MAX_ANNOUNCED = 10;
/** Where socket.io clients connect (insight-ui's `io.connect(null)` and every client's default). */
const PATH = '/socket.io/';
const CLIENT_PATH = '/socket.io/socket.io.js';

/**
 * insight-api's socket.io live feed, from one `addrindex serve` worker: the `inv` room (`tx`:
 * insight's message for each new transaction; `block`: each new block's hash) and
 * bitcore-node's bus events `bitcoind/addresstxid` ({address, txid} for subscribed addresses;
 * lib/api/insight-feed.js names them, P2PK payments included), `bitcoind/hashblock` and
 * `bitcoind/rawtransaction`. As the Electrum server, each worker watches the index's tip and
 * mempool snapshot itself (lib/bitcore/tip.js, the bitcore-node service's watcher) and tells
 * its own connections: every worker reads the same committed index, so no message between
 * processes is needed. What is announced and when is the service's (lib/bitcore/announce.js):
 * a snapshot's new transactions, then each new block's transactions not announced yet and the
 * block.
 *
 * The server is socket.io 4 (engine.io protocol 4, and 3 with `allowEIO3` for the socket.io
 * 1.x and 2.x clients that insight's users wrote against bitcore-node). insight-ui 0.4.0 ships
 * no client of its own: it loads /socket.io/socket.io.js from the server it talks to, which
 * here is socket.io 4's client. node:cluster spreads connections over the workers without
 * stickiness, and a long-polling session sends each request on whichever connection the
 * browser picks: with more than one worker the server takes websocket connections only (one
 * connection, one worker), and the client served here starts with that transport unless its
 * caller chose another.
 */
class LiveFeed {
  /**
   * @param {import('./server').ApiApp} app
   * @param {object} [opts]
   * @param {number} [opts.pollMs=1000] how often the tip and the snapshot are read
   * @param {boolean} [opts.websocketOnly=false] refuse long-polling (several workers)
   */
  constructor(app, { pollMs = 1000, websocketOnly = false } = {}) {
    // loaded only by a server that serves the feed
    const { Server } = require('socket.io');
    const engineio = require('engine.io');
    this.app = app;
    this.network = app.network;
    const transports = websocketOnly ? ['websocket'] : ['polling', 'websocket'];
    this.websocketOnly = websocketOnly;
    this.engine = new engineio.Server({ transports, allowEIO3: true, path: PATH, maxHttpBufferSize: 64 * 1024 });
    this.io = new Server({ serveClient: false, allowEIO3: true, transports });
    this.io.bind(this.engine);
    this.subscriptions = new Subscriptions({ isAddress: (a) => isAddress(a, this.network) });
    const emitter = new EventEmitter();
    emitter.on('tx', (raw) => {
      if (this.io.sockets.adapter.rooms.has('inv')) this.io.to('inv').emit('tx', invTx(parseTransaction(raw, { detail: true }), this.network));
    });
    this.announce = new Announcer({
      emitter, subscriptions: this.subscriptions,
      addressesOf: (raw) => feedAddresses(parseTransaction(raw, { detail: true }), this.network),
    });
    this.io.on('connection', (socket) => this.onConnection(socket));
    this.watcher = new TipWatcher(app.store, {
      pollMs,
      onChange: (tip, prev) => this.onTip(tip, prev),
      mempool: app.mempool,
      onMempool: (view, prev) => this.announce.mempool(view, prev),
    });
    this.watcher.on('error', (err) => app.log(`addrindex live feed: ${err && err.stack ? err.stack : err}`));
    this.client = null;
    this.closing = null;
  }

  /** Reads the tip and its snapshot (not announced), then polls them. */
  async start() {
    await this.watcher.start();
  }

  /**
   * Subscriptions as insight-api and bitcore-node's web service took them: `subscribe`/
   * `unsubscribe` with an event name and its parameters.
   * @param {import('socket.io').Socket} socket
   */
  onConnection(socket) {
    const s = this.subscriptions;
    // A subscription to a name that publishes nothing is acknowledged when the client asks
    // (a round trip a client can wait on: what it sent before is in place). The others are
    // not, as bitcore-node acknowledged none: insight-ui's socket wrapper passes a callback of
    // its own on every emit, and calls an event's parameters in its place
    const split = (args) => {
      const ack = typeof args[args.length - 1] === 'function' ? args.pop() : null;
      return { name: args[0], params: args[1], ack };
    };
    socket.on('subscribe', (...args) => {
      const { name, params, ack } = split(args);
      if (name === 'inv') socket.join('inv');
      else if (name === 'bitcoind/addresstxid') s.subscribeAddress(socket, params);
      else if (name === 'bitcoind/hashblock') s.subscribe('hashblock', socket);
      else if (name === 'bitcoind/rawtransaction') s.subscribe('rawtransaction', socket);
      // anything else (insight-ui's status page asks for 'sync') names no event: ignored, as
      // bitcore-node's bus ignores it
      else if (ack) ack();
    });
    socket.on('unsubscribe', (...args) => {
      const { name, params, ack } = split(args);
      if (name === 'inv') socket.leave('inv');
      else if (name === 'bitcoind/addresstxid') s.unsubscribeAddress(socket, params);
      else if (name === 'bitcoind/hashblock') s.unsubscribe('hashblock', socket);
      else if (name === 'bitcoind/rawtransaction') s.unsubscribe('rawtransaction', socket);
      else if (ack) ack();
    });
    socket.on('disconnect', () => {
      s.unsubscribeAddress(socket);
      s.unsubscribe('hashblock', socket);
      s.unsubscribe('rawtransaction', socket);
    });
  }

  /** A new tip: each added block's transactions not announced yet, then the block. */
  async onTip(tip, prev) {
    const store = this.app.store;
    for (const h of await addedHeights(store, tip, prev, MAX_ANNOUNCED)) {
      const row = await store.getBlock(h);
      if (!row) break; // moved again meanwhile: the next poll announces it
      try {
        this.announce.block((await this.app.reader.read(row.hash, row.locator)).block);
      } catch (err) {
        // a block that cannot be read (no blocks dir, pruned) is still announced, its
        // transactions not
        if (err.code !== 'ERR_BLOCK_UNAVAILABLE') throw err;
      }
      this.io.to('inv').emit('block', row.hash);
      this.subscriptions.hashblock(row.hash);
    }
  }

  /** Whether a request is the feed's (its client file or an engine.io request). */
  owns(pathname) {
    return pathname.startsWith(PATH);
  }

  /**
   * Answers one HTTP request under /socket.io/: the client file, else engine.io's handshake
   * and long-polling.
   * @param {import('node:http').IncomingMessage} req
   * @param {import('node:http').ServerResponse} res
   * @param {string} pathname
   */
  handleRequest(req, res, pathname) {
    if (pathname === CLIENT_PATH && (req.method === 'GET' || req.method === 'HEAD')) {
      const body = this.clientScript();
      res.writeHead(200, { 'content-type': 'application/javascript; charset=utf-8', 'content-length': body.length, 'cache-control': 'public, max-age=3600' });
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    this.engine.handleRequest(req, res);
  }

  /**
   * The http server's 'upgrade' event: websocket connections under /socket.io/.
   * @returns {boolean} whether it was the feed's
   */
  handleUpgrade(req, socket, head) {
    const q = req.url.indexOf('?');
    if (!this.owns(q === -1 ? req.url : req.url.slice(0, q))) return false;
    this.engine.handleUpgrade(req, socket, head);
    return true;
  }

  /** socket.io 4's browser client, made to start with websockets when the server takes only those. */
  clientScript() {
    if (!this.client) {
      const file = path.join(path.dirname(require.resolve('socket.io')), '..', 'client-dist', 'socket.io.min.js');
      let js = fs.readFileSync(file, 'utf8');
      if (this.websocketOnly) js += WEBSOCKET_FIRST;
      this.client = Buffer.from(js);
    }
    return this.client;
  }

  /** Stops polling and closes every connection (once; later calls wait for the first). */
  close() {
    if (!this.closing) {
      this.closing = (async () => {
        await this.watcher.stop();
        await new Promise((resolve) => this.io.close(() => resolve()));
      })();
    }
    return this.closing;
  }
}

// Appended to the client: `io(uri, opts)` and `io.connect` default to the websocket transport
// (insight-ui calls `io.connect(null, {...})` without transports).
const WEBSOCKET_FIRST = `
;(function (g) {
  var connect = g.io;
  if (!connect) return;
  function io(uri, opts) {
    if (uri && typeof uri === 'object') { opts = uri; uri = undefined; }
    var o = {};
    for (var k in opts || {}) o[k] = opts[k];
    if (!o.transports) o.transports = ['websocket'];
    return connect(uri || undefined, o);
  }
  for (var p in connect) io[p] = connect[p];
  io.connect = io;
  g.io = io;
})(this);
`;

function isAddress(a, network) {
  try {
    validate.address(a, network);
    return true;
  } catch {
    return false;
  }
}

module.exports = { LiveFeed };
