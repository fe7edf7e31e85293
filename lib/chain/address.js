'use strict';

/**
 * Address strings ⇄ scripts, per network.
 *
 *  - base58check (P2PKH, P2SH): version byte + 20-byte hash; testnet, signet and regtest share
 *    their version bytes, so such an address is valid on all three.
 *  - segwit (BIP173/BIP350): hrp + witness version + program; bech32 for v0, bech32m for
 *    v1..v16. testnet and signet share the hrp "tb"; regtest has "bcrt".
 *
 * Decoding reports one typed AddressError per way an input can be wrong, so a caller (API,
 * CLI) can say exactly what is wrong: ERR_ADDRESS_CHECKSUM, ERR_ADDRESS_NETWORK (valid, but
 * another network's; `details.networks` names them), ERR_ADDRESS_VARIANT (bech32 where
 * bech32m is due or the reverse), ERR_ADDRESS_WITNESS_VERSION (above 16) and
 * ERR_ADDRESS_FORMAT for everything else.
 */

const { AddressError } = require('../errors');
const { NETWORKS, getNetwork } = require('./networks');
const { sha256, fromDisplayHex } = require('./hash');
const bech32 = require('./bech32');
const base58 = require('./base58');
const { classify, p2pkhScript, p2shScript, witnessScript, witnessVersion } = require('./script');

/** hrp → names of the networks that use it. */
const HRP_NETWORKS = new Map();
/** base58 version byte → {kind, networks}. */
const VERSION_NETWORKS = new Map();
for (const net of Object.values(NETWORKS)) {
  if (!HRP_NETWORKS.has(net.hrp)) HRP_NETWORKS.set(net.hrp, []);
  HRP_NETWORKS.get(net.hrp).push(net.name);
  for (const kind of ['p2pkh', 'p2sh']) {
    const v = net[kind];
    if (!VERSION_NETWORKS.has(v)) VERSION_NETWORKS.set(v, { kind, networks: [] });
    VERSION_NETWORKS.get(v).networks.push(net.name);
  }
}

/** An input as quoted in an error message: never more than a line, whatever was sent. */
function show(str) {
  const s = String(str);
  return JSON.stringify(s.length > 100 ? `${s.slice(0, 100)}…` : s);
}

/**
 * The address of an output script on a network, or null when it has none.
 * P2PK outputs give their key's P2PKH address; bare multisig, non-standard and OP_RETURN
 * scripts have no address (look them up by script hash).
 * @param {Buffer} script scriptPubKey
 * @param {string|import('./networks').Network} network
 * @returns {string|null}
 */
function encodeAddress(script, network) {
  const net = getNetwork(network);
  const c = classify(script);
  switch (c.addrType) {
    case 'p2pkh': return base58Address(net.p2pkh, c.hash);
    case 'p2sh': return base58Address(net.p2sh, c.hash);
    case 'p2wpkh':
    case 'p2wsh':
    case 'p2tr':
    case 'witness':
      return segwitAddress(net.hrp, witnessVersion(script), script.subarray(2));
    default:
      return null;
  }
}

/**
 * @param {number} version base58 version byte
 * @param {Uint8Array} hash 20 bytes
 * @returns {string}
 */
function base58Address(version, hash) {
  const payload = Buffer.allocUnsafe(21);
  payload[0] = version;
  payload.set(hash, 1);
  return base58.encodeCheck(payload);
}

/**
 * @param {string} hrp
 * @param {number} version witness version 0..16 (bech32 for 0, bech32m above, per BIP350)
 * @param {Uint8Array} program
 * @returns {string}
 */
function segwitAddress(hrp, version, program) {
  return bech32.encode(hrp, [version, ...bech32.toWords(program)], version === 0 ? 'bech32' : 'bech32m');
}

/**
 * Decodes an address string for a network.
 * @param {string} str
 * @param {string|import('./networks').Network} network
 * @returns {{type: string, script: Buffer, scripthash: Buffer}} type as classify() names it;
 *   scripthash = sha256(script), the index key (internal order)
 * @throws {AddressError}
 */
function decodeAddress(str, network) {
  const net = getNetwork(network);
  if (typeof str !== 'string' || str.length === 0) {
    throw new AddressError('ERR_ADDRESS_FORMAT', 'an address must be a non-empty string');
  }
  const script = looksSegwit(str) ? decodeSegwit(str, net) : decodeBase58(str, net);
  return { type: classify(script).type, script, scripthash: sha256(script) };
}

/**
 * Whether to read `str` as bech32: its hrp is one of ours, or it cannot be base58 but has
 * a separator (so an unknown hrp is reported as such, after its checksum is checked).
 */
function looksSegwit(str) {
  const sep = str.lastIndexOf('1');
  if (sep > 0 && HRP_NETWORKS.has(str.slice(0, sep).toLowerCase())) return true;
  return sep > 0 && !base58.isBase58(str);
}

function decodeSegwit(str, net) {
  const { hrp, words, variant } = bech32.decode(str);
  const owners = HRP_NETWORKS.get(hrp);
  if (!owners) {
    throw new AddressError('ERR_ADDRESS_FORMAT',
      `${show(str)} has the human-readable part "${hrp}", which is not a Bitcoin network's (expected "${net.hrp}")`);
  }
  if (words.length === 0) throw new AddressError('ERR_ADDRESS_FORMAT', `${show(str)} has no witness version or program`);
  const version = words[0];
  let program;
  try {
    program = bech32.fromWords(words.subarray(1));
  } catch (err) {
    throw new AddressError(err.code, `${show(str)}: ${err.message}`);
  }
  if (program.length < 2 || program.length > 40) {
    throw new AddressError('ERR_ADDRESS_FORMAT', `${show(str)}: a witness program is 2 to 40 bytes, this one is ${program.length}`);
  }
  if (version > 16) {
    throw new AddressError('ERR_ADDRESS_WITNESS_VERSION', `${show(str)} has witness version ${version}; versions go from 0 to 16`, { version });
  }
  if (version === 0 && program.length !== 20 && program.length !== 32) {
    throw new AddressError('ERR_ADDRESS_FORMAT',
      `${show(str)}: a version 0 witness program is 20 or 32 bytes, this one is ${program.length}`);
  }
  const expected = version === 0 ? 'bech32' : 'bech32m';
  if (variant !== expected) {
    throw new AddressError('ERR_ADDRESS_VARIANT',
      `${show(str)} is a witness version ${version} address with a ${variant} checksum; version ${version} requires ${expected} (BIP350)`,
      { version, variant, expected });
  }
  if (hrp !== net.hrp) throw wrongNetwork(str, owners, net);
  return witnessScript(version, program);
}

// A 25-byte base58check address (version, hash, checksum) is 22 (all leading zeros) to 35
// characters; outside that it is not an address at all, whatever its checksum would say.
const BASE58_MIN = 22;
const BASE58_MAX = 35;

function decodeBase58(str, net) {
  if (str.length < BASE58_MIN || str.length > BASE58_MAX) {
    throw new AddressError('ERR_ADDRESS_FORMAT',
      `${show(str)} is not an address: ${str.length} characters, where a base58 address has ${BASE58_MIN} to ${BASE58_MAX} and a bech32 one starts with "${net.hrp}1"`);
  }
  const payload = base58.decodeCheck(str);
  if (payload.length !== 21) {
    throw new AddressError('ERR_ADDRESS_FORMAT', `${show(str)} holds ${payload.length} bytes; an address holds a version byte and a 20-byte hash`);
  }
  const version = payload[0];
  const known = VERSION_NETWORKS.get(version);
  if (!known) {
    throw new AddressError('ERR_ADDRESS_FORMAT', `${show(str)} has version byte 0x${version.toString(16).padStart(2, '0')}, which is not a Bitcoin address version`);
  }
  const hash = payload.subarray(1);
  if (version === net.p2pkh) return p2pkhScript(hash);
  if (version === net.p2sh) return p2shScript(hash);
  throw wrongNetwork(str, known.networks, net);
}

function wrongNetwork(str, owners, net) {
  return new AddressError('ERR_ADDRESS_NETWORK',
    `${show(str)} is a ${owners.join('/')} address, not a ${net.name} one`, { networks: owners, network: net.name });
}

const HEX64 = /^[0-9a-fA-F]{64}$/;

/**
 * What a query names: an address, or an Electrum script hash (64 hex digits, display order
 * as Electrum shows it, i.e. the sha256 bytes reversed).
 * @param {string} str
 * @param {string|import('./networks').Network} network
 * @returns {{scripthash: Buffer, address: string|null}} scripthash in internal order; address
 *   in its canonical spelling (bech32 lower case), null for a script hash
 * @throws {AddressError} the address's own error when it looks like one of ours, else ERR_ADDRESS_FORMAT
 */
function parseTarget(str, network) {
  const net = getNetwork(network);
  if (typeof str === 'string' && HEX64.test(str)) return { scripthash: fromDisplayHex(str), address: null };
  let decoded;
  try {
    decoded = decodeAddress(str, net);
  } catch (err) {
    if (err.code !== 'ERR_ADDRESS_FORMAT') throw err;
    throw new AddressError('ERR_ADDRESS_FORMAT',
      `not a ${net.name} address nor a 64-hex-digit script hash: ${err.message}`);
  }
  return { scripthash: decoded.scripthash, address: encodeAddress(decoded.script, net) };
}

module.exports = { encodeAddress, decodeAddress, parseTarget, base58Address, segwitAddress };
