'use strict';

const { corrupt } = require('./checks');

/**
 * P2PK outputs and the two views of a script hash — the rules, once for every backend.
 *
 * The address view (the REST API, insight, the bitcore service) files a P2PK output under its
 * key's P2PKH script hash, as bitcore does; the script view (Electrum) under the P2PK script's
 * own hash, so that a P2PKH script hash does not include it. The two differ only for keys
 * that have P2PK outputs, and the index holds both without a second copy of the history:
 *
 * - The address account of the key (S, keyed by the P2PKH script hash) is what it always was.
 * - Each P2PK script (P) also has an account of its own, keyed by its own script hash, holding
 *   its own outputs and the transactions that pay or spend them: the copy of P2PK entries only,
 *   which are a small share of any chain but its first years (docs/FORMAT.md measures it).
 * - S's account names the P2PK scripts it counts ("parts": each one's script hash and the TxNum
 *   of its first entry) and its "both" entries: the transactions that touch S through a P2PK
 *   script and also through another script (its P2PKH script), with the flags of the other.
 *
 * S's script view — its P2PKH script alone — is then S's account less its parts: counters
 * subtracted, history entries of a part dropped unless they are "both" entries (which keep the
 * other script's flags), unspent outputs of a part removed (lib/core/script-view.js).
 */

/**
 * The P2PK parts an address account records.
 * @typedef {object} Parts
 * @property {Array<{sh: Buffer, first: number}>} p2pk  each P2PK script counted (its own script
 *   hash, internal order, or as much of it as names its account — a backend keeping accounts
 *   by a prefix stores that prefix; the TxNum of its first entry), in byte order of `sh`
 * @property {number[]} both  postings (txNum * 4 + flags), ascending: transactions touching the
 *   account through a part and through another script, flags of the other
 */

/**
 * An account's parts after a batch: those it had, the new P2PK scripts the batch counted, its
 * new "both" entries after the old ones.
 * @param {Parts|null} had changed in place (the caller's own decoded copy)
 * @param {{p2pk: Map<string, {sh: Buffer, first: number}>, both: number[]}|undefined} batch
 *   the batch's (Changes#parts), undefined when the batch named none for the account
 * @param {number} [keyBytes=32] bytes of a script hash that name an account (Changes#keyBytes):
 *   two parts whose script hashes agree in those are one account
 * @returns {Parts|null}
 */
function addParts(had, batch, keyBytes = 32) {
  if (!batch) return had;
  const name = (sh) => sh.subarray(0, keyBytes);
  // the caller's decoded parts, changed in place: an account's "both" entries grow with its
  // history, and a copy of them per batch would cost what the whole list costs
  const parts = had || { p2pk: [], both: [] };
  let added = false;
  for (const n of batch.p2pk.values()) {
    if (!parts.p2pk.some((x) => name(x.sh).equals(name(n.sh)))) {
      parts.p2pk.push({ sh: n.sh, first: n.first });
      added = true;
    }
  }
  if (added) parts.p2pk.sort((a, b) => Buffer.compare(name(a.sh), name(b.sh)));
  const both = parts.both;
  for (const e of batch.both) {
    if (both.length && e <= both[both.length - 1]) throw corrupt(`a "both" entry of TxNum ${Math.floor(e / 4)} arrives out of chain order`);
    both.push(e);
  }
  return parts;
}

/**
 * An account's parts after a revert to below TxNum `cutoff`: the P2PK scripts whose first entry
 * survives, and the "both" entries below the cutoff. Null when none is left.
 * @param {Parts|null} had
 * @param {number} cutoff
 * @returns {Parts|null}
 */
function cutParts(had, cutoff) {
  if (!had) return null;
  const p2pk = had.p2pk.filter((x) => x.first < cutoff);
  const both = had.both.filter((e) => e < cutoff * 4);
  if (p2pk.length === 0) {
    if (both.length) throw corrupt('an account keeps "both" entries but no P2PK script');
    return null;
  }
  return { p2pk, both };
}

/**
 * Per transaction, which address accounts it touches through a P2PK script and through another:
 * what Changes#parts records. Only transactions that touch a P2PK script are followed.
 */
class TxMix {
  /** @param {import('./changes').Changes} ch */
  constructor(ch) {
    this.ch = ch;
    this.notes = [];
  }

  /** Starts a transaction. */
  begin() {
    this.notes.length = 0;
  }

  /**
   * The transaction funds or spends slot j, through the P2PK script `own` or (own null) another.
   * @param {number} j
   * @param {number} flag FUNDED or SPENT
   * @param {Buffer|null} own
   */
  note(j, flag, own) {
    this.notes.push(j, flag, own);
  }

  /** @param {number} txNum the transaction's */
  end(txNum) {
    const n = this.notes;
    const other = new Map(); // slot -> flags through scripts other than P2PK
    for (let k = 0; k < n.length; k += 3) if (n[k + 2] === null) other.set(n[k], (other.get(n[k]) || 0) | n[k + 1]);
    const done = new Set();
    for (let k = 0; k < n.length; k += 3) {
      const j = n[k];
      if (n[k + 2] === null) continue;
      this.ch.p2pkPart(j, n[k + 2], txNum);
      if (done.has(j)) continue;
      done.add(j);
      const f = other.get(j) || 0;
      if (f) this.ch.bothEntry(j, txNum, f);
    }
  }
}

module.exports = { addParts, cutParts, TxMix };
