'use strict';

/**
 * Recently read previous outputs, by outpoint, so the inputs a wallet or an explorer asks
 * about again cost no read: a txid commits to its outputs, so an entry is right whatever
 * block holds the funding transaction and whatever reorg happens (a reorg only decides whether
 * the spender is confirmed, never what it spent). Least recently used first out, within a
 * byte budget; each script is copied, so an entry never keeps a transaction or block alive.
 */
class PrevoutCache {
  /** @param {number} [maxBytes=16 MiB] */
  constructor(maxBytes = 16 << 20) {
    this.maxBytes = maxBytes;
    /** @type {Map<string, {value: number, script: Buffer}>} least recently used first */
    this.map = new Map();
    this.bytes = 0;
  }

  /**
   * @param {string} key outpointKey()
   * @returns {{value: number, script: Buffer}|undefined}
   */
  get(key) {
    const e = this.map.get(key);
    if (e === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, e);
    return e;
  }

  /**
   * @param {string} key
   * @param {{value: number, script: Buffer}} output
   * @returns {{value: number, script: Buffer}} the kept copy
   */
  set(key, output) {
    const e = { value: output.value, script: Buffer.from(output.script) };
    if (this.map.has(key)) return this.map.get(key);
    this.map.set(key, e);
    this.bytes += cost(e);
    for (const [k, old] of this.map) {
      if (this.bytes <= this.maxBytes) break;
      this.map.delete(k);
      this.bytes -= cost(old);
    }
    return e;
  }

  clear() {
    this.map.clear();
    this.bytes = 0;
  }
}

/** An entry's bytes: its script, plus the key string, the object and the Map slot (roughly, node 20). */
function cost(e) {
  return e.script.length + 200;
}

/**
 * @param {Buffer} txid 32 bytes (a view is fine)
 * @param {number} vout
 */
function outpointKey(txid, vout) {
  return `${txid.latin1Slice(0, 32)}${vout}`;
}

module.exports = { PrevoutCache, outpointKey };
