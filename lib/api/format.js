'use strict';

/**
 * Pure mappers from store values (Summary, HistoryEntry, Utxo, TxLocation, blocks) to the
 * JSON each API family answers with. No I/O here: every shape is testable on hand-built values.
 *
 * Hashes: stores hold txids and script hashes in internal byte order; every JSON shows txids
 * and block hashes in display order (reversed). Script hashes: the native API shows the
 * Electrum form (reversed), Esplora echoes what the client sent (natural order).
 */

const { toDisplayHex } = require('../chain/hash');

/** @typedef {{height: number, hash: string, time: number}} BlockInfo */

const SCRATCH = Buffer.allocUnsafe(32);

/**
 * Display hex of a 32-byte hash (bytes reversed). A shared scratch buffer instead of a copy:
 * the merged history of thousands of addresses formats thousands of txids per answer.
 * @param {Uint8Array} hash 32 bytes, internal order
 * @returns {string}
 */
function hex32(hash) {
  for (let i = 0; i < 32; i++) SCRATCH[i] = hash[31 - i];
  return SCRATCH.toString('hex');
}

const EMPTY_SUMMARY = Object.freeze({
  balance: 0, received: 0, sent: 0, txCount: 0, fundedCount: 0, spentCount: 0, utxoCount: 0,
  firstHeight: null, lastHeight: null,
});

/**
 * @param {import('../stores/abstract').Tip|null} tip
 * @returns {{height: number, hash: string}|null}
 */
function nativeTip(tip) {
  return tip ? { height: tip.height, hash: tip.hash } : null;
}

/**
 * One address's (or script hash's) balance and counters. An address the index never saw
 * answers zeros with null heights: it is a valid address with an empty history.
 * @param {{scripthash: Buffer, address: string|null, electrum?: string}} target electrum: the
 *   display form of scripthash when the caller has it already
 * @param {import('../stores/abstract').Summary|null} summary
 */
function nativeSummary(target, summary) {
  const s = summary || EMPTY_SUMMARY;
  return {
    address: target.address,
    scripthash: target.electrum || toDisplayHex(target.scripthash),
    balance: s.balance,
    received: s.received,
    sent: s.sent,
    txCount: s.txCount,
    fundedCount: s.fundedCount,
    spentCount: s.spentCount,
    utxoCount: s.utxoCount,
    firstHeight: summary ? s.firstHeight : null,
    lastHeight: summary ? s.lastHeight : null,
  };
}

const NO_UNCONFIRMED = Object.freeze({ balance: 0, received: 0, sent: 0, txCount: 0, fundedCount: 0, spentCount: 0 });

/**
 * The mempool's part of a native summary: what its transactions add (balance may be negative).
 * @param {import('../core/mempool').MempoolView|null} pool the view of the answer's tip
 * @param {Buffer} scripthash
 */
function nativeUnconfirmed(pool, scripthash) {
  if (!pool) return { ...NO_UNCONFIRMED };
  const s = pool.summary(scripthash);
  return { balance: s.balance, received: s.received, sent: s.sent, txCount: s.txCount, fundedCount: s.fundedCount, spentCount: s.spentCount };
}

/**
 * A mempool transaction in a native history (`?mempool=1`): what it does to the asked-for
 * script hashes together. `parentsUnconfirmed`: it spends an output of another mempool
 * transaction (Electrum's height -1).
 * @param {import('../core/mempool').MempoolView} pool
 * @param {import('../codec/mempool').MempoolTx} tx
 * @param {Buffer[]} scripthashes
 */
function nativeMempoolEntry(pool, tx, scripthashes) {
  let funded = false;
  let spent = false;
  for (const sh of scripthashes) {
    for (const e of pool.entries(sh)) {
      if (e.tx !== tx) continue;
      funded = funded || e.funded;
      spent = spent || e.spent;
    }
  }
  return { txid: hex32(tx.txid), time: tx.time, fee: tx.fee, vsize: tx.vsize, funded, spent, parentsUnconfirmed: pool.hasUnconfirmedInputs(tx) };
}

/**
 * @param {import('../stores/abstract').HistoryEntry} entry
 */
function nativeEntry(entry) {
  return { txid: hex32(entry.txid), height: entry.height, funded: entry.funded, spent: entry.spent };
}

/**
 * Names of the targets of a merged-history request, looked up by the script hashes a store
 * returns: by Buffer identity first (an in-process store hands back the very Buffers it was
 * given), else by content (a store behind IPC or one that copies), keyed by the first six
 * bytes as a number — a hash is uniform, and a Map of numbers costs a fraction of one of
 * strings. For the serializer every name is also kept as its JSON string's bytes, all in one
 * buffer built on first use (one allocation per request, not one per target).
 */
class TargetNames {
  constructor() {
    /** @type {Map<Buffer, number>} */
    this.byRef = new Map();
    /** @type {Map<number, number|number[]>} six head bytes -> target(s) */
    this.byHead = new Map();
    this.hashes = [];
    this.names = [];
    this.json = null;
    this.jsonAt = null;
  }

  /**
   * @param {Buffer} scripthash
   * @param {string} name an address or hex script hash: needs no JSON escaping
   * @returns {boolean} false when this script hash is named already
   */
  add(scripthash, name) {
    const head = scripthash.readUIntLE(0, 6);
    const prev = this.byHead.get(head);
    if (prev !== undefined && this.find(prev, scripthash) >= 0) return false;
    const i = this.names.length;
    this.hashes.push(scripthash);
    this.names.push(name);
    this.byHead.set(head, prev === undefined ? i : Array.isArray(prev) ? [...prev, i] : [prev, i]);
    this.byRef.set(scripthash, i);
    this.json = null;
    return true;
  }

  /** @private */
  find(candidates, scripthash) {
    if (!Array.isArray(candidates)) return this.hashes[candidates].equals(scripthash) ? candidates : -1;
    for (const i of candidates) if (this.hashes[i].equals(scripthash)) return i;
    return -1;
  }

  /** @private the target's number, -1 when it was not added */
  index(scripthash) {
    const i = this.byRef.get(scripthash);
    if (i !== undefined) return i;
    const c = this.byHead.get(scripthash.readUIntLE(0, 6));
    return c === undefined ? -1 : this.find(c, scripthash);
  }

  /** @param {Buffer} scripthash @returns {string|undefined} */
  get(scripthash) {
    const i = this.index(scripthash);
    return i < 0 ? undefined : this.names[i];
  }

  /** @private every name as a JSON string, back to back; jsonAt[i]..jsonAt[i+1] is name i */
  encoded() {
    if (this.json === null) {
      const at = new Uint32Array(this.names.length + 1);
      let s = '';
      for (let i = 0; i < this.names.length; i++) {
        s += `"${this.names[i]}"`;
        at[i + 1] = s.length;
      }
      this.json = Buffer.from(s, 'latin1');
      this.jsonAt = at;
    }
    return this.json;
  }
}

/**
 * A merged-history entry, naming which of the requested targets the tx touches.
 * @param {import('../stores/abstract').HistoryEntry & {scripthashes: Buffer[]}} entry
 * @param {TargetNames} names the name the client used for each target (address, or script
 *   hash for script-hash requests)
 * @param {'addresses'|'scripthashes'} field
 */
function nativeMultiEntry(entry, names, field) {
  const touched = new Array(entry.scripthashes.length);
  for (let i = 0; i < touched.length; i++) touched[i] = names.get(entry.scripthashes[i]);
  return { txid: hex32(entry.txid), height: entry.height, funded: entry.funded, spent: entry.spent, [field]: touched };
}

const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');
const ascii = (s) => Buffer.from(s, 'latin1');
const TXID_OPEN = ascii('{"txid":"');
const HEIGHT = ascii('","height":');
const FUNDED = [ascii(',"funded":false'), ascii(',"funded":true')];
const SPENT = [ascii(',"spent":false'), ascii(',"spent":true')];

/**
 * The whole answer of a merged-history page, written straight into bytes: equal to
 * JSON.stringify({entries: entries.map((e) => nativeMultiEntry(e, names, field)), next, tip})
 * (a test holds it to that). A page may hold 5,000 entries (~1 MB); building that many
 * objects and strings first costs several times more than the store's own read.
 * @param {Array<import('../stores/abstract').HistoryEntry & {scripthashes: Buffer[]}>} entries
 * @param {TargetNames} names
 * @param {'addresses'|'scripthashes'} field
 * @param {string|null} next
 * @param {{height: number, hash: string}|null} tip
 * @param {object[]} [mempool] the mempool's entries, when asked for (a `mempool` field after `tip`)
 * @returns {Buffer}
 */
function nativeMultiPageJSON(entries, names, field, next, tip, mempool) {
  const open = ascii(`{"entries":[`);
  const list = ascii(`,"${field}":[`);
  const extra = mempool === undefined ? '' : `,"mempool":${JSON.stringify(mempool)}`;
  const close = Buffer.from(`],"next":${JSON.stringify(next)},"tip":${JSON.stringify(tip)}${extra}}`);
  const json = names.encoded();
  const at = names.jsonAt;
  let touchedCount = 0;
  for (let i = 0; i < entries.length; i++) touchedCount += entries[i].scripthashes.length;
  const touched = new Int32Array(touchedCount);
  // fixed bytes + txid + up to 10 height digits + booleans + the list's brackets and commas
  const fixed = TXID_OPEN.length + 64 + HEIGHT.length + 10 + FUNDED[0].length + SPENT[0].length + list.length + 2;
  let size = open.length + close.length + entries.length * fixed;
  let n = 0;
  for (let i = 0; i < entries.length; i++) {
    const shs = entries[i].scripthashes;
    for (let k = 0; k < shs.length; k++) {
      const t = names.index(shs[k]);
      if (t < 0) throw new Error('a merged-history entry names a script hash that was not asked for');
      touched[n++] = t;
      size += at[t + 1] - at[t] + 1;
    }
  }
  const out = Buffer.allocUnsafe(size);
  out.set(open, 0);
  let pos = open.length;
  n = 0;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    if (i) out[pos++] = 0x2c; // ,
    out.set(TXID_OPEN, pos);
    pos += TXID_OPEN.length;
    const txid = e.txid;
    for (let k = 31; k >= 0; k--) {
      out[pos++] = HEX_DIGITS[txid[k] >> 4];
      out[pos++] = HEX_DIGITS[txid[k] & 15];
    }
    out.set(HEIGHT, pos);
    pos += HEIGHT.length;
    pos = writeDecimal(out, pos, e.height);
    const f = FUNDED[e.funded ? 1 : 0];
    out.set(f, pos);
    pos += f.length;
    const sp = SPENT[e.spent ? 1 : 0];
    out.set(sp, pos);
    pos += sp.length;
    out.set(list, pos);
    pos += list.length;
    const count = e.scripthashes.length;
    for (let k = 0; k < count; k++) {
      if (k) out[pos++] = 0x2c;
      const t = touched[n++];
      for (let b = at[t], end = at[t + 1]; b < end; b++) out[pos++] = json[b];
    }
    out[pos++] = 0x5d; // ]
    out[pos++] = 0x7d; // }
  }
  out.set(close, pos);
  pos += close.length;
  return out.subarray(0, pos);
}

/**
 * Writes a whole number below 2^53 in decimal; returns the position after it.
 * @param {Buffer} out
 * @param {number} pos
 * @param {number} v
 */
function writeDecimal(out, pos, v) {
  let digits = 1;
  for (let p = 10; p <= v; p *= 10) digits++;
  let end = pos + digits;
  for (let q = v; end > pos; q = Math.floor(q / 10)) out[--end] = 48 + (q % 10);
  return pos + digits;
}

/** @param {import('../stores/abstract').Utxo} utxo */
function nativeUtxo(utxo) {
  return { txid: hex32(utxo.txid), vout: utxo.vout, value: utxo.value, height: utxo.height };
}

/**
 * @param {import('../stores/abstract').TxLocation} loc
 * @param {BlockInfo} block the block at loc.height
 * @param {{height: number}} tip
 */
function nativeTx(loc, block, tip) {
  return {
    txid: toDisplayHex(loc.txid),
    height: loc.height,
    blockHash: loc.blockHash,
    position: loc.position,
    time: block.time,
    confirmations: tip.height - loc.height + 1,
  };
}

/**
 * A mempool transaction where the native routes give a confirmed one's place: no block
 * (height, blockHash and position null, 0 confirmations), `time` when the index first saw it,
 * and what the snapshot knows of it (`parentsUnconfirmed`: it spends an output of another
 * mempool transaction).
 * @param {{txid: Buffer, time: number, fee: number, vsize: number}} m
 * @param {boolean} parentsUnconfirmed its view's hasUnconfirmedInputs()
 */
function nativeMempoolTx(m, parentsUnconfirmed) {
  return {
    txid: hex32(m.txid), height: null, blockHash: null, position: null, time: m.time, confirmations: 0,
    mempool: { fee: m.fee, vsize: m.vsize, parentsUnconfirmed },
  };
}

// ---- Esplora (blockstream.info / mempool.space) ----

const ZERO_STATS = Object.freeze({ funded_txo_count: 0, funded_txo_sum: 0, spent_txo_count: 0, spent_txo_sum: 0, tx_count: 0 });

/**
 * Esplora's `chain_stats`: outputs funding the script and their sum, those spent and their
 * sum, distinct transactions.
 * @param {import('../stores/abstract').Summary|null} summary
 */
function esploraStats(summary) {
  if (!summary) return { ...ZERO_STATS };
  return {
    funded_txo_count: summary.fundedCount,
    funded_txo_sum: summary.received,
    spent_txo_count: summary.spentCount,
    spent_txo_sum: summary.sent,
    tx_count: summary.txCount,
  };
}

/**
 * GET /api/address/:address and /api/scripthash/:hash. The key echoes what the client sent,
 * as electrs does.
 * @param {'address'|'scripthash'} key
 * @param {string} value
 * @param {import('../stores/abstract').Summary|null} summary
 * @param {ReturnType<import('../core/mempool').MempoolView['summary']>|null} [unconfirmed] the
 *   mempool's part (MempoolView#summary has the same counters); null: none
 */
function esploraAddress(key, value, summary, unconfirmed = null) {
  return { [key]: value, chain_stats: esploraStats(summary), mempool_stats: esploraStats(unconfirmed) };
}

/** @param {BlockInfo} block */
function esploraStatus(block) {
  return { confirmed: true, block_height: block.height, block_hash: block.hash, block_time: block.time };
}

/**
 * @param {{txid: Buffer, vout: number, value: number}} utxo
 * @param {BlockInfo|null} block null: an output of a mempool transaction
 */
function esploraUtxo(utxo, block) {
  return { txid: hex32(utxo.txid), vout: utxo.vout, status: block ? esploraStatus(block) : { confirmed: false }, value: utxo.value };
}

// ---- insight-api (bitpay) ----

/**
 * insight shows BTC amounts as JSON numbers. Division is correctly rounded, so this is the
 * double nearest to the exact 8-decimal value (what bitcore's Unit#toBTC gives).
 * @param {number} sats
 */
function btc(sats) {
  return sats / 1e8;
}

/**
 * GET /insight-api/addr/:addr — field names as insight spells them (txApperances included).
 * @param {string} addrStr
 * @param {import('../stores/abstract').Summary|null} summary
 * @param {string[]|undefined} txids newest first (the mempool's first); undefined with
 *   ?noTxList=1 (the field is left out)
 * @param {{balance: number, txCount: number}|null} [unconfirmed] the mempool's part (MempoolView#summary)
 */
function insightAddr(addrStr, summary, txids, unconfirmed = null) {
  const s = summary || EMPTY_SUMMARY;
  const u = unconfirmed || { balance: 0, txCount: 0 };
  const out = {
    addrStr,
    balance: btc(s.balance),
    balanceSat: s.balance,
    totalReceived: btc(s.received),
    totalReceivedSat: s.received,
    totalSent: btc(s.sent),
    totalSentSat: s.sent,
    unconfirmedBalance: btc(u.balance),
    unconfirmedBalanceSat: u.balance,
    unconfirmedTxApperances: u.txCount,
    txApperances: s.txCount,
  };
  if (txids) out.transactions = txids;
  return out;
}

/**
 * One output of GET /insight-api/addr/:addr/utxo.
 * @param {import('../stores/abstract').Utxo} utxo
 * @param {string} address
 * @param {string} scriptPubKey hex of the address's script
 * @param {number} tipHeight
 */
function insightUtxo(utxo, address, scriptPubKey, tipHeight) {
  return {
    address,
    txid: hex32(utxo.txid),
    vout: utxo.vout,
    scriptPubKey,
    amount: btc(utxo.value),
    satoshis: utxo.value,
    height: utxo.height,
    confirmations: tipHeight - utxo.height + 1,
  };
}

/**
 * One unconfirmed output of GET /insight-api/addr/:addr/utxo, as insight-api shaped a mempool
 * output: no height, `confirmations: 0`, `ts` when it entered the mempool.
 * @param {{txid: Buffer, vout: number, value: number}} utxo
 * @param {string} address
 * @param {string} scriptPubKey
 * @param {number} time seconds
 */
function insightMempoolUtxo(utxo, address, scriptPubKey, time) {
  return {
    address, txid: hex32(utxo.txid), vout: utxo.vout, scriptPubKey, amount: btc(utxo.value), satoshis: utxo.value, confirmations: 0, ts: time,
  };
}

module.exports = {
  insightMempoolUtxo, nativeUnconfirmed, nativeMempoolEntry, TargetNames, hex32, nativeTip, nativeSummary, nativeEntry, nativeMultiEntry, nativeMultiPageJSON, nativeUtxo, nativeTx, nativeMempoolTx,
  esploraAddress, esploraStatus, esploraUtxo,
  btc, insightAddr, insightUtxo,
};
