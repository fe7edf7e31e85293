'use strict';

const { badRequest } = require('../errors');
const { json } = require('../reply');
const status = require('../../bitcore/status');
const { verifyMessage } = require('../signed-message');
const { AddressError } = require('../../errors');

/** The insight-api release whose routes and answers addrindex's /insight-api gives. */
const INSIGHT_API_VERSION = '0.4.3';

/** bitcore-node's network names, which insight shows (`info.network`). */
const BITCORE_NAMES = { main: 'livenet', testnet: 'testnet', regtest: 'regtest' };

/**
 * insight-api's status, sync, peer, version, currency, fee and message routes under
 * /insight-api: what insight-ui asks besides addresses, transactions and blocks. Node facts
 * come from the node behind the server when there is one (`serve --rpc-url`), never made up:
 * getInfo's shape and figures are the bitcore-node service's (lib/bitcore/status.js).
 * @param {import('../router').Router} router
 * @param {import('../server').ApiApp} app
 */
function register(router, app) {
  const store = app.store;

  const tipFacts = async () => {
    const { tip, value } = await app.consistent(async (t) => (t ? store.getBlock(t.height) : null));
    return { tip, bits: value ? value.header.readUInt32LE(72) : null };
  };

  router.add('GET', '/insight-api/status', async (ctx) => {
    const q = ctx.query.get('q');
    if (q === 'getLastBlockHash') {
      const tip = await store.getTip();
      const hash = tip ? tip.hash : undefined;
      return json({ syncTipHash: hash, lastblockhash: hash });
    }
    if (q === 'getBestBlockHash') {
      const tip = await store.getTip();
      return json({ bestblockhash: tip ? tip.hash : null });
    }
    const { tip, bits } = await tipFacts();
    const info = status.info({
      blocks: tip ? tip.height : -1, bits, network: app.network,
      networkName: BITCORE_NAMES[app.network.name] || app.network.name,
      relayFee: app.nodeClient ? await app.nodeClient.relayFee() : null,
    });
    if (q === 'getDifficulty') return json({ difficulty: info.difficulty });
    // insight-api renames bitcore-node's keys for its answer
    return json({
      info: {
        version: info.version, protocolversion: info.protocolVersion, blocks: info.blocks, timeoffset: info.timeOffset,
        connections: info.connections, proxy: info.proxy, difficulty: info.difficulty, testnet: info.testnet,
        relayfee: info.relayFee, errors: info.errors, network: info.network,
      },
    });
  });

  // how far the index is along the node's chain: the node's tip as the primary last read it
  // (serve --rpc-url, or the blocks dir's with --blocks-dir); without one, 100
  router.add('GET', '/insight-api/sync', async () => {
    const tip = await store.getTip();
    const height = tip ? tip.height : -1;
    const target = app.node.tip ? app.node.tip.height : null;
    const percentage = Math.round(status.syncPercentage(height, target));
    return json({
      status: percentage >= 100 ? 'finished' : 'syncing', blockChainHeight: height, syncPercentage: percentage,
      height, error: null, type: 'bitcore node',
    });
  });

  // insight-api answers this with fixed values "to make insight ui happy"; so does addrindex
  router.add('GET', '/insight-api/peer', async () => json({ connected: true, host: '127.0.0.1', port: null }));

  router.add('GET', '/insight-api/version', async () => json({ version: INSIGHT_API_VERSION }));

  // insight-api fetched Bitstamp's price; this server asks no third party: 0, insight's own
  // answer when Bitstamp cannot be reached
  router.add('GET', '/insight-api/currency', async () => json({ status: 200, data: { bitstamp: 0 } }));

  router.add('GET', '/insight-api/utils/estimatefee', async (ctx) => {
    const targets = (ctx.query.get('nbBlocks') || '2').split(',');
    const out = {};
    for (const t of targets) {
      const n = parseInt(t, 10);
      out[n] = app.nodeClient ? await app.nodeClient.estimateFee(n) : status.NO_FEE_ESTIMATE;
    }
    return json(out);
  });

  const verify = (ctx) => {
    const body = ctx.body && typeof ctx.body === 'object' ? ctx.body : {};
    const pick = (n) => (body[n] !== undefined ? body[n] : ctx.query.get(n));
    const [address, signature, message] = ['address', 'signature', 'message'].map(pick);
    if (typeof address !== 'string' || typeof signature !== 'string' || typeof message !== 'string') {
      throw badRequest('ERR_BAD_PARAM', 'Missing parameters (expected "address", "signature" and "message")');
    }
    try {
      return json({ result: verifyMessage(address, signature, message, app.network) });
    } catch (err) {
      if (err instanceof AddressError || err.code === 'ERR_BAD_SIGNATURE') throw badRequest(err.code, err.message);
      throw err;
    }
  };
  router.add('GET', '/insight-api/messages/verify', async (ctx) => verify(ctx));
  router.add('POST', '/insight-api/messages/verify', async (ctx) => verify(ctx), { body: true });
}

module.exports = { register, INSIGHT_API_VERSION, BITCORE_NAMES };
