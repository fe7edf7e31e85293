'use strict';

const path = require('node:path');
const { Worker } = require('node:worker_threads');
const errors = require('../errors');

/**
 * Raw blocks by hash from a node, fetched on a worker thread (lib/node/fetch-worker.js).
 *
 * Over HTTP, bytes move only while the receiving thread's event loop turns; the sync's main
 * thread spends seconds at a time committing a batch, and a fetch running there would stall
 * with it — the node's answers waiting in socket buffers, the parse workers idle afterwards.
 * On a worker thread the requests go on during a commit, up to `aheadBytes` of blocks the
 * main thread has not taken yet, and arrive as transferred buffers (no copy, no JSON work on
 * the main thread).
 */
class BlockFetcher {
  /**
   * @param {object} config what the worker's RpcClient needs (NodeClient#workerConfig())
   * @param {{signal?: AbortSignal, onRetry?: (info: {error: Error, attempt: number, delayMs: number, what: string}) => void}} [opts]
   *   signal aborts the worker's requests and waits; onRetry hears of each failed request the
   *   worker retries (as RpcClient's option)
   */
  constructor(config, { signal, onRetry } = {}) {
    this.config = config;
    this.signal = signal;
    this.onRetry = onRetry || null;
    this.worker = null;
    this.broken = null;
    this.nextId = 1;
    /** @type {Map<number, (msg: object) => void>} */
    this.streams = new Map();
    this.workerStats = { requests: 0, calls: 0, retries: 0, bytesIn: 0, bytesOut: 0 };
    if (signal) signal.addEventListener('abort', () => this._post({ type: 'abort' }), { once: true });
  }

  _start() {
    if (this.worker) return;
    const w = new Worker(path.join(__dirname, 'fetch-worker.js'), { workerData: this.config });
    w.on('message', (msg) => {
      if (msg.stats) this.workerStats = msg.stats;
      if (msg.type === 'retry') {
        if (this.onRetry) this.onRetry({ ...msg, error: rebuild(msg.error) });
        return;
      }
      const deliver = this.streams.get(msg.id);
      if (deliver) deliver(msg);
    });
    w.on('error', (err) => {
      this.broken = err;
      for (const deliver of this.streams.values()) deliver({ type: 'crash', error: err });
    });
    w.unref();
    this.worker = w;
    if (this.signal && this.signal.aborted) this._post({ type: 'abort' });
  }

  _post(msg) {
    if (this.worker) this.worker.postMessage(msg);
  }

  /**
   * The blocks of `hashes`, in order, as Buffers (views of transferred memory, kept alive by
   * the caller as long as it likes). A block the node answers with an error ends the stream
   * with that RpcError, `details.index` its place in `hashes`.
   * @param {Buffer} hashes 32 bytes per block, internal byte order
   * @param {{requestBytes: number, maxBlocksPerRequest: number, inflight: number, aheadBytes: number}} opts
   * @returns {AsyncGenerator<Buffer>}
   */
  async *stream(hashes, opts) {
    if (this.broken) throw this.broken;
    this._start();
    const id = this.nextId++;
    const queue = [];
    let wake = null;
    this.streams.set(id, (msg) => {
      queue.push(msg);
      if (wake) {
        const w = wake;
        wake = null;
        w();
      }
    });
    // a stream in progress must keep the process alive; an idle worker must not
    if (this.streams.size === 1) this.worker.ref();
    let finished = false;
    try {
      this.worker.postMessage({ type: 'stream', id, hashes: new Uint8Array(hashes), opts });
      for (;;) {
        if (!queue.length) await new Promise((resolve) => { wake = resolve; });
        const msg = queue.shift();
        if (msg.type === 'blocks') {
          const buf = Buffer.from(msg.buffer);
          let at = 0;
          for (const size of msg.sizes) {
            yield buf.subarray(at, at + size);
            at += size;
          }
          this._post({ type: 'ack', id, bytes: buf.length });
        } else if (msg.type === 'end') {
          finished = true;
          return;
        } else {
          finished = true;
          if (msg.type === 'crash') throw msg.error;
          throw rebuild(msg.error, msg.type === 'missing' ? { index: msg.index } : undefined);
        }
      }
    } finally {
      this.streams.delete(id);
      if (!finished) this._post({ type: 'cancel', id });
      if (this.streams.size === 0 && this.worker) this.worker.unref();
    }
  }

  /** The worker's request counters (RpcClient#stats). */
  stats() {
    return { ...this.workerStats };
  }

  async close() {
    const w = this.worker;
    this.worker = null;
    if (w) await w.terminate();
  }
}

/** A typed error back from the worker: the same class and code (a plain Error otherwise). */
function rebuild(e, extra) {
  const Cls = e.code && errors[e.name];
  // a socket error (ECONNREFUSED, ETIMEDOUT…) keeps its code
  if (!Cls) return Object.assign(new Error(e.code ? e.message : `block fetch worker: ${e.name}: ${e.message}`), { code: e.code });
  return new Cls(e.code, e.message, extra ? { ...e.details, ...extra } : e.details);
}

module.exports = { BlockFetcher };
