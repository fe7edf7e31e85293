'use strict';

const { fromDisplayHex } = require('../chain/hash');
const { rpcError } = require('./rpc-error');

/** How often the index is looked at while a broadcast waits to appear in it. */
const LOOK_MS = 50;

/**
 * sendTransaction: a transaction broadcast through the node (lib/node's ServeNode, as `serve`
 * broadcasts), answered once the index shows it. bitcore-node's answer came from the patched
 * node, whose address index took the transaction before `sendrawtransaction` returned, so a
 * caller could ask for the address's transactions at once and find it (bitcore-node's own
 * tests do). Here the mempool follower puts it in the index's snapshot at its next poll: the
 * answer waits for that — the snapshot of the tip, or a block, holding the txid — for at most
 * `waitMs`, and not at all when the index holds no snapshot (no follower keeps one). After
 * `waitMs` the txid is answered anyway (the node has it) and the wait is logged.
 */
class Broadcaster {
  /**
   * @param {object} opts
   * @param {import('../node/serve-node').ServeNode} opts.node
   * @param {import('./paired').PairedReads} opts.reads
   * @param {object|null} opts.host the bitcore-node Node (its RPCError)
   * @param {number} [opts.waitMs=5000] 0: answer as soon as the node accepts
   * @param {() => void} [opts.wake] asks a mempool follower in this process to poll now
   * @param {(msg: string) => void} [opts.warn]
   */
  constructor({ node, reads, host, waitMs = 5000, wake = () => {}, warn = () => {} }) {
    this.node = node;
    this.reads = reads;
    this.host = host;
    this.waitMs = waitMs;
    this.wake = wake;
    this.warn = warn;
  }

  /**
   * @param {Buffer|string} tx the transaction's bytes or hex
   * @returns {Promise<string>} its txid, as the node reports it
   * @throws the node's refusal as its RPC error, with its code and words (insight answers 400)
   */
  async send(tx) {
    let txid;
    try {
      txid = await this.node.broadcast(tx);
    } catch (err) {
      if (err.code !== 'ERR_NODE_REJECTED') throw err;
      throw rpcError(this.host, err.details.rpcCode, err.details.rpcMessage);
    }
    this.wake();
    await this.indexed(txid);
    return txid;
  }

  /** Until the index shows the transaction, a block took it, or `waitMs` passed. */
  async indexed(txid) {
    if (!(this.waitMs > 0)) return;
    const id = fromDisplayHex(txid);
    const until = Date.now() + this.waitMs;
    for (;;) {
      const state = await this.reads.withMempool(async ({ snapshot, view }) => {
        if (!snapshot) return 'no mempool';
        if ((view && view.get(id)) || (await this.reads.store.getTx(id))) return 'seen';
        return null;
      });
      if (state) return;
      if (Date.now() >= until) {
        this.warn(`sendTransaction: ${txid} was accepted by the node but is not in the index's mempool after ${this.waitMs} ms (is the follower running?)`);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, LOOK_MS));
    }
  }
}

module.exports = { Broadcaster };
