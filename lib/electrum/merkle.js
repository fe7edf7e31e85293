'use strict';

const { sha256d } = require('../chain/hash');

/**
 * Merkle branches as the Electrum protocol hands them out (blockchain.transaction.get_merkle,
 * id_from_pos, and block header proofs to a checkpoint): the hashes a leaf is paired with,
 * deepest pairing first, under Bitcoin's rule that an odd level pairs its last hash with
 * itself. Hashes are 32-byte Buffers in internal order; callers show them reversed.
 */

function pairHash(left, right, scratch) {
  left.copy(scratch, 0);
  right.copy(scratch, 32);
  return sha256d(scratch);
}

/**
 * The branch of `hashes[index]` and the root over all of `hashes`.
 * @param {Buffer[]} hashes at least one
 * @param {number} index
 * @returns {{branch: Buffer[], root: Buffer}}
 */
function merkleBranch(hashes, index) {
  if (!Number.isInteger(index) || index < 0 || index >= hashes.length) throw new RangeError(`index ${index} outside 0..${hashes.length - 1}`);
  const scratch = Buffer.allocUnsafe(64);
  const branch = [];
  let level = hashes;
  let i = index;
  while (level.length > 1) {
    const sibling = i ^ 1;
    branch.push(sibling < level.length ? level[sibling] : level[i]);
    level = nextLevel(level, scratch);
    i >>= 1;
  }
  return { branch, root: level[0] };
}

/**
 * Exactly `levels` rounds of pairing from `leaves` (a single hash pairs with itself): the node
 * `levels` above them and the branch of `leaves[index]` up to it. This is how an aligned run
 * of 2^levels leaves (or the final, shorter run) of a larger tree reduces, so a tree can be
 * cut into such runs and their nodes combined: see HeaderMerkle.
 * @param {Buffer[]} leaves 1 to 2^levels hashes
 * @param {number} index
 * @param {number} levels
 * @returns {{node: Buffer, branch: Buffer[]}}
 */
function reduceBranch(leaves, index, levels) {
  const scratch = Buffer.allocUnsafe(64);
  const branch = [];
  let level = leaves;
  let i = index;
  for (let k = 0; k < levels; k++) {
    const sibling = i ^ 1;
    if (index >= 0) branch.push(sibling < level.length ? level[sibling] : level[i]);
    level = nextLevel(level, scratch);
    i >>= 1;
  }
  return { node: level[0], branch };
}

function nextLevel(level, scratch) {
  const next = new Array((level.length + 1) >> 1);
  for (let j = 0, k = 0; j < level.length; j += 2, k++) {
    next[k] = pairHash(level[j], j + 1 < level.length ? level[j + 1] : level[j], scratch);
  }
  return next;
}

/**
 * Proofs of block headers to a checkpoint (cp_height): the merkle tree over the block hashes
 * of heights 0..cp_height. Hashing a mainnet-sized tree for every proof would read and hash
 * ~900,000 block hashes; instead the tree is cut into aligned runs of 2^depth heights, and the
 * node of each full run is kept (32 bytes per 2,048 blocks at the default depth, ElectrumX's
 * layout too), so a proof reads the run holding its height, the final partial run, and one
 * hash per cached run to check it still ends on the same block (a reorg replaces runs).
 */
class HeaderMerkle {
  /**
   * @param {(from: number, count: number) => Promise<Buffer[]>} hashesAt block hashes of the
   *   best chain (internal order) for heights from..from+count-1, all of which exist
   * @param {number} [depth=11]
   */
  constructor(hashesAt, depth = 11) {
    this.hashesAt = hashesAt;
    this.depth = depth;
    this.size = 2 ** depth;
    /** @type {Map<number, {last: Buffer, node: Buffer}>} run index → its node and its last block hash */
    this.runs = new Map();
  }

  /**
   * @param {number} length leaves in the tree (cp_height + 1)
   * @param {number} index the leaf proved (a height <= cp_height)
   * @returns {Promise<{branch: Buffer[], root: Buffer}>}
   */
  async branchAndRoot(length, index) {
    if (length <= this.size) return merkleBranch(await this.hashesAt(0, length), index);
    const runCount = Math.ceil(length / this.size);
    const target = Math.floor(index / this.size);
    const nodes = new Array(runCount);
    let lower = null;
    for (let r = 0; r < runCount; r++) {
      const from = r * this.size;
      const count = Math.min(this.size, length - from);
      const full = count === this.size;
      if (r !== target && full) {
        const cached = this.runs.get(r);
        if (cached && cached.last.equals((await this.hashesAt(from + count - 1, 1))[0])) {
          nodes[r] = cached.node;
          continue;
        }
      }
      const leaves = await this.hashesAt(from, count);
      const reduced = reduceBranch(leaves, r === target ? index - from : -1, this.depth);
      nodes[r] = reduced.node;
      if (r === target) lower = reduced.branch;
      if (full) this.runs.set(r, { last: leaves[count - 1], node: reduced.node });
    }
    const upper = merkleBranch(nodes, target);
    return { branch: lower.concat(upper.branch), root: upper.root };
  }
}

module.exports = { merkleBranch, reduceBranch, HeaderMerkle };
