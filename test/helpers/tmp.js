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

/**
 * A new empty directory under the OS temp dir, removed at exit.
 * @param {string} prefix part of its name, for whoever looks at /tmp while tests run
 * @returns {string}
 */
function tempDir(prefix) {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), `addrindex-${prefix.replace(/-$/, '').replace(/^addrindex-/, '')}-`));
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

module.exports = { tempDir, removeDir };
