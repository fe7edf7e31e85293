'use strict';

const { parseTxDetail } = require('../chain/tx');
const { coreAsm } = require('../chain/asm');
const { toDisplayHex } = require('../chain/hash');
const { base58Of } = require('./addresses');
const { strippedTx } = require('./stripped');

/**
 * bitcore-node 3's getDetailedTransaction object, built from the transaction's bytes, the
 * outputs its inputs spend and who spent its outputs, where bitcore-node built it from
 * Core 0.12.1's `getrawtransaction TXID 1` with bitcore's spent index. Pure.
 *
 * Faithful to what that node returned: keys in its order; a coinbase input with null
 * outpoint, asm, address and satoshis; an empty scriptSig as script "" with asm null (Core's
 * empty asm string, then `|| null`); spentTxId, spentIndex and spentHeight undefined for an
 * unspent output; asm as Core 0.12.1's (sighash types decoded in scriptSigs only); version
 * signed. Addresses are the base58 address the index files the script under (P2PKH, P2SH,
 * and P2PK as its key's P2PKH address, for inputs too), null otherwise; segwit scripts have
 * none, as that node gave none. `hex` is the non-witness serialization (see stripped.js).
 */

/**
 * @param {import('../chain/tx').Tx} tx
 * @param {object} ctx
 * @param {Array<{value: number, script: Buffer}>} ctx.prevouts one per input (ignored for a coinbase)
 * @param {Array<{txid: string, index: number, height: number}|null>} ctx.spends one per output
 * @param {number} ctx.height -1 when unconfirmed
 * @param {string} [ctx.blockHash]
 * @param {number} [ctx.time] the block's timestamp
 * @param {import('../chain/networks').Network} ctx.network
 * @returns {object}
 */
function detailedTx(tx, { prevouts, spends, height, blockHash, time, network }) {
  const t = parseTxDetail(tx);
  const out = {
    hex: strippedTx(t).toString('hex'),
    blockHash,
    height,
    blockTimestamp: time,
    version: t.version | 0,
    hash: t.hash,
    locktime: t.locktime,
  };
  if (t.coinbase) out.coinbase = true;
  let inputSatoshis = 0;
  out.inputs = t.details.map((d, n) => {
    if (t.coinbase) {
      return { prevTxId: null, outputIndex: null, script: d.script.toString('hex'), scriptAsm: null, sequence: d.sequence, address: null, satoshis: null };
    }
    const p = prevouts[n];
    inputSatoshis += p.value;
    const script = d.script.toString('hex');
    return {
      prevTxId: toDisplayHex(d.txid),
      outputIndex: d.vout,
      script,
      scriptAsm: coreAsm(d.script, true, script) || null,
      sequence: d.sequence,
      address: base58Of(p.script, network),
      satoshis: p.value,
    };
  });
  out.inputSatoshis = inputSatoshis;
  let outputSatoshis = 0;
  out.outputs = t.outputs.map((o, n) => {
    outputSatoshis += o.value;
    const script = o.script.toString('hex');
    const s = spends[n];
    return {
      satoshis: o.value,
      script,
      scriptAsm: coreAsm(o.script, false, script),
      spentTxId: s ? s.txid : undefined,
      spentIndex: s ? s.index : undefined,
      spentHeight: s ? s.height : undefined,
      address: base58Of(o.script, network),
    };
  });
  out.outputSatoshis = outputSatoshis;
  out.feeSatoshis = t.coinbase ? 0 : inputSatoshis - outputSatoshis;
  return out;
}

module.exports = { detailedTx };
