'use strict';

const { sha256d } = require('./hash');

/**
 * The merkle root of a list of 32-byte hashes (internal byte order), as Bitcoin computes it:
 * pairwise sha256d, duplicating the last hash of an odd level.
 *
 * `mutated` reports two equal hashes paired at some level (CVE-2012-2459): such a list has the
 * same root as a shorter one with duplicated transactions, so a block showing it is invalid.
 *
 * @param {Buffer[]} hashes
 * @returns {{root: Buffer, mutated: boolean}}
 */
function computeMerkle(hashes) {
  if (hashes.length === 0) return { root: Buffer.alloc(32), mutated: false };
  let level = hashes;
  let mutated = false;
  const pair = Buffer.allocUnsafe(64);
  while (level.length > 1) {
    const next = new Array((level.length + 1) >> 1);
    for (let i = 0, j = 0; i < level.length; i += 2, j++) {
      const left = level[i];
      if (i + 1 < level.length) {
        const right = level[i + 1];
        if (!mutated && left.equals(right)) mutated = true;
        left.copy(pair, 0);
        right.copy(pair, 32);
      } else {
        left.copy(pair, 0);
        left.copy(pair, 32);
      }
      next[j] = sha256d(pair);
    }
    level = next;
  }
  return { root: level[0], mutated };
}

/**
 * @param {Buffer[]} hashes
 * @returns {Buffer} the merkle root, 32 bytes
 */
function merkleRoot(hashes) {
  return computeMerkle(hashes).root;
}

module.exports = { merkleRoot, computeMerkle };
