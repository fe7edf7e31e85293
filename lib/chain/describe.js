'use strict';

const { classify, outputScripthash } = require('./script');
const { encodeAddress } = require('./address');
const { toDisplayHex } = require('./hash');

/**
 * What a person (or `addrindex parse`) wants to know about an output script: its class, its
 * address and the Electrum script hash the index files it under. For display only: the sync
 * path uses classify() and outputScripthash() and never builds address strings.
 * @param {Buffer} script scriptPubKey
 * @param {string|import('./networks').Network} network
 * @returns {{type: string, address: string|null, scripthash: string|null}} scripthash in
 *   display hex (byte-reversed sha256, as Electrum shows it), null for OP_RETURN (not indexed);
 *   address null when the script has none (P2PK gives its key's P2PKH address)
 */
function describeOutput(script, network) {
  const c = classify(script);
  const hash = outputScripthash(script, c);
  return {
    type: c.type,
    address: encodeAddress(script, network),
    scripthash: hash === null ? null : toDisplayHex(hash),
  };
}

module.exports = { describeOutput };
