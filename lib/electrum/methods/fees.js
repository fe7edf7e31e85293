'use strict';

const { nodeError } = require('../errors');

/**
 * Fees come from the node. Without one the server says it has no estimate (-1, the
 * protocol's "not enough information") and an empty mempool, and answers relayfee with
 * Bitcoin Core's default minimum relay fee (1,000 sat/kvB), the floor every node of the
 * network applies unless its operator changed it.
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
    handler: ({ app }) => (app.node ? ask(app.node.feeHistogram()) : []),
  },
};
