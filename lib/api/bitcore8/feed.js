'use strict';

const { verifySignature } = require('./auth');
const S = require('./shapes');
const { newInView } = require('../../bitcore/announce');

/**
 * bitcore-node v8's live feed (its services/socket.ts) over socket.io, from the same store
 * every answer reads: the index's tip and its mempool snapshot, watched by each `serve` worker
 * for the sockets connected to it (a socket is one websocket, so it stays with one worker).
 *
 * A client emits `room` with a room name:
 *   /BTC/<network>/inv       'block' for each new block, 'tx' and 'coin' for each new mempool
 *                            transaction and each output it makes
 *   /BTC/<network>/address   an event named after the address, with the coin, for each new
 *                            mempool output paying it
 *   /BTC/<network>/wallet    with {pubKey, message, signature} (the message signed by the
 *                            wallet's key, as x-signature is): joins the wallet's room, which
 *                            gets 'tx' and 'coin' ({pubKey, tx|coin}) for the mempool
 *                            transactions paying or spending its addresses
 *   /BTC/<network>/wallets   with the same payload from a key the server lists in `bwsKeys`:
 *                            every wallet's events (bitcore-wallet-service's room)
 * A payload that does not verify gets 'failure' {message: 'Authentication failed'}.
 *
 * Like bitcore-node, blocks send 'block' only, and transactions and coins are announced when they
 * enter the mempool. The socket.io server is the worker's one (insight's feed, lib/api/live.js):
 * both feeds' clients connect to /socket.io/, and a socket's events say which it speaks
 * (`room` here, `subscribe` there). bitcore's own clients and the wallet service ask for the
 * websocket transport; with several workers it is the only one (long-polling would need every
 * request of a session at one worker).
 */

class V8Feed {
  /**
   * @param {object} opts
   * @param {import('../server').ApiApp} opts.app
   * @param {import('socket.io').Server} opts.io the worker's socket.io server, insight's feed's
   *   (lib/api/live.js: one server for both feeds, as one engine answers /socket.io/)
   * @param {number} [opts.pollMs] how often the tip and the mempool head are read while a socket
   *   is connected
   * @param {string[]} [opts.bwsKeys] keys that may join the wallets room
   */
  constructor({ app, io, pollMs = 250, bwsKeys = [] }) {
    this.app = app;
    this.reads = app.bitcore8;
    this.network = this.reads.network;
    this.prefix = `/BTC/${this.network}/`;
    this.pollMs = pollMs;
    this.bwsKeys = new Set(bwsKeys);
    this.timer = null;
    this.tip = null;
    /** latin1 txids of the last mempool view read */
    this.seen = null;
    this.polling = null;
    this.io = io;
    this.onConnection = (socket) => this.connected(socket);
    this.io.on('connection', this.onConnection);
  }

  /** @private */
  connected(socket) {
    socket.on('room', (room, payload) => {
      if (typeof room !== 'string' || !room.startsWith(this.prefix)) return;
      const name = room.slice(this.prefix.length);
      const signed = () => payload && typeof payload.message === 'string' && verifySignature(payload.message, payload.pubKey, payload.signature);
      if (name === 'inv' || name === 'address') socket.join(room);
      else if (name === 'wallet') {
        if (signed()) socket.join(this.prefix + payload.pubKey);
        else socket.emit('failure', { message: 'Authentication failed' });
      } else if (name === 'wallets') {
        if (payload && this.bwsKeys.has(payload.pubKey) && signed()) socket.join(room);
        else socket.emit('failure', { message: 'Authentication failed' });
      }
    });
    socket.on('disconnect', () => this.schedule());
    this.schedule();
  }

  /** Polls while someone listens. @private */
  schedule() {
    const listening = this.io.engine.clientsCount > 0;
    if (listening && !this.timer) {
      this.timer = setInterval(() => this.poll(), this.pollMs);
      this.poll();
    } else if (!listening && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
      this.tip = null;
      this.seen = null;
    }
  }

  /** One look at the tip and the mempool; one at a time. */
  poll() {
    if (!this.polling) {
      this.polling = this.check().catch((err) => this.app.log(`addrindex bitcore v8 feed: ${err && err.stack ? err.stack : err}`))
        .finally(() => { this.polling = null; });
    }
    return this.polling;
  }

  /** @private */
  async check() {
    const store = this.app.store;
    const tip = await store.getTip();
    if (!tip) return;
    if (this.tip && this.tip.hash !== tip.hash) {
      // the blocks since the last tip (a reorg: the new branch's, at most the last 10)
      const from = Math.max(Math.min(this.tip.height, tip.height) + (this.tip.height < tip.height ? 1 : 0), tip.height - 9);
      for (let h = from; h <= tip.height; h++) {
        const row = await store.getBlock(h);
        if (row) this.io.to(`${this.prefix}inv`).emit('block', { ...(await this.reads.blockJson(row)), processed: true });
      }
    }
    this.tip = tip;
    const pool = await this.app.mempool.at(tip);
    if (!pool) return;
    const seen = this.seen;
    const seenAt = this.seenAt;
    this.seen = pool;
    this.seenAt = Math.floor(Date.now() / 1000);
    if (!seen) return; // the first look only learns what is there
    if (seen.seq === pool.seq) return;
    // the transactions the last view looked at did not hold: from the changes between them
    const fresh = newInView(pool, seen, seenAt);
    // their bytes read from the store at once; announced one after another, in snapshot order
    const txs = await Promise.all(fresh.map((m) => pool.parsed(m)));
    for (let k = 0; k < fresh.length; k++) await this.announce(fresh[k], txs[k], pool);
  }

  /** A new mempool transaction (`tx`, parsed): its tx and coin events, and its wallets'. @private */
  async announce(m, tx, pool) {
    const txEvent = {
      chain: S.CHAIN, network: this.network, txid: tx.hash, blockHeight: S.SPENT.pending, coinbase: false, fee: m.fee, size: tx.size,
      locktime: tx.locktime, inputCount: tx.inputs.length, outputCount: tx.outputs.length, value: tx.outputs.reduce((n, o) => n + o.value, 0),
      mempoolTime: S.iso(m.time * 1000), wallets: [],
    };
    const inv = this.io.to(`${this.prefix}inv`);
    inv.emit('tx', txEvent);
    const coins = tx.outputs.map((o, vout) => ({
      chain: S.CHAIN, network: this.network, mintTxid: tx.hash, mintIndex: vout, mintHeight: S.SPENT.pending, coinbase: false, value: o.value,
      address: S.coinAddress(o.script, this.app.network), script: o.script.toString('hex'), spentTxid: '', spentHeight: S.SPENT.unspent, wallets: [],
    }));
    for (const c of coins) {
      if (c.address !== 'false') this.io.to(`${this.prefix}address`).emit(c.address, c);
      inv.emit('coin', c);
    }
    // the wallets of what it pays and what it spends (script view: P2PK under its own script)
    const keys = [];
    const vouts = []; // the output a key is of, -1 for an input's
    m.outputs.forEach((o, vout) => {
      const k = o.p2pk || o.scripthash;
      if (k) {
        keys.push(k);
        vouts.push(vout);
      }
    });
    for (const i of m.inputs) {
      const k = i.p2pk || i.scripthash;
      if (k) {
        keys.push(k);
        vouts.push(-1);
      }
    }
    if (keys.length === 0) return;
    const holders = await this.app.store.getWalletsOf(keys);
    const byWallet = new Map();
    holders.forEach((ws, k) => {
      for (const w of ws) {
        if (!byWallet.has(w.pubKey)) byWallet.set(w.pubKey, new Set());
        if (vouts[k] >= 0) byWallet.get(w.pubKey).add(vouts[k]);
      }
    });
    for (const [pubKey, paid] of byWallet) {
      const room = this.io.to(this.prefix + pubKey);
      const all = this.io.to(`${this.prefix}wallets`);
      room.emit('tx', { pubKey, tx: txEvent });
      all.emit('tx', { pubKey, tx: txEvent });
      for (const vout of paid) {
        room.emit('coin', { pubKey, coin: coins[vout] });
        all.emit('coin', { pubKey, coin: coins[vout] });
      }
    }
  }

  /** Stops polling (the socket.io server and its sockets are insight's feed's to close). */
  close() {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.io.off('connection', this.onConnection);
    return Promise.resolve();
  }
}

module.exports = { V8Feed };
