'use strict';

const { feeAnswer, RPC_METHOD_NOT_FOUND } = require('./client');

/** The confirmation targets Esplora's GET /api/fee-estimates answers for. */
const ESPLORA_TARGETS = Object.freeze([...Array.from({ length: 25 }, (_, i) => i + 1), 144, 504, 1008]);

/** BTC per 1,000 vbytes → satoshis per vbyte. */
const SAT_PER_VB = 1e8 / 1000;

/**
 * The node's fee estimates, for every part of addrindex that answers them (Esplora's
 * /fee-estimates, Electrum's blockchain.estimatefee, insight's /utils/estimatefee):
 * `estimatesmartfee` (Bitcoin Core), else `estimatefee` (btcd has only that). Which of the
 * two the node answers is learnt once; answers are kept `ttlMs` (a node updates its estimates
 * once per block) and concurrent askers share one request.
 *
 *   const fees = new FeeEstimator(node);             // a NodeClient
 *   await fees.estimate(6);      // {btcPerKvB: 0.00012, satPerVb: 12, blocks: 6, method: 'estimatesmartfee'}
 *   await fees.estimates();      // {"1": 25.1, "2": 20.3, …, "1008": 1.0}: Esplora's shape, targets without an estimate left out
 */
class FeeEstimator {
  /**
   * @param {import('./client').NodeClient} client
   * @param {{ttlMs?: number, now?: () => number}} [opts]
   */
  constructor(client, { ttlMs = 30000, now = Date.now } = {}) {
    this.client = client;
    this.ttlMs = ttlMs;
    this.now = now;
    /** 'estimatesmartfee' | 'estimatefee' once learnt */
    this.method = null;
    /** @type {Map<number, {at: number, answer: Promise<FeeEstimate>}>} */
    this.kept = new Map();
  }

  /**
   * @typedef {object} FeeEstimate
   * @property {number|null} btcPerKvB  null: the node has no estimate for this target
   * @property {number|null} satPerVb
   * @property {number} blocks  the target the node answered for (estimatesmartfee may widen it)
   * @property {string} method  the call that answered
   */

  /**
   * A fee rate for confirmation within `blocks`.
   * @param {number} blocks ≥ 1
   * @returns {Promise<FeeEstimate>}
   */
  async estimate(blocks) {
    const [one] = await this.estimateMany([blocks]);
    return one;
  }

  /**
   * Rates for several targets, the missing ones in one batch request.
   * @param {number[]} targets
   * @returns {Promise<FeeEstimate[]>} in the order of `targets`
   */
  async estimateMany(targets) {
    for (const t of targets) {
      if (!Number.isInteger(t) || t < 1) throw new RangeError(`a fee estimate's target is a number of blocks ≥ 1, not ${t}`);
    }
    const t0 = this.now();
    const missing = [...new Set(targets)].filter((t) => {
      const k = this.kept.get(t);
      return !k || t0 - k.at >= this.ttlMs;
    });
    if (missing.length) {
      const asked = this._ask(missing);
      missing.forEach((t, i) => {
        const answer = asked.then((all) => all[i]);
        answer.catch(() => this.kept.delete(t)); // a failure is not kept
        this.kept.set(t, { at: t0, answer });
      });
    }
    return Promise.all(targets.map((t) => this.kept.get(t).answer));
  }

  /**
   * Esplora's /api/fee-estimates: target (blocks) → sat/vB, for the targets the node has an
   * estimate for.
   * @param {readonly number[]} [targets=ESPLORA_TARGETS]
   * @returns {Promise<Object<string, number>>}
   */
  async estimates(targets = ESPLORA_TARGETS) {
    const all = await this.estimateMany([...targets]);
    const out = {};
    targets.forEach((t, i) => {
      if (all[i].satPerVb !== null) out[t] = all[i].satPerVb;
    });
    return out;
  }

  async _ask(targets) {
    if (this.method === null) this.method = await this._learn(targets[0]);
    const settled = await this.client.settled(targets.map((t) => [this.method, [t]]));
    return settled.map((s, i) => {
      if (s.error) {
        if (s.error.rpcCode === RPC_METHOD_NOT_FOUND) throw s.error;
        // btcd refuses targets past its estimator's depth (25 blocks), and answers an error
        // until it has seen enough blocks: no estimate for that target
        return { btcPerKvB: null, satPerVb: null, blocks: targets[i], method: this.method };
      }
      return withSat(feeAnswer(this.method, targets[i], s.result));
    });
  }

  /** Which call the node answers: estimatesmartfee unless it does not know the method. */
  async _learn(target) {
    try {
      await this.client.rpc.call('estimatesmartfee', [target]);
    } catch (err) {
      if (err.rpcCode === RPC_METHOD_NOT_FOUND) return 'estimatefee';
      if (err.code !== 'ERR_NODE_RPC') throw err;
    }
    return 'estimatesmartfee';
  }
}

function withSat(e) {
  return { ...e, satPerVb: e.btcPerKvB === null ? null : Math.round(e.btcPerKvB * SAT_PER_VB * 1000) / 1000 };
}

module.exports = { FeeEstimator, ESPLORA_TARGETS };
