'use strict';

const { ApiError, badRequest, notFound } = require('../errors');
const { json, rawJson } = require('../reply');
const { decodeAddress } = require('../../chain/address');
const { fromDisplayHex, sha256 } = require('../../chain/hash');
const { NodeError } = require('../../errors');
const { signedMessage, verifySignature } = require('../bitcore8/auth');
const { V8Reads } = require('../bitcore8/reads');
const { walletTransactions } = require('../bitcore8/wallet-txs');
const S = require('../bitcore8/shapes');

/**
 * bitcore-node v8's REST API (its routes/api/*.ts, as of 8.25.47) under /api/BTC/:network, so
 * bitcore-client, bitcore-wallet-service's v8 explorer and bitcore's explorers run unchanged on
 * the index: blocks, transactions, addresses and their coins, /valid, /fee, POST /tx/send
 * through the node, and wallets (sets of addresses kept in the index's own store, each request
 * signed with the wallet's key). Shapes: lib/api/bitcore8/shapes.js; docs/API.md lists every
 * route and where addrindex answers otherwise than bitcore-node.
 *
 * Errors keep bitcore's status codes and carry the JSON error body of every other route.
 * @param {import('../router').Router} router
 * @param {import('../server').ApiApp} app
 */
function register(router, app) {
  const store = app.store;
  const reads = new V8Reads(app);
  // the live feed (bitcore8/feed.js) reads as the routes do
  app.bitcore8 = reads;
  const base = '/api/BTC/:network';
  const ours = reads.network;

  /** Every route checks the network first: another one is not served here. */
  const route = (method, path, handler, meta) => router.add(method, `${base}${path}`, async (ctx) => {
    if (ctx.params.network !== ours) {
      throw notFound('ERR_NETWORK', `this server indexes BTC ${ours}, not ${ctx.params.network} (try /api/BTC/${ours})`);
    }
    return handler(ctx);
  }, meta);

  const tipJson = async (tip) => {
    const row = tip && (await store.getBlock(tip.height));
    return row ? { ...(await reads.blockJson(row)), processed: true } : null;
  };

  // ---- blocks -------------------------------------------------------------------------

  route('GET', '/block/tip', async () => {
    const { value } = await app.consistent((tip) => tipJson(tip));
    if (!value) throw notFound('ERR_BLOCK_NOT_FOUND', 'the index holds no blocks yet');
    return json(value);
  });

  const rowOf = async (blockId) => {
    if (/^[0-9a-fA-F]{64}$/.test(blockId)) return store.getBlockByHash(blockId.toLowerCase());
    if (/^(0|[1-9][0-9]{0,8})$/.test(blockId)) return store.getBlock(Number(blockId));
    throw badRequest('ERR_BLOCK_ID', `"${blockId}" is neither a block hash (64 hex digits) nor a height`);
  };

  route('GET', '/block/:blockId', async (ctx) => {
    const { value } = await app.consistent(async (tip) => {
      const row = await rowOf(ctx.params.blockId);
      return row ? { ...(await reads.blockJson(row)), confirmations: tip.height - row.height + 1 } : null;
    });
    if (!value) throw notFound('ERR_BLOCK_NOT_FOUND', 'block not found');
    return json(value);
  });

  route('GET', '/block/before-time/:time', async (ctx) => {
    const ms = Date.parse(ctx.params.time);
    if (Number.isNaN(ms)) throw badRequest('ERR_BAD_TIME', `"${ctx.params.time}" is not a date`);
    const { value } = await app.consistent(async () => {
      const height = await reads.times.lastAtOrBefore(ms);
      const row = height >= 0 && (await store.getBlock(height));
      return row ? { ...(await reads.blockJson(row)), processed: true } : null;
    });
    if (!value) throw notFound('ERR_BLOCK_NOT_FOUND', 'block not found');
    return json(value);
  });

  route('GET', '/block/:blockId/fee', async (ctx) => {
    const { value } = await app.consistent(async (tip) => {
      const row = ctx.params.blockId === 'tip' ? tip && (await store.getBlock(tip.height)) : await rowOf(ctx.params.blockId);
      if (!row) return null;
      if (row.txCount <= 1) return { feeTotal: 0, mean: 0, median: 0, mode: 0 };
      const txs = await app.txdata.blockTxs(row, 1, row.txCount - 1, { prevouts: true });
      return blockFees(txs);
    });
    if (!value) throw notFound('ERR_BLOCK_NOT_FOUND', `block not found with id ${ctx.params.blockId}`);
    return json(value);
  });

  route('GET', '/block/:blockHash/coins/:limit/:pgnum', async (ctx) => {
    const { blockHash } = ctx.params;
    const limit = Math.min(500, positive(ctx.params.limit, 'limit'));
    const page = positive(ctx.params.pgnum, 'pgnum');
    const { value } = await app.withMempool(async (tip, pool) => {
      const row = /^[0-9a-fA-F]{64}$/.test(blockHash) ? await store.getBlockByHash(blockHash.toLowerCase()) : null;
      if (!row) return null;
      // as bitcore: a block with fewer transactions than a page is one page, whatever pgnum says
      const start = row.txCount < limit ? 0 : limit * (page - 1);
      const count = row.txCount < limit ? row.txCount : Math.max(0, Math.min(limit, row.txCount - start));
      const txs = count ? await app.txdata.blockTxs(row, start, count, { prevouts: true, spends: true, tip, view: pool }) : [];
      const inputs = [];
      const outputs = [];
      for (const full of txs) {
        const coins = await reads.txCoins(full, pool);
        inputs.push(...coins.inputs);
        outputs.push(...coins.outputs);
      }
      return {
        txids: txs.map((f) => f.tx.hash), inputs, outputs,
        previous: page !== 1 ? `/block/${blockHash}/coins/${limit}/${page - 1}` : '',
        next: row.txCount - limit * page > 0 ? `/block/${blockHash}/coins/${limit}/${page + 1}` : '',
      };
    });
    if (!value) throw notFound('ERR_BLOCK_NOT_FOUND', 'block not found');
    return json(value);
  });

  route('GET', '/block', async (ctx) => {
    const q = ctx.query;
    const limit = q.get('limit') ? positive(q.get('limit'), 'limit') : 10;
    const { value } = await app.consistent(async (tip) => {
      if (!tip) return [];
      let hi = tip.height;
      let lo = 0;
      if (q.get('sinceBlock') !== null) lo = Math.max(lo, integerParam(q.get('sinceBlock'), 'sinceBlock') + 1);
      const date = q.get('date');
      if (date !== null) {
        // blocks whose own time falls in the day after `date` (bitcore's query on `time`)
        const from = Date.parse(date);
        if (Number.isNaN(from)) throw badRequest('ERR_BAD_TIME', `"${date}" is not a date`);
        return blocksInTimes(from, from + 86400000, limit);
      }
      const ascending = q.get('paging') === 'height' && q.get('direction') === '1';
      const since = q.get('paging') === 'height' && q.get('since') !== null ? integerParam(q.get('since'), 'since') : null;
      if (since !== null) {
        if (ascending) lo = Math.max(lo, since + 1);
        else hi = Math.min(hi, since - 1);
      }
      const heights = [];
      for (let h = ascending ? lo : hi; ascending ? h <= hi : h >= lo; h += ascending ? 1 : -1) {
        if (heights.length === limit) break;
        heights.push(h);
      }
      return Promise.all(heights.map(async (h) => reads.blockJson(await reads.blocks()(h))));
    });
    return rawJson(S.jsonLines(value));
  });

  /** Blocks (newest first) whose time is in [fromMs, toMs). */
  const blocksInTimes = async (fromMs, toMs, limit) => {
    const tip = await store.getTip();
    const out = [];
    // normalized times bound where the raw ones may lie: a block's time is at most its normalized one
    const last = await reads.times.lastAtOrBefore(toMs + 2 * 3600 * 1000);
    for (let h = Math.min(last, tip.height); h >= 0 && out.length < limit; h--) {
      const row = await store.getBlock(h);
      const t = row.time * 1000;
      if (t >= fromMs && t < toMs) out.push(await reads.blockJson(row));
      if ((await reads.normalizedMs(h)) < fromMs - 2 * 3600 * 1000) break;
    }
    return out;
  };

  // ---- transactions -------------------------------------------------------------------

  route('GET', '/tx', async (ctx) => {
    const q = ctx.query;
    if (q.get('blockHash') === null && q.get('blockHeight') === null) throw badRequest('ERR_MISSING_PARAM', 'Must provide blockHash or blockHeight');
    const limit = q.get('limit') ? positive(q.get('limit'), 'limit') : Infinity;
    const { value } = await app.consistent(async (tip) => {
      const row = q.get('blockHash') !== null ? await store.getBlockByHash(String(q.get('blockHash')).toLowerCase())
        : await store.getBlock(integerParam(q.get('blockHeight'), 'blockHeight'));
      if (!row || (q.get('blockHeight') !== null && q.get('blockHash') !== null && String(row.height) !== q.get('blockHeight'))) return [];
      const count = Math.min(row.txCount, limit);
      const fulls = await app.txdata.blockTxs(row, 0, count, { prevouts: true });
      const blockAt = reads.blocks();
      return Promise.all(fulls.map((f) => reads.txJsonOf(f, tip, blockAt)));
    });
    return rawJson(S.jsonLines(value));
  });

  route('GET', '/tx/:txid', async (ctx) => {
    const txid = txidParam(ctx.params.txid);
    const { value } = await app.withMempool((tip, pool) => reads.tx(txid, tip, pool));
    if (!value) throw notFound('ERR_TX_NOT_FOUND', `The requested txid ${ctx.params.txid} could not be found.`);
    return json(value.json);
  });

  route('GET', '/tx/:txid/populated', async (ctx) => {
    const txid = txidParam(ctx.params.txid);
    const { value } = await app.withMempool(async (tip, pool) => {
      const t = await reads.tx(txid, tip, pool);
      return t && { ...t.json, coins: await reads.txCoins(t.full, pool) };
    });
    if (!value) throw notFound('ERR_TX_NOT_FOUND', `The requested txid ${ctx.params.txid} could not be found.`);
    return json(value);
  });

  route('GET', '/tx/:txid/coins', async (ctx) => {
    const txid = txidParam(ctx.params.txid);
    const { value } = await app.withMempool(async (tip, pool) => {
      const t = await reads.tx(txid, tip, pool);
      return t && reads.txCoins(t.full, pool);
    });
    if (!value) throw notFound('ERR_TX_NOT_FOUND', `No such transaction ${ctx.params.txid}`);
    return json(value);
  });

  route('POST', '/tx/send', async (ctx) => {
    const node = app.requireNode('broadcasting');
    const body = parseJson(ctx.body);
    const raw = body && body.rawTx;
    const list = typeof raw === 'string' ? [raw] : raw;
    if (!Array.isArray(list) || list.length === 0 || !list.every((r) => typeof r === 'string' && /^([0-9a-fA-F]{2})+$/.test(r))) {
      throw badRequest('ERR_BAD_BODY', 'the body must be {"rawTx": "<hex>"} (or a list of hex transactions)');
    }
    const txids = [];
    for (const r of list) {
      try {
        txids.push(await node.broadcast(r));
      } catch (err) {
        // bitcore-node answers the node's refusal with a 500 and the node's words
        if (err instanceof NodeError && err.code === 'ERR_NODE_REJECTED') throw new ApiError(500, 'ERR_NODE_REJECTED', err.message);
        throw err;
      }
    }
    return json({ txid: txids.length === 1 ? txids[0] : txids });
  }, { body: 'raw' });

  // ---- addresses ----------------------------------------------------------------------

  const addressTarget = (str) => {
    const d = decodeAddress(str, app.network);
    return { scripthash: d.scripthash, script: d.script };
  };

  const coinsRoute = async (ctx) => {
    const target = addressTarget(ctx.params.address);
    const q = ctx.query;
    const limit = q.get('limit') ? positive(q.get('limit'), 'limit') : 10;
    const since = q.get('since') !== null && /^[0-9a-f]{24}$/.test(q.get('since')) ? q.get('since') : null;
    const unspent = q.get('unspent') === 'true';
    const { value } = await app.withMempool((tip, pool) => reads.addressCoins(target, { unspent, limit, since }, tip, pool));
    return rawJson(S.jsonLines(value.map((c) => reads.coinJson(c))));
  };
  route('GET', '/address/:address', coinsRoute);
  route('GET', '/address/:address/txs', coinsRoute);
  route('GET', '/address/:address/coins', coinsRoute);

  route('GET', '/address/:address/balance', async (ctx) => {
    const target = addressTarget(ctx.params.address);
    const { value } = await app.withMempool((tip, pool) => reads.balance([target.scripthash], pool));
    return json(value);
  });

  // ---- what an input is, fees ---------------------------------------------------------

  route('GET', '/valid/:input', async (ctx) => json(validInput(ctx.params.input, app.network)));

  route('GET', '/fee/:target', async (ctx) => {
    const target = Number(ctx.params.target);
    if (!Number.isInteger(target) || target < 0 || target > 100) throw badRequest('ERR_BAD_TARGET', 'invalid target specified');
    const node = app.requireNode('fee estimates');
    const r = target >= 1 ? await node.fees.estimate(target) : { btcPerKvB: null };
    // the node's estimatesmartfee answer, as bitcore passes it on, its "no estimate" included
    if (r.btcPerKvB === null) return json({ errors: ['Insufficient data or no feerate found'], blocks: target });
    return json({ feerate: r.btcPerKvB, blocks: r.blocks });
  });

  // ---- wallets ------------------------------------------------------------------------

  const writer = app.walletWriter;

  route('POST', '/wallet', async (ctx) => {
    const body = parseJson(ctx.body);
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('ERR_BAD_BODY', 'the body must be a JSON object {name, pubKey, path}');
    const { name, pubKey, path, singleAddress } = body;
    for (const [k, v] of Object.entries({ name, pubKey, path, singleAddress })) {
      if (v !== undefined && v !== null && String(v).length >= 255) throw new ApiError(413, 'ERR_TOO_LONG', `String length exceeds limit (${k})`);
    }
    if (typeof pubKey !== 'string' || typeof name !== 'string') throw badRequest('ERR_BAD_BODY', 'a wallet needs "name" and "pubKey" (strings)');
    const r = await writer.createWallet({ pubKey, name, path: typeof path === 'string' ? path : null, singleAddress, chain: S.CHAIN, network: ours });
    if (!r.created) return json('Wallet already exists');
    const w = S.walletJson(r.wallet);
    const { _id: id, ...rest } = w;
    return json({ ...rest, _id: id });
  }, { body: 'raw' });

  /**
   * The wallet a request names, once its signature is checked (bitcore's authenticateMiddleware):
   * no such wallet 404, a missing or bad signature 401.
   */
  const authenticated = async (ctx) => {
    const wallet = await store.getWallet(ctx.params.pubKey);
    let body;
    try {
      body = ctx.body === undefined || ctx.body.length === 0 ? undefined : JSON.parse(ctx.body.toString('utf8'));
    } catch {
      body = null; // bitcore-node fails a body it cannot parse as it fails a bad signature
    }
    if (!wallet) throw notFound('ERR_WALLET_NOT_FOUND', 'Wallet not found');
    if (body === null || !verifySignature(signedMessage(ctx.req.method, ctx.req.url, body), wallet.pubKey, ctx.req.headers['x-signature'])) {
      throw new ApiError(401, 'ERR_AUTH', 'Authentication failed');
    }
    return { wallet, body };
  };

  const walletHashes = async (wallet) => {
    const list = await reads.walletAddresses(wallet);
    return { list, hashes: list.map((a) => a.scripthash) };
  };

  route('GET', '/wallet/:pubKey', async (ctx) => json(S.walletJson((await authenticated(ctx)).wallet)), { body: 'raw' });

  route('POST', '/wallet/:pubKey', async (ctx) => {
    const { wallet, body } = await authenticated(ctx);
    if (!Array.isArray(body)) throw badRequest('ERR_BAD_BODY', 'the body must be a JSON array of {"address": "..."}');
    const entries = [];
    for (const line of body) {
      if (!line || !line.address) continue;
      let d = null;
      try {
        d = typeof line.address === 'string' && line.address.length < 255 ? decodeAddress(line.address, app.network) : null;
      } catch {
        d = null;
      }
      if (!d) throw new ApiError(413, 'ERR_INVALID_ADDRESS', 'Invalid address');
      entries.push({ address: line.address, scripthash: d.scripthash });
    }
    await writer.addWalletAddresses(wallet.pubKey, entries);
    // bitcore-node answers with an empty body (newlines while it works)
    return { status: 200, type: 'text/plain; charset=utf-8', body: Buffer.alloc(0) };
  }, { body: 'raw' });

  route('GET', '/wallet/:pubKey/addresses', async (ctx) => {
    const { wallet } = await authenticated(ctx);
    const list = await reads.walletAddresses(wallet);
    return rawJson(S.jsonLines(list.map((a) => ({ address: a.address }))));
  }, { body: 'raw' });

  route('GET', '/wallet/:pubKey/addresses/missing', async (ctx) => {
    const { wallet } = await authenticated(ctx);
    const { hashes } = await walletHashes(wallet);
    const { value } = await app.consistent(() => missingAddresses(reads, wallet, hashes));
    return ndjson(value);
  }, { body: 'raw' });

  route('GET', '/wallet/:pubKey/check', async (ctx) => {
    const { wallet } = await authenticated(ctx);
    const list = await reads.walletAddresses(wallet);
    let sum = 0;
    for (const a of list) {
      let s = 0;
      for (const byte of Buffer.from(a.address)) s = (s + byte) % Number.MAX_SAFE_INTEGER;
      sum = (sum + s) % Number.MAX_SAFE_INTEGER;
    }
    return json({ lastAddress: list.length ? list[list.length - 1].address : undefined, sum });
  }, { body: 'raw' });

  route('GET', '/wallet/:pubKey/balance', async (ctx) => {
    const { wallet } = await authenticated(ctx);
    const { hashes } = await walletHashes(wallet);
    const { value } = await app.withMempool((tip, pool) => reads.balance(hashes, pool));
    return json(value);
  }, { body: 'raw' });

  route('GET', '/wallet/:pubKey/balance/:time', async (ctx) => {
    const { wallet } = await authenticated(ctx);
    const ms = Date.parse(ctx.params.time);
    if (Number.isNaN(ms)) throw badRequest('ERR_BAD_TIME', `"${ctx.params.time}" is not a date`);
    const { hashes } = await walletHashes(wallet);
    const { value } = await app.withMempool((tip, pool) => reads.balanceAt(hashes, ms, tip, pool));
    return json(value || { confirmed: 0, unconfirmed: 0, balance: 0 });
  }, { body: 'raw' });

  route('GET', '/wallet/:pubKey/utxos', async (ctx) => {
    const { wallet } = await authenticated(ctx);
    const q = ctx.query;
    const limit = q.get('limit') ? positive(q.get('limit'), 'limit') : Infinity;
    const includeSpent = q.get('includeSpent') === 'true';
    const { list, hashes } = await walletHashes(wallet);
    const { value } = await app.withMempool(async (tip, pool) => {
      const blockAt = reads.blocks();
      const coins = [];
      // one read says which addresses have coins a block made and none spent: only those are read
      const summaries = hashes.length ? await store.getSummaries(hashes, { view: 'script' }) : [];
      for (let i = 0; i < list.length; i++) {
        const a = list[i];
        const s = summaries[i];
        if (includeSpent) {
          if (s) await reads.historyCoins(a.scripthash, pool, tip, (c) => { coins.push(c); return false; });
        } else if (s && s.utxoCount > 0) {
          const { script, shown } = reads.scriptOf(a);
          for (const c of await reads.utxoCoins(a.scripthash, script, pool, blockAt, shown)) if (c.spentHeight === -2) coins.push(c);
        }
        if (pool) for (const c of await reads.mempoolCoins(a.scripthash, pool)) if (includeSpent || c.spentHeight === -2) coins.push(c);
      }
      // bitcore's natural order: as the coins were made
      coins.sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
      return coins.slice(0, limit).map((c) => reads.coinJson(c, c.mintHeight >= 0 && tip ? tip.height - c.mintHeight + 1 : 0));
    });
    return rawJson(S.jsonLines(value));
  }, { body: 'raw' });

  route('GET', '/wallet/:pubKey/transactions', async (ctx) => {
    const { wallet } = await authenticated(ctx);
    const q = ctx.query;
    const range = {};
    let mempool = true;
    if (q.get('startBlock') || q.get('endBlock')) {
      if (q.get('startBlock')) range.fromHeight = integerParam(q.get('startBlock'), 'startBlock');
      if (q.get('endBlock')) range.toHeight = integerParam(q.get('endBlock'), 'endBlock');
      mempool = q.get('includeMempool') === 'true';
    } else if (q.get('startDate') || q.get('endDate')) {
      // blocks whose normalized time is in [startDate, endDate); mempool transactions have none
      mempool = false;
      const start = q.get('startDate') ? Date.parse(q.get('startDate')) : NaN;
      const end = q.get('endDate') ? Date.parse(q.get('endDate')) : NaN;
      if (!Number.isNaN(start)) range.fromHeight = (await reads.times.lastAtOrBefore(start - 1)) + 1;
      if (!Number.isNaN(end)) range.toHeight = await reads.times.lastAtOrBefore(end - 1);
      if (range.toHeight !== undefined && range.toHeight < (range.fromHeight || 0)) return ndjson([]);
    }
    if (q.get('limit')) range.limit = positive(q.get('limit'), 'limit');
    if (q.get('cursor')) range.cursor = q.get('cursor');
    const { hashes } = await walletHashes(wallet);
    const { value } = await app.withMempool((tip, pool) => walletTransactions(reads, hashes, { ...range, mempool }, tip, pool));
    return ndjson(value.lines, value.next ? { 'x-next-cursor': value.next } : undefined);
  }, { body: 'raw' });
}

/** One JSON document a line (bitcore's StringifyJsonStream and ListTransactionsStream). */
function ndjson(items, headers) {
  const reply = { status: 200, type: 'application/x-ndjson; charset=utf-8', body: Buffer.from(items.map((x) => `${JSON.stringify(x)}\n`).join('')) };
  if (headers) reply.headers = headers;
  return reply;
}

function parseJson(buf) {
  if (!buf || buf.length === 0) return undefined;
  try {
    return JSON.parse(buf.toString('utf8'));
  } catch (err) {
    throw badRequest('ERR_BAD_JSON', `the body is not valid JSON: ${err.message}`);
  }
}

function positive(s, name) {
  if (!/^[0-9]{1,9}$/.test(String(s)) || Number(s) < 1) throw badRequest('ERR_BAD_PARAM', `"${name}" must be a positive integer`);
  return Number(s);
}

function integerParam(s, name) {
  if (!/^-?[0-9]{1,10}$/.test(String(s))) throw badRequest('ERR_BAD_PARAM', `"${name}" must be an integer`);
  return Number(s);
}

function txidParam(s) {
  if (!/^[0-9a-fA-F]{64}$/.test(s)) throw badRequest('ERR_BAD_TXID', 'Missing required param: a txid is 64 hex digits');
  return fromDisplayHex(s.toLowerCase());
}

/**
 * bitcore's /valid: a block hash or txid (64 hex digits), an address of this network (a
 * "bitcoin:" URI's too), a block height (anything JavaScript's isFinite takes), else invalid.
 */
function validInput(input, network) {
  if (/^[0-9a-fA-F]{64}$/.test(input)) return { isValid: true, type: 'blockOrTx' };
  const addr = input.replace(/^(bitcoincash:|bchtest:|bitcoin:)/i, '').replace(/\?.*/, '') || input;
  try {
    decodeAddress(addr, network);
    return { isValid: true, type: 'addr' };
  } catch {
    // not an address: a height?
  }
  // eslint-disable-next-line no-restricted-globals
  if (isFinite(input)) return { isValid: true, type: 'blockOrTx' };
  return { isValid: false, type: 'invalid' };
}

/** bitcore's /block/:id/fee from a block's transactions but its coinbase (with prevouts). */
function blockFees(fulls) {
  const rates = [];
  let feeTotal = 0;
  const freq = new Map();
  let mode = 0;
  let maxCount = 0;
  for (const f of fulls) {
    const fee = f.prevouts.reduce((n, p) => n + p.value, 0) - f.tx.outputs.reduce((n, o) => n + o.value, 0);
    const rate = fee && f.tx.size ? fee / f.tx.size : 0;
    rates.push(rate);
    feeTotal += fee;
    const c = (freq.get(rate) || 0) + 1;
    freq.set(rate, c);
    if (c > maxCount) {
      mode = rate;
      maxCount = c;
    }
  }
  const mean = rates.reduce((a, b) => a + b, 0) / rates.length;
  rates.sort((a, b) => a - b);
  const m = rates.length >> 1;
  const median = rates.length % 2 ? rates[m] : (rates[m - 1] + rates[m]) / 2;
  return { feeTotal, mean, median, mode };
}

/**
 * bitcore's /addresses/missing: for each transaction spending the wallet's coins, the coins it
 * spends that the wallet lacks; then the totals. NDJSON.
 */
async function missingAddresses(reads, wallet, hashes) {
  const mine = new Set(hashes.map((h) => h.latin1Slice(0, 32)));
  const lines = [];
  const all = [];
  let total = 0;
  const blockAt = reads.blocks();
  await reads.eachHistory(hashes, {}, async (entries) => {
    const spending = entries.filter((e) => e.spent);
    const fulls = await reads.app.txdata.txs(spending.map((e) => e.txid), { prevouts: true });
    for (const f of fulls) {
      const missing = [];
      for (let i = 0; i < f.tx.inputs.length; i++) {
        const p = f.prevouts[i];
        if (mine.has(sha256(p.script).latin1Slice(0, 32))) continue;
        const input = f.tx.inputs[i];
        const mint = await reads.mintOf(input.txid, null, blockAt);
        const address = S.coinAddress(p.script, reads.net);
        const holders = (await reads.store.getWalletsOf([sha256(p.script)]))[0];
        missing.push({ _id: S.confirmedId(mint.txNum, input.vout), wallets: holders.map((w) => w.id), address, value: p.value, expected: wallet.id });
        all.push(address);
        total += p.value;
      }
      if (missing.length) lines.push({ txid: f.tx.hash, missing });
    }
  });
  lines.push({ allMissingAddresses: all, totalMissingValue: total });
  return lines;
}

module.exports = { register, validInput };
