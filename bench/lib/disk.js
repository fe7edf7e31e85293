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
    else if (entry.isFile()) {
      const st = statIfPresent(p);
      if (st) total += st.blocks !== undefined ? Math.min(st.size, st.blocks * 512) : st.size;
    }
  }
  return total;
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

module.exports = { diskUsage, statIfPresent };
