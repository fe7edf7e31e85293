'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ownDir, disownDir } = require('./procs');

/**
 * The tests' one temporary-directory helper: every directory it makes is removed when the
 * test process exits (mocha runs all files in one process, so nothing piles up in /tmp), and
 * by the run's watchdog (procs.js) when it dies without its exit hook running.
 */

const made = [];
process.on('exit', () => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

/** tmpfs, when this machine has one with this much room, for tempDir's `inMemory` dirs. */
const SHM = '/dev/shm';
const SHM_MIN_BYTES = 2 ** 30;
const TMPFS_MAGIC = 0x01021994;

/**
 * A new empty directory under the OS temp dir, removed at exit.
 * @param {string} prefix part of its name, for whoever looks at /tmp while tests run
 * @param {{inMemory?: boolean}} [opts] inMemory: on tmpfs (/dev/shm) when there is one with
 *   room, for data that must not depend on the disk's free space, which the benchmarks run
 *   beside the tests share (FerretDB's SQLite fails a write with "database or disk is full"
 *   the moment the disk is)
 * @returns {string}
 */
function tempDir(prefix, { inMemory = false } = {}) {
  const base = inMemory && shmHasRoom() ? SHM : os.tmpdir();
  const d = fs.mkdtempSync(path.join(base, `addrindex-${prefix.replace(/-$/, '').replace(/^addrindex-/, '')}-`));
  made.push(d);
  ownDir(d);
  return d;
}

/**
 * Removes a directory made by tempDir before the process exits (a test that makes many).
 * @param {string} dir
 */
function removeDir(dir) {
  fs.rmSync(dir, { recursive: true, force: true });
  const i = made.indexOf(dir);
  if (i >= 0) made.splice(i, 1);
  disownDir(dir);
}

function shmHasRoom() {
  try {
    const st = fs.statfsSync(SHM);
    return st.type === TMPFS_MAGIC && st.bavail * st.bsize >= SHM_MIN_BYTES;
  } catch {
    return false;
  }
}

module.exports = { tempDir, removeDir };
