'use strict';

/**
 * Deterministic synthetic Bitcoin chains for tests and benchmarks: blocks that parse, link
 * and carry real merkle roots and regtest proof of work, with a mainnet-like shape (see
 * README.md in this folder), streamed into Bitcoin Core-format blocks dirs.
 */

const { ChainGenerator } = require('./chain');
const { BlkWriter, blkName } = require('./blkwriter');
const { writeChain, appendBranch } = require('./write');
const { genesisBlock } = require('./genesis');
const { DEFAULTS } = require('./params');

module.exports = { ChainGenerator, BlkWriter, writeChain, appendBranch, genesisBlock, blkName, DEFAULTS };
