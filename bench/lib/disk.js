'use strict';

const fs = require('node:fs');
const path = require('node:path');

/**
 * Bytes the files under `dir` take on disk (allocated blocks, so sparse files count as what
 * they really use).
 * @param {string} dir
 * @returns {number}
 */
function diskUsage(dir) {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) total += diskUsage(p);
    else if (entry.isFile()) total += allocatedBytes(p);
  }
  return total;
}

/**
 * Bytes one file takes on disk; 0 when it went away since its directory was listed.
 * @param {string} p
 * @returns {number}
 */
function allocatedBytes(p) {
  const st = statIfPresent(p);
  if (!st) return 0;
  return st.blocks !== undefined ? Math.min(st.size, st.blocks * 512) : st.size;
}

/**
 * A file's stat, or null when it went away since the directory was listed: a store still
 * compacting (LevelDB after the sync's last write) deletes the tables it replaced.
 * @param {string} p
 * @returns {fs.Stats|null}
 */
function statIfPresent(p) {
  try {
    return fs.statSync(p);
  } catch (err) {
    if (err.code === 'ENOENT') return null;
    throw err;
  }
}

module.exports = { diskUsage, allocatedBytes, statIfPresent };
