'use strict';

/**
 * What insight's live feed says about a transaction, once for `addrindex serve`'s socket.io
 * server (lib/api/live.js) and the bitcore-node service (lib/bitcore/service.js). Pure.
 *
 *  - feedAddresses: the addresses a transaction names for `bitcoind/addresstxid`, as
 *    bitcore-node named them (inputs first, then outputs, each once): an input's from its
 *    scriptSig (a P2PKH spend shows its key; a P2SH spend its redeem script), an output's in
 *    the index's address view, so a P2PK output names its key's P2PKH address (bitcore-lib,
 *    which bitcore-node asked, names none, and an address page missed such payments).
 *    An input spending a P2PK output shows no key: it names nothing, as with bitcore-node.
 *  - invTx: insight-api's `tx` message of the `inv` room ({txid, valueOut, vout, isRBF}), its
 *    outputs named as GET /insight-api/tx names them.
 */

const { parseTxDetail } = require('../chain/tx');
const { classify } = require('../chain/script');
const { hash160 } = require('../chain/hash');
const { base58Address, segwitAddress } = require('../chain/address');
const { insightOutputAddress } = require('../chain/insight-script');
const { getNetwork } = require('../chain/networks');

const SEQUENCE_FINAL = 0xffffffff;

/**
 * The pushes of a scriptSig, or null when it holds anything but pushes (or a push runs past
 * its end): only push-only scripts name a key or a redeem script.
 * @param {Buffer} s
 * @returns {Buffer[]|null}
 */
function pushes(s) {
  const out = [];
  let pos = 0;
  while (pos < s.length) {
    const op = s[pos++];
    let len;
    if (op === 0) len = 0;
    else if (op < 0x4c) len = op;
    else if (op <= 0x4e) {
      const w = op === 0x4c ? 1 : op === 0x4d ? 2 : 4;
      if (s.length - pos < w) return null;
      len = w === 1 ? s[pos] : w === 2 ? s.readUInt16LE(pos) : s.readUInt32LE(pos);
      pos += w;
    } else if (op === 0x4f || (op >= 0x51 && op <= 0x60)) {
      out.push(Buffer.alloc(0));
      continue;
    } else return null;
    if (s.length - pos < len) return null;
    out.push(s.subarray(pos, pos + len));
    pos += len;
  }
  return out;
}

function isKey(k) {
  return (k.length === 33 && (k[0] === 2 || k[0] === 3)) || (k.length === 65 && (k[0] === 4 || k[0] === 6 || k[0] === 7));
}

/**
 * The address an input's scriptSig names: a P2PKH spend (a DER signature, then a key) its
 * key's P2PKH address; a P2SH spend (its last push a standard script) that script's P2SH
 * address; anything else none.
 * @param {Buffer} scriptSig
 * @param {import('../chain/networks').Network} net
 * @returns {string|null}
 */
function inputAddress(scriptSig, net) {
  const p = pushes(scriptSig);
  if (!p || p.length < 2) return null;
  if (p.length === 2 && p[0].length && p[0][0] === 0x30 && isKey(p[1])) return base58Address(net.p2pkh, hash160(p[1]));
  const redeem = p[p.length - 1];
  if (!redeem.length) return null;
  const t = classify(redeem).type;
  return t === 'nonstandard' || t === 'witness_unknown' ? null : base58Address(net.p2sh, hash160(redeem));
}

/**
 * An output's address in the index's address view (P2PK as its key's P2PKH address), or null.
 * @param {Buffer} script
 * @param {import('../chain/networks').Network} net
 * @returns {string|null}
 */
function outputAddress(script, net) {
  const c = classify(script);
  switch (c.addrType) {
    case 'p2pkh': return base58Address(net.p2pkh, c.hash);
    case 'p2sh': return base58Address(net.p2sh, c.hash);
    case 'p2wpkh':
    case 'p2wsh': return segwitAddress(net.hrp, 0, c.hash);
    case 'p2tr': return segwitAddress(net.hrp, 1, c.hash);
    default: return null;
  }
}

/**
 * The distinct addresses a transaction names, inputs first (bitcore-node's order).
 * @param {import('../chain/tx').Tx} tx
 * @param {string|import('../chain/networks').Network} network
 * @returns {string[]}
 */
function feedAddresses(tx, network) {
  const net = getNetwork(network);
  const t = tx.details ? tx : parseTxDetail(tx);
  const out = new Set();
  if (!t.coinbase) {
    for (const d of t.details) {
      const a = inputAddress(d.script, net);
      if (a) out.add(a);
    }
  }
  for (const o of t.outputs) {
    const a = outputAddress(o.script, net);
    if (a) out.add(a);
  }
  return [...out];
}

/**
 * insight-api's `tx` message of the `inv` room.
 * @param {import('../chain/tx').Tx} tx
 * @param {string|import('../chain/networks').Network} network
 * @returns {{txid: string, valueOut: number, vout: Array<Record<string, number>>, isRBF: boolean}}
 */
function invTx(tx, network) {
  const net = getNetwork(network);
  const t = tx.details ? tx : parseTxDetail(tx);
  let valueOut = 0;
  const vout = [];
  for (const o of t.outputs) {
    valueOut += o.value;
    const a = insightOutputAddress(o.script, net);
    if (a) vout.push({ [a.address]: o.value });
  }
  // BIP125: an input below 0xfffffffe signals replaceability (insight-api's rule)
  const isRBF = t.details.some((d) => d.sequence < SEQUENCE_FINAL - 1);
  return { txid: t.hash, valueOut: valueOut / 1e8, vout, isRBF };
}

module.exports = { feedAddresses, invTx, inputAddress, outputAddress };
