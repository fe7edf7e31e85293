'use strict';

/**
 * Hands the C allocator's free pages back to the system (glibc's `malloc_trim(0)`).
 *
 * glibc returns freed memory to the system only from the top of a heap. What a large step
 * frees in the middle — a mempool follower's first load of 150,000 transactions, LevelDB's
 * memory table of that load, a reader's first view of it — stays in the process's resident set
 * for good, between the allocations that outlive it: measured at 150,000 transactions, ~120 MB
 * of the LMDB follower's anonymous memory, ~240 MB of the LevelDB one's, ~100 MB of a serve
 * worker's. `malloc_trim` walks the heaps and releases every free page (madvise), so those
 * steps call this once they are done. It runs on a thread of libuv's pool: giving back 265 MB
 * took 40 ms here, which the main thread does not wait for (the allocator's own locks keep it
 * safe beside the thread's other allocations).
 *
 * Through koffi (a C FFI with prebuilt binaries): nothing is compiled at install. Where there
 * is no glibc (musl, macOS, Windows) or koffi cannot load, it does nothing.
 */

/** @type {{async: (pad: number, done: (err: Error|null) => void) => void}|null|undefined} undefined: not looked up yet */
let trim;
/** @type {Promise<boolean>|null} the call under way: a second waits for it rather than walking the heaps again */
let running = null;

/**
 * @returns {Promise<boolean>} settles when the allocator is done: whether it was asked (false:
 *   not available here). Never rejects; callers need not wait.
 */
function returnFreeMemory() {
  if (trim === undefined) trim = lookup();
  if (trim === null) return Promise.resolve(false);
  if (!running) {
    running = new Promise((resolve) => {
      trim.async(0, (err) => {
        running = null;
        resolve(!err);
      });
    });
  }
  return running;
}

/**
 * Returns the free pages after a large step of a loop (a follower's poll, a reader's view):
 * what the step freed reaches the allocator only as V8 collects it, so they go back then and
 * again after each of the next few steps, by when the collector has run.
 */
class MemoryReturn {
  /**
   * @param {number} [largeAt=10000] the items (mempool transactions) a step takes or lets go of
   *   to count as large: a first load, a reorg's list; not a poll of a few hundred, nor a block
   * @param {number} [steps=3] the calls that return the free pages after a large step
   */
  constructor(largeAt = 10000, steps = 3) {
    this.largeAt = largeAt;
    this.steps = steps;
    this.left = 0;
  }

  /** @param {number} items what the step just done took or let go of */
  after(items) {
    if (items >= this.largeAt) this.left = this.steps;
    if (this.left === 0) return;
    this.left--;
    returnFreeMemory();
  }
}

function lookup() {
  if (process.platform !== 'linux') return null;
  try {
    const koffi = require('koffi');
    return koffi.load('libc.so.6').func('int malloc_trim(size_t pad)');
  } catch {
    // musl has neither libc.so.6 nor malloc_trim; a platform koffi has no binary for
    return null;
  }
}

module.exports = { returnFreeMemory, MemoryReturn };
