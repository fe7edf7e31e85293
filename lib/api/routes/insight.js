'use strict';

const { toDisplayHex } = require('../../chain/hash');
const { badRequest, notFound } = require('../errors');
const validate = require('../validate');
const format = require('../format');
const view = require('../insight-format');
const { storedBlockFacts } = require('../esplora-format');
const { json } = require('../reply');
const { broadcast } = require('./esplora');
const { mergeUtxos, unconfirmedBalance } = require('../../core/mempool-merge');

const { LIMITS } = validate;

/**
 * bitpay insight-api's address routes under /insight-api, with insight's field names
 * (misspelled `txApperances` included) and its habit of plain satoshi numbers on the
 * balance sub-routes. Transactions and blocks come from app.txdata (lib/api/txdata.js) in
 * insight-format.js's shapes: insight-api 0.4.3 over bitcore-node 3.1 and its patched node.
 * Unconfirmed transactions (the mempool view of the tip read, app.withMempool) come first in
 * every list, newest first, as bitcore-node put its mempool's before the confirmed ones.
 * @param {import('../router').Router} router
 * @param {import('../server').ApiApp} app
 */
function register(router, app) {
  const store = app.store;
  const data = app.txdata;
  /** address → {scripthash, address (canonical), script hex} */
  const parse = (s) => {
    const t = validate.address(s, app.network);
    return { ...t, script: t.script.toString('hex') };
  };

  router.add('GET', '/insight-api/addr/:addr', async (ctx) => {
    const t = parse(ctx.params.addr);
    const noTxList = validate.integer(ctx.query.get('noTxList'), 'noTxList', { def: 0 }) > 0;
    const range = txRange(ctx.query);
    const { value, view: pool } = await app.withMempool(async (tip, pool) => {
      const summary = await store.getSummary(t.scripthash);
      if (noTxList) return { summary, txids: undefined };
      const unconfirmed = pool ? pool.newest(t.scripthash) : [];
      const confirmed = summary ? await newestTxids(store, t.scripthash, shifted(range, unconfirmed.length)) : [];
      return { summary, txids: [...unconfirmed.slice(range.from, range.to).map((e) => toDisplayHex(e.tx.txid)), ...confirmed] };
    });
    return json(format.insightAddr(t.address, value.summary, value.txids, pool && pool.summary(t.scripthash)));
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
    const t = parse(ctx.params.addr);
    const { view: pool } = await app.withMempool(async () => null);
    return json(unconfirmedBalance(pool, t.scripthash));
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

  // ---- transactions ----

  const txJson = (f, tip, options) => view.insightTx(f.tx, {
    prevouts: f.prevouts, spends: f.spends, block: f.block, tipHeight: tip ? tip.height : -1, network: app.network, options,
    now: f.mempool ? f.mempool.time : undefined,
  });
  const full = { prevouts: true, spends: true };

  const anyTx = async (param, opts) => {
    const txid = validate.txid(param);
    // the mempool view is read only when needed: a miss, or spends asked for
    const r = await app.consistent((t) => data.anyTx(txid, { ...opts, tip: t }));
    if (!r.value) throw notFound('ERR_TX_NOT_FOUND', `transaction ${param} is neither in the index nor in its mempool`);
    return r;
  };

  router.add('GET', '/insight-api/tx/:txid', async (ctx) => {
    const { tip, value } = await anyTx(ctx.params.txid, full);
    return json(txJson(value, tip));
  });

  router.add('GET', '/insight-api/rawtx/:txid', async (ctx) => json({ rawtx: (await anyTx(ctx.params.txid, {})).value.tx.raw.toString('hex') }));

  // insight-api's broadcast: {"rawtx": hex} in, {"txid"} out
  router.add('POST', '/insight-api/tx/send', async (ctx) => {
    const body = ctx.body && typeof ctx.body === 'object' ? ctx.body : {};
    if (typeof body.rawtx !== 'string') throw badRequest('ERR_BAD_BODY', 'the body needs "rawtx": the transaction in hex');
    return json({ txid: await broadcast(app, body.rawtx.trim()) });
  }, { body: true });

  // insight's list of full transactions, 10 a page: a block's, or an address's newest first
  router.add('GET', '/insight-api/txs', async (ctx) => {
    const page = validate.integer(ctx.query.get('pageNum'), 'pageNum', { max: LIMITS.insightDepth / LIMITS.insightTxsPage, def: 0 });
    const start = page * LIMITS.insightTxsPage;
    const blockParam = ctx.query.get('block');
    const addrParam = ctx.query.get('address');
    if (blockParam) {
      const hash = validate.blockHash(blockParam);
      const { tip, value } = await app.consistent(async (t) => {
        const row = await store.getBlockByHash(hash);
        if (!row) return null;
        const txs = start < row.txCount ? await data.blockTxs(row, start, LIMITS.insightTxsPage, { ...full, tip: t }) : [];
        return { pagesTotal: Math.ceil(row.txCount / LIMITS.insightTxsPage), txs };
      });
      if (!value) throw notFound('ERR_BLOCK_NOT_FOUND', `block ${hash} is not in the index (the best chain it holds)`);
      return json({ pagesTotal: value.pagesTotal, txs: value.txs.map((f) => txJson(f, tip)) });
    }
    if (addrParam) {
      const t = parse(addrParam);
      const { tip, value } = await app.withMempool(async (at, pool) => {
        const { total, entries, unconfirmed } = await mergedWindow(store, pool, [t.scripthash], { from: start, to: start + LIMITS.insightTxsPage });
        const txs = await mergedTxs(data, pool, unconfirmed, entries, { ...full, tip: at, view: pool });
        return { pagesTotal: Math.ceil(total / LIMITS.insightTxsPage), txs };
      });
      return json({ pagesTotal: value.pagesTotal, txs: value.txs.map((f) => txJson(f, tip)) });
    }
    throw badRequest('ERR_BAD_PARAM', 'GET /insight-api/txs needs ?block=HASH or ?address=ADDRESS (and pageNum)');
  });

  /** /addrs/txs: from/to (query or body) over the merged history, insight's flags from the query. */
  const multiTxs = async (ctx, list) => {
    const targets = addrList(list, parse);
    const body = ctx.body && typeof ctx.body === 'object' ? ctx.body : {};
    const pick = (n) => (ctx.query.get(n) !== null ? ctx.query.get(n) : body[n]);
    const from = validate.integer(pick('from'), 'from', { max: LIMITS.insightDepth, def: 0 });
    const to = validate.integer(pick('to'), 'to', { max: LIMITS.insightDepth + LIMITS.insightTxsMax, def: from + LIMITS.insightTxsPage });
    if (to <= from || to - from > LIMITS.insightTxsMax) {
      throw badRequest('ERR_BAD_PARAM', `from and to must satisfy from < to <= from + ${LIMITS.insightTxsMax}`);
    }
    const flag = (n) => Boolean(parseInt(ctx.query.get(n) || body[n], 10));
    const options = { noAsm: flag('noAsm'), noScriptSig: flag('noScriptSig'), noSpent: flag('noSpent') };
    const { tip, value } = await app.withMempool(async (at, pool) => {
      const { total, entries, unconfirmed } = await mergedWindow(store, pool, targets.map((x) => x.scripthash), { from, to });
      return { total, txs: await mergedTxs(data, pool, unconfirmed, entries, { prevouts: true, spends: !options.noSpent, tip: at, view: pool }) };
    });
    return json({ totalItems: value.total, from, to: Math.min(to, value.total), items: value.txs.map((f) => txJson(f, tip, options)) });
  };
  router.add('GET', '/insight-api/addrs/:addrs/txs', (ctx) => multiTxs(ctx, ctx.params.addrs));
  router.add('POST', '/insight-api/addrs/txs', async (ctx) => {
    const body = ctx.body;
    const list = body && typeof body === 'object' ? body.addrs : undefined;
    if (typeof list !== 'string' && !Array.isArray(list)) {
      throw badRequest('ERR_BAD_BODY', 'the body needs "addrs": a comma-separated string or an array of addresses');
    }
    return multiTxs(ctx, list);
  }, { body: true });

  // ---- blocks ----

  const blockOr404 = async (hashParam, read) => {
    const hash = validate.blockHash(hashParam);
    const r = await app.consistent(async (tip) => {
      const row = await store.getBlockByHash(hash);
      return row ? read(row, tip) : null;
    });
    if (r.value === null) throw notFound('ERR_BLOCK_NOT_FOUND', `block ${hash} is not in the index (the best chain it holds)`);
    return r;
  };

  router.add('GET', '/insight-api/block/:blockhash', async (ctx) => {
    const { tip, value } = await blockOr404(ctx.params.blockhash, async (row) => {
      const [txids, chainwork, nextHash] = await Promise.all([
        store.getTxids(row.firstTxNum, row.txCount), app.chainwork.at(row.height), store.getBlockHash(row.height + 1),
      ]);
      return { row, txids, chainwork, nextHash };
    });
    const txids = [];
    for (let p = 0; p < value.txids.length; p += 32) txids.push(toDisplayHex(value.txids.subarray(p, p + 32)));
    return json(view.insightBlock(storedBlockFacts(value.row), {
      txids, height: value.row.height, tipHeight: tip.height, chainwork: value.chainwork, nextHash: value.nextHash,
    }));
  });

  router.add('GET', '/insight-api/rawblock/:blockhash', async (ctx) => {
    const { value } = await blockOr404(ctx.params.blockhash, (row) => data.rawBlock(row));
    return json({ rawblock: value.toString('hex') });
  });

  router.add('GET', '/insight-api/block-index/:height', async (ctx) => {
    const height = validate.integer(ctx.params.height, 'height', { max: 0xffffffff });
    const hash = await store.getBlockHash(height);
    if (!hash) throw notFound('ERR_BLOCK_NOT_FOUND', `the index holds no block at height ${height}`);
    return json({ blockHash: hash });
  });
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

/**
 * The part of a [from, to) window over (mempool, then confirmed) that falls in the confirmed
 * list, given `unconfirmed` mempool entries before it.
 */
function shifted({ from, to }, unconfirmed) {
  return { from: Math.max(0, from - unconfirmed), to: Math.max(0, to - unconfirmed) };
}

/** The txids at positions [from, to) of the history, newest first. */
async function newestTxids(store, scripthash, range) {
  return (await newestEntries(store, scripthash, range)).map((e) => toDisplayHex(e.txid));
}

/** The entries at positions [from, to) of one history, newest first. */
async function newestEntries(store, scripthash, { from, to }) {
  const entries = [];
  let cursor;
  while (entries.length < to) {
    const page = await store.getHistory(scripthash, { order: 'desc', limit: Math.min(LIMITS.pageMax, to - entries.length), cursor });
    entries.push(...page.entries);
    if (!page.next || page.entries.length === 0) break;
    cursor = page.next;
  }
  return entries.slice(from, to);
}

/**
 * Positions [from, to) of several addresses' merged history in bitcore-node's order, and its
 * length: the mempool's transactions first, newest first, then the confirmed ones.
 * @param {import('../../stores/abstract').AbstractStore} store
 * @param {import('../../core/mempool').MempoolView|null} pool
 * @returns {Promise<{total: number, unconfirmed: import('../../codec/mempool').MempoolTx[],
 *   entries: import('../../stores/abstract').HistoryEntry[]}>} the window's mempool transactions, then its confirmed entries
 */
async function mergedWindow(store, pool, scripthashes, { from, to }) {
  const mine = pool ? pool.newestOf(scripthashes) : [];
  const chain = await confirmedWindow(store, scripthashes, shifted({ from, to }, mine.length));
  return { total: mine.length + chain.total, unconfirmed: mine.slice(from, to), entries: chain.entries };
}

/** The transactions of a window: the mempool's, then the confirmed ones. */
async function mergedTxs(data, pool, unconfirmed, entries, opts) {
  const [m, c] = await Promise.all([
    Promise.all(unconfirmed.map((t) => data.unconfirmed(pool, t.txid, opts))),
    data.txs(entries.map((e) => e.txid), opts),
  ]);
  return [...m, ...c];
}

/**
 * Positions [from, to) of several addresses' merged confirmed history in bitcore-node's order,
 * and its length. One address: newest first in chain order, as the patched node's address
 * index kept it. Several: the node merged them into a set ordered by (height, txid as hex) and
 * bitcore-node reversed it, so ties within a block go by txid, descending. The whole merged
 * history is read for its length (bitcore-node read every txid too), up to insightDepth.
 * @returns {Promise<{total: number, entries: import('../../stores/abstract').HistoryEntry[]}>}
 */
async function confirmedWindow(store, scripthashes, { from, to }) {
  if (scripthashes.length === 1) {
    const summary = await store.getSummary(scripthashes[0]);
    const total = summary ? summary.txCount : 0;
    return { total, entries: from < total ? await newestEntries(store, scripthashes[0], { from, to }) : [] };
  }
  const all = [];
  let cursor;
  do {
    const page = await store.getHistories(scripthashes, { order: 'desc', limit: LIMITS.multiPageMax, cursor });
    for (const e of page.entries) all.push(e);
    if (all.length > LIMITS.insightDepth) {
      throw badRequest('ERR_HISTORY_TOO_LONG',
        `these addresses have more than ${LIMITS.insightDepth} transactions together, more than this route reads; ` +
        'page through them with POST /api/v1/addresses/history');
    }
    cursor = page.next;
  } while (cursor);
  const keyed = all.map((e) => ({ e, txid: toDisplayHex(e.txid) }));
  keyed.sort((a, b) => b.e.height - a.e.height || (a.txid < b.txid ? 1 : a.txid > b.txid ? -1 : 0));
  return { total: keyed.length, entries: keyed.slice(from, to).map((k) => k.e) };
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

/**
 * The UTXOs of every address, in address order; for each, as bitcore-node listed them, the
 * mempool's outputs no mempool transaction spends (newest first, `confirmations: 0`), then
 * the confirmed ones no mempool transaction spends in chain order; at most compatUtxoMax.
 */
async function utxos(app, targets) {
  const tooMany = () => badRequest('ERR_TOO_MANY_UTXOS',
    `these addresses hold more than ${LIMITS.compatUtxoMax} unspent outputs, more than this route returns in one answer; ` +
    'page through them with GET /api/v1/address/:address/utxos');
  const { tip, value } = await app.withMempool(async (at, pool) => {
    const all = [];
    for (const t of targets) {
      const mine = pool ? mergeUtxos(pool, t.scripthash, []).unconfirmed.sort((a, b) => pool.newer(a.tx, b.tx)) : [];
      for (const u of mine) all.push({ t, u: { txid: u.tx.txid, vout: u.vout, value: u.value }, time: u.tx.time });
      const room = LIMITS.compatUtxoMax - all.length;
      const page = await app.store.getUtxos(t.scripthash, { limit: Math.max(0, room) + 1 });
      if (page.utxos.length > room) throw tooMany();
      for (const u of mergeUtxos(pool, t.scripthash, page.utxos).confirmed) all.push({ t, u });
    }
    return all;
  });
  const height = tip ? tip.height : -1;
  return value.map(({ t, u, time }) => (time === undefined ? format.insightUtxo(u, t.address, t.script, height) : format.insightMempoolUtxo(u, t.address, t.script, time)));
}

module.exports = { register };
