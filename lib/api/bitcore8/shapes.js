'use strict';

const { encodeAddress } = require('../../chain/address');
const { classify } = require('../../chain/script');
const { parseHeader } = require('../../chain/header');
const { toDisplayHex } = require('../../chain/hash');

/**
 * The JSON shapes of bitcore-node v8's API (its models' `_apiTransform`s), field for field and
 * in its key order, from what the index holds. Ids: bitcore shows MongoDB ObjectIds (`_id`);
 * here they are 24 hex digits made from where a thing sits, so they sort the way bitcore's
 * insertion-ordered ids do (newer is larger): a confirmed transaction's or output's TxNum,
 * then its vout; mempool ones above every confirmed one.
 */

const CHAIN = 'BTC';

/** bitcore-node's names of the networks addrindex knows. */
const NETWORK_NAMES = Object.freeze({ main: 'mainnet', testnet: 'testnet', testnet4: 'testnet4', signet: 'signet', regtest: 'regtest' });

/** SpentHeightIndicators of bitcore-node (types/Coin.ts). */
const SPENT = Object.freeze({ pending: -1, unspent: -2 });

const KIND = { confirmed: 0x00, block: 0x10, mempool: 0xff };

/**
 * @param {number} kind
 * @param {number} a a TxNum or a height (< 2^48)
 * @param {number} b a vout (< 2^32)
 */
function idOf(kind, a, b) {
  const id = Buffer.alloc(12);
  id[0] = kind;
  id.writeUIntBE(a, 1, 6);
  id.writeUInt32BE(b >>> 0, 7);
  return id.toString('hex');
}

/** The id of a confirmed output (vout) or transaction (vout omitted). */
const confirmedId = (txNum, vout = 0xffffffff) => idOf(KIND.confirmed, txNum, vout);

/** The id of a mempool output or transaction: its txid's first bytes. */
function mempoolId(txid, vout = 0xffffffff) {
  const id = Buffer.alloc(12);
  id[0] = KIND.mempool;
  txid.copy(id, 1, 0, 7);
  id.writeUInt32BE(vout >>> 0, 8);
  return id.toString('hex');
}

const blockId = (height) => idOf(KIND.block, height, 0);

/**
 * An output's address as bitcore-lib gives it (`Script#toAddress`): P2PKH, P2SH, segwit and
 * taproot outputs have one; a P2PK output, bare multisig, OP_RETURN and other scripts have
 * none, which bitcore stores as the string "false".
 * @param {Buffer} script
 * @param {import('../../chain/networks').Network} network
 */
function coinAddress(script, network) {
  if (classify(script).type === 'p2pk') return 'false';
  return encodeAddress(script, network) || 'false';
}

const iso = (ms) => new Date(ms).toISOString();

/**
 * A block as `BitcoinBlockStorage._apiTransform` shows it.
 * @param {import('../../stores/abstract').Block} row
 * @param {{network: string, normalizedMs: number, next: string|null, reward: number}} facts
 */
function blockJson(row, facts) {
  const h = parseHeader(row.header);
  return {
    _id: blockId(row.height),
    chain: CHAIN,
    network: facts.network,
    hash: row.hash,
    height: row.height,
    version: h.version,
    size: row.size,
    merkleRoot: toDisplayHex(h.merkleRoot),
    time: iso(h.time * 1000),
    timeNormalized: iso(facts.normalizedMs),
    nonce: h.nonce,
    bits: h.bits,
    previousBlockHash: h.prev,
    nextBlockHash: facts.next || '',
    reward: facts.reward,
    transactionCount: row.txCount,
  };
}

/**
 * A transaction as `TransactionStorage._apiTransform` shows it, with the `confirmations` the
 * provider adds. Its `||` defaults are bitcore's: a fee, value or locktime of 0 shows as -1,
 * and so does the genesis block's height.
 * @param {object} t
 * @param {string} t.id
 * @param {string} t.txid
 * @param {string} t.network
 * @param {{height: number, hash: string, timeMs: number, normalizedMs: number}|null} t.block null: in the mempool
 * @param {import('../../chain/tx').Tx} t.tx
 * @param {number} t.fee
 * @param {number|null} t.tipHeight
 */
function txJson(t) {
  const value = t.tx.outputs.reduce((n, o) => n + o.value, 0);
  const b = t.block;
  const height = b ? b.height : SPENT.pending;
  return {
    _id: t.id,
    txid: t.txid,
    network: t.network,
    chain: CHAIN,
    blockHeight: height || -1,
    blockHash: b ? b.hash : '',
    blockTime: b ? iso(b.timeMs) : '',
    blockTimeNormalized: b ? iso(b.normalizedMs) : '',
    coinbase: t.tx.coinbase,
    locktime: t.tx.locktime || -1,
    inputCount: (t.tx.coinbase ? 1 : t.tx.inputs.length) || -1,
    outputCount: t.tx.outputs.length || -1,
    size: t.tx.size || -1,
    fee: t.fee || -1,
    value: value || -1,
    confirmations: b && b.height && t.tipHeight !== null ? t.tipHeight - b.height + 1 : 0,
  };
}

/**
 * @typedef {object} Coin  an output as bitcore keeps it
 * @property {string} id
 * @property {string} mintTxid display hex
 * @property {number} mintIndex
 * @property {number} mintHeight  -1 in the mempool
 * @property {boolean} coinbase
 * @property {number} value
 * @property {Buffer} script
 * @property {string} [address] its address as coinAddress() names it, when the caller knows it
 * @property {string} spentTxid  '' when unspent
 * @property {number} spentHeight -2 unspent, -1 spent in the mempool, else the spender's height
 */

/**
 * A coin as `CoinStorage._apiTransform` shows it.
 * @param {Coin} c
 * @param {{network: string, net: import('../../chain/networks').Network, confirmations?: number}} ctx
 */
function coinJson(c, ctx) {
  return {
    _id: c.id,
    chain: CHAIN,
    network: ctx.network,
    coinbase: c.coinbase,
    mintIndex: c.mintIndex,
    spentTxid: c.spentTxid,
    mintTxid: c.mintTxid,
    mintHeight: c.mintHeight,
    spentHeight: c.spentHeight,
    address: c.address === undefined ? coinAddress(c.script, ctx.net) : c.address,
    script: c.script.toString('hex'),
    value: c.value,
    confirmations: ctx.confirmations === undefined ? -1 : ctx.confirmations,
  };
}

/**
 * What bitcore's streaming finds write: `[`, one JSON document a line, `]` (bitcore-client
 * reads such answers line by line).
 * @param {unknown[]} items
 * @returns {Buffer}
 */
function jsonLines(items) {
  if (items.length === 0) return Buffer.from('[]');
  return Buffer.from(`[\n${items.map((x) => JSON.stringify(x)).join(',\n')}\n]`);
}

/**
 * A wallet as bitcore's wallets collection holds it (GET /wallet/:pubKey).
 * @param {import('../../core/wallets').Wallet} w
 */
function walletJson(w) {
  const out = { _id: w.id, chain: w.chain, network: w.network, name: w.name, pubKey: w.pubKey };
  if (w.path !== null && w.path !== undefined) out.path = w.path;
  if (w.singleAddress !== null && w.singleAddress !== undefined) out.singleAddress = w.singleAddress;
  return out;
}

module.exports = {
  CHAIN, NETWORK_NAMES, SPENT, confirmedId, mempoolId, blockId, coinAddress, iso, blockJson, txJson, coinJson, jsonLines, walletJson,
};
