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

/**
 * The merkle branch of the hash at `index`: its sibling at each level, leaf upwards, as
 * Electrum's blockchain.transaction.get_merkle and Esplora's /tx/:txid/merkle-proof list them
 * (an odd level's last hash is its own sibling).
 * @param {Buffer[]} hashes 32 bytes each, internal order
 * @param {number} index
 * @returns {Buffer[]} siblings, internal order
 */
function merkleBranch(hashes, index) {
  if (!Number.isInteger(index) || index < 0 || index >= hashes.length) {
    throw new RangeError(`merkle branch of position ${index} in a list of ${hashes.length}`);
  }
  const branch = [];
  let level = hashes;
  let i = index;
  const pair = Buffer.allocUnsafe(64);
  while (level.length > 1) {
    branch.push(level[(i ^ 1) < level.length ? i ^ 1 : i]);
    const next = new Array((level.length + 1) >> 1);
    for (let k = 0, j = 0; k < level.length; k += 2, j++) {
      level[k].copy(pair, 0);
      level[k + 1 < level.length ? k + 1 : k].copy(pair, 32);
      next[j] = sha256d(pair);
    }
    level = next;
    i >>= 1;
  }
  return branch;
}

/**
 * The root a merkle branch leads to from `leaf` at `index`: how a client checks a proof.
 * @param {Buffer} leaf 32 bytes, internal order
 * @param {Buffer[]} branch siblings, leaf upwards
 * @param {number} index
 * @returns {Buffer}
 */
function rootFromBranch(leaf, branch, index) {
  let h = leaf;
  let i = index;
  const pair = Buffer.allocUnsafe(64);
  for (const sibling of branch) {
    if (i & 1) {
      sibling.copy(pair, 0);
      h.copy(pair, 32);
    } else {
      h.copy(pair, 0);
      sibling.copy(pair, 32);
    }
    h = sha256d(pair);
    i >>= 1;
  }
  return h;
}

module.exports = { merkleRoot, computeMerkle, merkleBranch, rootFromBranch };
