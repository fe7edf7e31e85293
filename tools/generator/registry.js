'use strict';

const { KIND } = require('./scripts');

/** A growable typed array: push and index, doubling its storage. */
class Grow {
  constructor(Type, cap = 1024) {
    this.Type = Type;
    this.a = new Type(cap);
    this.length = 0;
  }

  push(v) {
    if (this.length === this.a.length) {
      const b = new this.Type(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.length++] = v;
  }

  clone() {
    const c = new Grow(this.Type, 1);
    c.a = this.a.slice();
    c.length = this.length;
    return c;
  }
}

/**
 * Every output script the chain has paid, by id. A script is only (kind, id): its bytes are
 * derived from the id when written, so the registry holds 1 byte of kind plus 4 bytes in its
 * kind's list per script, and 8 bytes of statistics (history entries, last tx seen).
 *
 * Reuse follows a heavy tail. A reused script is, with `reuseRecentShare`, one of the last
 * `reuseRecentWindow` scripts of its kind (a customer paid again); otherwise its rank r in
 * creation order is drawn from a continuous power law with density ∝ r^-reuseZipf over
 * [1, n+1), so the oldest scripts of each kind behave like exchange and pool addresses that
 * collect a large share of all payments.
 */
class ScriptRegistry {
  constructor() {
    this.kindOf = new Grow(Uint8Array);
    this.byKind = [];
    for (let k = 0; k < KIND.COUNT; k++) this.byKind.push(new Grow(Uint32Array, 256));
    this.entries = new Grow(Uint32Array);
    this.lastTx = new Grow(Uint32Array);
  }

  /** @returns {number} scripts created so far */
  get count() {
    return this.kindOf.length;
  }

  /**
   * A script id of `kind` for a new output: a never-seen script with probability
   * `newShare` (always, while the kind has none), else a reused one.
   * @param {number} kind
   * @param {import('./rng').Rng} rng
   * @param {object} p resolved parameters
   * @returns {number} script id; `this.created` tells whether it is new
   */
  choose(kind, rng, p) {
    const list = this.byKind[kind];
    const n = list.length;
    if (n === 0 || rng.float() < p.newScriptShare) {
      this.created = true;
      const id = this.kindOf.length;
      this.kindOf.push(kind);
      list.push(id);
      this.entries.push(0);
      this.lastTx.push(0);
      return id;
    }
    this.created = false;
    if (rng.float() < p.reuseRecentShare) {
      return list.a[n - 1 - rng.below(Math.min(n, p.reuseRecentWindow))];
    }
    return list.a[zipfRank(rng, n, p.reuseZipf) - 1];
  }

  /**
   * Counts tx `txNum` once in the script's history (funding and spending both count, a tx
   * that touches the script several times counts once), as an address index would.
   */
  touch(id, txNum) {
    if (this.lastTx.a[id] !== txNum + 1) {
      this.lastTx.a[id] = txNum + 1;
      this.entries.a[id]++;
    }
  }

  /** @returns {ScriptRegistry} an independent copy */
  clone() {
    const c = Object.create(ScriptRegistry.prototype);
    c.kindOf = this.kindOf.clone();
    c.byKind = this.byKind.map((g) => g.clone());
    c.entries = this.entries.clone();
    c.lastTx = this.lastTx.clone();
    return c;
  }
}

/**
 * A rank in [1, n] from the continuous power law with density ∝ x^-s on [1, n+1), by
 * inverting its CDF (s = 1 is the log-uniform case).
 */
function zipfRank(rng, n, s) {
  const u = rng.float();
  let x;
  if (Math.abs(s - 1) < 1e-9) {
    x = Math.exp(u * Math.log(n + 1));
  } else {
    const e = 1 - s;
    x = Math.pow(1 - u * (1 - Math.pow(n + 1, e)), 1 / e);
  }
  const r = Math.floor(x);
  return r < 1 ? 1 : r > n ? n : r;
}

module.exports = { ScriptRegistry, Grow, zipfRank };
