'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Worker } = require('node:worker_threads');
const { prefetchPlan } = require('./prefetch-plan');

/** Reads a prefetch keeps in flight at once: what a virtual disk or an SSD serves in parallel. */
const DEFAULT_LANES = 16;

/**
 * Reads ahead of the LMDB writer (prefetch-worker.js runs the reads): while the writer
 * applies one batch, the pages the next batch needs are brought into the page cache, many at
 * a time. Meant for an index that outgrows the memory (the writer otherwise waits on one page
 * fault after another); in RAM it would only cost CPU, so `auto` prefetches while the file is
 * more than half the memory the process may use (its cgroup's limit, else the machine's). The
 * store's default is off: on this project's measurements (the 5M-tx chain in a 1 GiB cgroup,
 * docs/SCALING.md) the reads ahead cost more than they saved — 40 % more CPU, and pages
 * brought in for the next batch evicting the ones the writer needs now.
 */
class Prefetcher {
  /**
   * @param {object} opts
   * @param {string} opts.datadir the LMDB environment
   * @param {'auto'|'on'|'off'} [opts.mode='auto']
   * @param {number} [opts.lanes] reads at once (default 16; libuv's thread pool must have as
   *   many threads: UV_THREADPOOL_SIZE, which `addrindex sync` sets, poolForPrefetch)
   * @param {() => number} [opts.memory] the memory the process may use (default memoryLimit())
   */
  constructor({ datadir, mode = 'auto', lanes = DEFAULT_LANES, memory = memoryLimit }) {
    this.datadir = datadir;
    this.mode = mode;
    this.lanes = lanes;
    this.memory = memory;
    this.worker = null;
    this.pending = new Map();
    this.nextId = 0;
    this.checkedAt = 0;
    this.wanted = false;
    this.stats = { batches: 0, keys: 0, ms: 0 };
  }

  /**
   * Starts reading what `blocks` will need; resolves when those pages were read (never
   * rejects: a failed prefetch only means the writer reads them itself). Null when there is
   * nothing to do (off, or auto and the index fits in memory).
   * @param {Array<{cols: import('../chain/columns').BlockColumns}>} blocks
   * @returns {Promise<void>|null}
   */
  prefetch(blocks) {
    if (!this.active()) return null;
    const plan = prefetchPlan(blocks);
    const w = this.start();
    const id = this.nextId++;
    w.ref();
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      w.postMessage({ id, plan }, [plan.inputs.buffer, plan.txids.buffer, plan.accounts.buffer]);
    });
  }

  /** Whether reads ahead are wanted now (mode, and for auto the file against the memory). */
  active() {
    if (this.mode === 'off') return false;
    if (this.mode === 'on') return true;
    const now = Date.now();
    if (now - this.checkedAt > 1000) {
      this.checkedAt = now;
      this.wanted = fileBytes(path.join(this.datadir, 'data.mdb')) > this.memory() / 2;
    }
    return this.wanted;
  }

  /** @private */
  start() {
    if (this.worker) return this.worker;
    const w = new Worker(path.join(__dirname, 'prefetch-worker.js'), { workerData: { datadir: this.datadir, lanes: this.lanes } });
    w.on('message', (msg) => {
      const done = this.pending.get(msg.id);
      this.pending.delete(msg.id);
      if (this.pending.size === 0) w.unref();
      if (!msg.error) {
        this.stats.batches++;
        this.stats.keys += msg.keys;
        this.stats.ms += msg.ms;
      }
      if (done) done();
    });
    w.on('error', () => {
      // a prefetcher that failed only stops prefetching
      for (const done of this.pending.values()) done();
      this.pending.clear();
      this.mode = 'off';
      this.worker = null;
    });
    w.unref();
    this.worker = w;
    return w;
  }

  async close() {
    for (const done of this.pending.values()) done();
    this.pending.clear();
    if (this.worker) {
      const w = this.worker;
      this.worker = null;
      await w.terminate();
    }
  }
}

/** The bytes a file occupies (0 when it does not exist). */
function fileBytes(file) {
  try {
    const st = fs.statSync(file);
    return Math.min(st.size, st.blocks * 512);
  } catch {
    return 0;
  }
}

/**
 * The memory this process may use: its memory cgroup's limit (v2's memory.max, or v1's
 * memory.limit_in_bytes), else the machine's.
 * @param {{root?: string, total?: number}} [at] where /proc and /sys are (tests), the machine's memory
 * @returns {number} bytes
 */
function memoryLimit({ root = '/', total = os.totalmem() } = {}) {
  try {
    for (const line of fs.readFileSync(path.join(root, 'proc/self/cgroup'), 'utf8').split('\n')) {
      const [, controllers, where] = line.split(':');
      if (controllers === '' && where !== undefined) {
        const v = readNumber(path.join(root, 'sys/fs/cgroup', where, 'memory.max'));
        if (v) return Math.min(total, v);
      } else if (controllers && controllers.split(',').includes('memory')) {
        const v = readNumber(path.join(root, 'sys/fs/cgroup/memory', where, 'memory.limit_in_bytes'));
        if (v) return Math.min(total, v);
      }
    }
  } catch {
    // no cgroup information: the machine's memory
  }
  return total;
}

function readNumber(file) {
  try {
    const v = Number(fs.readFileSync(file, 'utf8').trim());
    return Number.isFinite(v) && v > 0 ? v : null;
  } catch {
    return null;
  }
}

/**
 * Sizes libuv's thread pool for the reads ahead (`--prefetch on|auto`: DEFAULT_LANES at a
 * time, with room for the rest), unless the environment sized it. libuv sizes its pool when
 * first used, so this runs before the command's first asynchronous file or store call. Only
 * then: every pool thread that allocates gets a glibc malloc arena of its own, which keeps
 * what it freed; the LevelDB store's reads and writes spread over 20 threads held 350 MB more
 * than with 2 arenas (docs/SCALING.md, "LevelDB beyond RAM").
 * @param {string|undefined} mode the --prefetch value
 * @param {NodeJS.ProcessEnv} [env]
 */
function poolForPrefetch(mode, env = process.env) {
  if ((mode === 'on' || mode === 'auto') && !env.UV_THREADPOOL_SIZE) env.UV_THREADPOOL_SIZE = String(DEFAULT_LANES + 4);
}

module.exports = { Prefetcher, memoryLimit, poolForPrefetch };
