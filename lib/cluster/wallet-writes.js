'use strict';

const { WALLET_WRITE_METHODS } = require('../stores/abstract');
const { openIndex } = require('../stores');
const { ForwardedStore } = require('./forward');

/**
 * Who writes the bitcore v8 wallets of `addrindex serve` (docs/API.md, "Wallets").
 *
 * The workers are readers: an LMDB worker has the environment open read-only, a LevelDB
 * worker has no database at all (its primary owns it). So they send wallet writes to the
 * primary, which holds one writable handle for them, opened on the first write:
 *
 *   lmdb   a writable environment beside `sync`'s. LMDB lets one process write at a time (its
 *          write lock, which a sync commit holds for its puts only); a wallet write is one short
 *          transaction guarded by the wallet's own row, never by the tip, so it waits at most for
 *          a commit under way and never makes one fail (test/bitcore8/wallet-writes.test.js).
 *   level  the primary's database (a second store object shares its handle): LevelDB admits
 *          one process, and the primary is it.
 *   mongo  not forwarded: each worker writes its wallet documents itself (the server orders
 *          them), without opening the chain's writer.
 *
 * One write at a time in the primary, so two imports to one wallet never race for its row.
 */

const CALL = 'addrindex:wallet-call';
const REPLY = 'addrindex:wallet-reply';
const WRITES = new Set(WALLET_WRITE_METHODS);

/**
 * The primary's side: answers its workers' wallet writes.
 */
class WalletWriter {
  /**
   * @param {{store: string, datadir?: string, network?: string}} config the store of `serve`
   * @param {import('../stores/abstract').AbstractStore|null} [primaryStore] the store the primary
   *   already holds (LevelDB: its handle is shared)
   */
  constructor(config, primaryStore = null) {
    this.config = config;
    this.primaryStore = primaryStore;
    this.store = null;
    this.queue = Promise.resolve();
  }

  /** Whether this store's workers forward their wallet writes. */
  static forwards(kind) {
    return kind === 'lmdb' || kind === 'level';
  }

  /** @private */
  async writable() {
    if (!this.store) {
      if (this.primaryStore && !this.primaryStore.readOnly) return this.primaryStore;
      this.store = await openIndex({ store: this.config.store, datadir: this.config.datadir, network: this.config.network, readOnly: false });
    }
    return this.store;
  }

  /**
   * Runs one write, after the ones before it.
   * @param {string} method one of WALLET_WRITE_METHODS
   * @param {unknown[]} args
   */
  run(method, args) {
    const job = this.queue.then(async () => {
      if (!WRITES.has(method)) throw Object.assign(new Error(`"${method}" is not a wallet write`), { code: 'ERR_NOT_FORWARDED' });
      const store = await this.writable();
      return store[method](...args);
    });
    this.queue = job.catch(() => {});
    return job;
  }

  /**
   * Answers a worker's wallet writes.
   * @param {import('node:cluster').Worker} worker
   */
  serve(worker) {
    worker.on('message', (msg) => {
      if (!msg || msg.type !== CALL) return;
      this.run(msg.method, reviveArgs(msg.args)).then(
        (result) => { if (worker.isConnected()) worker.send({ type: REPLY, id: msg.id, result }); },
        (err) => { if (worker.isConnected()) worker.send({ type: REPLY, id: msg.id, error: { name: err.name, code: err.code, message: err.message } }); });
    });
  }

  async close() {
    await this.queue;
    if (this.store) await this.store.close();
    this.store = null;
  }
}

/** Buffers arrive through the IPC channel as Uint8Arrays. */
function reviveArgs(args) {
  return args.map((a) => (Array.isArray(a)
    ? a.map((e) => (e && e.scripthash instanceof Uint8Array ? { ...e, scripthash: Buffer.from(e.scripthash) } : e))
    : a));
}

/**
 * A worker's side: the wallet writes, each sent to the primary. (Reuses the forwarding store's
 * request and reply plumbing with its own message types.)
 */
class ForwardedWalletWriter extends ForwardedStore {
  constructor(channel = process) {
    super(channel, { call: CALL, reply: REPLY });
  }
}
for (const method of WALLET_WRITE_METHODS) {
  ForwardedWalletWriter.prototype[method] = function forwarded(...args) { return this.call(method, args); };
}

module.exports = { WalletWriter, ForwardedWalletWriter };
