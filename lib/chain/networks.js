'use strict';

const { UsageError } = require('../errors');

/**
 * @typedef {object} Network
 * @property {string} name
 * @property {number} magic     blocks-file / p2p magic, as the big-endian uint32 of its 4 bytes on disk
 * @property {number} p2pkh     base58 version byte for pay-to-pubkey-hash
 * @property {number} p2sh      base58 version byte for pay-to-script-hash
 * @property {string} hrp       bech32 human-readable part
 * @property {string} genesis   genesis block hash (display hex)
 */

/** @type {Record<string, Network>} */
const NETWORKS = {
  main: {
    name: 'main',
    magic: 0xf9beb4d9,
    p2pkh: 0x00,
    p2sh: 0x05,
    hrp: 'bc',
    genesis: '000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f',
  },
  testnet: {
    name: 'testnet',
    magic: 0x0b110907,
    p2pkh: 0x6f,
    p2sh: 0xc4,
    hrp: 'tb',
    genesis: '000000000933ea01ad0ee984209779baaec3ced90fa3f408719526f8d77f4943',
  },
  // BIP94's testnet4 (Bitcoin Core 28+): its own magic and genesis, testnet3's address versions.
  testnet4: {
    name: 'testnet4',
    magic: 0x1c163f28,
    p2pkh: 0x6f,
    p2sh: 0xc4,
    hrp: 'tb',
    genesis: '00000000da84f2bafbbc53dee25a72ae507ff4914b867c565be350b0da8bf043',
  },
  signet: {
    name: 'signet',
    magic: 0x0a03cf40,
    p2pkh: 0x6f,
    p2sh: 0xc4,
    hrp: 'tb',
    genesis: '00000008819873e925422c1ff0f99f7cc9bbb232af63a077a480a3633bee1ef6',
  },
  regtest: {
    name: 'regtest',
    magic: 0xfabfb5da,
    p2pkh: 0x6f,
    p2sh: 0xc4,
    hrp: 'bcrt',
    genesis: '0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206',
  },
};

const ALIASES = { mainnet: 'main', livenet: 'main', bitcoin: 'main', testnet3: 'testnet', test: 'testnet' };

/**
 * Looks a network up by name (aliases such as "mainnet" and "livenet" accepted).
 * @param {string|Network} name
 * @returns {Network}
 */
function getNetwork(name) {
  if (name && typeof name === 'object' && NETWORKS[name.name] === name) return name;
  const key = ALIASES[name] || name;
  const net = NETWORKS[key];
  if (!net) {
    throw new UsageError('ERR_UNKNOWN_NETWORK',
      `unknown network "${name}": expected one of ${Object.keys(NETWORKS).join(', ')}`);
  }
  return net;
}

module.exports = { NETWORKS, getNetwork };
