'use strict';

const crypto = require('node:crypto');
const { base58Address } = require('../chain/address');
const { classify } = require('../chain/script');
const validate = require('../api/validate');
const { RPC, rpcError } = require('./rpc-error');

/**
 * Address arguments as the bitcoind service takes them (one address or an array of them,
 * strings or bitcore-lib Address objects) turned into what the index is keyed by.
 *
 * The patched bitcoind's address index knew base58 P2PKH and P2SH addresses only: anything
 * else is its RPC error -5 "Invalid address". bitcore-lib 0.13, which insight-api 0.4.3 and
 * bitcore-node 3 parse addresses with, knows no bech32 either, so segwit outputs cannot be
 * asked about through this service (addrindex's own routes answer them).
 */

/**
 * @typedef {object} Target
 * @property {string} address     as given (base58 is case-sensitive: given = canonical)
 * @property {Buffer} scripthash  the index key
 * @property {string} script      the address's output script, hex
 */

/**
 * bitcore-node's `_normalizeAddressArg`: one address or an array.
 * @param {unknown} arg
 * @returns {unknown[]}
 */
function addressList(arg) {
  return Array.isArray(arg) ? arg : [arg];
}

/**
 * The targets of an address argument, duplicates dropped (the patched node summed a
 * repeated address twice; one address is one address here).
 * @param {unknown} arg
 * @param {import('../chain/networks').Network} network
 * @param {object|null} node for the host's RPCError
 * @returns {Target[]}
 * @throws RPC error -5 "Invalid address"
 */
function parseAddresses(arg, network, node) {
  const out = [];
  const seen = new Set();
  for (const item of addressList(arg)) {
    const str = addressString(item);
    let decoded = null;
    try {
      // memoized: wallets ask about the same addresses again and again (see lib/api/validate.js)
      decoded = str === null ? null : validate.address(str, network);
    } catch (err) {
      if (!err.code || !String(err.code).startsWith('ERR_ADDRESS')) throw err;
    }
    const type = decoded ? classify(decoded.script).type : null;
    if (type !== 'p2pkh' && type !== 'p2sh') throw rpcError(node, RPC.INVALID_ADDRESS_OR_KEY, 'Invalid address');
    if (seen.has(str)) continue;
    seen.add(str);
    out.push({ address: str, scripthash: decoded.scripthash, script: decoded.script.toString('hex') });
  }
  return out;
}

/** A string, or a bitcore-lib Address (anything whose toString gives one), else null. */
function addressString(item) {
  if (typeof item === 'string') return item;
  if (item && typeof item === 'object' && typeof item.toString === 'function' && item.hashBuffer) return item.toString();
  return null;
}

/**
 * The address the index files an output script under, when it is a base58 one: P2PKH, P2SH,
 * and P2PK as its key's P2PKH address (addrindex counts P2PK toward P2PKH, so a detailed
 * transaction names the same address the balances count it for). null otherwise.
 * @param {Buffer} script
 * @param {import('../chain/networks').Network} network
 * @returns {string|null}
 */
function base58Of(script, network) {
  const c = classify(script);
  if (c.addrType === 'p2pkh') return base58Address(network.p2pkh, c.hash);
  if (c.addrType === 'p2sh') return base58Address(network.p2sh, c.hash);
  return null;
}

/** Address sets remembered by AddressSets (a wallet asks about the same set page after page). */
const SETS = 32;

/**
 * parseAddresses over recently asked address sets: the same 2,100 addresses, asked page after
 * page, are parsed once. A set is remembered by its addresses joined, in the order given; its
 * targets come with `key` (a digest naming the set, for caches) and `wanted` (its addresses).
 */
class AddressSets {
  /**
   * @param {import('../chain/networks').Network} network
   * @param {object|null} node
   */
  constructor(network, node) {
    this.network = network;
    this.node = node;
    /** @type {Map<string, Target[] & {key: string, wanted: Set<string>}>} */
    this.sets = new Map();
  }

  /**
   * @param {unknown} arg one address or an array of them
   * @returns {Target[] & {key: string, wanted: Set<string>}} shared: do not modify
   */
  parse(arg) {
    const list = addressList(arg);
    const plain = list.every((a) => typeof a === 'string');
    const joined = plain ? list.join(',') : null;
    let targets = plain ? this.sets.get(joined) : undefined;
    if (targets) {
      this.sets.delete(joined); // most recently used last
    } else {
      targets = parseAddresses(list, this.network, this.node);
      targets.key = crypto.createHash('sha256').update(targets.map((t) => t.address).join(',')).digest('latin1');
      targets.wanted = new Set(targets.map((t) => t.address));
      Object.freeze(targets);
      if (!plain) return targets;
    }
    this.sets.set(joined, targets);
    if (this.sets.size > SETS) this.sets.delete(this.sets.keys().next().value);
    return targets;
  }
}

module.exports = { addressList, parseAddresses, addressString, base58Of, AddressSets };
