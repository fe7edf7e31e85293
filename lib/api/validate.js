'use strict';

const { decodeAddress } = require('../chain/address');
const { getNetwork } = require('../chain/networks');
const { toDisplayHex } = require('../chain/hash');
const { AddressError } = require('../errors');
const { badRequest } = require('./errors');

/**
 * Every bound the API enforces, in one place (docs/API.md and docs/openapi.json quote them).
 * Responses are bounded by these: no route returns more than a page of its maximum size.
 */
const LIMITS = Object.freeze({
  /** entries per page of one address's history / UTXOs */
  pageDefault: 50,
  pageMax: 1000,
  /**
   * Multi-address requests: the seed's wallet question is 2,100 addresses with two txs
   * each, answered in one round trip, so a merged page may hold up to 5,000 entries.
   */
  maxAddresses: 5000,
  multiPageMax: 5000,
  /** Esplora pages its confirmed history 25 at a time, newest first (a block's transactions too). */
  esploraPage: 25,
  /** Esplora's /blocks lists this many blocks, newest first. */
  esploraBlocks: 10,
  /** Esplora lists at most this many mempool transactions of an address (/txs, /txs/mempool) ... */
  esploraMempoolTxs: 50,
  /** ... and this many in /mempool/recent. */
  esploraRecent: 10,
  /** insight pages transactions (/txs) 10 at a time ... */
  insightTxsPage: 10,
  /** ... and /addrs/txs answers at most this many (bitcore-node's maxTransactionHistory). */
  insightTxsMax: 50,
  /** Esplora's and insight's /utxo routes have no paging: above this they answer 400. */
  compatUtxoMax: 1000,
  /** insight lists txids in the address summary: at most this many per request ... */
  insightTxids: 1000,
  /** ... and `to` no further than this into the history (deeper: the native cursor routes). */
  insightDepth: 50000,
  /** request body bytes (5,000 bech32 addresses as JSON are ~350 KB) */
  bodyBytes: 1 << 20,
  cursorLength: 512,
  /** a request (headers, body and answer) must finish within this */
  requestTimeoutMs: 10000,
});

const HEX64 = /^[0-9a-fA-F]{64}$/;
const DECIMAL = /^(0|[1-9][0-9]{0,15})$/;
const CURSOR = /^[\x21-\x7e]+$/;

/**
 * A non-negative integer query or body value. Strings must be plain decimal ("12", not
 * "1e1", " 12" or "012"); numbers must be safe integers.
 * @param {unknown} raw undefined when absent
 * @param {string} name for the message
 * @param {{min?: number, max?: number, def?: number}} [bounds]
 * @returns {number|undefined}
 */
function integer(raw, name, { min = 0, max = Number.MAX_SAFE_INTEGER, def } = {}) {
  if (raw === undefined || raw === null || raw === '') return def;
  let n;
  if (typeof raw === 'number') n = raw;
  else if (typeof raw === 'string' && DECIMAL.test(raw)) n = Number(raw);
  else throw badRequest('ERR_BAD_PARAM', `${name} must be a non-negative integer, got ${JSON.stringify(raw)}`);
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw badRequest('ERR_BAD_PARAM', `${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return n;
}

/**
 * Paging options shared by history routes: limit, cursor, order, fromHeight, toHeight.
 * @param {(name: string) => unknown} get reads one option (query string or JSON body)
 * @param {number} maxLimit
 * @returns {import('../stores/abstract').HistoryOptions}
 */
function historyOptions(get, maxLimit) {
  const opts = pageOptions(get, maxLimit);
  const order = get('order');
  if (order !== undefined && order !== null && order !== 'asc' && order !== 'desc') {
    throw badRequest('ERR_BAD_PARAM', `order must be "asc" (chain order) or "desc" (newest first), got ${JSON.stringify(order)}`);
  }
  opts.order = order === 'desc' ? 'desc' : 'asc';
  const fromHeight = integer(get('fromHeight'), 'fromHeight');
  const toHeight = integer(get('toHeight'), 'toHeight');
  if (fromHeight !== undefined && toHeight !== undefined && fromHeight > toHeight) {
    throw badRequest('ERR_BAD_PARAM', `fromHeight (${fromHeight}) is above toHeight (${toHeight})`);
  }
  if (fromHeight !== undefined) opts.fromHeight = fromHeight;
  if (toHeight !== undefined) opts.toHeight = toHeight;
  return opts;
}

/**
 * limit and cursor.
 * @param {(name: string) => unknown} get
 * @param {number} maxLimit
 * @returns {{limit: number, cursor?: string}}
 */
function pageOptions(get, maxLimit) {
  const opts = { limit: integer(get('limit'), 'limit', { min: 1, max: maxLimit, def: Math.min(LIMITS.pageDefault, maxLimit) }) };
  const cursor = get('cursor');
  if (cursor !== undefined && cursor !== null && cursor !== '') {
    if (typeof cursor !== 'string' || cursor.length > LIMITS.cursorLength || !CURSOR.test(cursor)) {
      throw badRequest('ERR_BAD_CURSOR', 'cursor must be the "next" string of a previous page, unchanged');
    }
    opts.cursor = cursor;
  }
  return opts;
}

/** Script types whose address is bech32/bech32m (canonical spelling: lower case). */
const SEGWIT = new Set(['p2wpkh', 'p2wsh', 'p2tr', 'witness_unknown']);

/**
 * Decoded addresses, per network: decoding costs two or three SHA-256 calls and a base58
 * conversion (~15-35 µs, the largest share of a summary request), and wallets ask about the
 * same addresses over and over. The mapping is a pure function, so a bounded memo is safe:
 * two generations, the older dropped when the newer fills, so it never exceeds 2 × MEMO_SIZE.
 */
const MEMO_SIZE = 20000;
const memos = new Map();

function memoFor(name) {
  let m = memos.get(name);
  if (!m) {
    m = { young: new Map(), old: new Map() };
    memos.set(name, m);
  }
  return m;
}

/**
 * An address of the index's network (not a script hash: those have their own routes).
 * @param {string} str
 * @param {string|import('../chain/networks').Network} network
 * @returns {{scripthash: Buffer, address: string, electrum: string, script: Buffer}} scripthash in
 *   internal order; address in its canonical spelling (bech32 lower case; base58 has only one);
 *   electrum: the script hash as the native API shows it; script: the scriptPubKey.
 *   Shared: do not modify.
 * @throws {AddressError}
 */
function address(str, network) {
  const net = getNetwork(network);
  const memo = memoFor(net.name);
  let hit = memo.young.get(str);
  if (hit) return hit;
  hit = memo.old.get(str);
  if (!hit) hit = decode(str, net);
  if (memo.young.size >= MEMO_SIZE) {
    memo.old = memo.young;
    memo.young = new Map();
  }
  memo.young.set(str, hit);
  return hit;
}

function decode(str, net) {
  if (typeof str !== 'string' || str.length === 0) {
    throw new AddressError('ERR_ADDRESS_FORMAT', 'an address must be a non-empty string');
  }
  if (HEX64.test(str)) {
    throw new AddressError('ERR_ADDRESS_FORMAT',
      `"${str}" is a script hash, not an address: use the /scripthash/ routes (or "scripthashes" in a POST body)`);
  }
  if (str.length > 100) {
    throw new AddressError('ERR_ADDRESS_FORMAT', `an address has at most 90 characters; this one has ${str.length}`);
  }
  let d;
  try {
    d = decodeAddress(str, net);
  } catch (err) {
    if (err.code === 'ERR_ADDRESS_FORMAT') err.message = `${JSON.stringify(str)} is not a ${net.name} address: ${err.message}`;
    throw err;
  }
  return Object.freeze({
    scripthash: d.scripthash,
    address: SEGWIT.has(d.type) ? str.toLowerCase() : str,
    electrum: toDisplayHex(d.scripthash),
    script: d.script,
  });
}

/**
 * An Electrum script hash: sha256 of the scriptPubKey, 64 hex digits, bytes reversed for
 * display (as the Electrum protocol and `addrindex parse` show it).
 * @param {string} str
 * @returns {{scripthash: Buffer, address: null}} scripthash in internal order
 */
function electrumScripthash(str) {
  if (typeof str !== 'string' || !HEX64.test(str)) {
    throw badRequest('ERR_SCRIPTHASH_FORMAT', `a script hash is 64 hex digits, got ${JSON.stringify(shorten(str))}`);
  }
  return { scripthash: Buffer.from(str, 'hex').reverse(), address: null };
}

/**
 * Esplora's script hash: the same sha256, but in natural byte order (as electrs parses it
 * and as Esplora clients format it), i.e. the Electrum form reversed.
 * @param {string} str
 * @returns {Buffer} internal order
 */
function esploraScripthash(str) {
  if (typeof str !== 'string' || !HEX64.test(str)) {
    throw badRequest('ERR_SCRIPTHASH_FORMAT', `a script hash is 64 hex digits, got ${JSON.stringify(shorten(str))}`);
  }
  return Buffer.from(str, 'hex');
}

/**
 * @param {string} str display hex
 * @returns {Buffer} internal order
 */
function txid(str) {
  if (typeof str !== 'string' || !HEX64.test(str)) {
    throw badRequest('ERR_TXID_FORMAT', `a txid is 64 hex digits, got ${JSON.stringify(shorten(str))}`);
  }
  return Buffer.from(str, 'hex').reverse();
}

/**
 * @param {string} str a block hash, display hex
 * @returns {string} lower-case display hex, as the store takes it
 */
function blockHash(str) {
  if (typeof str !== 'string' || !HEX64.test(str)) {
    throw badRequest('ERR_BLOCK_HASH_FORMAT', `a block hash is 64 hex digits, got ${JSON.stringify(shorten(str))}`);
  }
  return str.toLowerCase();
}

/**
 * A list of addresses or script hashes from a request body, each parsed; the error of a bad
 * item names its position.
 * @param {unknown} list
 * @param {string} field "addresses" or "scripthashes"
 * @param {(s: string) => {scripthash: Buffer, address: string|null}} parse
 * @returns {Array<{scripthash: Buffer, address: string|null, given: string}>}
 */
function targetList(list, field, parse) {
  if (!Array.isArray(list) || list.length === 0) {
    throw badRequest('ERR_BAD_BODY', `the body needs "${field}": a non-empty array of strings`);
  }
  if (list.length > LIMITS.maxAddresses) {
    throw badRequest('ERR_TOO_MANY_ADDRESSES', `"${field}" holds ${list.length} items; the maximum is ${LIMITS.maxAddresses}`);
  }
  return list.map((item, i) => {
    try {
      return { ...parse(item), given: item };
    } catch (err) {
      err.message = `${field}[${i}]: ${err.message}`;
      throw err;
    }
  });
}

function shorten(v) {
  const s = String(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

module.exports = {
  LIMITS, integer, historyOptions, pageOptions, address, electrumScripthash, esploraScripthash, txid, blockHash, targetList,
};
