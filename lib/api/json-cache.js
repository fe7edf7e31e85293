'use strict';

/**
 * Serialized answers that can never change, kept for the next request: an Esplora
 * transaction object is fixed by its txid and the block holding it (its bytes and witness,
 * its inputs' previous outputs, its status: height, hash and time of that block), so the JSON
 * keyed by both is right for as long as the block is on the best chain, and a reorg shows as
 * another key. Least recently used first out, within a byte budget (a string of JSON costs
 * about its length: these are one-byte strings).
 */
class JsonCache {
  /** @param {number} [maxBytes=32 MiB] */
  constructor(maxBytes = 32 << 20) {
    this.maxBytes = maxBytes;
    /** @type {Map<string, string>} least recently used first */
    this.map = new Map();
    this.bytes = 0;
  }

  /** @param {string} key @returns {string|undefined} */
  get(key) {
    const v = this.map.get(key);
    if (v === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, v);
    return v;
  }

  /** @param {string} key @param {string} json */
  set(key, json) {
    const cost = json.length + key.length + 100;
    if (cost > this.maxBytes || this.map.has(key)) return;
    this.map.set(key, json);
    this.bytes += cost;
    for (const [k, v] of this.map) {
      if (this.bytes <= this.maxBytes) break;
      this.map.delete(k);
      this.bytes -= v.length + k.length + 100;
    }
  }

  clear() {
    this.map.clear();
    this.bytes = 0;
  }
}

/**
 * The key of a confirmed transaction's answer: its block and its txid.
 * @param {{blockHash: string, txid: Buffer}} loc
 */
function txKey(loc) {
  return `${loc.blockHash}${loc.txid.latin1Slice(0, 32)}`;
}

module.exports = { JsonCache, txKey };
