'use strict';

const { tooLarge } = require('../errors');
const { orderMempool } = require('../status');
const { toDisplayHex } = require('../../chain/hash');
const { historyJSON } = require('../encode');
const { RawJson } = require('../jsonrpc');

const SCRIPTHASH = [{ name: 'scripthash', type: 'scripthash' }];

/**
 * What a wallet asks about each of its script hashes. The script hash arrives parsed (32
 * bytes, internal order); subscriptions are keyed by its hex in lower case, which is also how
 * notifications name it.
 */
module.exports = {
  'blockchain.scripthash.get_balance': {
    params: SCRIPTHASH,
    handler: ({ app }, sh) => app.reader.balance(sh),
  },

  'blockchain.scripthash.get_history': {
    params: SCRIPTHASH,
    handler: async ({ app }, sh) => {
      const { entries, mempool, more } = await app.reader.history(sh, app.limits.maxHistory);
      if (more) throw tooLarge('history', app.limits.maxHistory);
      const confirmed = historyJSON(entries);
      if (!mempool.length) return new RawJson(confirmed);
      return new RawJson(`${confirmed.slice(0, -1)}${entries.length ? ',' : ''}${JSON.stringify(mempoolJSON(mempool)).slice(1)}`);
    },
  },

  'blockchain.scripthash.get_mempool': {
    params: SCRIPTHASH,
    handler: async ({ app }, sh) => mempoolJSON(await app.reader.mempool(sh)),
  },

  'blockchain.scripthash.listunspent': {
    params: SCRIPTHASH,
    handler: async ({ app }, sh) => {
      const { utxos, more } = await app.reader.utxos(sh, app.limits.maxHistory);
      if (more) throw tooLarge('unspent outputs', app.limits.maxHistory);
      return utxos.map((u) => ({ tx_hash: toDisplayHex(u.txid), tx_pos: u.vout, height: u.height, value: u.value }));
    },
  },

  'blockchain.scripthash.subscribe': {
    params: SCRIPTHASH,
    handler: ({ app, session }, sh) => app.subscriptions.subscribe(session, toDisplayHex(sh), sh, app.limits.maxSubscriptions),
  },

  'blockchain.scripthash.unsubscribe': {
    params: SCRIPTHASH,
    handler: ({ app, session }, sh) => app.subscriptions.unsubscribe(session, toDisplayHex(sh)),
  },
};

/** Mempool entries as get_history and get_mempool list them, in the status's order. */
function mempoolJSON(mempool) {
  return orderMempool(mempool).map((e) => ({ tx_hash: e.hash, height: e.height, fee: e.fee }));
}
