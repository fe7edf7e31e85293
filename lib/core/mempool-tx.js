'use strict';

const { decodeMempoolTx, encodeMempoolTx } = require('../codec/mempool');

/**
 * Per transaction, what the views stamp on it (a transaction is shared by every view of the
 * snapshots that hold it): its place in snapshot order and the seqs of the views that hold it
 * (from FROM, until UNTIL; lib/core/mempool.js). Symbols, so they stay apart from the
 * transaction's own fields; set in the constructor, so they live in the object and not in a
 * table beside it.
 */
const RANK = Symbol('mempool rank');
const FROM = Symbol('mempool from');
const UNTIL = Symbol('mempool until');

/**
 * One transaction of a mempool view, as compact as a reader can hold 150,000 of them: its
 * encoded part of the snapshot (lib/codec/mempool.js) and the few figures every answer reads;
 * its inputs and outputs are decoded from the part when asked (each time: nothing decoded is
 * kept), so a worker holds about the part's bytes per transaction and not a tree of objects.
 * The transaction's bytes are not in its part: the view reads them from the store when an
 * answer needs them (MempoolView#raw), unless the transaction was built from a decoded one
 * that had them (tests, views built without a store).
 */
class ViewTx {
  /**
   * @param {Buffer} part the transaction's part (encodeMempoolTx), owned by this object
   * @param {import('../codec/mempool').MempoolTx} [decoded] the part decoded, when the caller
   *   has it already
   * @param {Buffer|null} [raw] the transaction's bytes, when the caller holds them
   */
  constructor(part, decoded = decodeMempoolTx(part), raw = null) {
    this.part = part;
    this.time = decoded.time;
    this.fee = decoded.fee;
    this.vsize = decoded.vsize;
    /** @type {Buffer|null} its bytes, when it was made with them (else MempoolView#raw reads them) */
    this.rawBytes = raw;
    /** it spent an output of another mempool transaction when its part was written (parents()) */
    this.flagged = decoded.inputs.some((i) => i.unconfirmed);
    /** @type {string[]|null} parents(), once asked */
    this.parentKeys = null;
    /** @type {Array<ViewTx|null>|null} by parents(): the version of each last found in a view (MempoolView#hasUnconfirmedInputs) */
    this.parentTxs = null;
    /** it pays or spends a P2PK output (its script view differs from its address view) */
    this.p2pk = decoded.inputs.some((i) => i.p2pk) || decoded.outputs.some((o) => o.p2pk);
    this[RANK] = -1;
    this[FROM] = 0;
    this[UNTIL] = Infinity;
  }

  /**
   * A view transaction of a decoded one (tests, and views built from decoded snapshots).
   * @param {import('../codec/mempool').MempoolTx} t
   * @returns {ViewTx}
   */
  static of(t) {
    if (t instanceof ViewTx) return t;
    const part = encodeMempoolTx(t);
    return new ViewTx(part, decodeMempoolTx(part), t.raw ? Buffer.from(t.raw) : null);
  }

  /** @returns {Buffer} 32 bytes, internal order */
  get txid() {
    return this.part.subarray(0, 32);
  }

  /**
   * The transactions (latin1 txids) whose outputs it spent when its part was written: those
   * still in a view make it spend unconfirmed outputs there (MempoolView#hasUnconfirmedInputs,
   * Electrum's height -1). Decoded once, when first asked.
   * @returns {string[]}
   */
  parents() {
    if (!this.flagged) return [];
    if (!this.parentKeys) this.parentKeys = this.inputs.filter((i) => i.unconfirmed).map((i) => i.txid.latin1Slice(0, 32));
    return this.parentKeys;
  }

  /** @returns {import('../codec/mempool').MempoolInput[]} decoded from the part */
  get inputs() {
    return decodeMempoolTx(this.part).inputs;
  }

  /** @returns {import('../codec/mempool').MempoolTx['outputs']} decoded from the part */
  get outputs() {
    return decodeMempoolTx(this.part).outputs;
  }

  /** @returns {import('../codec/mempool').MempoolTx} the whole part decoded (once, for a caller reading much of it) */
  decoded() {
    return decodeMempoolTx(this.part);
  }

  /** What JSON.stringify gives: the decoded transaction. */
  toJSON() {
    return decodeMempoolTx(this.part);
  }
}

/**
 * The script hashes (latin1 keys) a transaction touches in a view of the index
 * (lib/core/p2pk.js): in the address view a P2PK output (or an input spending one) counts
 * toward its key's P2PKH script hash and its own script hash, in the script view toward its
 * own only.
 * @param {import('../codec/mempool').MempoolTx} d decoded
 * @param {'address'|'script'} view
 * @returns {Set<string>}
 */
function keysOf(d, view) {
  const out = new Set();
  for (const x of [...d.inputs, ...d.outputs]) for (const k of keysOfOne(x, view)) out.add(k);
  return out;
}

/** The keys one input or output counts toward in a view. */
function keysOfOne(x, view) {
  if (!x.scripthash) return [];
  if (view === 'script') return [(x.p2pk || x.scripthash).latin1Slice(0, 32)];
  return x.p2pk ? [x.scripthash.latin1Slice(0, 32), x.p2pk.latin1Slice(0, 32)] : [x.scripthash.latin1Slice(0, 32)];
}

/**
 * @typedef {object} MempoolEntry  one unconfirmed transaction as a script hash sees it
 * @property {ViewTx} tx
 * @property {boolean} funded    it pays the script hash
 * @property {boolean} spent     it spends an output of the script hash
 * @property {number} received   satoshis it pays the script hash
 * @property {number} sent       satoshis of the script hash's outputs it spends
 * @property {number} fundedCount
 * @property {number} spentCount
 * @property {number[]} vouts    its outputs paying the script hash, in order
 */

/**
 * What a transaction does to one script hash (its latin1 key) in a view.
 * @param {ViewTx} tx
 * @param {string} key
 * @param {'address'|'script'} view
 * @returns {MempoolEntry}
 */
function entryOf(tx, key, view) {
  const d = tx.decoded();
  const e = { tx, funded: false, spent: false, received: 0, sent: 0, fundedCount: 0, spentCount: 0, vouts: [] };
  for (const i of d.inputs) {
    if (!keysOfOne(i, view).includes(key)) continue;
    e.spent = true;
    e.sent += i.value;
    e.spentCount++;
  }
  d.outputs.forEach((o, vout) => {
    if (!keysOfOne(o, view).includes(key)) return;
    e.funded = true;
    e.received += o.value;
    e.fundedCount++;
    e.vouts.push(vout);
  });
  return e;
}

module.exports = { RANK, FROM, UNTIL, ViewTx, keysOf, entryOf };
