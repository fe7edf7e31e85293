'use strict';

const { sha256d } = require('../../lib/chain/hash');
const {
  KIND, WITNESS_SPEND, MAX_INPUT_BYTES, MAX_OUTPUT_BYTES,
  writeOutputScript, writeScriptSig, writeWitness,
} = require('./scripts');

/** A growable byte buffer that a block's transactions are written into, back to back. */
class ByteArea {
  constructor(size = 1 << 20) {
    this.buf = Buffer.allocUnsafe(size);
    this.pos = 0;
  }

  /** Makes sure `n` more bytes fit after `pos`. */
  ensure(n) {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }
}

/**
 * Writes a CompactSize.
 * @returns {number} position after it
 */
function putVarint(buf, p, n) {
  if (n < 0xfd) {
    buf[p] = n;
    return p + 1;
  }
  if (n <= 0xffff) {
    buf[p] = 0xfd;
    buf.writeUInt16LE(n, p + 1);
    return p + 3;
  }
  buf[p] = 0xfe;
  buf.writeUInt32LE(n, p + 1);
  return p + 5;
}

/** @returns {number} bytes a CompactSize of n takes */
function varintSize(n) {
  return n < 0xfd ? 1 : n <= 0xffff ? 3 : 5;
}

/** Writes a satoshi amount (a safe integer) as a little-endian uint64. */
function putValue(buf, p, v) {
  const lo = v % 4294967296;
  buf.writeUInt32LE(lo, p);
  buf.writeUInt32LE((v - lo) / 4294967296, p + 4);
}

/** Most weight one tx with nIn inputs and nOut outputs can have (every byte counted as base). */
function weightBound(nIn, nOut) {
  return 4 * (16 + nIn * MAX_INPUT_BYTES + nOut * MAX_OUTPUT_BYTES);
}

/**
 * Builds one spending transaction of the generator's current block into `area`, updates the
 * pool, the script registry and the statistics, and appends its txid and wtxid.
 *
 * The shape is drawn first (input and output counts, output scripts), then the inputs from
 * the pool (more while their value cannot pay the outputs' dust and the fee). The tx is
 * written with placeholder amounts; its exact virtual size then gives the fee (a drawn
 * sat/vB rate), and the amounts are written in place: inputs = outputs + fee, exactly.
 *
 * @param {import('./chain').ChainGenerator} g
 * @param {import('./rng').Rng} rng the block's stream
 * @param {ByteArea} area
 * @param {Buffer[]} txids
 * @param {Buffer[]|null} wtxids null when no witness commitment is made
 * @returns {number} the fee, or -1 when the tx would not fit the block's weight (nothing drawn from the pool)
 */
function buildTx(g, rng, area, txids, wtxids) {
  const p = g.p;
  const pool = g.pool;
  const scripts = g.scripts;
  const st = g.counts;
  const t = g.txScratch;
  const height = g.height;
  const txNum = g.txNum;

  let nIn = g.dist.inputs.table.sample(rng);
  const nOut = g.dist.outputs.table.sample(rng);
  if (nIn > pool.live) nIn = pool.live;
  if (g.blockWeight + weightBound(nIn, nOut) > p.maxBlockWeight) return -1;

  // outputs: kind and script id (at most one OP_RETURN per tx, as policy allows)
  let nSpend = 0;
  let nulldata = false;
  for (let o = 0; o < nOut; o++) {
    let kind = g.dist.kinds.sample(rng);
    if (kind === KIND.NULLDATA && nulldata) kind = g.dist.spendableKinds.sample(rng);
    t.outKind[o] = kind;
    if (kind === KIND.NULLDATA) {
      nulldata = true;
      continue;
    }
    t.outId[o] = scripts.choose(kind, rng, p);
    t.outNew[o] = scripts.created ? 1 : 0;
    nSpend++;
  }
  if (nSpend === 0) {
    const kind = g.dist.spendableKinds.sample(rng);
    t.outKind[0] = kind;
    t.outId[0] = scripts.choose(kind, rng, p);
    t.outNew[0] = scripts.created ? 1 : 0;
    nSpend = 1;
  }

  // inputs: wallets leave coins worth less than the fee to spend them (they stay in the pool,
  // like the real UTXO set's dust); when the coins still cannot pay the outputs' dust and the
  // fee, the wallet waits for the cheapest fee rate, then adds coins (the largest of a few)
  let rate = p.feeRateMin > 0
    ? p.feeRateMin * Math.pow(p.feeRateMax / p.feeRateMin, rng.float())
    : p.feeRateMax * rng.float();
  const uneconomical = rate * 68;
  let sum = 0;
  for (let i = 0; i < nIn; i++) {
    let e = pool.pick(rng, p.spendYoungShare, g.youngMean);
    for (let retry = 0; retry < p.dustRetries && pool.value[e] < uneconomical && pool.live > 0; retry++) {
      const next = pool.pick(rng, p.spendYoungShare, g.youngMean);
      pool.unpick(e);
      e = next;
    }
    t.picked[i] = e;
    sum += pool.value[e];
  }
  const estimate = (n) => 11 + 68 * n + 31 * nOut;
  if (sum < nSpend * p.dust + rate * estimate(nIn)) rate = p.feeRateMin;
  while (sum < nSpend * p.dust + rate * estimate(nIn) && nIn < p.maxInputs && pool.live > 0 &&
    g.blockWeight + weightBound(nIn + 1, nOut) <= p.maxBlockWeight) {
    // coin selection tops up with the largest of a few candidates
    let e = pool.pick(rng, p.spendYoungShare, g.youngMean);
    for (let c = 1; c < 4 && pool.live > 0; c++) {
      const other = pool.pick(rng, p.spendYoungShare, g.youngMean);
      if (pool.value[other] > pool.value[e]) {
        pool.unpick(e);
        e = other;
      } else {
        pool.unpick(other);
      }
    }
    t.picked[nIn++] = e;
    sum += pool.value[e];
    st.topUps++;
  }
  let hasWitness = 0;
  for (let i = 0; i < nIn; i++) {
    const kind = scripts.kindOf.a[pool.script[t.picked[i]]];
    t.inKind[i] = kind;
    hasWitness |= WITNESS_SPEND[kind];
  }

  // serialize, amounts left for later
  area.ensure(16 + nIn * MAX_INPUT_BYTES + nOut * MAX_OUTPUT_BYTES);
  const buf = area.buf;
  const start = area.pos;
  let q = start;
  buf.writeUInt32LE(rng.float() < p.txVersion1Share ? 1 : 2, q);
  q += 4;
  if (hasWitness) {
    buf[q] = 0;
    buf[q + 1] = 1;
    q += 2;
  }
  const ioStart = q;
  const useLock = rng.float() < p.lockTimeShare;
  const sequence = rng.float() < p.rbfShare ? 0xfffffffd : useLock ? 0xfffffffe : 0xffffffff;
  q = putVarint(buf, q, nIn);
  for (let i = 0; i < nIn; i++) {
    const e = t.picked[i];
    pool.txid.copy(buf, q, e * 32, e * 32 + 32);
    buf.writeUInt32LE(pool.vout[e], q + 32);
    q = writeScriptSig(buf, q + 36, t.inKind[i], rng, p.highRShare);
    buf.writeUInt32LE(sequence, q);
    q += 4;
  }
  q = putVarint(buf, q, nOut);
  for (let o = 0; o < nOut; o++) {
    t.valueAt[o] = q;
    q = writeOutputScript(buf, q + 8, t.outKind[o], t.outId[o], g.scriptKey, rng);
  }
  const ioEnd = q;
  if (hasWitness) {
    for (let i = 0; i < nIn; i++) q = writeWitness(buf, q, t.inKind[i], rng, p.highRShare, p.p2trScriptPathShare);
  }
  const witEnd = q;
  // anti-fee-sniping wallets lock to the tip, sometimes a little before it
  const lockTime = useLock ? Math.max(0, height - 1 - (rng.float() < 0.1 ? rng.below(100) : 0)) : 0;
  buf.writeUInt32LE(lockTime, q);
  q += 4;

  const total = q - start;
  const base = hasWitness ? total - 2 - (witEnd - ioEnd) : total;
  const weight = base * 3 + total;
  let fee = Math.ceil((rate * (weight + 3)) / 4);

  // amounts: each spendable output gets the dust minimum and a Gamma(2)-weighted share of the
  // rest (flatter than exponential shares: fewer crumbs that would never be worth spending)
  let minEach = p.dust;
  if (sum - fee < nSpend * minEach) {
    fee = Math.max(0, Math.min(fee, sum - nSpend * minEach));
    if (sum - fee < nSpend * minEach) minEach = Math.floor((sum - fee) / nSpend);
  }
  const avail = sum - fee;
  const rest = avail - nSpend * minEach;
  let w = 0;
  for (let o = 0; o < nOut; o++) {
    if (t.outKind[o] === KIND.NULLDATA) continue;
    const x = rng.exp(1) + rng.exp(1);
    t.outValue[o] = x;
    w += x;
  }
  let given = 0;
  let change = -1;
  for (let o = 0; o < nOut; o++) {
    if (t.outKind[o] === KIND.NULLDATA) {
      t.outValue[o] = 0;
      continue;
    }
    const v = minEach + Math.floor((rest * t.outValue[o]) / w);
    t.outValue[o] = v;
    given += v;
    if (change < 0) change = o;
  }
  t.outValue[change] += avail - given;
  for (let o = 0; o < nOut; o++) putValue(buf, t.valueAt[o], t.outValue[o]);

  let txid;
  if (hasWitness) {
    const len = 4 + (ioEnd - ioStart) + 4;
    if (g.hashScratch.length < len) g.hashScratch = Buffer.allocUnsafe(Math.max(len, g.hashScratch.length * 2));
    const s = g.hashScratch;
    buf.copy(s, 0, start, start + 4);
    buf.copy(s, 4, ioStart, ioEnd);
    buf.copy(s, 4 + ioEnd - ioStart, q - 4, q);
    txid = sha256d(s.subarray(0, len));
    if (wtxids) wtxids.push(sha256d(buf.subarray(start, q)));
    st.segwitTxs++;
  } else {
    txid = sha256d(buf.subarray(start, q));
    if (wtxids) wtxids.push(txid);
  }
  txids.push(txid);
  area.pos = q;
  g.blockWeight += weight;

  // the spent outputs leave (already marked dead); history entries and stats before any add
  // can move pool entries
  for (let i = 0; i < nIn; i++) {
    const e = t.picked[i];
    scripts.touch(pool.script[e], txNum);
    if (pool.height[e] === height) st.sameBlockSpends++;
  }
  for (let o = 0; o < nOut; o++) {
    const kind = t.outKind[o];
    st.byKind[kind]++;
    if (kind === KIND.NULLDATA) continue;
    const id = t.outId[o];
    pool.add(txid, 0, o, t.outValue[o], id, height);
    scripts.touch(id, txNum);
    st.newScripts += t.outNew[o];
  }
  st.txs++;
  st.inputs += nIn;
  st.outputs += nOut;
  st.fees += fee;
  g.txNum++;
  return fee;
}

/** Per-tx scratch arrays, sized for the largest tx the parameters allow. */
function txScratch(p) {
  return {
    picked: new Int32Array(p.maxInputs),
    inKind: new Uint8Array(p.maxInputs),
    outKind: new Uint8Array(p.maxOutputs),
    outId: new Uint32Array(p.maxOutputs),
    outNew: new Uint8Array(p.maxOutputs),
    outValue: new Float64Array(p.maxOutputs),
    valueAt: new Uint32Array(p.maxOutputs),
  };
}

module.exports = { buildTx, txScratch, ByteArea, putVarint, varintSize, putValue };
