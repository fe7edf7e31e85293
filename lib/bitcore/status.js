'use strict';

const { coreDifficulty } = require('../chain/difficulty');
const VERSION = require('../../package.json').version;

/**
 * What bitcore-node's getInfo, syncPercentage and estimateFee answered from the node, answered
 * from the index and its block files, and from the node when the service has one (the relay
 * fee, fee estimates, its tip). Facts addrindex does not know (peers, protocol version, clock
 * offset) are not made up: getInfo gives null for them, and estimateFee without a node gives
 * -1, Bitcoin Core's answer when it has no fee data.
 */

/** addrindex's version as Core numbers its own (1.2.3 → 1020300). */
function numericVersion(version = VERSION) {
  const [major, minor, patch] = version.split(/[.-]/).map((p) => parseInt(p, 10) || 0);
  return major * 1000000 + minor * 10000 + patch * 100;
}

/**
 * bitcore-node's getInfo shape.
 * @param {object} facts
 * @param {number} facts.blocks the index's height
 * @param {number|null} facts.bits the tip block's compact target, null when its header cannot be read
 * @param {import('../chain/networks').Network} facts.network
 * @param {string} facts.networkName bitcore-node's name for it (livenet, testnet, regtest)
 * @param {number|null} [facts.relayFee] the node's minimum relay fee, BTC/kB; null without a node
 * @returns {object}
 */
function info({ blocks, bits, network, networkName, relayFee = null }) {
  return {
    version: numericVersion(),
    protocolVersion: null,
    blocks,
    timeOffset: null,
    connections: null,
    proxy: '',
    difficulty: bits === null ? null : coreDifficulty(bits),
    testnet: network.name === 'testnet',
    relayFee,
    errors: '',
    network: networkName,
  };
}

/**
 * How far the index is along the chain its block source holds, in percent (bitcore-node's
 * syncPercentage is the node's verificationprogress × 100). Without a source to compare with,
 * the index is all there is: 100.
 * @param {number} height the index's tip height (-1 when empty)
 * @param {number|null} target the block source's best height, null when there is none
 * @returns {number}
 */
function syncPercentage(height, target) {
  if (target === null || target <= 0) return target === 0 && height < 0 ? 0 : 100;
  return Math.min(100, (100 * Math.max(0, height)) / target);
}

/** Bitcoin Core's estimatefee answer without fee data. */
const NO_FEE_ESTIMATE = -1;

module.exports = { info, syncPercentage, numericVersion, NO_FEE_ESTIMATE, VERSION };
