'use strict';

/**
 * `require('addrindex/bitcore')`: the bitcore-node 3 `bitcoind` service over an addrindex
 * index (README.md in this folder). The export is the service constructor itself, as
 * bitcore-node loads a service package (its `bitcoreNode` field names this entry), with
 * `BitcoindService` on it for `const { BitcoindService } = require('addrindex/bitcore')`.
 */

const { BitcoindService } = require('./service');

module.exports = BitcoindService;
module.exports.BitcoindService = BitcoindService;
