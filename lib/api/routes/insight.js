'use strict';

const { toDisplayHex } = require('../../chain/hash');
const { ApiError, badRequest } = require('../errors');
const validate = require('../validate');
const format = require('../format');
const { json } = require('../reply');

const { LIMITS } = validate;

/**
 * bitpay insight-api's address routes under /insight-api, with insight's field names
 * (misspelled `txApperances` included) and its habit of plain satoshi numbers on the
 * balance sub-routes. Routes that need transaction bodies answer 501.
 * @param {import('../router').Router} router
 * @param {import('../server').ApiApp} app
 */
function register(router, app) {
  const store = app.store;
  /** address → {scripthash, address (canonical), script hex} */
  const parse = (s) => {
    const t = validate.address(s, app.network);
    return { ...t, script: t.script.toString('hex') };
  };

  router.add('GET', '/insight-api/addr/:addr', async (ctx) => {
    const t = parse(ctx.params.addr);
    const noTxList = validate.integer(ctx.query.get('noTxList'), 'noTxList', { def: 0 }) > 0;
    const range = txRange(ctx.query);
    const { value } = await app.consistent(async () => {
      const summary = await store.getSummary(t.scripthash);
      const txids = noTxList ? undefined : summary ? await newestTxids(store, t.scripthash, range) : [];
      return { summary, txids };
    });
    return json(format.insightAddr(t.address, value.summary, value.txids));
  });

  // insight answers these with a bare number of satoshis
  const fields = { balance: 'balance', totalReceived: 'received', totalSent: 'sent' };
  for (const [route, field] of Object.entries(fields)) {
    router.add('GET', `/insight-api/addr/:addr/${route}`, async (ctx) => {
      const t = parse(ctx.params.addr);
      const { value } = await app.consistent(() => store.getSummary(t.scripthash));
      return json(value ? value[field] : 0);
    });
  }
  router.add('GET', '/insight-api/addr/:addr/unconfirmedBalance', async (ctx) => {
    parse(ctx.params.addr);
    return json(0); // no mempool in the index
  });

  router.add('GET', '/insight-api/addr/:addr/utxo', async (ctx) => json(await utxos(app, [parse(ctx.params.addr)])));

  router.add('GET', '/insight-api/addrs/:addrs/utxo', async (ctx) => json(await utxos(app, addrList(ctx.params.addrs, parse))));

  router.add('POST', '/insight-api/addrs/utxo', async (ctx) => {
    const body = ctx.body;
    const list = body && typeof body === 'object' ? body.addrs : undefined;
    if (typeof list !== 'string' && !Array.isArray(list)) {
      throw badRequest('ERR_BAD_BODY', 'the body needs "addrs": a comma-separated string or an array of addresses');
    }
    return json(await utxos(app, addrList(list, parse)));
  }, { body: true });

  const bodies = 'full transactions, which addrindex does not store: /insight-api/addr/:addr lists the txids ' +
    'and /api/v1/addresses/history gives several addresses\' merged history';
  router.add('GET', '/insight-api/addrs/:addrs/txs', async (ctx) => {
    addrList(ctx.params.addrs, parse);
    throw notImplemented(`this route answers ${bodies}`);
  });
  router.add('POST', '/insight-api/addrs/txs', async () => { throw notImplemented(`this route answers ${bodies}`); });
  router.add('GET', '/insight-api/txs', async () => { throw notImplemented(`this route answers ${bodies}`); });
  for (const route of ['/insight-api/tx/:txid', '/insight-api/rawtx/:txid']) {
    router.add('GET', route, async (ctx) => {
      validate.txid(ctx.params.txid);
      throw notImplemented('this route answers the transaction itself, which addrindex does not store: ' +
        'GET /api/v1/tx/:txid tells where it is confirmed');
    });
  }
}

/**
 * insight's `from`/`to` (both or neither): positions in the newest-first txid list.
 * @param {URLSearchParams} query
 * @returns {{from: number, to: number}}
 */
function txRange(query) {
  const from = validate.integer(query.get('from'), 'from', { max: LIMITS.insightDepth });
  const to = validate.integer(query.get('to'), 'to', { max: LIMITS.insightDepth });
  if (from === undefined || to === undefined) return { from: 0, to: LIMITS.insightTxids };
  if (to <= from || to - from > LIMITS.insightTxids) {
    throw badRequest('ERR_BAD_PARAM', `from and to must satisfy from < to <= from + ${LIMITS.insightTxids}`);
  }
  return { from, to };
}

/** The txids at positions [from, to) of the history, newest first. */
async function newestTxids(store, scripthash, { from, to }) {
  const entries = [];
  let cursor;
  while (entries.length < to) {
    const page = await store.getHistory(scripthash, { order: 'desc', limit: Math.min(LIMITS.pageMax, to - entries.length), cursor });
    entries.push(...page.entries);
    if (!page.next || page.entries.length === 0) break;
    cursor = page.next;
  }
  return entries.slice(from, to).map((e) => toDisplayHex(e.txid));
}

/**
 * insight's comma-separated address list (or an array), each parsed, duplicates dropped.
 * @returns {Array<{scripthash: Buffer, address: string, script: string}>}
 */
function addrList(list, parse) {
  const items = Array.isArray(list) ? list : String(list).split(',');
  if (items.length === 0 || (items.length === 1 && items[0] === '')) {
    throw badRequest('ERR_BAD_PARAM', 'no address given');
  }
  if (items.length > LIMITS.maxAddresses) {
    throw badRequest('ERR_TOO_MANY_ADDRESSES', `${items.length} addresses; the maximum is ${LIMITS.maxAddresses}`);
  }
  const seen = new Set();
  const out = [];
  items.forEach((item, i) => {
    let t;
    try {
      t = parse(item);
    } catch (err) {
      err.message = `address ${i + 1} of ${items.length}: ${err.message}`;
      throw err;
    }
    if (seen.has(t.address)) return;
    seen.add(t.address);
    out.push(t);
  });
  return out;
}

/** The UTXOs of every address, in address order then chain order, at most compatUtxoMax. */
async function utxos(app, targets) {
  const { tip, value } = await app.consistent(async () => {
    const all = [];
    for (const t of targets) {
      const room = LIMITS.compatUtxoMax - all.length;
      const page = await app.store.getUtxos(t.scripthash, { limit: room + 1 });
      if (page.utxos.length > room) {
        throw badRequest('ERR_TOO_MANY_UTXOS',
          `these addresses hold more than ${LIMITS.compatUtxoMax} unspent outputs, more than this route returns in one answer; ` +
          'page through them with GET /api/v1/address/:address/utxos');
      }
      for (const u of page.utxos) all.push({ t, u });
    }
    return all;
  });
  const height = tip ? tip.height : -1;
  return value.map(({ t, u }) => format.insightUtxo(u, t.address, t.script, height));
}

function notImplemented(message) {
  return new ApiError(501, 'ERR_NOT_IMPLEMENTED', message);
}

module.exports = { register };
