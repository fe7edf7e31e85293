'use strict';

const { fromDisplayHex } = require('../chain/hash');
const { BlocksDirSource } = require('./blocksdir');
const { NodeSource } = require('./node');
const { HashChain } = require('./hash-chain');

/**
 * A blocks dir and a node together, as Esplora runs: the node decides the best chain, the
 * blocks dir serves every block of it that it holds (large sequential reads, no RPC), the
 * node the rest — in practice the last blocks, which the dir may not have yet or holds on
 * another branch.
 *
 * The first scan takes the dir's best chain as a guess of the node's, so the node is asked
 * only for the heights past the point where the two agree (not for a mainnet's worth of
 * headers). The dir serves heights up to the highest one where both hold the same hash:
 * both are chains, so they agree on everything below it.
 */
class CombinedSource {
  /**
   * @param {object} opts
   * @param {string} opts.dir blocks directory
   * @param {import('../node/client').NodeClient} opts.client
   * @param {string|import('../chain/networks').Network} [opts.network='main']
   * @param {object} [opts.node] further NodeSource options
   */
  constructor({ dir, client, network = 'main', node = {} }) {
    this.dir = new BlocksDirSource({ dir, network });
    this.node = new NodeSource({ ...node, client, network });
    /** the highest height the blocks dir serves (-1: none) */
    this.split = -1;
    this.counts = { fromDir: 0, fromNode: 0 };
  }

  /** @returns {Promise<{tip: {height: number, hash: string}, changed: boolean}>} */
  async scan() {
    await this.dir.scan();
    if (this.node.chain.length === 0) {
      const guess = new HashChain(this.dir.tip().height + 1);
      for (let h = 0; h <= this.dir.tip().height; h++) guess.push(fromDisplayHex(this.dir.hashAt(h)));
      this.node.assume(guess);
    }
    const res = await this.node.scan();
    let lo = -1;
    let hi = Math.min(this.dir.tip().height, this.node.chain.tipHeight) + 1;
    while (hi - lo > 1) {
      const mid = (lo + hi) >>> 1;
      if (this.dir.hashAt(mid) === this.node.hashAt(mid)) lo = mid;
      else hi = mid;
    }
    this.split = lo;
    return res;
  }

  /** @returns {string} the node's URL as printed (password masked) */
  get nodeUrl() {
    return this.node.nodeUrl;
  }

  /** @returns {import('../node/client').NodeClient} the node's client (the mempool follower shares it) */
  get client() {
    return this.node.client;
  }

  /** @returns {{height: number, hash: string}|null} the node's best chain's tip */
  tip() {
    return this.node.tip();
  }

  /** @param {number} height @returns {string|null} the node's best chain's hash at `height` */
  hashAt(height) {
    return this.node.hashAt(height);
  }

  /**
   * Blocks of the node's best chain: from the blocks dir up to `split`, from the node above.
   * @param {number} [fromHeight=0]
   * @param {number} [toHeight=tip height]
   * @returns {AsyncGenerator<{height: number, hash: string, prev: string, raw: Buffer}>}
   */
  async *blocks(fromHeight = 0, toHeight = this.node.chain.tipHeight) {
    const split = this.split;
    if (fromHeight <= Math.min(toHeight, split)) {
      for await (const b of this.dir.blocks(fromHeight, Math.min(toHeight, split))) {
        this.counts.fromDir++;
        yield b;
      }
    }
    const start = Math.max(fromHeight, split + 1);
    if (start > toHeight) return;
    for await (const b of this.node.blocks(start, toHeight)) {
      this.counts.fromNode++;
      yield b;
    }
  }

  /** Counts, for logs, tests and benchmarks. */
  stats() {
    return { ...this.counts, split: this.split, dir: this.dir.stats(), node: this.node.stats() };
  }

  async close() {
    await Promise.all([this.dir.close(), this.node.close()]);
  }
}

module.exports = { CombinedSource };
