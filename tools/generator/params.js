'use strict';

const { UsageError } = require('../../lib/errors');
const { AliasTable } = require('./rng');
const { KIND, CLASSES } = require('./scripts');

/**
 * Every shape parameter of the generated chain, with its default. README.md documents each
 * one and the public statistic it follows; keep the two in step.
 */
const DEFAULTS = Object.freeze({
  // blocks
  txsPerBlock: 2000,
  txsPerBlockSpread: 0.25,
  minBlockBytes: 0,
  maxBlockWeight: 4000000,
  blockInterval: 600,
  timeJitter: 240,
  startTime: null,
  blockVersion: 0x20000000,
  coinbaseMaturity: 100,
  subsidy: 50e8,
  halvingInterval: null,
  witnessCommitment: true,
  fundingOutputs: 0,
  // transaction shape
  inputsMean: 2.0,
  singleInputShare: 0.7,
  inputsTailMin: 3,
  inputsTailAlpha: 1.0,
  maxInputs: 250,
  outputsMean: 2.5,
  singleOutputShare: 0.2,
  outputsTailMin: 3,
  outputsTailAlpha: 0.8,
  maxOutputs: 1000,
  // output scripts
  mix: Object.freeze({ p2wpkh: 0.45, p2tr: 0.20, p2pkh: 0.15, p2sh: 0.12, p2wsh: 0.05, p2pk: 0.01, multisig: 0.01, nulldata: 0.01 }),
  p2shKinds: Object.freeze({ p2wpkh: 0.6, multisig: 0.3, p2wsh: 0.1 }),
  p2pkUncompressedShare: 0.4,
  multisig1of3Share: 0.7,
  p2trScriptPathShare: 0.05,
  newScriptShare: 0.45,
  reuseZipf: 1.6,
  reuseRecentShare: 0.2,
  reuseRecentWindow: 10000,
  // spending
  spendYoungShare: 0.85,
  youngMeanBlocks: 6,
  poolCap: 2000000,
  dust: 546,
  dustRetries: 3,
  feeRateMin: 1,
  feeRateMax: 100,
  rbfShare: 0.3,
  lockTimeShare: 0.4,
  txVersion1Share: 0.1,
  highRShare: 0.25,
});

const KEYS = new Set(Object.keys(DEFAULTS));

/**
 * Merges user parameters over the defaults and checks them; unknown names are an error, so a
 * typo cannot silently fall back to a default.
 * @param {object} user
 * @param {{halvingInterval: number, startTime: number}} netDefaults network-dependent defaults
 * @returns {object} frozen, complete parameters
 */
function resolveParams(user, netDefaults) {
  for (const k of Object.keys(user)) {
    if (!KEYS.has(k)) throw new UsageError('ERR_GENERATOR_PARAM', `unknown generator parameter "${k}"`);
  }
  const p = { ...DEFAULTS };
  for (const k of Object.keys(user)) if (user[k] !== undefined) p[k] = user[k];
  if (p.halvingInterval === null) p.halvingInterval = netDefaults.halvingInterval;
  if (p.startTime === null) p.startTime = netDefaults.startTime;
  p.mix = normalize('mix', p.mix, CLASSES);
  p.p2shKinds = normalize('p2shKinds', p.p2shKinds, ['p2wpkh', 'multisig', 'p2wsh']);
  const int = (k, min, max = Number.MAX_SAFE_INTEGER) => {
    if (!Number.isInteger(p[k]) || p[k] < min || p[k] > max) {
      throw new UsageError('ERR_GENERATOR_PARAM', `${k} must be an integer in [${min}, ${max}], got ${p[k]}`);
    }
  };
  const num = (k, min, max) => {
    if (typeof p[k] !== 'number' || !(p[k] >= min && p[k] <= max)) {
      throw new UsageError('ERR_GENERATOR_PARAM', `${k} must be a number in [${min}, ${max}], got ${p[k]}`);
    }
  };
  int('txsPerBlock', 0);
  num('txsPerBlockSpread', 0, 1);
  int('minBlockBytes', 0, 3900000);
  int('maxBlockWeight', 4000, 1e9);
  int('blockInterval', 1, 86400);
  int('timeJitter', 0, Math.floor((p.blockInterval - 1) / 2));
  int('startTime', 0, 0xffffffff);
  int('blockVersion', 0, 0x7fffffff);
  int('coinbaseMaturity', 0, 1000000);
  int('subsidy', 0, 21e14);
  int('halvingInterval', 1);
  int('fundingOutputs', 0, 10000000);
  num('inputsMean', 1, 1000);
  num('singleInputShare', 0.01, 1);
  int('inputsTailMin', 2, 10000);
  num('inputsTailAlpha', 0.05, 10);
  int('maxInputs', p.inputsTailMin, 10000);
  num('outputsMean', 1, 1000);
  num('singleOutputShare', 0, 1);
  int('outputsTailMin', 3, 10000);
  num('outputsTailAlpha', 0.05, 10);
  int('maxOutputs', p.outputsTailMin, 10000);
  for (const k of ['p2pkUncompressedShare', 'multisig1of3Share', 'p2trScriptPathShare', 'newScriptShare',
    'reuseRecentShare', 'spendYoungShare', 'rbfShare', 'lockTimeShare', 'txVersion1Share', 'highRShare']) num(k, 0, 1);
  num('reuseZipf', 0, 10);
  int('reuseRecentWindow', 1);
  num('youngMeanBlocks', 0.001, 1e6);
  int('poolCap', 1000, 1e8);
  int('dust', 0, 1e8);
  int('dustRetries', 0, 100);
  num('feeRateMin', 0, 1e6);
  num('feeRateMax', p.feeRateMin, 1e6);
  if (p.mix.nulldata >= 1) throw new UsageError('ERR_GENERATOR_PARAM', 'mix must leave room for spendable outputs');
  return Object.freeze(p);
}

function normalize(name, obj, allowed) {
  if (!obj || typeof obj !== 'object') throw new UsageError('ERR_GENERATOR_PARAM', `${name} must be an object of shares`);
  let total = 0;
  const out = {};
  for (const k of allowed) out[k] = 0;
  for (const [k, v] of Object.entries(obj)) {
    if (!allowed.includes(k)) {
      throw new UsageError('ERR_GENERATOR_PARAM', `${name}: unknown class "${k}" (expected ${allowed.join(', ')})`);
    }
    if (typeof v !== 'number' || !(v >= 0)) throw new UsageError('ERR_GENERATOR_PARAM', `${name}.${k} must be a share >= 0`);
    out[k] = v;
    total += v;
  }
  if (!(total > 0)) throw new UsageError('ERR_GENERATOR_PARAM', `${name} shares sum to zero`);
  for (const k of allowed) out[k] /= total;
  return Object.freeze(out);
}

/**
 * A count distribution over 1..max: an "ordinary" part (`base`, weights from index 1) mixed
 * with a discrete power-law tail P(n) ∝ n^-(alpha+1) on [tailMin, max], the tail's share solved
 * so the overall mean is `mean`. This is how most txs can be 1-in/2-out while consolidations
 * and batch payouts with hundreds of inputs or outputs still bring the means to ~2 and ~2.5.
 * @returns {{table: AliasTable, pmf: Float64Array, tailShare: number}} pmf[n] = P(n)
 */
function countDistribution(what, base, mean, tailMin, alpha, max) {
  const tail = new Float64Array(max + 1);
  let tw = 0;
  for (let n = tailMin; n <= max; n++) tw += (tail[n] = Math.pow(n, -(alpha + 1)));
  let tailMean = 0;
  for (let n = tailMin; n <= max; n++) tailMean += n * (tail[n] /= tw);
  let baseMean = 0;
  let bw = 0;
  for (let n = 1; n < base.length; n++) bw += base[n];
  for (let n = 1; n < base.length; n++) baseMean += (n * base[n]) / bw;
  const share = (mean - baseMean) / (tailMean - baseMean);
  if (!(share >= 0 && share <= 1)) {
    throw new UsageError('ERR_GENERATOR_PARAM',
      `${what}: a mean of ${mean} cannot be reached (ordinary txs average ${baseMean.toFixed(3)}, the tail ${tailMean.toFixed(3)})`);
  }
  const pmf = new Float64Array(max + 1);
  for (let n = 1; n <= max; n++) pmf[n] = (1 - share) * ((base[n] || 0) / bw) + share * tail[n];
  return { table: new AliasTable(Array.from(pmf)), pmf, tailShare: share };
}

/**
 * The distributions the generator draws from, derived once from the parameters.
 * @param {object} p resolved parameters
 */
function deriveDistributions(p) {
  // ordinary inputs: geometric, P(1) = singleInputShare
  const inBase = new Float64Array(Math.min(p.maxInputs, 64) + 1);
  for (let n = 1; n < inBase.length; n++) inBase[n] = p.singleInputShare * Math.pow(1 - p.singleInputShare, n - 1);
  // ordinary outputs: a payment alone, or a payment and its change
  const outBase = [0, p.singleOutputShare, 1 - p.singleOutputShare];
  const inputs = countDistribution('inputsMean', inBase, p.inputsMean, p.inputsTailMin, p.inputsTailAlpha, p.maxInputs);
  const outputs = countDistribution('outputsMean', outBase, p.outputsMean, p.outputsTailMin, p.outputsTailAlpha, p.maxOutputs);

  // script kinds: the public mix by class, split into the kinds that need different spends
  const kw = new Array(KIND.COUNT).fill(0);
  const m = p.mix;
  kw[KIND.P2PKH] = m.p2pkh;
  kw[KIND.P2SH_P2WPKH] = m.p2sh * p.p2shKinds.p2wpkh;
  kw[KIND.P2SH_MULTISIG] = m.p2sh * p.p2shKinds.multisig;
  kw[KIND.P2SH_P2WSH] = m.p2sh * p.p2shKinds.p2wsh;
  kw[KIND.P2WPKH] = m.p2wpkh;
  kw[KIND.P2WSH] = m.p2wsh;
  kw[KIND.P2TR] = m.p2tr;
  kw[KIND.P2PK_C] = m.p2pk * (1 - p.p2pkUncompressedShare);
  kw[KIND.P2PK_U] = m.p2pk * p.p2pkUncompressedShare;
  kw[KIND.MS_1OF2] = m.multisig * (1 - p.multisig1of3Share);
  kw[KIND.MS_1OF3] = m.multisig * p.multisig1of3Share;
  kw[KIND.NULLDATA] = m.nulldata;
  const kinds = new AliasTable(kw);
  const spendable = kw.slice();
  spendable[KIND.NULLDATA] = 0;
  const spendableKinds = new AliasTable(spendable);
  return { inputs, outputs, kinds, spendableKinds };
}

module.exports = { DEFAULTS, resolveParams, deriveDistributions };
