'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { UsageError } = require('../../lib/errors');
const { sha256d, toDisplayHex } = require('../../lib/chain/hash');
const { getNetwork } = require('../../lib/chain/networks');
const { Rng } = require('./rng');
const { ChainGenerator } = require('./chain');
const { BlkWriter, blkName, listBlkFiles, xorAt } = require('./blkwriter');

/**
 * @typedef {object} ChainSummary
 * @property {{height: number, hash: string}} tip  best chain tip a reader of the dir finds
 * @property {number} blocks  best-chain blocks, genesis included (tip.height + 1)
 * @property {number} txs     best-chain transactions, genesis coinbase included
 * @property {number} bytes   bytes this call left in blk files (records, padding; minus truncation)
 * @property {string[]} hashes best-chain block hashes by height (display hex)
 * @property {number} staleBlocks blocks written off the best chain
 * @property {string[]} lost  hashes of records cut by truncateLast
 * @property {number} files   blk files in the dir
 * @property {object} stats   the generator's statistics (ChainGenerator#stats)
 */

/**
 * Generates a chain into a new Bitcoin Core-style blocks dir.
 *
 * Stale branches fork from the chain at `atHeight` and are written interleaved with it (each
 * stale block just before or after the best block of its height, as a node receives
 * competing blocks); each must end below the final tip, so the reader leaves it out.
 * `shuffle: {window}` writes blocks in random order within consecutive windows of that many
 * records (headers-first download: a child may precede its parent); genesis always comes
 * first. `truncateLast` cuts bytes off the end of the last file (a block being written when
 * the node stopped) and `padEnd` then appends zeros (Core's preallocation); the summary
 * describes what a reader can see after both.
 *
 * @param {object} opts
 * @param {string} opts.dir
 * @param {string|number} opts.seed
 * @param {number} [opts.blocks] generate up to this height (blocks after genesis) …
 * @param {number} [opts.txs]    … or until the chain holds at least this many transactions
 * @param {string} [opts.network='regtest']
 * @param {number} [opts.maxFileSize]
 * @param {Buffer|null} [opts.xorKey=null]
 * @param {{atHeight: number, length: number, seed?: string|number}[]} [opts.stale=[]]
 * @param {{window: number}|null} [opts.shuffle=null]
 * @param {number} [opts.padEnd=0]
 * @param {number} [opts.truncateLast=0]
 * @param {(block: object, stats: ChainGenerator) => void} [opts.onBlock] called per best-chain block
 * @returns {Promise<ChainSummary>}
 */
async function writeChain(opts) {
  const {
    dir, seed, blocks, txs, network = 'regtest', maxFileSize, xorKey = null, stale = [], shuffle = null,
    padEnd = 0, truncateLast = 0, onBlock = null, ...params
  } = opts;
  if ((blocks === undefined) === (txs === undefined)) {
    throw new UsageError('ERR_GENERATOR_PARAM', 'writeChain needs exactly one of blocks and txs');
  }
  if (blocks !== undefined && !(Number.isInteger(blocks) && blocks >= 0)) {
    throw new UsageError('ERR_GENERATOR_PARAM', `blocks must be an integer >= 0, got ${blocks}`);
  }
  if (txs !== undefined && !(Number.isInteger(txs) && txs >= 1)) {
    throw new UsageError('ERR_GENERATOR_PARAM', `txs must be an integer >= 1, got ${txs}`);
  }
  checkBytes('padEnd', padEnd);
  checkBytes('truncateLast', truncateLast);
  const window = shuffle ? shuffle.window : 1;
  if (!(Number.isInteger(window) && window >= 1)) {
    throw new UsageError('ERR_GENERATOR_PARAM', `shuffle.window must be an integer >= 1, got ${window}`);
  }
  const stales = checkStale(stale, seed, blocks);
  if (fs.existsSync(dir) && listBlkFiles(dir).length) {
    throw new UsageError('ERR_GENERATOR_PARAM', `${dir} already holds blk files: writeChain makes a new dir (appendBranch extends one)`);
  }

  const gen = new ChainGenerator({ seed, network, ...params });
  const writer = new BlkWriter({ dir, network, maxFileSize, xorKey });
  const order = Rng.from(`addrindex-gen/write/${gen.seed}`);
  const records = [];
  let pending = [];
  const put = (b) => {
    const { file, end } = writer.write(b.raw);
    records.push({ hash: b.hash, prev: b.prev, height: b.height, txCount: b.txCount, file, end, lost: false });
  };
  const emit = (b) => {
    if (window === 1) return put(b);
    pending.push(b);
    if (pending.length === window) flushShuffled();
  };
  const flushShuffled = () => {
    for (let i = pending.length - 1; i > 0; i--) {
      const j = order.below(i + 1);
      [pending[i], pending[j]] = [pending[j], pending[i]];
    }
    for (const b of pending) put(b);
    pending = [];
  };

  const genesis = gen.nextBlock();
  put(genesis);
  if (onBlock) onBlock(genesis, gen);
  let forks = [];
  let chainTxs = genesis.txCount;
  while (blocks !== undefined ? gen.height < blocks : chainTxs < txs) {
    const h = gen.height + 1;
    for (const s of stales) if (s.atHeight === h) forks.push({ gen: gen.fork(s.seed), left: s.length });
    const b = gen.nextBlock();
    chainTxs += b.txCount;
    if (onBlock) onBlock(b, gen);
    const rivals = [];
    for (const f of forks) {
      rivals.push(f.gen.nextBlock());
      f.left--;
    }
    forks = forks.filter((f) => f.left > 0);
    if (rivals.length && order.float() < 0.5) {
      for (const r of rivals) emit(r);
      emit(b);
    } else {
      emit(b);
      for (const r of rivals) emit(r);
    }
  }
  for (const s of stales) {
    if (s.atHeight + s.length - 1 >= gen.height) {
      throw new UsageError('ERR_GENERATOR_PARAM',
        `stale branch at ${s.atHeight} (length ${s.length}) is not shorter than the chain (tip ${gen.height})`);
    }
  }
  if (pending.length) flushShuffled();
  await writer.close();
  finishLastFile(dir, truncateLast, padEnd, records);

  const best = bestChain(records, gen.network.genesis);
  const bestSet = new Set(best.hashes);
  return {
    ...best,
    bytes: writer.bytesWritten - truncateLast + padEnd,
    staleBlocks: records.filter((r) => !bestSet.has(r.hash) && !r.lost).length,
    lost: records.filter((r) => r.lost).map((r) => r.hash),
    files: listBlkFiles(dir).length,
    stats: gen.stats(),
  };
}

/**
 * Extends a blocks dir made by writeChain with a competing branch: regenerates the chain
 * with the same seed and parameters up to `forkHeight` (nothing written), switches to
 * `branchSeed` and appends `blocks` blocks at heights forkHeight+1 … forkHeight+blocks.
 * Every generated block has the same work, so the branch is the dir's best chain exactly
 * when it is longer than the chain already there (a reorg of depth
 * oldTip - forkHeight).
 *
 * @param {object} opts
 * @param {string} opts.dir a dir written by writeChain (or appendBranch)
 * @param {string|number} opts.seed the seed the dir was written with
 * @param {number} opts.forkHeight last block shared with the existing chain
 * @param {string|number} opts.branchSeed
 * @param {number} opts.blocks
 * @param {string} [opts.network='regtest']
 * @param {number} [opts.maxFileSize]
 * @param {number} [opts.padEnd=0]
 * @param {...*} opts.params the shape parameters the dir was written with
 * @returns {Promise<ChainSummary>} the new branch: tip, hashes 0…tip, txs along it
 */
async function appendBranch(opts) {
  const { dir, seed, forkHeight, branchSeed, blocks, network = 'regtest', maxFileSize, padEnd = 0, ...params } = opts;
  if (!(Number.isInteger(forkHeight) && forkHeight >= 0)) {
    throw new UsageError('ERR_GENERATOR_PARAM', `forkHeight must be an integer >= 0, got ${forkHeight}`);
  }
  if (!(Number.isInteger(blocks) && blocks >= 1)) {
    throw new UsageError('ERR_GENERATOR_PARAM', `blocks must be an integer >= 1, got ${blocks}`);
  }
  if (branchSeed === undefined || branchSeed === null || branchSeed === '') {
    throw new UsageError('ERR_GENERATOR_PARAM', 'appendBranch needs a branchSeed');
  }
  checkBytes('padEnd', padEnd);
  if (!fs.existsSync(dir) || !listBlkFiles(dir).length) {
    throw new UsageError('ERR_GENERATOR_PARAM', `${dir} holds no blk files to append to`);
  }
  const gen = new ChainGenerator({ seed, network, ...params });
  const hashes = [];
  let txs = 0;
  while (gen.height < forkHeight) {
    const b = gen.nextBlock();
    hashes.push(b.hash);
    txs += b.txCount;
  }
  const net = getNetwork(network);
  if (!dirHasBlock(dir, net, hashes[forkHeight])) {
    throw new UsageError('ERR_FORK_NOT_FOUND',
      `${dir} has no block ${hashes[forkHeight]} at height ${forkHeight}: was it written with this seed, network and parameters?`);
  }
  const branch = gen.fork(branchSeed);
  const writer = new BlkWriter({ dir, network, maxFileSize });
  for (let i = 0; i < blocks; i++) {
    const b = branch.nextBlock();
    writer.write(b.raw);
    hashes.push(b.hash);
    txs += b.txCount;
  }
  await writer.close();
  finishLastFile(dir, 0, padEnd, []);
  return {
    tip: { height: hashes.length - 1, hash: hashes[hashes.length - 1] },
    blocks: hashes.length,
    txs,
    bytes: writer.bytesWritten + padEnd,
    hashes,
    staleBlocks: 0,
    lost: [],
    files: listBlkFiles(dir).length,
    stats: branch.stats(),
  };
}

function checkBytes(name, v) {
  if (!(Number.isInteger(v) && v >= 0)) throw new UsageError('ERR_GENERATOR_PARAM', `${name} must be an integer >= 0, got ${v}`);
}

function checkStale(stale, seed, blocks) {
  if (!Array.isArray(stale)) throw new UsageError('ERR_GENERATOR_PARAM', 'stale must be an array of {atHeight, length, seed}');
  return stale.map((s, i) => {
    if (!s || !Number.isInteger(s.atHeight) || s.atHeight < 1 || !Number.isInteger(s.length) || s.length < 1) {
      throw new UsageError('ERR_GENERATOR_PARAM', `stale[${i}] needs integer atHeight >= 1 and length >= 1`);
    }
    if (blocks !== undefined && s.atHeight + s.length - 1 >= blocks) {
      throw new UsageError('ERR_GENERATOR_PARAM',
        `stale[${i}] (heights ${s.atHeight}-${s.atHeight + s.length - 1}) must end below the tip ${blocks} to stay off the best chain`);
    }
    return { atHeight: s.atHeight, length: s.length, seed: s.seed !== undefined ? String(s.seed) : `${seed}/stale/${i}` };
  });
}

/** Cuts `truncate` bytes off the last blk file, marks the records it cut, then appends `pad` zeros. */
function finishLastFile(dir, truncate, pad, records) {
  if (!truncate && !pad) return;
  const nums = listBlkFiles(dir);
  const last = nums[nums.length - 1];
  const file = path.join(dir, blkName(last));
  if (truncate) {
    const size = fs.statSync(file).size;
    if (truncate > size) throw new UsageError('ERR_GENERATOR_PARAM', `truncateLast ${truncate} exceeds the last file's ${size} bytes`);
    fs.truncateSync(file, size - truncate);
    for (const r of records) if (r.file === last && r.end > size - truncate) r.lost = true;
  }
  if (pad) fs.appendFileSync(file, Buffer.alloc(pad));
}

/**
 * The best chain among whole records, as a reader must pick it: linked by prev hash from
 * genesis, most blocks (generated blocks all carry the same work), ties to the tip written first.
 */
function bestChain(records, genesisHash) {
  const byHash = new Map();
  records.forEach((r, seq) => {
    if (!r.lost && !byHash.has(r.hash)) byHash.set(r.hash, { ...r, seq });
  });
  const heightOf = new Map();
  const resolve = (hash) => {
    const chain = [];
    let h = hash;
    while (!heightOf.has(h)) {
      const r = byHash.get(h);
      if (!r) {
        heightOf.set(h, -1);
        break;
      }
      if (h === genesisHash) {
        heightOf.set(h, 0);
        break;
      }
      chain.push(h);
      h = r.prev;
    }
    let height = heightOf.get(h);
    if (height < 0) {
      for (const c of chain) heightOf.set(c, -1); // not linked to genesis (a parent is missing)
      return -1;
    }
    for (let i = chain.length - 1; i >= 0; i--) heightOf.set(chain[i], ++height);
    return heightOf.get(hash);
  };
  let tip = null;
  for (const r of byHash.values()) {
    const h = resolve(r.hash);
    if (h < 0) continue;
    if (!tip || h > tip.height || (h === tip.height && r.seq < tip.seq)) tip = { hash: r.hash, height: h, seq: r.seq };
  }
  if (!tip) throw new UsageError('ERR_GENERATOR_PARAM', 'no whole genesis record left in the dir');
  const hashes = new Array(tip.height + 1);
  let txs = 0;
  for (let h = tip.hash, i = tip.height; i >= 0; i--) {
    hashes[i] = h;
    const r = byHash.get(h);
    txs += r.txCount;
    h = r.prev;
  }
  return { tip: { height: tip.height, hash: tip.hash }, blocks: tip.height + 1, txs, hashes };
}

/** Whether any whole record in the dir's blk files is the block `hash` (reads record headers only). */
function dirHasBlock(dir, network, hash) {
  const keyFile = path.join(dir, 'xor.dat');
  const key = fs.existsSync(keyFile) ? fs.readFileSync(keyFile) : null;
  const useKey = key && key.length === 8 && key.some((b) => b !== 0) ? key : null;
  const head = Buffer.allocUnsafe(88);
  for (const num of listBlkFiles(dir)) {
    const fd = fs.openSync(path.join(dir, blkName(num)), 'r');
    try {
      const size = fs.fstatSync(fd).size;
      for (let pos = 0; pos + 88 <= size;) {
        fs.readSync(fd, head, 0, 88, pos);
        if (useKey) xorAt(head, useKey, pos);
        if (head.readUInt32BE(0) !== network.magic) break;
        const len = head.readUInt32LE(4);
        if (pos + 8 + len > size) break;
        if (toDisplayHex(sha256d(head.subarray(8, 88))) === hash) return true;
        pos += 8 + len;
      }
    } finally {
      fs.closeSync(fd);
    }
  }
  return false;
}

module.exports = { writeChain, appendBranch };
