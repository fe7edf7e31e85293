'use strict';

/**
 * Esplora's transaction and block JSON, as mempool/electrs (src/rest.rs) builds it, from a
 * parsed transaction or block and the facts the index supplies (prevouts, confirming block,
 * height, median time). Pure: nothing here reads a store or a file.
 *
 * Field set and order are electrs' `TransactionValue`, `TxInValue`, `TxOutValue` and
 * `BlockValue`. Where the two Esplora servers differ:
 *  - `sigops` (mempool.space only) is left out: Core's sigop cost needs the interpreter's
 *    counting rules, and Blockstream's Esplora has no such field;
 *  - a block's `weight` is BIP141's, as mempool/electrs and Core's getblock give it (genesis:
 *    1140); Blockstream's Esplora sums only its transactions' weights (genesis: 816);
 *  - `difficulty` is Core's double (mempool/electrs), which Blockstream rounds to an integer.
 * Script types and addresses: lib/chain/esplora-script.js; asm: lib/chain/asm.js.
 */

const { StoreError } = require('../errors');
const { toDisplayHex } = require('../chain/hash');
const { hex32 } = require('./format');
const { parseTxDetail } = require('../chain/tx');
const { blockWeight } = require('../chain/block');
const { merkleBranch } = require('../chain/merkle');
const { esploraAsm } = require('../chain/asm');
const { esploraType, esploraAddress, innerScripts } = require('../chain/esplora-script');
const { coreDifficulty } = require('../chain/difficulty');
const { getNetwork } = require('../chain/networks');
const { parseHeader } = require('../chain/header');
const { Memo } = require('./memo');

const NULL_TXID = '0'.repeat(64);

/**
 * @typedef {{value: number, script: Buffer}} Prevout the output an input spends
 * @typedef {{height: number, hash: string, time: number}} BlockInfo the confirming block
 */

const memos = new Map();
/** Addresses by script hex, one memo per network. */
function addressMemo(net) {
  let m = memos.get(net.name);
  if (!m) memos.set(net.name, (m = new Memo(8192)));
  return m;
}

/**
 * One output as Esplora shows it (also an input's `prevout`).
 * @param {Buffer} script
 * @param {number} value satoshis
 * @param {string|import('../chain/networks').Network} network
 */
function esploraOutput(script, value, network) {
  const hex = script.toString('hex');
  const out = {
    scriptpubkey: hex,
    scriptpubkey_asm: esploraAsm(script, hex),
    scriptpubkey_type: esploraType(script),
  };
  const net = getNetwork(network);
  const address = addressMemo(net).get(hex, () => esploraAddress(script, net));
  if (address !== null) out.scriptpubkey_address = address;
  out.value = value;
  return out;
}

/**
 * GET /api/tx/:txid — a transaction with its inputs' previous outputs, size, weight and fee.
 * @param {import('../chain/tx').Tx} tx parsed (hot or detail mode)
 * @param {object} ctx
 * @param {Array<Prevout|null>} ctx.prevouts one per input, in input order; a coinbase's is ignored
 * @param {BlockInfo|null} ctx.block the confirming block, null when unconfirmed
 * @param {string|import('../chain/networks').Network} ctx.network
 * @returns {object}
 * @throws {StoreError} ERR_MISSING_PREVOUT when an input's previous output was not supplied:
 *   a fee is never guessed
 */
function esploraTx(tx, { prevouts, block, network }) {
  const t = parseTxDetail(tx);
  const ins = t.details;
  const vin = new Array(ins.length);
  let valueIn = 0;
  for (let i = 0; i < ins.length; i++) {
    const d = ins[i];
    const sigHex = d.script.toString('hex');
    const input = { txid: NULL_TXID, vout: d.vout, prevout: null, scriptsig: sigHex, scriptsig_asm: esploraAsm(d.script, sigHex) };
    let inner = null;
    if (!t.coinbase) {
      const p = prevouts && prevouts[i];
      if (!p || !Buffer.isBuffer(p.script) || !Number.isSafeInteger(p.value)) {
        throw new StoreError('ERR_MISSING_PREVOUT', `input ${i} of ${t.hash} spends ${toDisplayHex(d.txid)}:${d.vout}, whose output was not supplied`);
      }
      input.txid = hex32(d.txid);
      input.prevout = esploraOutput(p.script, p.value, network);
      valueIn += p.value;
      inner = innerScripts(p.script, d.script, d.witness);
    }
    if (d.witness.length) input.witness = d.witness.map((w) => w.toString('hex'));
    input.is_coinbase = t.coinbase;
    input.sequence = d.sequence;
    if (inner && inner.redeem) input.inner_redeemscript_asm = esploraAsm(inner.redeem);
    if (inner && inner.witness) input.inner_witnessscript_asm = esploraAsm(inner.witness);
    vin[i] = input;
  }
  let valueOut = 0;
  const vout = t.outputs.map((o) => {
    valueOut += o.value;
    return esploraOutput(o.script, o.value, network);
  });
  return {
    txid: t.hash,
    version: t.version,
    locktime: t.locktime,
    vin,
    vout,
    size: t.size,
    weight: t.weight,
    fee: t.coinbase ? 0 : valueIn - valueOut,
    status: esploraTxStatus(block),
  };
}

/**
 * A transaction's `status`.
 * @param {BlockInfo|null} block
 */
function esploraTxStatus(block) {
  if (!block) return { confirmed: false };
  return { confirmed: true, block_height: block.height, block_hash: block.hash, block_time: block.time };
}

/**
 * GET /api/tx/:txid/outspend/:vout and each entry of /outspends (electrs `SpendingValue`): an
 * unspent output, an unknown one and one out of range alike answer {"spent": false}, as electrs.
 * @param {{txid: string, vin: number, block: BlockInfo|null}|null} spend the spending input
 *   (txid in display hex), null when unspent
 */
function esploraOutspend(spend) {
  if (!spend) return { spent: false };
  return { spent: true, txid: spend.txid, vin: spend.vin, status: esploraTxStatus(spend.block) };
}

/**
 * What a block view needs from a block: everything but its height and median time past
 * (which need the chain). From a parsed block; the index may keep the same facts instead.
 * @param {import('../chain/block').Block} block
 * @returns {BlockFacts}
 */
function blockFacts(block) {
  return {
    hash: block.hash,
    version: block.version,
    prev: block.prev,
    merkleRoot: toDisplayHex(block.merkleRoot),
    time: block.time,
    bits: block.bits,
    nonce: block.nonce,
    txCount: block.txs.length,
    size: block.size,
    weight: blockWeight(block),
  };
}

/**
 * The same facts from the index's block row (its 80-byte header, transaction count, size and
 * weight), so a block view needs no read of the block itself.
 * @param {{hash: string, header: Buffer, txCount: number, size: number, weight: number}} row
 *   a store Block
 * @returns {BlockFacts}
 */
function storedBlockFacts(row) {
  const h = parseHeader(row.header);
  if (h.hash !== row.hash) throw new StoreError('ERR_CORRUPT', `the index's header for block ${row.hash} hashes to ${h.hash}`);
  return {
    hash: row.hash,
    version: h.version,
    prev: h.prev,
    merkleRoot: toDisplayHex(h.merkleRoot),
    time: h.time,
    bits: h.bits,
    nonce: h.nonce,
    txCount: row.txCount,
    size: row.size,
    weight: row.weight,
  };
}

/**
 * @typedef {object} BlockFacts
 * @property {string} hash
 * @property {number} version int32 as the header holds it
 * @property {string} prev display hex (all zeros for genesis)
 * @property {string} merkleRoot display hex
 * @property {number} time
 * @property {number} bits
 * @property {number} nonce
 * @property {number} txCount
 * @property {number} size bytes
 * @property {number} weight
 */

/**
 * GET /api/block/:hash (and each entry of /api/blocks).
 * @param {BlockFacts} b
 * @param {{height: number, mediantime: number}} chain
 * @returns {object}
 */
function esploraBlock(b, { height, mediantime }) {
  return {
    id: b.hash,
    height,
    version: b.version >>> 0,
    timestamp: b.time,
    tx_count: b.txCount,
    size: b.size,
    weight: b.weight,
    merkle_root: b.merkleRoot,
    previousblockhash: /^0+$/.test(b.prev) ? null : b.prev,
    mediantime,
    nonce: b.nonce,
    bits: b.bits,
    difficulty: coreDifficulty(b.bits),
  };
}

/**
 * mempool.space's GET /api/v1/block/:hash (and each entry of /api/v1/blocks), which
 * @mempool/mempool.js's getBlock and getBlocks ask for: Esplora's block plus `extras`. Of
 * mempool.space's extras this gives what the header and the coinbase tell exactly (reward,
 * coinbase script and addresses, header, virtual size); its fee statistics need every input's
 * previous output and its pool and audit fields its own databases, and are left out.
 * @param {BlockFacts} b
 * @param {object} ctx
 * @param {number} ctx.height
 * @param {number} ctx.mediantime
 * @param {Buffer} ctx.header the 80 header bytes
 * @param {import('../chain/tx').Tx} ctx.coinbase the block's first transaction
 * @param {string|import('../chain/networks').Network} ctx.network
 * @returns {object}
 */
function mempoolBlock(b, { height, mediantime, header, coinbase, network }) {
  const net = getNetwork(network);
  const t = parseTxDetail(coinbase);
  const addresses = [];
  let reward = 0;
  for (const o of t.outputs) {
    reward += o.value;
    const a = addressMemo(net).get(o.script.toString('hex'), () => esploraAddress(o.script, net));
    if (a !== null && !addresses.includes(a)) addresses.push(a);
  }
  return {
    ...esploraBlock(b, { height, mediantime }),
    extras: {
      reward,
      coinbaseRaw: t.details[0].script.toString('hex'),
      coinbaseAddress: addresses.length ? addresses[0] : null,
      coinbaseAddresses: addresses,
      header: header.toString('hex'),
      virtualSize: b.weight / 4,
    },
  };
}

/**
 * GET /api/block/:hash/status.
 * @param {{height: number, nextHash: string|null}|null} best where the block sits on the best
 *   chain, null when it is not on it
 */
function esploraBlockStatus(best) {
  if (!best) return { in_best_chain: false, height: null, next_best: null };
  return { in_best_chain: true, height: best.height, next_best: best.nextHash };
}

/**
 * GET /api/tx/:txid/merkle-proof, and Electrum's blockchain.transaction.get_merkle: the txid's
 * branch to the header's merkle root, hashes in display hex.
 * @param {Buffer[]} txids the block's txids in block order, internal byte order
 * @param {number} pos the transaction's position in the block
 * @param {number} height
 * @returns {{block_height: number, merkle: string[], pos: number}}
 */
function esploraMerkleProof(txids, pos, height) {
  return { block_height: height, merkle: merkleBranch(txids, pos).map(toDisplayHex), pos };
}

module.exports = {
  esploraTx, esploraTxStatus, esploraOutput, esploraOutspend, esploraBlock, esploraBlockStatus, esploraMerkleProof, blockFacts, storedBlockFacts,
  mempoolBlock,
};
