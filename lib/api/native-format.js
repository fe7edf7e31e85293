'use strict';

/**
 * The native API's whole transaction (GET /api/v1/tx/:txid?full=1, `addrindex tx --json`):
 * the location the plain route gives, then the transaction in addrindex's own terms — each
 * output's class, address and Electrum script hash as the index files it (a P2PK output under
 * its key's P2PKH address, as the address routes count it), each input's previous output the
 * same way, and who spent each output. Pure.
 */

const { StoreError } = require('../errors');
const { toDisplayHex } = require('../chain/hash');
const { parseTxDetail } = require('../chain/tx');
const { describeOutput } = require('../chain/describe');
const { nativeTx, nativeMempoolTx } = require('./format');

/**
 * @param {import('./txdata').FullTx} f with prevouts and spends; confirmed, or a mempool one
 * @param {{height: number}} tip
 * @param {string|import('../chain/networks').Network} network
 * @returns {object}
 */
function nativeFullTx(f, tip, network) {
  const t = parseTxDetail(f.tx);
  let valueIn = 0;
  const inputs = t.details.map((d, i) => {
    const witness = d.witness.map((w) => w.toString('hex'));
    if (t.coinbase) return { coinbase: d.script.toString('hex'), sequence: d.sequence, witness };
    const p = f.prevouts[i];
    if (!p) throw new StoreError('ERR_MISSING_PREVOUT', `input ${i} of ${t.hash}: its previous output was not supplied`);
    valueIn += p.value;
    const o = describeOutput(p.script, network);
    return {
      txid: toDisplayHex(d.txid), vout: d.vout, value: p.value, type: o.type, address: o.address, scripthash: o.scripthash,
      script: p.script.toString('hex'), scriptSig: d.script.toString('hex'), witness, sequence: d.sequence,
    };
  });
  let valueOut = 0;
  const outputs = t.outputs.map((out, n) => {
    valueOut += out.value;
    const o = describeOutput(out.script, network);
    const s = f.spends[n];
    return {
      vout: n, value: out.value, type: o.type, address: o.address, scripthash: o.scripthash, script: out.script.toString('hex'),
      spent: s ? { txid: s.txid, vin: s.vin, height: s.height } : null,
    };
  });
  return {
    // a mempool transaction (f.mempool, no location) has its first-seen time where a block's is
    ...(f.loc ? nativeTx(f.loc, f.block, tip) : nativeMempoolTx(f.mempool, f.parentsUnconfirmed)),
    version: t.version,
    locktime: t.locktime,
    size: t.size,
    vsize: t.vsize,
    weight: t.weight,
    coinbase: t.coinbase,
    fee: t.coinbase ? 0 : valueIn - valueOut,
    inputs,
    outputs,
  };
}

module.exports = { nativeFullTx };
