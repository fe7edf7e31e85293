'use strict';

/**
 * What a regtest bitcoind's `generate` and wallet did for bitcore-node's regtest/node.js,
 * done with btcd (test/helpers/btcd.js), which has no wallet: the node mines to the address of
 * a key the test holds (`--miningaddr`), and `sendToAddress` pays from its mature coinbases
 * with a transaction built and signed by the given bitcore-lib (the host's 0.13, as the
 * original test builds its own), change back to the miner, the wallet's fee (10 satoshis a
 * byte). Needs no bitcore-lib of its own, so it runs in the host's process.
 */
class NodeMiner {
  /**
   * @param {object} opts
   * @param {import('../helpers/btcd').Btcd} opts.node mining to `key`'s P2PKH address
   * @param {object} opts.bitcore a bitcore-lib
   * @param {object} opts.key its PrivateKey
   */
  constructor({ node, bitcore, key }) {
    this.node = node;
    this.bitcore = bitcore;
    this.key = key;
    this.address = key.toAddress(bitcore.Networks.get('regtest'));
    /** the next height whose coinbase has not been spent */
    this.next = 1;
  }

  /** `generate n`: the hashes of the new blocks. */
  generate(n) {
    return this.node.generate(n);
  }

  /**
   * What `sendtoaddress ADDRESS AMOUNT` pays: a transaction from the oldest coinbase not yet
   * spent (mature: 100 blocks deep) to the address.
   * @returns {Promise<object>} the signed bitcore-lib Transaction, not yet sent
   */
  async sendToAddress(address, btc) {
    const { height } = await this.node.tip();
    if (height - this.next < 100) throw new Error('no mature coinbase left to pay with: generate more blocks first');
    const hash = await this.node.call('getblockhash', this.next++);
    const block = this.bitcore.Block.fromBuffer(Buffer.from(await this.node.call('getblock', hash, 0), 'hex'));
    const coinbase = block.transactions[0];
    const vout = coinbase.outputs.findIndex((o) => o.script.toAddress(this.address.network).toString() === this.address.toString());
    if (vout < 0) throw new Error(`block ${hash} does not pay the miner ${this.address}`);
    const coin = { txId: coinbase.hash, outputIndex: vout, script: coinbase.outputs[vout].script, satoshis: coinbase.outputs[vout].satoshis };
    const tx = new this.bitcore.Transaction().from(coin).to(address, Math.round(btc * 1e8)).change(this.address);
    tx.fee(tx._estimateSize() * 10);
    return tx.sign(this.key);
  }
}

module.exports = { NodeMiner };
