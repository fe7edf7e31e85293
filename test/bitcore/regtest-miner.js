'use strict';

const { BlkWriter, genesisBlock } = require('../../tools/generator');
const { meetsRegtestTarget } = require('../../tools/generator/chain');
const { merkleRoot } = require('../../lib/chain/merkle');
const { sha256d, toDisplayHex } = require('../../lib/chain/hash');

/**
 * What `generate` and the wallet of a regtest node did for bitcore-node's regtest/node.js,
 * done to a blocks dir instead: blocks with a coinbase to the miner and the given
 * transactions (built and signed with the host's bitcore-lib 0.13, as the original test builds
 * them), real regtest proof of work, appended to blk files an index follows. Without a
 * bitcore-lib it still mines (coinbases to a fixed P2PKH script), at chosen block times.
 */
class RegtestMiner {
  /**
   * @param {object} opts
   * @param {string} opts.dir blocks dir (new)
   * @param {object} [opts.bitcore] the host's bitcore-lib, to pay and sign with `key`
   * @param {object} [opts.key] the miner's bitcore PrivateKey
   */
  constructor({ dir, bitcore = null, key = null }) {
    this.bitcore = bitcore;
    this.key = key;
    this.address = key ? key.toAddress(bitcore.Networks.get('regtest')) : null;
    this.script = key ? bitcore.Script.buildPublicKeyHashOut(this.address).toBuffer() : Buffer.from(`76a914${'5a'.repeat(20)}88ac`, 'hex');
    this.writer = new BlkWriter({ dir, network: 'regtest' });
    const g = genesisBlock('regtest');
    this.writer.write(g.raw);
    this.writer.flush();
    this.height = 0;
    this.hash = g.hash;
    this.time = g.time;
    /** @type {Array<{txid: string, outputIndex: number, script: string, satoshis: number, height: number}>} spendable coinbase outputs */
    this.coinbases = [];
  }

  /** Regtest's subsidy: 50 BTC halving every 150 blocks. */
  subsidy(height) {
    return Math.floor(50e8 / 2 ** Math.floor(height / 150));
  }

  _coinbase(height, value) {
    const heightBytes = [];
    for (let v = height; v > 0; v = Math.floor(v / 256)) heightBytes.push(v & 0xff);
    if (heightBytes.length === 0 || heightBytes[heightBytes.length - 1] & 0x80) heightBytes.push(0);
    const scriptSig = Buffer.concat([Buffer.from([heightBytes.length, ...heightBytes]), Buffer.from('\x08regtest!', 'latin1')]);
    const script = this.script;
    const amount = Buffer.alloc(8);
    amount.writeUInt32LE(value % 0x100000000, 0);
    amount.writeUInt32LE(Math.floor(value / 0x100000000), 4);
    return Buffer.concat([
      Buffer.from(`01000000010000000000000000000000000000000000000000000000000000000000000000ffffffff`, 'hex'),
      Buffer.from([scriptSig.length]), scriptSig, Buffer.from('ffffffff01', 'hex'), amount,
      Buffer.from([script.length]), script, Buffer.from('00000000', 'hex'),
    ]);
  }

  /**
   * Mines one block holding `txs` (bitcore-lib Transactions whose inputs know their outputs).
   * @param {object[]} [txs]
   * @param {{time?: number}} [opts] the block's timestamp (default: 600 s after the last)
   * @returns {string} the block hash
   */
  mine(txs = [], { time } = {}) {
    const height = this.height + 1;
    const fees = txs.reduce((n, t) => n + t.getFee(), 0);
    const coinbase = this._coinbase(height, this.subsidy(height) + fees);
    const raws = [coinbase, ...txs.map((t) => Buffer.from(t.serialize({ disableIsFullySigned: false }), 'hex'))];
    const header = Buffer.alloc(80);
    header.writeInt32LE(0x20000000, 0);
    Buffer.from(this.hash, 'hex').reverse().copy(header, 4);
    merkleRoot(raws.map((r) => sha256d(r))).copy(header, 36);
    this.time = time === undefined ? this.time + 600 : time;
    header.writeUInt32LE(this.time, 68);
    header.writeUInt32LE(0x207fffff, 72);
    let hash;
    for (let nonce = 0; ; nonce++) {
      header.writeUInt32LE(nonce, 76);
      hash = sha256d(header);
      if (meetsRegtestTarget(hash)) break;
    }
    this.writer.write(Buffer.concat([header, Buffer.from([raws.length]), ...raws]));
    this.writer.flush();
    this.height = height;
    this.hash = toDisplayHex(hash);
    const cbid = toDisplayHex(sha256d(coinbase));
    this.coinbases.push({
      txid: cbid, outputIndex: 0, script: this.script.toString('hex'), satoshis: this.subsidy(height) + fees,
      address: this.address ? this.address.toString() : null, height,
    });
    return this.hash;
  }

  /** `generate n`: the hashes of the new blocks. */
  generate(n) {
    const hashes = [];
    for (let i = 0; i < n; i++) hashes.push(this.mine());
    return hashes;
  }

  /**
   * What `sendtoaddress ADDRESS AMOUNT` paid: a transaction from the oldest mature coinbase
   * to the address, change back to the miner, the wallet's fee (10 satoshis a byte).
   * @returns {object} the bitcore-lib Transaction, not yet mined
   */
  sendToAddress(address, btc) {
    const coin = this.coinbases.find((c) => this.height - c.height >= 100 && !c.spent);
    if (!coin) throw new Error('no mature coinbase left to pay with: generate more blocks first');
    coin.spent = true;
    const tx = new this.bitcore.Transaction().from(coin).to(address, Math.round(btc * 1e8)).change(this.address);
    tx.fee(tx._estimateSize() * 10);
    return tx.sign(this.key);
  }

  async close() {
    await this.writer.close();
  }
}

module.exports = { RegtestMiner };
