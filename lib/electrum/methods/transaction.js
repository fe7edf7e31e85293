'use strict';

const { RPC, RpcError, badRequest, nodeError } = require('../errors');
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
      const raw = (await app.reader.rawTx(txid)) || (app.node ? await app.node.rawTx(txid).catch((e) => { throw nodeError(e); }) : null);
      if (raw) return raw.toString('hex');
      if (!app.reader.hasRawTx && !app.node) {
        throw badRequest('this server reads no transaction bodies: it was started without a blocks dir or a node');
      }
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
