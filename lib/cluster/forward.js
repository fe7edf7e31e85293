'use strict';

const errors = require('../errors');
const { READ_METHODS } = require('../stores/abstract');

/**
 * Store reads forwarded over the cluster IPC channel, for stores only one process may open
 * (LevelDB: the process that owns the database answers, workers forward to it).
 *
 * The primary runs serveStore() over its open store; each worker uses a ForwardedStore, which
 * has the read half of the store contract and sends every call to the primary. The channel
 * uses cluster's "advanced" serialization (structured clone), so Buffers cross as bytes, not
 * as JSON arrays; they arrive as Uint8Arrays and are turned back into Buffers here.
 */

// the contract's reads (lib/stores/abstract.js), whichever the contract has
const READ_SET = new Set(READ_METHODS);

const CALL = 'addrindex:store-call';
const REPLY = 'addrindex:store-reply';

/**
 * Answers store calls from workers (in the primary).
 * @param {import('node:cluster').Worker} worker
 * @param {import('../stores/abstract').AbstractStore} store
 */
function serveStore(worker, store) {
  worker.on('message', (msg) => {
    if (!msg || msg.type !== CALL) return;
    const { id, method, args } = msg;
    // a read waits out a bulk group the primary's sync has open (a reorg's revert and new
    // branch, which LevelDB commits one by one): the worker sees both or neither
    const run = READ_SET.has(method)
      ? store.untilGroupEnds().then(() => store[method](...revive(args)))
      : Promise.reject(new errors.StoreError('ERR_NOT_FORWARDED', `store method "${method}" is not forwarded to workers`));
    run.then(
      (result) => send(worker, { type: REPLY, id, result }),
      (err) => send(worker, { type: REPLY, id, error: flattenError(err) }));
  });
}

function send(worker, msg) {
  if (worker.isConnected()) worker.send(msg);
}

/**
 * The worker side: the read half of the store contract, every call answered by the primary.
 */
class ForwardedStore {
  /**
   * @param {{send: Function, on: Function, off: Function}} [channel] the IPC channel (process)
   * @param {{call: string, reply: string}} [types] the message types (another forwarder, e.g.
   *   lib/cluster/wallet-writes.js, shares this plumbing with its own)
   */
  constructor(channel = process, types = { call: CALL, reply: REPLY }) {
    this.channel = channel;
    this.types = types;
    this.pending = new Map();
    this.nextId = 1;
    this.closed = false;
    this.onMessage = (msg) => {
      if (!msg || msg.type !== this.types.reply) return;
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (msg.error) p.reject(rebuildError(msg.error));
      else p.resolve(revive(msg.result));
    };
    this.onDisconnect = () => this.failAll('the primary process went away');
    channel.on('message', this.onMessage);
    channel.on('disconnect', this.onDisconnect);
  }

  async open() {}

  async close() {
    this.closed = true;
    this.channel.off('message', this.onMessage);
    this.channel.off('disconnect', this.onDisconnect);
    this.failAll('the store was closed');
  }

  failAll(why) {
    for (const p of this.pending.values()) p.reject(new errors.StoreError('ERR_STORE_CLOSED', why));
    this.pending.clear();
  }

  call(method, args) {
    if (this.closed) return Promise.reject(new errors.StoreError('ERR_STORE_CLOSED', 'the store was closed'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.channel.send({ type: this.types.call, id, method, args }, (err) => {
        if (!err) return;
        this.pending.delete(id);
        reject(new errors.StoreError('ERR_STORE_CLOSED', `cannot reach the primary process: ${err.message}`));
      });
    });
  }
}
for (const method of READ_METHODS) {
  ForwardedStore.prototype[method] = function forwarded(...args) { return this.call(method, args); };
}

/** Uint8Arrays (how Buffers arrive through structured clone) back into Buffers, deeply. */
function revive(value) {
  if (value === null || typeof value !== 'object') return value;
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = revive(value[i]);
    return value;
  }
  for (const k of Object.keys(value)) value[k] = revive(value[k]);
  return value;
}

function flattenError(err) {
  return {
    name: err && err.name, code: err && err.code, message: err && err.message ? err.message : String(err),
  };
}

/** The typed error again (so the API maps a forwarded ERR_BAD_CURSOR like a local one). */
function rebuildError({ name, code, message }) {
  const Type = name && errors[name] && name !== 'AddrIndexError' ? errors[name] : null;
  if (Type && code) return new Type(code, message);
  const err = new Error(message);
  if (code) err.code = code;
  return err;
}

module.exports = { ForwardedStore, serveStore };
