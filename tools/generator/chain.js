'use strict';

const { UsageError } = require('../../lib/errors');
const { sha256, sha256d, toDisplayHex } = require('../../lib/chain/hash');
const { merkleRoot } = require('../../lib/chain/merkle');
const { getNetwork } = require('../../lib/chain/networks');
const { Rng } = require('./rng');
const { resolveParams, deriveDistributions } = require('./params');
const { KIND, CLASS_OF, CLASSES, writeOutputScript } = require('./scripts');
const { UtxoPool } = require('./pool');
const { ScriptRegistry } = require('./registry');
const { genesisBlock } = require('./genesis');
const { buildTx, txScratch, ByteArea, putVarint, varintSize, putValue } = require('./txbuilder');

/** Compact target of every generated block: regtest's minimum difficulty. */
const BITS = 0x207fffff;
const WITNESS_MAGIC = Buffer.from('aa21a9ed', 'hex');

/**
 * A deterministic synthetic block chain: height 0 is the network's real genesis block, then
 * every call to nextBlock() makes the next block from the generator's state (the spendable
 * outputs, the scripts paid so far) and a random stream seeded by (seed, height).
 *
 * Everything is a function of (seed, branches, parameters): no clock, no Math.random.
 * A `branches` entry {atHeight, seed} replaces the seed for blocks at atHeight and above,
 * so two generators that differ only there share every block below atHeight and fork at it.
 */
class ChainGenerator {
  /**
   * @param {object} opts
   * @param {string|number} opts.seed
   * @param {string} [opts.network='regtest'] genesis block and defaults (halving interval)
   * @param {{atHeight: number, seed: string|number}[]} [opts.branches=[]]
   * @param {...*} opts.params shape parameters: see README.md and params.js DEFAULTS
   */
  constructor({ seed, network = 'regtest', branches = [], ...params } = {}) {
    if (seed === undefined || seed === null || seed === '') {
      throw new UsageError('ERR_GENERATOR_PARAM', 'a generator needs a seed');
    }
    this.seed = String(seed);
    this.network = getNetwork(network);
    this.genesis = genesisBlock(this.network);
    this.p = resolveParams(params, {
      halvingInterval: this.network.name === 'regtest' ? 150 : 210000,
      startTime: this.genesis.time,
    });
    this.dist = deriveDistributions(this.p);
    this.branches = checkBranches(branches);
    const key = sha256(Buffer.from(`addrindex-gen/scripts/${this.seed}`));
    this.scriptKey = Uint32Array.of(key.readUInt32LE(0), key.readUInt32LE(4), key.readUInt32LE(8), key.readUInt32LE(12));
    this.pool = new UtxoPool(this.p.poolCap);
    this.scripts = new ScriptRegistry();
    /** immature coinbase outputs, oldest first */
    this.pending = [];
    this.height = -1;
    this.prevHash = null;
    this.txNum = 0;
    this.counts = newCounts();
    const perBlock = Math.max(this.p.txsPerBlock, this.p.minBlockBytes / 400, 1) * this.p.outputsMean;
    this.youngMean = Math.max(1, this.p.youngMeanBlocks * perBlock);
    this._initScratch();
    if (this.p.fundingOutputs > 0) this._fund();
  }

  _initScratch() {
    this.area = new ByteArea(1 << 20);
    this.cb = Buffer.allocUnsafe(512);
    this.hashScratch = Buffer.allocUnsafe(1 << 16);
    this.txScratch = txScratch(this.p);
    this.blockWeight = 0;
  }

  /**
   * Outputs of txs outside the chain, spendable from height 1: lets a standalone block (a
   * benchmark's) be full of spends without a history of blocks before it.
   */
  _fund() {
    const rng = Rng.from(`addrindex-gen/funding/${this.seed}`);
    const txid = Buffer.allocUnsafe(32);
    for (let n = 0; n < this.p.fundingOutputs;) {
      rng.fill(txid, 0, 32);
      const outs = 1 + rng.below(3);
      for (let vout = 0; vout < outs && n < this.p.fundingOutputs; vout++, n++) {
        const kind = this.dist.spendableKinds.sample(rng);
        const id = this.scripts.choose(kind, rng, this.p);
        const value = Math.floor(1e4 * Math.pow(1e5, rng.float()));
        this.pool.add(txid, 0, vout, value, id, 0);
      }
    }
  }

  /** The seed in force at `height`: the last branch at or below it, else the chain's. */
  seedAt(height) {
    let s = this.seed;
    for (const b of this.branches) if (b.atHeight <= height) s = b.seed;
    return s;
  }

  /** @returns {number} block subsidy at `height`, halving every halvingInterval blocks */
  subsidyAt(height) {
    const halvings = Math.floor(height / this.p.halvingInterval);
    return halvings >= 64 ? 0 : Math.floor(this.p.subsidy / Math.pow(2, halvings));
  }

  /**
   * Makes the next block.
   * @returns {{height: number, hash: string, prev: string, raw: Buffer, txCount: number}}
   *   hash/prev in display hex; raw is the block's own Buffer
   */
  nextBlock() {
    const h = this.height + 1;
    if (h === 0) return this._genesis();
    this.height = h;
    const p = this.p;
    const rng = Rng.from(`addrindex-gen/block/${this.seedAt(h)}/${h}`);
    const maturity = Math.max(1, p.coinbaseMaturity);
    while (this.pending.length && this.pending[0].height + maturity <= h) {
      const c = this.pending.shift();
      this.pool.add(c.txid, 0, 0, c.value, c.script, c.height);
    }
    this.pool.maintain();

    // the coinbase's shape is drawn first, its amount and commitment filled in last
    const cbKind = this.dist.spendableKinds.sample(rng);
    const cbScript = this.scripts.choose(cbKind, rng, p);
    const cbTxNum = this.txNum++;
    this.scripts.touch(cbScript, cbTxNum);
    const extranonce = [rng.u32(), rng.u32()];
    let target = p.txsPerBlock;
    if (p.txsPerBlockSpread > 0) target = Math.round(target * (1 + p.txsPerBlockSpread * (2 * rng.float() - 1)));

    const area = this.area;
    area.pos = 0;
    const txids = [null];
    const wtxids = p.witnessCommitment ? [Buffer.alloc(32)] : null;
    this.blockWeight = 4 * (80 + 5 + 250);
    let fees = 0;
    let n = 0;
    while ((n < target || area.pos < p.minBlockBytes) && this.pool.live > 0) {
      const fee = buildTx(this, rng, area, txids, wtxids);
      if (fee < 0) break;
      fees += fee;
      n++;
    }

    const cbLen = this._coinbase(h, cbKind, cbScript, extranonce, this.subsidyAt(h) + fees, txids, wtxids);
    const txCount = n + 1;
    const raw = Buffer.allocUnsafe(80 + varintSize(txCount) + cbLen + area.pos);
    raw.writeInt32LE(p.blockVersion, 0);
    this.prevHash.copy(raw, 4);
    merkleRoot(txids).copy(raw, 36);
    const jitter = p.timeJitter ? rng.below(2 * p.timeJitter + 1) - p.timeJitter : 0;
    raw.writeUInt32LE(p.startTime + h * p.blockInterval + jitter, 68);
    raw.writeUInt32LE(BITS, 72);
    let nonce = rng.u32();
    const header = raw.subarray(0, 80);
    let hash;
    // regtest proof of work is real: about two header hashes per block
    for (;;) {
      raw.writeUInt32LE(nonce, 76);
      hash = sha256d(header);
      if (meetsRegtestTarget(hash)) break;
      nonce = (nonce + 1) >>> 0;
    }
    let q = putVarint(raw, 80, txCount);
    q += this.cb.copy(raw, q, 0, cbLen);
    area.buf.copy(raw, q, 0, area.pos);

    const prev = toDisplayHex(this.prevHash);
    this.prevHash = hash;
    const c = this.counts;
    c.blocks++;
    c.bytes += raw.length;
    c.coinbaseValue += this.subsidyAt(h) + fees;
    c.subsidy += this.subsidyAt(h);
    return { height: h, hash: toDisplayHex(hash), prev, raw, txCount };
  }

  _genesis() {
    this.height = 0;
    const raw = Buffer.from(this.genesis.raw);
    this.prevHash = sha256d(raw.subarray(0, 80));
    this.txNum = 1; // the genesis coinbase; its output is never spendable
    this.counts.blocks++;
    this.counts.bytes += raw.length;
    return { height: 0, hash: this.genesis.hash, prev: '0'.repeat(64), raw, txCount: 1 };
  }

  /**
   * Writes the coinbase into this.cb (BIP144 form when it commits to witnesses): BIP34
   * height push and an extranonce in its scriptSig, `value` to the payout script, and the
   * BIP141 witness commitment. Puts its txid first in `txids`, queues its output until
   * maturity. @returns {number} its serialized length
   */
  _coinbase(h, kind, script, extranonce, value, txids, wtxids) {
    const cb = this.cb;
    const commit = wtxids !== null;
    let q = 0;
    cb.writeUInt32LE(2, q);
    q += 4;
    if (commit) {
      cb[q] = 0;
      cb[q + 1] = 1;
      q += 2;
    }
    const ioStart = q;
    cb[q] = 1;
    cb.fill(0, q + 1, q + 33);
    cb.writeUInt32LE(0xffffffff, q + 33);
    q += 37;
    const lenAt = q++;
    q = putHeightPush(cb, q, h);
    cb[q] = 8;
    cb.writeUInt32LE(extranonce[0], q + 1);
    cb.writeUInt32LE(extranonce[1], q + 5);
    q += 9;
    cb[lenAt] = q - lenAt - 1;
    cb.writeUInt32LE(0xffffffff, q);
    q += 4;
    cb[q++] = commit ? 2 : 1;
    putValue(cb, q, value);
    q = writeOutputScript(cb, q + 8, kind, script, this.scriptKey, null);
    let commitAt = 0;
    if (commit) {
      cb.fill(0, q, q + 8);
      cb[q + 8] = 38;
      cb[q + 9] = 0x6a;
      cb[q + 10] = 36;
      WITNESS_MAGIC.copy(cb, q + 11);
      commitAt = q + 15;
      q += 47;
    }
    const ioEnd = q;
    if (commit) {
      cb[q] = 1;
      cb[q + 1] = 32;
      cb.fill(0, q + 2, q + 34); // the witness reserved value
      q += 34;
    }
    cb.writeUInt32LE(0, q);
    q += 4;
    if (commit) {
      const reserved = Buffer.alloc(64);
      merkleRoot(wtxids).copy(reserved, 0);
      sha256d(reserved).copy(cb, commitAt);
    }
    const stripped = commit
      ? Buffer.concat([cb.subarray(0, 4), cb.subarray(ioStart, ioEnd), cb.subarray(q - 4, q)])
      : cb.subarray(0, q);
    const txid = sha256d(stripped);
    txids[0] = txid;
    this.pending.push({ txid, value, script, height: h });
    this.counts.byKindCoinbase[kind]++;
    return q;
  }

  /**
   * A generator in the same state whose blocks from the next height on use `branchSeed`:
   * what a fresh generator with the extra branch {atHeight: height + 1, seed: branchSeed}
   * would produce, without regenerating the shared prefix.
   * @param {string|number} branchSeed
   * @returns {ChainGenerator}
   */
  fork(branchSeed) {
    const g = Object.create(ChainGenerator.prototype);
    Object.assign(g, this);
    g.branches = checkBranches([...this.branches, { atHeight: this.height + 1, seed: branchSeed }]);
    g.pool = this.pool.clone();
    g.scripts = this.scripts.clone();
    g.pending = this.pending.slice();
    g.counts = cloneCounts(this.counts);
    g._initScratch();
    return g;
  }

  /**
   * The chain so far in numbers: shape (means, mix, new-script share), spending (same-block
   * spends, pool) and the heavy tail (scripts with the most history entries).
   * @param {{top?: number}} [opts]
   */
  stats({ top = 5 } = {}) {
    const c = this.counts;
    const mix = {};
    for (const cls of CLASSES) mix[cls] = 0;
    let spendable = 0;
    for (let k = 0; k < KIND.COUNT; k++) {
      mix[CLASS_OF[k]] += c.byKind[k];
      if (k !== KIND.NULLDATA) spendable += c.byKind[k];
    }
    for (const cls of CLASSES) mix[cls] = c.outputs ? mix[cls] / c.outputs : 0;
    const reg = this.scripts;
    const n = reg.count;
    const entries = reg.entries.a;
    const best = [];
    const hist = new Map();
    for (let id = 0; id < n; id++) {
      const e = entries[id];
      hist.set(e, (hist.get(e) || 0) + 1);
      if (best.length < top || e > best[best.length - 1].entries) {
        best.push({ id, entries: e });
        best.sort((a, b) => b.entries - a.entries);
        if (best.length > top) best.pop();
      }
    }
    let median = 0;
    let seen = 0;
    for (const [e, count] of [...hist].sort((a, b) => a[0] - b[0])) {
      seen += count;
      if (seen * 2 >= n) {
        median = e;
        break;
      }
    }
    const buf = Buffer.allocUnsafe(128);
    const topScripts = best.map(({ id, entries: e }) => {
      const kind = reg.kindOf.a[id];
      const end = writeOutputScript(buf, 0, kind, id, this.scriptKey, null);
      return { id, type: CLASS_OF[kind], script: buf.toString('hex', 1, end), entries: e };
    });
    return {
      height: this.height,
      blocks: c.blocks,
      txs: this.txNum,
      bytes: c.bytes,
      spendTxs: c.txs,
      inputsPerTx: c.txs ? c.inputs / c.txs : 0,
      outputsPerTx: c.txs ? c.outputs / c.txs : 0,
      segwitTxShare: c.txs ? c.segwitTxs / c.txs : 0,
      mix,
      newScriptShare: spendable ? c.newScripts / spendable : 0,
      sameBlockSpendShare: c.inputs ? c.sameBlockSpends / c.inputs : 0,
      topUpInputShare: c.inputs ? c.topUps / c.inputs : 0,
      fees: c.fees,
      subsidy: c.subsidy,
      scripts: n,
      medianEntries: median,
      scriptsOver100k: [...hist].reduce((s, [e, count]) => s + (e >= 100000 ? count : 0), 0),
      topScripts,
      pool: { live: this.pool.live, dropped: this.pool.dropped, immature: this.pending.length },
    };
  }
}

function newCounts() {
  return {
    blocks: 0, bytes: 0, txs: 0, inputs: 0, outputs: 0, segwitTxs: 0, newScripts: 0,
    sameBlockSpends: 0, topUps: 0, fees: 0, subsidy: 0, coinbaseValue: 0,
    byKind: new Float64Array(KIND.COUNT), byKindCoinbase: new Float64Array(KIND.COUNT),
  };
}

function cloneCounts(c) {
  return { ...c, byKind: c.byKind.slice(), byKindCoinbase: c.byKindCoinbase.slice() };
}

function checkBranches(branches) {
  if (!Array.isArray(branches)) throw new UsageError('ERR_GENERATOR_PARAM', 'branches must be an array of {atHeight, seed}');
  const out = branches.map((b) => {
    if (!b || !Number.isInteger(b.atHeight) || b.atHeight < 1) {
      throw new UsageError('ERR_GENERATOR_PARAM', `a branch needs an integer atHeight >= 1, got ${b && b.atHeight}`);
    }
    if (b.seed === undefined || b.seed === null || b.seed === '') {
      throw new UsageError('ERR_GENERATOR_PARAM', `the branch at height ${b.atHeight} needs a seed`);
    }
    return Object.freeze({ atHeight: b.atHeight, seed: String(b.seed) });
  });
  out.sort((a, b) => a.atHeight - b.atHeight);
  return Object.freeze(out);
}

/**
 * BIP34: the height as the scriptSig's first push, serialized as Bitcoin Core's
 * `CScript() << height` does (OP_0 / OP_1..OP_16 for small heights, else a minimal
 * little-endian CScriptNum).
 */
function putHeightPush(buf, p, h) {
  if (h === 0) {
    buf[p] = 0x00;
    return p + 1;
  }
  if (h <= 16) {
    buf[p] = 0x50 + h;
    return p + 1;
  }
  let len = 0;
  for (let v = h; v > 0; v = Math.floor(v / 256)) buf[p + 1 + len++] = v & 0xff;
  if (buf[p + len] & 0x80) buf[p + 1 + len++] = 0; // keep the number positive
  buf[p] = len;
  return p + 1 + len;
}

/** True when a header hash (internal order) is at or below the target of bits 0x207fffff. */
function meetsRegtestTarget(hash) {
  // target, big-endian: 7f ff ff 00 … 00 — the hash read as a number from its last byte
  if (hash[31] !== 0x7f) return hash[31] < 0x7f;
  if (hash[30] !== 0xff || hash[29] !== 0xff) return true;
  for (let i = 28; i >= 0; i--) if (hash[i] !== 0) return false;
  return true;
}

module.exports = { ChainGenerator, BITS, putHeightPush, meetsRegtestTarget };
