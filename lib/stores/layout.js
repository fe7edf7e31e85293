'use strict';

const { writeU40, readU40 } = require('../codec/io');

/**
 * Every key of the key-value schema (LMDB and LevelDB), in one place.
 *
 * One ordered keyspace; the first byte names the table. Integers in keys are big-endian so
 * key order is numeric order: history pages of a script hash sort in chain order, UTXO rows in
 * (TxNum, vout) order, blocks by height. docs/FORMAT.md has the values.
 *
 *   key                                   value (lib/codec/records.js)       serves
 *   m                                     meta: schema version, network      open checks
 *   t                                     tip: height, hash, next TxNum      getTip, resume
 *   b height:u32                          block: hash, header, first TxNum,  getBlock, TxNum -> height,
 *                                         count, size, weight                headers
 *   k hash:32                             the height of that block           getBlockByHash
 *   w height:u32                          the block's bytes past its header  getBlockBytes (--txstore only)
 *                                         (LZ4 above a threshold)
 *   l height:u32                          where the blocks dir holds it      reading a block (not chain
 *                                         (blk file, offset)                 data: left out of digest)
 *   n rowStart:u40                        txids of TxNums rowStart..+55 and   TxNum -> txid, where a tx
 *                                         their offsets in their blocks      lies in its block
 *   x txid[0..4)                          TxNums whose txid starts so        getTx, getPrevouts
 *   o txNum:u40                           the tx's indexed outputs: unspent   getPrevouts, spenders
 *                                         (vout, value, scripthash), spent
 *                                         (vout, spending TxNum and input)
 *   s hashX:12                            account: summary, last 1..64       getSummary, history tail,
 *                                         history entries, UTXOs if <= 16    getUtxos (small)
 *   h hashX:12 firstTxNum:u40             64 sealed history entries          getHistory (long)
 *   u hashX:12 txNum:u40 vout:ord         value (accounts with > 16 UTXOs)   getUtxos (large)
 *   r height:u32                          undo: spent outputs, reused txids  revert
 *   c height:u32                          script hashes the block touched    getTouched (subscriptions)
 *                                         (kept as long as its undo)
 *   d                                     where the sync reads blocks (JSON) getSourceInfo (serve finds the
 *                                                                            blocks dir; not chain data)
 *   M 00                                  mempool head: seq, tip, totals     getMempoolHead
 *   M 03 seq:u64 / M 04 place:u48         a mempool change / a transaction   getMempoolChanges / getMempool
 *   M 06 place:u48                        a mempool transaction's bytes      getMempoolRaw
 *                                         (stores/mempool-rows.js)
 *   W 00..03 …                            bitcore v8 wallets and their       the /api/BTC/:network wallet
 *                                         addresses (stores/wallets.js)      routes (not chain data)
 *
 * `ord` is an order-preserving vout: one byte below 0xff, else 0xff and a u32.
 *
 * Short keys (schema 2). A txid is 32 random bytes; its first 4 name its tx row, and the
 * rare txids that share them share the row (the reader picks by the full txid in `n`). A
 * script hash's first 12 bytes (its "hashX", as ElectrumX calls its 11-byte version) name its
 * rows: two scripts would have to collide in 96 bits of sha256 — about 2^48 work to make two
 * of one's own collide (their histories merge, both the maker's), 2^96 to hit someone else's.
 * The full 32-byte script hash stays in the values that hand it out (outputs, undo).
 */

/** Bytes of a script hash in keys. */
const HASHX_LEN = 12;
/** Bytes of a txid in tx keys. */
const TX_PREFIX_LEN = 4;

const P = {
  meta: 0x6d, // m
  tip: 0x74, // t
  block: 0x62, // b
  blockHash: 0x6b, // k
  locator: 0x6c, // l
  body: 0x77, // w
  txids: 0x6e, // n
  tx: 0x78, // x
  outputs: 0x6f, // o
  account: 0x73, // s
  history: 0x68, // h
  utxo: 0x75, // u
  undo: 0x72, // r
  touched: 0x63, // c
  mempool: 0x4d, // M: not chain data; left out of digest and verify
  source: 0x64, // d: not chain data either
  wallet: 0x57, // W: bitcore v8 wallets (wallets.js); not chain data
};

/** Table name of a key, by its first byte. */
const TABLE_OF = new Map(Object.entries(P).map(([name, byte]) => [byte, name]));

const META_KEY = Buffer.from([P.meta]);
const TIP_KEY = Buffer.from([P.tip]);
const SOURCE_KEY = Buffer.from([P.source]);
const MEMPOOL_HEAD_KEY = Buffer.from([P.mempool, 0]);
const MEMPOOL_BODY_KEY = Buffer.from([P.mempool, 1]);


/** @param {number} height */
function blockKey(height) {
  const k = Buffer.allocUnsafe(5);
  k[0] = P.block;
  k.writeUInt32BE(height, 1);
  return k;
}

/** @param {Uint8Array} hash 32 bytes, internal order */
function blockHashKey(hash) {
  const k = Buffer.allocUnsafe(33);
  k[0] = P.blockHash;
  k.set(hash, 1);
  return k;
}

/** @param {number} height */
function undoKey(height) {
  const k = Buffer.allocUnsafe(5);
  k[0] = P.undo;
  k.writeUInt32BE(height, 1);
  return k;
}

/** @param {number} height */
function bodyKey(height) {
  const k = Buffer.allocUnsafe(5);
  k[0] = P.body;
  k.writeUInt32BE(height, 1);
  return k;
}

/** @param {number} height */
function locatorKey(height) {
  const k = Buffer.allocUnsafe(5);
  k[0] = P.locator;
  k.writeUInt32BE(height, 1);
  return k;
}

/** @param {number} height */
function touchedKey(height) {
  const k = Buffer.allocUnsafe(5);
  k[0] = P.touched;
  k.writeUInt32BE(height, 1);
  return k;
}

/**
 * @param {number} rowStart a multiple of TXIDS_PER_ROW
 */
function txidsKey(rowStart) {
  const k = Buffer.allocUnsafe(6);
  k[0] = P.txids;
  writeU40(k, 1, rowStart);
  return k;
}

/**
 * The tx row of a txid: keyed by its first TX_PREFIX_LEN bytes.
 * @param {Uint8Array} txids
 * @param {number} at byte offset of the txid
 */
function txKey(txids, at) {
  const k = Buffer.allocUnsafe(1 + TX_PREFIX_LEN);
  k[0] = P.tx;
  for (let i = 0; i < TX_PREFIX_LEN; i++) k[1 + i] = txids[at + i];
  return k;
}

/** @param {number} txNum */
function outputsKey(txNum) {
  const k = Buffer.allocUnsafe(6);
  k[0] = P.outputs;
  writeU40(k, 1, txNum);
  return k;
}

/**
 * @param {Uint8Array} shs
 * @param {number} at byte offset of the script hash
 */
function accountKey(shs, at) {
  const k = Buffer.allocUnsafe(1 + HASHX_LEN);
  k[0] = P.account;
  for (let i = 0; i < HASHX_LEN; i++) k[1 + i] = shs[at + i];
  return k;
}

/**
 * @param {Uint8Array} shs
 * @param {number} at
 * @param {number} firstTxNum
 */
function pageKey(shs, at, firstTxNum) {
  const k = Buffer.allocUnsafe(PAGE_KEY_LEN);
  k[0] = P.history;
  k.set(shs.subarray(at, at + HASHX_LEN), 1);
  writeU40(k, 1 + HASHX_LEN, firstTxNum);
  return k;
}

const PAGE_KEY_LEN = 1 + HASHX_LEN + 5;
const UTXO_KEY_LEN = 1 + HASHX_LEN + 5 + 1;

/** @param {Buffer} key a page key */
function pageKeyTxNum(key) {
  return readU40(key, 1 + HASHX_LEN);
}

/**
 * @param {Uint8Array} shs
 * @param {number} at
 * @param {number} txNum
 * @param {number} vout
 */
function utxoKey(shs, at, txNum, vout) {
  const k = Buffer.allocUnsafe(vout < 0xff ? UTXO_KEY_LEN : UTXO_KEY_LEN + 4);
  k[0] = P.utxo;
  k.set(shs.subarray(at, at + HASHX_LEN), 1);
  writeU40(k, 1 + HASHX_LEN, txNum);
  const o = UTXO_KEY_LEN - 1;
  if (vout < 0xff) {
    k[o] = vout;
  } else {
    k[o] = 0xff;
    k.writeUInt32BE(vout, o + 1);
  }
  return k;
}

/**
 * @param {Buffer} key a utxo key
 * @returns {{txNum: number, vout: number}|null} null when the key is malformed
 */
function parseUtxoKey(key) {
  const o = UTXO_KEY_LEN - 1;
  if (key.length === UTXO_KEY_LEN && key[o] !== 0xff) return { txNum: readU40(key, 1 + HASHX_LEN), vout: key[o] };
  if (key.length === UTXO_KEY_LEN + 4 && key[o] === 0xff && key.readUInt32BE(o + 1) >= 0xff) {
    return { txNum: readU40(key, 1 + HASHX_LEN), vout: key.readUInt32BE(o + 1) };
  }
  return null;
}

/**
 * Keys of one table that start with `head` (the table byte and, optionally, a script hash's
 * hashX): the bounds {gte, lt} of a range scan.
 * @param {number} table
 * @param {Uint8Array} [shs] a script hash (or a hashX)
 * @param {number} [at]
 */
function scan(table, shs, at) {
  const n = shs ? 1 + HASHX_LEN : 1;
  const gte = Buffer.allocUnsafe(n);
  gte[0] = table;
  if (shs) gte.set(shs.subarray(at, at + HASHX_LEN), 1);
  return { gte, lt: successor(gte) };
}

/** The smallest key greater than every key starting with prefix. */
function successor(prefix) {
  const s = Buffer.from(prefix);
  for (let i = s.length - 1; i >= 0; i--) {
    if (s[i] !== 0xff) {
      s[i]++;
      return s.subarray(0, i + 1);
    }
  }
  throw new Error('no successor of an all-0xff prefix');
}

module.exports = {
  P, TABLE_OF, META_KEY, TIP_KEY, SOURCE_KEY, MEMPOOL_HEAD_KEY, MEMPOOL_BODY_KEY, HASHX_LEN, TX_PREFIX_LEN, PAGE_KEY_LEN,
  writeU40, readU40,
  blockKey, blockHashKey, bodyKey, locatorKey, undoKey, touchedKey, txidsKey, txKey, outputsKey, accountKey, pageKey, pageKeyTxNum, utxoKey, parseUtxoKey,
  scan,
};
