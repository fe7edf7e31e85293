'use strict';

/**
 * insight-api 0.4.3's transaction and block JSON (lib/transactions.js `transformTransaction`,
 * lib/blocks.js `transformBlock`), over what bitcore-node 3.1's getDetailedTransaction and
 * bitcore's bitcoind (Core 0.12.1 with address and spent indexes) hand it. Pure.
 *
 * Numbers are insight's own: BTC amounts as JSON numbers (sats / 1e8) except an output's
 * `value`, a string with 8 decimals; `size` is the whole serialization. Asm is Core 0.12.1's
 * (lib/chain/asm.js coreAsm), addresses follow lib/chain/insight-script.js.
 *
 * poolInfo: insight matched the coinbase against a table of pool tags it shipped
 * (pools.json); addrindex ships no such table, so a block's poolInfo is `{}` unless the
 * caller passes one.
 */

const { StoreError } = require('../errors');
const { toDisplayHex } = require('../chain/hash');
const { hex32 } = require('./format');
const { parseTxDetail } = require('../chain/tx');
const { coreAsm } = require('../chain/asm');
const { insightOutputAddress, insightInputAddress } = require('../chain/insight-script');
const { classify } = require('../chain/script');
const { base58Address } = require('../chain/address');
const { getNetwork } = require('../chain/networks');
const { Memo } = require('./memo');

const memos = new Map();
/** Output and input addresses by script hex, one memo per network and kind. */
function memo(net, kind) {
  const key = `${net.name}/${kind}`;
  let m = memos.get(key);
  if (!m) memos.set(key, (m = new Memo(8192)));
  return m;
}

/**
 * @typedef {{value: number, script: Buffer}} Prevout
 * @typedef {{txid: string, vin: number, height: number}} Spend who spent an output: spending
 *   txid (display hex), its input index, its height
 * @typedef {{height: number, hash: string, time: number}} BlockInfo
 */

/**
 * GET /insight-api/tx/:txid, and each entry of /txs and /addrs/txs.
 * @param {import('../chain/tx').Tx} tx
 * @param {object} ctx
 * @param {Array<Prevout|null>} ctx.prevouts one per input (a coinbase's is ignored)
 * @param {Array<Spend|null>} [ctx.spends] one per output, null (or missing) when unspent;
 *   needed unless noSpent
 * @param {BlockInfo|null} ctx.block the confirming block, null when unconfirmed
 * @param {number} ctx.tipHeight
 * @param {string|import('../chain/networks').Network} ctx.network
 * @param {number} [ctx.now] seconds: an unconfirmed transaction's `time`, as insight answers
 * @param {{noAsm?: boolean, noScriptSig?: boolean, noSpent?: boolean}} [ctx.options] insight's query flags
 * @returns {object}
 */
function insightTx(tx, { prevouts, spends, block, tipHeight, network, now, options = {} }) {
  const t = parseTxDetail(tx);
  const net = getNetwork(network);
  const inputMemo = memo(net, 'in');
  const outputMemo = memo(net, 'out');
  const out = { txid: t.hash, version: t.version | 0, locktime: t.locktime };
  let valueIn = 0;
  if (t.coinbase) {
    const d = t.details[0];
    out.vin = [{ coinbase: d.script.toString('hex'), sequence: d.sequence, n: 0 }];
  } else {
    out.vin = t.details.map((d, n) => {
      const p = prevouts && prevouts[n];
      if (!p || !Buffer.isBuffer(p.script) || !Number.isSafeInteger(p.value)) {
        throw new StoreError('ERR_MISSING_PREVOUT', `input ${n} of ${t.hash} spends ${toDisplayHex(d.txid)}:${d.vout}, whose output was not supplied`);
      }
      valueIn += p.value;
      const input = { txid: hex32(d.txid), vout: d.vout, sequence: d.sequence, n };
      if (!options.noScriptSig) {
        const hex = d.script.toString('hex');
        input.scriptSig = { hex };
        if (!options.noAsm) input.scriptSig.asm = coreAsm(d.script, true, hex);
      }
      input.addr = inputMemo.get(p.script.toString('hex'), () => inputAddress(p.script, net));
      input.valueSat = p.value;
      input.value = p.value / 1e8;
      input.doubleSpentTxID = null;
      return input;
    });
  }
  let valueOut = 0;
  out.vout = t.outputs.map((o, n) => {
    valueOut += o.value;
    const hex = o.script.toString('hex');
    const output = { value: (o.value / 1e8).toFixed(8), n, scriptPubKey: { hex } };
    if (!options.noAsm) output.scriptPubKey.asm = coreAsm(o.script, false, hex);
    if (!options.noSpent) {
      const s = spends && spends[n];
      output.spentTxId = s ? s.txid : null;
      output.spentIndex = s ? s.vin : null;
      output.spentHeight = s && s.height ? s.height : null;
    }
    const a = outputMemo.get(hex, () => insightOutputAddress(o.script, net));
    if (a) {
      output.scriptPubKey.addresses = [a.address];
      output.scriptPubKey.type = a.type;
    }
    return output;
  });
  if (block) out.blockhash = block.hash;
  out.blockheight = block ? block.height : -1;
  out.confirmations = block ? tipHeight - block.height + 1 : 0;
  out.time = block ? block.time : now;
  if (out.confirmations) out.blocktime = out.time;
  if (t.coinbase) out.isCoinBase = true;
  out.valueOut = valueOut / 1e8;
  out.size = t.size;
  if (!t.coinbase) {
    out.valueIn = valueIn / 1e8;
    out.fees = (valueIn - valueOut) / 1e8;
  }
  return out;
}

/**
 * An input's `addr`: the address of the output it spends, as insight-api on the bitcore-node
 * service names it. The patched node's spent index knew only the exact P2PKH and P2SH forms;
 * a P2PK output counts toward its key's P2PKH address in the index (and in the service's
 * answers), so the input spending it names that address too.
 */
function inputAddress(prevScript, net) {
  const a = insightInputAddress(prevScript, net);
  if (a) return a;
  const c = classify(prevScript);
  return c.type === 'p2pk' ? base58Address(net.p2pkh, c.hash) : null;
}

const GENESIS_TARGET = BigInt(0xffff) << 208n;

/** The target a compact `bits` encodes, as bitcore-lib's getTargetDifficulty computes it. */
function bitcoreTarget(bits) {
  let target = BigInt(bits & 0xffffff);
  const shift = 8 * ((bits >>> 24) - 3);
  return shift > 0 ? target << BigInt(shift) : target;
}

/**
 * insight's `difficulty`: bitcore-lib's BlockHeader#getDifficulty, which truncates to 8
 * decimals by string surgery before parsing a float (not Core's double).
 * @param {number} bits
 * @returns {number}
 */
function bitcoreDifficulty(bits) {
  const s = ((GENESIS_TARGET * 100000000n) / bitcoreTarget(bits)).toString(10);
  const at = s.length - 8;
  return parseFloat(`${s.slice(0, at)}.${s.slice(at)}`);
}

/**
 * insight's `reward`: the subsidy alone (fees not included), in BTC.
 * @param {number} height
 */
function blockReward(height) {
  const halvings = Math.floor(height / 210000);
  return halvings >= 64 ? 0 : Math.floor(5e9 / 2 ** halvings) / 1e8;
}

/**
 * GET /insight-api/block/:hash.
 * @param {import('./esplora-format').BlockFacts} b
 * @param {object} ctx
 * @param {string[]} ctx.txids display hex, block order
 * @param {number} ctx.height
 * @param {number} ctx.tipHeight
 * @param {bigint} ctx.chainwork cumulative work up to and including this block
 * @param {string|null} ctx.nextHash the next block on the best chain (the key is left out at the tip)
 * @param {object} [ctx.poolInfo] insight's pool entry for this block's coinbase
 * @returns {object}
 */
function insightBlock(b, { txids, height, tipHeight, chainwork, nextHash, poolInfo = {} }) {
  const out = {
    hash: b.hash,
    size: b.size,
    height,
    version: b.version,
    merkleroot: b.merkleRoot,
    tx: txids,
    time: b.time,
    nonce: b.nonce,
    bits: b.bits.toString(16),
    difficulty: bitcoreDifficulty(b.bits),
    chainwork: chainwork.toString(16).padStart(64, '0'),
    confirmations: tipHeight - height + 1,
    previousblockhash: /^0+$/.test(b.prev) ? null : b.prev,
  };
  if (nextHash) out.nextblockhash = nextHash;
  out.reward = blockReward(height);
  out.isMainChain = true;
  out.poolInfo = poolInfo;
  return out;
}

module.exports = { insightTx, insightBlock, bitcoreDifficulty, blockReward };
