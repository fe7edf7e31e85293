'use strict';

const os = require('node:os');
const path = require('node:path');
const { Worker } = require('node:worker_threads');
const errors = require('../errors');
const { parseColumns } = require('./columns');

/**
 * Parses blocks into BlockColumns on worker threads. Parsing and hashing are pure CPU work
 * on bytes, so they spread across cores while the main thread does I/O and store writes.
 * With `threads: 0` it parses inline on the calling thread (same results, no workers).
 */
class ParsePool {
  /**
   * @param {object} [opts]
   * @param {number} [opts.threads=os.availableParallelism()] worker threads (0 = inline)
   * @param {boolean} [opts.verifyMerkle=true]
   */
  constructor(opts = {}) {
    this.threads = opts.threads === undefined ? os.availableParallelism() : opts.threads;
    this.verifyMerkle = opts.verifyMerkle !== false;
    this.workers = [];
    this.pending = new Map();
    this.nextId = 0;
    this.turn = 0;
    for (let i = 0; i < this.threads; i++) {
      const w = new Worker(path.join(__dirname, 'parse-worker.js'));
      w.on('message', (msg) => this._settle(msg));
      w.on('error', (err) => {
        this.broken = err;
        this._failAll(err);
      });
      w.unref();
      this.workers.push(w);
    }
  }

  /**
   * Parses one block. The bytes are copied into a buffer the worker takes over, so the
   * caller may reuse `raw` as soon as this returns.
   * @param {Buffer} raw
   * @returns {Promise<import('./columns').BlockColumns>}
   */
  parse(raw) {
    if (this.threads === 0) {
      try {
        return Promise.resolve(parseColumns(raw, { verifyMerkle: this.verifyMerkle }));
      } catch (err) {
        return Promise.reject(err);
      }
    }
    if (this.broken) return Promise.reject(this.broken);
    const id = this.nextId++;
    // its own ArrayBuffer, not zero-filled first (allocUnsafeSlow never hands out pool slices)
    const bytes = Buffer.allocUnsafeSlow(raw.length);
    bytes.set(raw);
    const worker = this.workers[this.turn++ % this.workers.length];
    // idle workers are unref'd so an unused pool never keeps a process alive; while a parse
    // is pending they must hold the event loop, or a caller awaiting only this would exit
    if (this.pending.size === 0) for (const w of this.workers) w.ref();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, bytes, verifyMerkle: this.verifyMerkle }, [bytes.buffer]);
    });
  }

  _settle({ id, cols, error }) {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    if (this.pending.size === 0) for (const w of this.workers) w.unref();
    if (!error) return p.resolve(rewrapBuffers(cols));
    // A typed error crosses the thread boundary as the same class and code; anything
    // else is a bug in the worker and stays a plain Error so it is not mistaken for bad input.
    const Cls = error.code && errors[error.name];
    p.reject(Cls ? new Cls(error.code, error.message, error.details)
      : new Error(`parse worker failed: ${error.name}: ${error.message}`));
  }

  _failAll(err) {
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  /** Stops the workers; pending parses are rejected. */
  async close() {
    this._failAll(new errors.AddrIndexError('ERR_POOL_CLOSED', 'parse pool closed'));
    await Promise.all(this.workers.map((w) => w.terminate()));
    this.workers = [];
  }
}

// Buffers cross postMessage as plain Uint8Arrays: give the byte columns their Buffer methods
// back (a view over the same transferred memory, no copy). The header too: a Uint8Array's
// toString('hex') is its numbers joined by commas, which the MongoDB store wrote as the header.
const BUFFER_COLUMNS = ['txids', 'prevouts', 'idHash', 'scripthashes', 'p2pkShs', 'header'];

function rewrapBuffers(cols) {
  for (const k of BUFFER_COLUMNS) {
    const a = cols[k];
    if (a && !Buffer.isBuffer(a)) cols[k] = Buffer.from(a.buffer, a.byteOffset, a.byteLength);
  }
  return cols;
}

/**
 * Parses a stream of blocks with up to `inFlight` in the pool at once and yields each
 * record with its columns, in the order the stream gave them.
 * @template {{raw: Buffer}} R
 * @param {AsyncIterable<R>} records
 * @param {ParsePool} pool
 * @param {number} [inFlight=pool.threads*4]
 * @returns {AsyncGenerator<R & {cols: import('./columns').BlockColumns}>}
 */
async function* parseInOrder(records, pool, inFlight = Math.max(1, pool.threads * 4)) {
  const queue = [];
  for await (const rec of records) {
    const p = pool.parse(rec.raw);
    p.catch(() => {}); // rejection is observed when its turn comes
    queue.push({ rec, p });
    if (queue.length >= inFlight) {
      const { rec: r, p: q } = queue.shift();
      yield Object.assign(r, { cols: await q });
    }
  }
  while (queue.length) {
    const { rec: r, p: q } = queue.shift();
    yield Object.assign(r, { cols: await q });
  }
}

module.exports = { ParsePool, parseInOrder };
