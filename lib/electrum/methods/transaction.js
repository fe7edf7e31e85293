'use strict';

const { RPC, RpcError, badRequest, nodeError } = require('../errors');
const { SourceError } = require('../../errors');
const { merkleBranch } = require('../merkle');
const { toDisplayHex } = require('../../chain/hash');

/**
 * Transactions: raw bytes, merkle branches from the index's txids, and broadcast through the
 * node (when the server has one).
 */
module.exports = {
  'blockchain.transaction.get': {
    params: [{ name: 'tx_hash', type: 'txid' }, { name: 'verbose', type: 'bool', default: false }],
    handler: async ({ app }, txid, verbose) => {
      // Esplora's electrs answers this, and wallets (BlueWallet among them) fall back to the raw form on it
      if (verbose) throw badRequest('verbose transactions are currently unsupported');
      let raw;
      try {
        raw = await app.reader.rawTx(txid);
      } catch (err) {
        if (!(err instanceof SourceError)) throw err;
        // known to the index, its bytes unreadable: the error ElectrumX gives when its source of
        // transactions fails (the reason without the server's paths, which go to the log)
        app.log(`electrum: transaction ${toDisplayHex(txid)}: ${err.message}`);
        throw new RpcError(RPC.DAEMON_ERROR, `transaction ${toDisplayHex(txid)} is confirmed but its bytes cannot be read: ${
          app.reader.hasRawTx ? 'its block is unavailable' : 'this server reads no blocks (no blocks dir, no node)'}`);
      }
      if (!raw && app.node) raw = await app.node.rawTx(txid).catch((e) => { throw nodeError(e); });
      if (raw) return raw.toString('hex');
      throw badRequest(`no transaction ${toDisplayHex(txid)} in the index${app.node ? ' or the node\'s mempool' : ''}`);
    },
  },

  'blockchain.transaction.get_merkle': {
    params: [{ name: 'tx_hash', type: 'txid' }, { name: 'height', type: 'uint' }],
    handler: async ({ app }, txid, height) => {
      const { value } = await app.reader.consistent(async () => {
        const loc = await app.reader.txLocation(txid);
        const txids = loc && loc.height === height ? await app.reader.blockTxids(height) : null;
        if (!txids || !txids[loc.position] || !txids[loc.position].equals(txid)) {
          throw badRequest(`tx ${toDisplayHex(txid)} not in block at height ${height}`);
        }
        return { block_height: height, merkle: merkleBranch(txids, loc.position).branch.map(toDisplayHex), pos: loc.position };
      });
      return value;
    },
  },

  'blockchain.transaction.id_from_pos': {
    params: [{ name: 'height', type: 'uint' }, { name: 'tx_pos', type: 'uint' }, { name: 'merkle', type: 'bool', default: false }],
    handler: async ({ app }, height, pos, merkle) => {
      const txids = await app.reader.blockTxids(height);
      if (!txids) throw badRequest(`height ${height} out of range`);
      if (pos >= txids.length) throw badRequest(`no tx at position ${pos} in block at height ${height}`);
      const hash = toDisplayHex(txids[pos]);
      return merkle ? { tx_hash: hash, merkle: merkleBranch(txids, pos).branch.map(toDisplayHex) } : hash;
    },
  },

  'blockchain.transaction.broadcast': {
    params: [{ name: 'raw_tx', type: 'hex' }],
    handler: async ({ app }, raw) => {
      if (!app.node) throw new RpcError(RPC.DAEMON_ERROR, 'this server has no node to broadcast through');
      return app.node.broadcast(raw).catch((e) => { throw nodeError(e); });
    },
  },
};
