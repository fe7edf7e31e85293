'use strict';

const { nodeError } = require('../errors');

/**
 * Fee estimates come from the node. Without one the server says it has no estimate (-1, the
 * protocol's "not enough information") and answers relayfee with Bitcoin Core's default
 * minimum relay fee (1,000 sat/kvB), the floor every node of the network applies unless its
 * operator changed it. The fee histogram is the index's mempool snapshot's (lib/core/mempool.js),
 * else empty: neither Bitcoin Core nor btcd has one to ask for.
 */
const DEFAULT_RELAY_FEE = 0.00001;

const ask = (promise) => promise.catch((e) => { throw nodeError(e); });

module.exports = {
  'blockchain.estimatefee': {
    params: [{ name: 'number', type: 'uint' }],
    handler: ({ app }, blocks) => (app.node ? ask(app.node.estimateFee(blocks)) : -1),
  },
  'blockchain.relayfee': {
    params: [],
    handler: ({ app }) => (app.node ? ask(app.node.relayFee()) : DEFAULT_RELAY_FEE),
  },
  'mempool.get_fee_histogram': {
    params: [],
    handler: async ({ app }) => (await app.reader.feeHistogram()) || [],
  },
};
