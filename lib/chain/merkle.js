'use strict';

const { sha256d } = require('./hash');

/**
 * The merkle root of a list of 32-byte hashes (internal byte order), as Bitcoin computes it:
 * pairwise sha256d, duplicating the last hash of an odd level.
 * @param {Buffer[]} hashes
 * @returns {Buffer} 32 bytes
 */
function merkleRoot(hashes) {
  if (hashes.length === 0) return Buffer.alloc(32);
  let level = hashes;
  const pair = Buffer.allocUnsafe(64);
  while (level.length > 1) {
    const next = new Array((level.length + 1) >> 1);
    for (let i = 0, j = 0; i < level.length; i += 2, j++) {
      level[i].copy(pair, 0);
      (i + 1 < level.length ? level[i + 1] : level[i]).copy(pair, 32);
      next[j] = sha256d(pair);
    }
    level = next;
  }
  return level[0];
}

module.exports = { merkleRoot };
