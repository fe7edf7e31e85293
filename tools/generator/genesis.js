'use strict';

const { sha256d, toDisplayHex } = require('../../lib/chain/hash');
const { getNetwork } = require('../../lib/chain/networks');

// The genesis coinbase shared by main, testnet3, signet and regtest: the Times headline in its
// scriptSig, 50 BTC to Satoshi's uncompressed key. These bytes are chain data, not code.
const GENESIS_SCRIPTSIG = Buffer.from(
  '04ffff001d0104455468652054696d65732030332f4a616e2f32303039204368616e63656c6c6f72206f6e20' +
  '6272696e6b206f66207365636f6e64206261696c6f757420666f722062616e6b73', 'hex');
const GENESIS_PUBKEY = Buffer.from(
  '04678afdb0fe5548271967f1a67130b7105cd6a828e03909a67962e0ea1f61deb649f6bc3f4cef38c4f35504e5' +
  '1ec112de5c384df7ba0b8d578a4c702b6bf11d5f', 'hex');

const SATOSHI = {
  scriptSig: GENESIS_SCRIPTSIG,
  script: Buffer.concat([Buffer.from([GENESIS_PUBKEY.length]), GENESIS_PUBKEY, Buffer.from([0xac])]),
};

// BIP94's testnet4 coinbase: a May 2024 mainnet block hash as the message (OP_PUSHDATA1, 76
// bytes), 50 BTC to a key of 33 zero bytes that nobody can spend.
const TESTNET4_MESSAGE = Buffer.from('03/May/2024 000000000000000000001ebd58c244970b3aa9d783bb001011fbe8ea8e98e00e', 'latin1');
const TESTNET4 = {
  scriptSig: Buffer.concat([Buffer.from('04ffff001d0104', 'hex'), Buffer.from([0x4c, TESTNET4_MESSAGE.length]), TESTNET4_MESSAGE]),
  script: Buffer.concat([Buffer.from([33]), Buffer.alloc(33), Buffer.from([0xac])]),
};

/** Header fields and coinbase that differ between networks (from each network's chainparams). */
const GENESIS_HEADERS = {
  main: { time: 1231006505, bits: 0x1d00ffff, nonce: 2083236893, coinbase: SATOSHI },
  testnet: { time: 1296688602, bits: 0x1d00ffff, nonce: 414098458, coinbase: SATOSHI },
  testnet4: { time: 1714777860, bits: 0x1d00ffff, nonce: 393743547, coinbase: TESTNET4 },
  signet: { time: 1598918400, bits: 0x1e0377ae, nonce: 52613770, coinbase: SATOSHI },
  regtest: { time: 1296688602, bits: 0x207fffff, nonce: 2, coinbase: SATOSHI },
};

function genesisTx({ scriptSig, script }) {
  const parts = [
    Buffer.from('01000000' + '01' + '00'.repeat(32) + 'ffffffff', 'hex'),
    Buffer.from([scriptSig.length]), scriptSig,
    Buffer.from('ffffffff' + '01' + '00f2052a01000000', 'hex'), // 50 BTC
    Buffer.from([script.length]), script,
    Buffer.from('00000000', 'hex'),
  ];
  return Buffer.concat(parts);
}

/**
 * The real genesis block of a network, byte for byte; its hash is checked against the
 * network's published genesis hash.
 * @param {string|import('../chain/networks').Network} network
 * @returns {{raw: Buffer, hash: string, time: number, bits: number}}
 */
function genesisBlock(network) {
  const net = getNetwork(network);
  const h = GENESIS_HEADERS[net.name];
  const tx = genesisTx(h.coinbase);
  const header = Buffer.alloc(80);
  header.writeInt32LE(1, 0);
  sha256d(tx).copy(header, 36); // one tx: the merkle root is its txid
  header.writeUInt32LE(h.time, 68);
  header.writeUInt32LE(h.bits, 72);
  header.writeUInt32LE(h.nonce, 76);
  const hash = toDisplayHex(sha256d(header));
  if (hash !== net.genesis) throw new Error(`built ${net.name} genesis ${hash}, expected ${net.genesis}`);
  return { raw: Buffer.concat([header, Buffer.from([1]), tx]), hash, time: h.time, bits: h.bits };
}

module.exports = { genesisBlock, GENESIS_HEADERS };
