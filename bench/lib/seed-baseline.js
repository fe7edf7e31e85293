'use strict';

/**
 * The baseline bench/sync.js measures addrindex against: an address index built the way the
 * seed's storage tests built theirs, on the same LMDB so only the design differs:
 *
 *  - bitcore-lib parses every block (Block.fromBuffer, tx.hash, script.toAddress);
 *  - prevouts are rows keyed by `${txidhex}-${vout}` strings, values msgpack objects;
 *  - each address has one summary value — balance, received, sent, then the raw 32-byte
 *    txids of its history appended one after another — read, extended and rewritten for
 *    every output and input that touches it;
 *  - one commit per block.
 *
 * It keeps its own key space in its own LMDB environment and answers balance and history
 * questions, so a test can check that it computes the same thing before it is timed.
 */

const bitcore = require('bitcore-lib');
const { open } = require('lmdb');

const SUMMARY_HEADER = 24; // balance, received, sent: three float64 (satoshis fit in 53 bits)

class SeedBaseline {
  /**
   * @param {object} opts
   * @param {string} opts.dir      an empty directory for the LMDB environment
   * @param {string} opts.network  'main' | 'testnet' | 'regtest' | 'signet'
   */
  constructor({ dir, network }) {
    this.network = bitcore.Networks.get({ main: 'livenet', testnet: 'testnet', signet: 'testnet', regtest: 'regtest' }[network]);
    this.env = open({ path: dir });
    this.prevouts = this.env.openDB('prevouts');
    this.addresses = this.env.openDB('addresses', { encoding: 'binary' });
    this.txs = 0;
  }

  /**
   * The address string the seed filed an output under; P2PK counts as its key's P2PKH address
   * (as addrindex does, so both index the same outputs). Other scripts without an address are
   * filed under their hex; OP_RETURN outputs are skipped.
   * @returns {string|null}
   */
  addressOf(script) {
    const addr = script.toAddress(this.network);
    if (addr) return addr.toString();
    if (script.isDataOut()) return null;
    if (script.isPublicKeyOut()) {
      const hash = bitcore.crypto.Hash.sha256ripemd160(script.getPublicKey());
      return bitcore.Address.fromPublicKeyHash(hash, this.network).toString();
    }
    return `script:${script.toHex()}`;
  }

  /**
   * Indexes one block, in one commit.
   * @param {Buffer} raw
   * @param {number} height
   */
  async applyBlock(raw, height) {
    const block = bitcore.Block.fromBuffer(raw);
    const { prevouts, addresses } = this;
    this.env.transactionSync(() => {
      for (const tx of block.transactions) {
        this.txs++;
        const txid = Buffer.from(tx.hash, 'hex').reverse();
        if (!tx.isCoinbase()) {
          for (const input of tx.inputs) {
            const key = `${input.prevTxId.toString('hex')}-${input.outputIndex}`;
            const prev = prevouts.get(key);
            if (!prev) throw new Error(`baseline: block ${height} spends unknown output ${key}`);
            prevouts.removeSync(key);
            if (prev.a !== null) this._touch(addresses, prev.a, txid, 0, prev.v);
          }
        }
        // the genesis coinbase is unspendable, and addrindex does not index it either
        if (height === 0) continue;
        tx.outputs.forEach((out, vout) => {
          const a = this.addressOf(out.script);
          prevouts.putSync(`${tx.hash}-${vout}`, { a, v: out.satoshis });
          if (a !== null) this._touch(addresses, a, txid, out.satoshis, 0);
        });
      }
    });
  }

  /** Read-modify-write of one address value: update the sums, append the txid. */
  _touch(addresses, address, txid, received, sent) {
    const old = addresses.get(address);
    let next;
    if (!old) {
      next = Buffer.alloc(SUMMARY_HEADER + 32);
      txid.copy(next, SUMMARY_HEADER);
    } else {
      const last = old.subarray(old.length - 32);
      // a tx with several inputs or outputs of the address appends it once
      next = last.equals(txid) ? Buffer.from(old) : Buffer.concat([old, txid]);
    }
    next.writeDoubleLE((old ? old.readDoubleLE(0) : 0) + received - sent, 0);
    next.writeDoubleLE((old ? old.readDoubleLE(8) : 0) + received, 8);
    next.writeDoubleLE((old ? old.readDoubleLE(16) : 0) + sent, 16);
    addresses.putSync(address, next);
  }

  /**
   * @param {string} address
   * @returns {{balance: number, received: number, sent: number, txids: string[]}|null} txids in display hex
   */
  summary(address) {
    const v = this.addresses.get(address);
    if (!v) return null;
    const txids = [];
    for (let i = SUMMARY_HEADER; i < v.length; i += 32) txids.push(Buffer.from(v.subarray(i, i + 32)).reverse().toString('hex'));
    return { balance: v.readDoubleLE(0), received: v.readDoubleLE(8), sent: v.readDoubleLE(16), txids };
  }

  async close() {
    await this.env.close();
  }
}

module.exports = { SeedBaseline };
