'use strict';

const fs = require('node:fs');
const path = require('node:path');

const DIR = path.join(__dirname, '..', 'fixtures');

/** Block hashes published in test/fixtures/README.md (the chain's own facts). */
const KNOWN_HASHES = {
  'mainnet/block300025.raw': '0000000000000000821c4e0acc40f88bedbce3b73ba2358b5ade58a9022cc78c',
  'mainnet/block426884.raw': '00000000000000000431d0ead6e0bd9f90ff0d469e9b05d51e3d04971f472973',
  'mainnet/block482683.raw': '000000000000000000c238240ef6dcb26c37e75e16514e6ffc0aef7eee73e747',
  'testnet/block1087400.raw': '0000000003db83e6ab01a6ebb26ad2b1481688009141c9afc204c54284e1ba66',
};

const RAW_BLOCKS = [
  'mainnet/block300025.raw', 'mainnet/block426884.raw', 'mainnet/block482683.raw',
  'testnet/block1087400.raw', 'testnet/block928816.raw', 'testnet/block928828.raw',
  'testnet/block928831.raw', 'testnet/block928848.raw', 'testnet/block928849.raw',
  'testnet/block928927.raw',
];

const MAINNET_439 = path.join(DIR, 'mainnet', 'blk-first-439.dat');

/** @param {string} rel path under test/fixtures */
function fixturePath(rel) {
  return path.join(DIR, rel);
}

/** @param {string} rel */
function readFixture(rel) {
  return fs.readFileSync(fixturePath(rel));
}

/** @param {string} rel */
function networkOf(rel) {
  return rel.startsWith('testnet/') ? 'testnet' : 'main';
}

/**
 * The blocks of blk-first-439.dat, split by their magic+size framing (heights 0-438).
 * Deliberately independent of lib/sources, so it can check the reader.
 * @returns {Buffer[]}
 */
function mainnet439Blocks() {
  const buf = fs.readFileSync(MAINNET_439);
  const blocks = [];
  for (let pos = 0; pos < buf.length;) {
    const size = buf.readUInt32LE(pos + 4);
    blocks.push(buf.subarray(pos + 8, pos + 8 + size));
    pos += 8 + size;
  }
  return blocks;
}

module.exports = { DIR, KNOWN_HASHES, RAW_BLOCKS, MAINNET_439, fixturePath, readFixture, networkOf, mainnet439Blocks };
