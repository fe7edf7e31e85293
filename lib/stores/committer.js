'use strict';

const path = require('node:path');
const { Worker } = require('node:worker_threads');
const { StoreError } = require('../errors');

/**
 * The main thread's side of the LMDB committer (committer-worker.js runs the commits): a row
 * cache generation committed on a thread of its own, so the sync's main thread goes on with
 * the next batches meanwhile. One commit at a time; the caller waits for one to settle before
 * it commits anything else (cached-kv.js does).
 */
class Committer {
  /**
   * @param {object} options the environment's lmdb-js open options (the thread opens it too:
   *   lmdb-js shares one environment per file in a process)
   * @param {string} dir the datadir, for messages
   */
  constructor(options, dir) {
    this.options = options;
    this.dir = dir;
    this.worker = null;
    this.commits = new Map();
    this.nextId = 0;
  }

  /**
   * Commits a generation's rows (rowcache.js, share()) in key order, guarded by the tip row:
   * the generation must not change until this settles.
   * @param {import('./rowcache').SharedRows} shared its columns are transferred (gone here)
   * @param {{key: Buffer, value: Buffer|undefined}} guard
   * @param {number} prefetchLanes read the rows' pages ahead of the write transaction, this
   *   many at a time (0: not)
   * @returns {Promise<boolean>} false when the guard did not hold (nothing written)
   */
  commit(shared, guard, prefetchLanes) {
    const w = this.start();
    const id = this.nextId++;
    w.ref();
    return new Promise((resolve, reject) => {
      this.commits.set(id, { resolve, reject });
      const columns = [shared.keyAt.buffer, shared.keyLen.buffer, shared.valAt.buffer, shared.valLen.buffer];
      w.postMessage({ id, shared, guardKey: guard.key, guardValue: guard.value === undefined ? null : guard.value, prefetchLanes }, columns);
    });
  }

  /** @private */
  start() {
    if (this.worker) return this.worker;
    const w = new Worker(path.join(__dirname, 'committer-worker.js'), { workerData: { options: { ...this.options, readOnly: false } } });
    const failAll = (err) => {
      for (const c of this.commits.values()) c.reject(err);
      this.commits.clear();
    };
    w.on('message', ({ id, ok, error }) => {
      const c = this.commits.get(id);
      this.commits.delete(id);
      if (this.commits.size === 0) w.unref();
      if (!c) return;
      if (error) c.reject(new StoreError('ERR_COMMIT', `the LMDB commit of datadir ${this.dir} failed: ${error.message}`, { cause: error.code }));
      else c.resolve(ok);
    });
    w.on('error', (err) => {
      this.worker = null;
      failAll(new StoreError('ERR_COMMIT', `the LMDB committer of datadir ${this.dir} stopped: ${err.message}`));
    });
    w.on('exit', () => {
      this.worker = null;
      failAll(new StoreError('ERR_COMMIT', `the LMDB committer of datadir ${this.dir} exited`));
    });
    w.unref();
    this.worker = w;
    return w;
  }

  /** Ends the thread (its handle would keep the environment, and its file, open). */
  async close() {
    if (!this.worker) return;
    const w = this.worker;
    this.worker = null;
    await w.terminate();
  }
}

module.exports = { Committer };
