'use strict';

/**
 * The addresses insight-api 0.4.3 shows for outputs and inputs. It takes them from bitcore's
 * bitcoind (Bitcoin Core 0.12.1 with bitcore's address and spent indexes) through
 * bitcore-node 3.1, so they follow two rules of that node, written here from its source:
 *
 *  - an output's address comes from Core 0.12.1's Solver + ExtractDestinations, and insight
 *    shows it only when there is exactly one: P2PKH (any push of 20 bytes), P2SH, P2PK (a
 *    push of 33..65 bytes whose key is of a valid length for its first byte, shown as its
 *    P2PKH address) and a bare multisig with exactly one valid key;
 *  - an input's address comes from the spent index, which records only the exact 25-byte
 *    P2PKH and 23-byte P2SH forms: a P2PK input has no address (addr null), although the
 *    output it spends showed one.
 *
 * Segwit outputs postdate that node (it knew no address for them). addrindex gives P2WPKH,
 * P2WSH and P2TR outputs and inputs their bech32/bech32m address, typed as today's bitcore-lib
 * types them (`witnesspubkeyhash`, `witnessscripthash`, `taproot`), the same expression insight
 * uses (`bitcore.Address(address).type`): the insight address routes of addrindex accept these
 * addresses, so its transactions name them. Other witness versions, which bitcore-lib cannot
 * parse, have none.
 */

const { getNetwork } = require('./networks');
const { hash160 } = require('./hash');
const { base58Address, segwitAddress } = require('./address');

const OP_0 = 0x00;
const OP_PUSHDATA1 = 0x4c;
const OP_PUSHDATA2 = 0x4d;
const OP_PUSHDATA4 = 0x4e;
const OP_1 = 0x51;
const OP_16 = 0x60;
const OP_DUP = 0x76;
const OP_EQUAL = 0x87;
const OP_EQUALVERIFY = 0x88;
const OP_HASH160 = 0xa9;
const OP_CHECKSIG = 0xac;
const OP_CHECKMULTISIG = 0xae;

/**
 * @typedef {{address: string, type: 'pubkeyhash'|'scripthash'|'witnesspubkeyhash'|'witnessscripthash'|'taproot'}} InsightAddress
 */

/**
 * Core's GetOp over a whole script.
 * @returns {Array<{op: number, data: Buffer|null}>|null} null when a push runs past the end
 */
function ops(s) {
  const out = [];
  let pos = 0;
  while (pos < s.length) {
    const op = s[pos++];
    if (op > OP_PUSHDATA4) {
      out.push({ op, data: null });
      continue;
    }
    let len = op;
    if (op >= OP_PUSHDATA1) {
      const w = op === OP_PUSHDATA1 ? 1 : op === OP_PUSHDATA2 ? 2 : 4;
      if (s.length - pos < w) return null;
      len = w === 1 ? s[pos] : w === 2 ? s.readUInt16LE(pos) : s.readUInt32LE(pos);
      pos += w;
    }
    if (s.length - pos < len) return null;
    out.push({ op, data: s.subarray(pos, pos + len) });
    pos += len;
  }
  return out;
}

const isKeySize = (t) => t.data !== null && t.data.length >= 33 && t.data.length <= 65;
const smallInt = (t) => (t.op === OP_0 ? 0 : t.op >= OP_1 && t.op <= OP_16 ? t.op - OP_1 + 1 : -1);

/** CPubKey::IsValid: the length its first byte calls for. */
function validKey(k) {
  if (k.length === 33) return k[0] === 2 || k[0] === 3;
  if (k.length === 65) return k[0] === 4 || k[0] === 6 || k[0] === 7;
  return false;
}

/**
 * The destinations Core 0.12.1's ExtractDestinations finds, as [kind, 20-byte hash] pairs.
 * @param {Buffer} s
 * @returns {Array<['pubkeyhash'|'scripthash', Buffer]>}
 */
function coreDestinations(s) {
  if (s.length === 23 && s[0] === OP_HASH160 && s[1] === 20 && s[22] === OP_EQUAL) return [['scripthash', s.subarray(2, 22)]];
  const t = ops(s);
  if (t === null) return [];
  // pay-to-pubkey: <33..65-byte push> OP_CHECKSIG
  if (t.length === 2 && isKeySize(t[0]) && t[1].op === OP_CHECKSIG) {
    return validKey(t[0].data) ? [['pubkeyhash', hash160(t[0].data)]] : [];
  }
  // pay-to-pubkey-hash: OP_DUP OP_HASH160 <20-byte push> OP_EQUALVERIFY OP_CHECKSIG
  if (t.length === 5 && t[0].op === OP_DUP && t[1].op === OP_HASH160 && t[2].data !== null && t[2].data.length === 20 &&
      t[3].op === OP_EQUALVERIFY && t[4].op === OP_CHECKSIG) {
    return [['pubkeyhash', t[2].data]];
  }
  // bare multisig: m <keys…> n OP_CHECKMULTISIG, m and n small integers, 1 <= m <= n = keys
  if (t.length >= 3 && t[t.length - 1].op === OP_CHECKMULTISIG) {
    const m = smallInt(t[0]);
    let k = 1;
    while (k < t.length && isKeySize(t[k])) k++;
    if (k !== t.length - 2) return [];
    const n = smallInt(t[k]);
    if (m < 1 || n < 1 || m > n || n !== k - 1) return [];
    const out = [];
    for (let i = 1; i < k; i++) if (validKey(t[i].data)) out.push(['pubkeyhash', hash160(t[i].data)]);
    return out;
  }
  return [];
}

/** P2WPKH, P2WSH and P2TR: the witness outputs today's bitcore-lib gives an address and a type. */
function witnessAddress(s, net) {
  if (s.length === 22 && s[0] === OP_0 && s[1] === 20) return { address: segwitAddress(net.hrp, 0, s.subarray(2)), type: 'witnesspubkeyhash' };
  if (s.length === 34 && s[0] === OP_0 && s[1] === 32) return { address: segwitAddress(net.hrp, 0, s.subarray(2)), type: 'witnessscripthash' };
  if (s.length === 34 && s[0] === OP_1 && s[1] === 32) return { address: segwitAddress(net.hrp, 1, s.subarray(2)), type: 'taproot' };
  return null;
}

function named(net, [kind, hash]) {
  return { address: base58Address(kind === 'pubkeyhash' ? net.p2pkh : net.p2sh, hash), type: kind };
}

/**
 * The address insight shows for an output (scriptPubKey.addresses[0] and .type), or null.
 * @param {Buffer} script scriptPubKey
 * @param {string|import('./networks').Network} network
 * @returns {InsightAddress|null}
 */
function insightOutputAddress(script, network) {
  const net = getNetwork(network);
  const dests = coreDestinations(script);
  if (dests.length === 1) return named(net, dests[0]);
  if (dests.length > 1) return null;
  return witnessAddress(script, net);
}

/**
 * The address insight shows for an input (`addr`), from the script of the output it spends.
 * @param {Buffer} prevScript
 * @param {string|import('./networks').Network} network
 * @returns {string|null}
 */
function insightInputAddress(prevScript, network) {
  const net = getNetwork(network);
  const s = prevScript;
  if (s.length === 25 && s[0] === OP_DUP && s[1] === OP_HASH160 && s[2] === 20 && s[23] === OP_EQUALVERIFY && s[24] === OP_CHECKSIG) {
    return base58Address(net.p2pkh, s.subarray(3, 23));
  }
  if (s.length === 23 && s[0] === OP_HASH160 && s[1] === 20 && s[22] === OP_EQUAL) return base58Address(net.p2sh, s.subarray(2, 22));
  const w = witnessAddress(s, net);
  return w ? w.address : null;
}

module.exports = { insightOutputAddress, insightInputAddress, coreDestinations };
