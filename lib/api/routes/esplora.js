'use strict';

const { ApiError, badRequest, notFound } = require('../errors');
const validate = require('../validate');
const format = require('../format');
const view = require('../esplora-format');
const { json, text, binary, rawJson } = require('../reply');
const { moved } = require('../txdata');
const { txKey } = require('../json-cache');
const { toDisplayHex } = require('../../chain/hash');
const { parseTransaction } = require('../../chain/tx');
const { ParseError } = require('../../errors');
const { mergeUtxos } = require('../../core/mempool-merge');

const { LIMITS } = validate;
const HEX64 = /^[0-9a-fA-F]{64}$/;
const DECIMAL = /^[0-9]+$/;

/**
 * Esplora's routes under /api/, shaped as mempool/electrs (blockstream.info, mempool.space)
 * answers them, so Esplora clients (@mempool/mempool.js, BDK, wallets) work unchanged.
 * Script hashes here are Esplora's: sha256 of the script in natural byte order (not
 * Electrum's reversed form the native API uses). Transactions and blocks are read from the
 * blocks dir through app.txdata (lib/api/txdata.js); the JSON is esplora-format.js's.
 *
 * Unconfirmed transactions come from the mempool view that goes with the tip a read began at
 * (app.withMempool: the stored snapshot, paired by lib/mempool/reader.js's rule); without one
 * every answer is the confirmed one, as if the mempool were empty. Broadcasts and fee
 * estimates go through the node (app.requireNode: 503 without one).
 * @param {import('../router').Router} router
 * @param {import('../server').ApiApp} app
 */
function register(router, app) {
  const store = app.store;
  const data = app.txdata;
  const txJson = (f) => view.esploraTx(f.tx, { prevouts: f.prevouts, block: f.block, network: app.network });
  /** A confirmed transaction's JSON, from the cache or made and kept (it never changes: json-cache.js). */
  const txString = (f) => {
    const s = JSON.stringify(txJson(f));
    app.txJson.set(txKey(f.loc), s);
    return s;
  };
  /** The JSON of transactions at these locations, reading only those not cached. */
  const txStrings = async (locs) => {
    const out = locs.map((loc) => app.txJson.get(txKey(loc)));
    const missing = [];
    out.forEach((s, i) => { if (s === undefined) missing.push(i); });
    const fulls = await Promise.all(missing.map((i) => data.at(locs[i], { prevouts: true })));
    fulls.forEach((f, j) => { out[missing[j]] = txString(f); });
    return out;
  };
  const list = (strings) => rawJson(Buffer.from(`[${strings.join(',')}]`));
  /** A mempool transaction's JSON (not kept: a snapshot lives seconds, and its parse is kept per view). */
  const mempoolString = async (pool, txid) => JSON.stringify(txJson(await data.unconfirmed(pool, txid, { prevouts: true })));

  const families = [
    { kind: 'address', param: 'address', scripthash: (s) => validate.address(s, app.network).scripthash },
    { kind: 'scripthash', param: 'hash', scripthash: validate.esploraScripthash },
  ];

  for (const fam of families) {
    const base = `/api/${fam.kind}/:${fam.param}`;
    const target = (ctx) => fam.scripthash(ctx.params[fam.param]);

    router.add('GET', base, async (ctx) => {
      const sh = target(ctx);
      const { value, view: pool } = await app.withMempool(() => store.getSummary(sh));
      return json(format.esploraAddress(fam.kind, ctx.params[fam.param], value, pool && pool.summary(sh)));
    });

    // as electrs: the confirmed outputs no mempool transaction spends, then the mempool's
    // outputs no other mempool transaction spends
    router.add('GET', `${base}/utxo`, async (ctx) => {
      const sh = target(ctx);
      const tooMany = () => badRequest('ERR_TOO_MANY_UTXOS',
        `this ${fam.kind} has more than ${LIMITS.compatUtxoMax} unspent outputs, more than this route returns in one answer; ` +
        `page through them with GET /api/v1/${fam.kind === 'address' ? 'address' : 'scripthash'}/.../utxos`);
      const { value } = await app.withMempool(async (tip, pool) => {
        const page = await store.getUtxos(sh, { limit: LIMITS.compatUtxoMax + 1 });
        if (page.utxos.length > LIMITS.compatUtxoMax) throw tooMany();
        const { confirmed, unconfirmed } = mergeUtxos(pool, sh, page.utxos);
        const blocks = await app.blocks(confirmed.map((u) => u.height));
        const out = confirmed.map((u) => format.esploraUtxo(u, blocks.get(u.height)));
        for (const u of unconfirmed) out.push(format.esploraUtxo({ txid: u.tx.txid, vout: u.vout, value: u.value }, null));
        if (out.length > LIMITS.compatUtxoMax) throw tooMany();
        return out;
      });
      return json(value);
    });

    // Up to 50 mempool transactions, newest first, then the newest 25 confirmed (electrs).
    // `after_txid` is mempool.space's: the page after that transaction (a mempool one: the
    // rest of the mempool's, then the first confirmed page), 422 when the history lacks it.
    router.add('GET', `${base}/txs`, async (ctx) => {
      const sh = target(ctx);
      const after = ctx.query.get('after_txid');
      const last = after && HEX64.test(after) ? validate.txid(after) : null;
      const { value } = await app.withMempool(async (tip, pool) => {
        let mine = pool ? pool.newest(sh) : [];
        let lastSeen = last;
        if (last) {
          const at = mine.findIndex((e) => e.tx.txid.equals(last));
          mine = at < 0 ? [] : mine.slice(at + 1);
          if (at >= 0) lastSeen = null;
        }
        mine = mine.slice(0, LIMITS.esploraMempoolTxs);
        const entries = await chainEntries(store, sh, lastSeen);
        if (entries === null) return null;
        const unconfirmed = await Promise.all(mine.map((e) => mempoolString(pool, e.tx.txid)));
        return [...unconfirmed, ...(await txStrings(await data.locate(entries.map((e) => e.txid))))];
      });
      if (value === null) throw new ApiError(422, 'ERR_AFTER_TXID_NOT_FOUND', `after_txid ${after} is not in this ${fam.kind}'s history`);
      return list(value);
    });

    router.add('GET', `${base}/txs/chain`, async (ctx) => list(await chainPage(app, target(ctx), null, txStrings)));

    router.add('GET', `${base}/txs/chain/:last_seen_txid`, async (ctx) => {
      const sh = target(ctx);
      // electrs ignores a last_seen_txid it cannot parse and answers the first page, and
      // answers an empty page for one that is not in this history
      const last = HEX64.test(ctx.params.last_seen_txid) ? validate.txid(ctx.params.last_seen_txid) : null;
      return list((await chainPage(app, sh, last, txStrings)) || []);
    });

    router.add('GET', `${base}/txs/mempool`, async (ctx) => {
      const sh = target(ctx);
      const { value } = await app.withMempool(async (tip, pool) => {
        if (!pool) return [];
        return Promise.all(pool.newest(sh).slice(0, LIMITS.esploraMempoolTxs).map((e) => mempoolString(pool, e.tx.txid)));
      });
      return list(value);
    });
  }

  // ---- transactions ----

  /** A confirmed transaction, else one of the mempool, else 404. */
  const anyTx = async (ctx, opts) => {
    const txid = validate.txid(ctx.params.txid);
    // the mempool view is read only when needed: a miss, or spends asked for
    const { tip, value } = await app.consistent((t) => data.anyTx(txid, { ...opts, tip: t }));
    if (!value) throw notFound('ERR_TX_NOT_FOUND', `transaction ${ctx.params.txid} is neither in the index nor in its mempool`);
    return { tip, value };
  };

  router.add('GET', '/api/tx/:txid', async (ctx) => {
    const txid = validate.txid(ctx.params.txid);
    const { value } = await app.consistent(async (tip) => {
      const loc = await store.getTx(txid);
      if (loc) return (await txStrings([loc]))[0];
      const pool = await app.mempool.at(tip);
      return pool && pool.get(txid) ? mempoolString(pool, txid) : null;
    });
    if (value === null) throw notFound('ERR_TX_NOT_FOUND', `transaction ${ctx.params.txid} is neither in the index nor in its mempool`);
    return rawJson(Buffer.from(value));
  });
  router.add('GET', '/api/tx/:txid/hex', async (ctx) => text((await anyTx(ctx, {})).value.tx.raw.toString('hex')));
  router.add('GET', '/api/tx/:txid/raw', async (ctx) => binary(Buffer.from((await anyTx(ctx, {})).value.tx.raw)));

  router.add('GET', '/api/tx/:txid/status', async (ctx) => {
    const txid = validate.txid(ctx.params.txid);
    const { value } = await app.consistent(async () => {
      const loc = await store.getTx(txid);
      if (!loc) return null;
      return (await app.blocks([loc.height])).get(loc.height);
    });
    // a mempool transaction, and (as Esplora answers) an unknown txid: {"confirmed": false}
    return json(value ? format.esploraStatus(value) : { confirmed: false });
  });

  router.add('GET', '/api/tx/:txid/merkle-proof', async (ctx) => {
    const txid = validate.txid(ctx.params.txid);
    const { value } = await app.consistent(async () => {
      const loc = await store.getTx(txid);
      if (!loc) return null;
      const row = await store.getBlock(loc.height);
      if (!row || row.hash !== loc.blockHash) throw moved(`block ${loc.blockHash} is no longer at height ${loc.height}`);
      return { loc, txids: await store.getTxids(row.firstTxNum, row.txCount) };
    });
    if (!value) throw notFound('ERR_TX_NOT_FOUND', `transaction ${ctx.params.txid} is not in the index (or is unconfirmed)`);
    const txids = [];
    for (let p = 0; p < value.txids.length; p += 32) txids.push(value.txids.subarray(p, p + 32));
    return json(view.esploraMerkleProof(txids, value.loc.position, value.loc.height));
  });

  router.add('GET', '/api/tx/:txid/outspend/:vout', async (ctx) => {
    const txid = validate.txid(ctx.params.txid);
    const vout = validate.integer(ctx.params.vout, 'vout', { max: 0xffffffff });
    const { value } = await app.consistent((tip) => data.spend(txid, vout, tip));
    return json(view.esploraOutspend(value));
  });

  router.add('GET', '/api/tx/:txid/outspends', async (ctx) => {
    const { value } = await anyTx(ctx, { spends: true });
    return json(value.spends.map(view.esploraOutspend));
  });

  // Broadcast: the raw hex as the body (text, whatever the content type says), the txid back
  // as text, as electrs answers. Checked here first, so garbage never reaches the node; the
  // node's refusal is a 400 with its reason.
  router.add('POST', '/api/tx', async (ctx) => text(await broadcast(app, ctx.body.trim())), { body: 'text' });

  // ---- the mempool ----

  router.add('GET', '/api/mempool', async () => {
    const { view: pool } = await app.withMempool(async () => null);
    return json(pool
      ? { count: pool.txs.length, vsize: pool.vsize, total_fee: pool.fee, fee_histogram: pool.feeHistogram() }
      : { count: 0, vsize: 0, total_fee: 0, fee_histogram: [] });
  });

  router.add('GET', '/api/mempool/txids', async () => {
    const { view: pool } = await app.withMempool(async () => null);
    return json(pool ? pool.txs.map((t) => toDisplayHex(t.txid)) : []);
  });

  // electrs' last 10 transactions to enter the mempool, with their output total
  router.add('GET', '/api/mempool/recent', async () => {
    const { view: pool } = await app.withMempool(async () => null);
    return json(pool ? pool.recent(LIMITS.esploraRecent).map((t) => ({
      txid: toDisplayHex(t.txid), fee: t.fee, vsize: t.vsize, value: t.outputs.reduce((n, o) => n + o.value, 0),
    })) : []);
  });

  // {target blocks: sat/vB} for the targets the node can estimate (electrs' shape)
  router.add('GET', '/api/fee-estimates', async () => json(await app.requireNode('fee estimates').feeEstimates()));

  // ---- blocks ----

  const blockOr404 = async (ctx, read) => {
    const hash = validate.blockHash(ctx.params.blockhash);
    const { value } = await app.consistent(async (tip) => {
      const row = await store.getBlockByHash(hash);
      return row ? read(row, tip) : null;
    });
    if (value === null) throw notFound('ERR_BLOCK_NOT_FOUND', `block ${hash} is not in the index (the best chain it holds)`);
    return value;
  };
  const blockJson = async (row) => view.esploraBlock(view.storedBlockFacts(row), { height: row.height, mediantime: await data.medianTime(row.height) });

  router.add('GET', '/api/block/:blockhash', async (ctx) => json(await blockOr404(ctx, blockJson)));
  router.add('GET', '/api/block/:blockhash/header', async (ctx) => text((await blockOr404(ctx, async (row) => row.header)).toString('hex')));
  router.add('GET', '/api/block/:blockhash/raw', async (ctx) => binary(Buffer.from(await blockOr404(ctx, (row) => data.rawBlock(row)))));

  router.add('GET', '/api/block/:blockhash/status', async (ctx) => {
    const hash = validate.blockHash(ctx.params.blockhash);
    const { value } = await app.consistent(async () => {
      const row = await store.getBlockByHash(hash);
      return row ? { height: row.height, nextHash: await store.getBlockHash(row.height + 1) } : null;
    });
    // electrs answers a block it does not hold as one off the best chain, not 404
    return json(view.esploraBlockStatus(value));
  });

  router.add('GET', '/api/block/:blockhash/txids', async (ctx) => {
    const txids = await blockOr404(ctx, (row) => store.getTxids(row.firstTxNum, row.txCount));
    const out = [];
    for (let p = 0; p < txids.length; p += 32) out.push(format.hex32(txids.subarray(p, p + 32)));
    return json(out);
  });

  router.add('GET', '/api/block/:blockhash/txid/:index', async (ctx) => {
    const index = validate.integer(ctx.params.index, 'index');
    const txid = await blockOr404(ctx, async (row) => (index < row.txCount ? store.getTxids(row.firstTxNum + index, 1) : false));
    if (txid === false) throw notFound('ERR_TX_INDEX_RANGE', `the block holds fewer than ${index + 1} transactions`);
    return text(format.hex32(txid));
  });

  const blockTxs = async (ctx, startParam) => {
    // as electrs (a u32): a start it cannot parse is 0 (so is "undefined", which
    // @mempool/mempool.js sends without one); past the end 404; not a page boundary 400
    const n = startParam !== undefined && DECIMAL.test(startParam) ? Number(startParam) : 0;
    const start = n <= 0xffffffff ? n : 0;
    const page = await blockOr404(ctx, async (row) => {
      if (start >= row.txCount) return false;
      if (start % LIMITS.esploraPage !== 0) return true;
      const count = Math.min(LIMITS.esploraPage, row.txCount - start);
      const txids = await store.getTxids(row.firstTxNum + start, count);
      const keys = [];
      for (let i = 0; i < count; i++) keys.push(txKey({ blockHash: row.hash, txid: txids.subarray(32 * i, 32 * i + 32) }));
      const cached = keys.map((k) => app.txJson.get(k));
      if (cached.every((x) => x !== undefined)) return cached;
      // one read of the whole block for the page
      return (await data.blockTxs(row, start, count, { prevouts: true })).map((f, i) => cached[i] || txString(f));
    });
    if (page === false) throw notFound('ERR_TX_INDEX_RANGE', `start index ${start} is past the block's last transaction`);
    if (page === true) throw badRequest('ERR_BAD_PARAM', `start index must be a multiple of ${LIMITS.esploraPage}, got ${start}`);
    return list(page);
  };
  router.add('GET', '/api/block/:blockhash/txs', (ctx) => blockTxs(ctx, undefined));
  router.add('GET', '/api/block/:blockhash/txs/:start_index', (ctx) => blockTxs(ctx, ctx.params.start_index));

  const blocks = async (startParam) => {
    // as electrs: a start height it cannot parse means the tip; one above the tip is 404
    const given = startParam !== undefined && DECIMAL.test(startParam) ? Number(startParam) : null;
    const { value } = await app.consistent(async (tip) => {
      if (!tip || (given !== null && given > tip.height)) return null;
      const from = given === null ? tip.height : given;
      const rows = [];
      for (let h = from; h >= 0 && rows.length < LIMITS.esploraBlocks; h--) rows.push(await store.getBlock(h));
      if (rows.some((r) => !r)) throw moved(`the index no longer holds every block below ${from}`);
      return Promise.all(rows.map(blockJson));
    });
    if (!value) throw notFound('ERR_BLOCK_NOT_FOUND', given === null ? 'the index holds no blocks yet' : `the index holds no block at height ${given}`);
    return json(value);
  };
  router.add('GET', '/api/blocks', () => blocks(undefined));
  router.add('GET', '/api/blocks/:start_height', (ctx) => blocks(ctx.params.start_height));
  router.add('GET', '/api/blocks/tip/height', async () => text((await tipOrFail(store)).height));
  router.add('GET', '/api/blocks/tip/hash', async () => text((await tipOrFail(store)).hash));

  router.add('GET', '/api/block-height/:height', async (ctx) => {
    const height = validate.integer(ctx.params.height, 'height', { max: 0xffffffff });
    const hash = await store.getBlockHash(height);
    if (!hash) throw notFound('ERR_BLOCK_NOT_FOUND', `the index holds no block at height ${height}`);
    return text(hash);
  });
}

/**
 * One page of confirmed history as whole transactions, newest first, 25 per page; with
 * `lastSeen`, the page after that transaction.
 * @param {import('../server').ApiApp} app
 * @param {Buffer} scripthash
 * @param {Buffer|null} lastSeen txid, internal order
 * @param {(locs: import('../../stores/abstract').TxLocation[]) => Promise<string[]>} toJson
 * @returns {Promise<string[]|null>} each transaction's JSON; null: lastSeen is not in this history
 */
async function chainPage(app, scripthash, lastSeen, toJson) {
  const { value } = await app.consistent(async () => {
    const entries = await chainEntries(app.store, scripthash, lastSeen);
    if (entries === null) return null;
    return toJson(await app.txdata.locate(entries.map((e) => e.txid)));
  });
  return value;
}

/**
 * The entries of one page of confirmed history, newest first (after `lastSeen` when given).
 * @returns {Promise<import('../../stores/abstract').HistoryEntry[]|null>} null: lastSeen is not in this history
 */
async function chainEntries(store, scripthash, lastSeen) {
  if (lastSeen) return entriesAfter(store, scripthash, lastSeen);
  return (await store.getHistory(scripthash, { order: 'desc', limit: LIMITS.esploraPage })).entries;
}

/**
 * Broadcasts a raw transaction (hex) through the server's node, for Esplora's POST /api/tx and
 * insight's POST /tx/send: not hex, or not a transaction, is a 400 before the node is asked;
 * the node's refusal is a 400 with its reason; no node, 503.
 * @param {import('../server').ApiApp} app
 * @param {unknown} hex
 * @returns {Promise<string>} the txid
 */
async function broadcast(app, hex) {
  if (typeof hex !== 'string' || hex.length === 0 || hex.length % 2 !== 0 || !/^[0-9a-fA-F]+$/.test(hex)) {
    throw badRequest('ERR_BAD_TX', 'the body must be a raw transaction in hex');
  }
  const raw = Buffer.from(hex, 'hex');
  let tx;
  try {
    tx = parseTransaction(raw);
  } catch (err) {
    if (!(err instanceof ParseError)) throw err;
    throw badRequest('ERR_BAD_TX', `the body is not a transaction: ${err.message}`);
  }
  if (tx.size !== raw.length) throw badRequest('ERR_BAD_TX', `the body holds ${raw.length - tx.size} bytes after the transaction`);
  const node = app.requireNode('broadcasting a transaction');
  try {
    return await node.broadcast(raw);
  } catch (err) {
    if (err.code !== 'ERR_NODE_REJECTED') throw err;
    throw new ApiError(400, 'ERR_TX_REJECTED', `the node refused the transaction: ${err.message}`, { rpcCode: err.details.rpcCode });
  }
}

/**
 * The up to 25 entries older than `lastSeen` in a newest-first history. Positions by the
 * transaction's height (the store's height bound), then steps over the entries of that
 * height that are newer than it.
 * @returns {Promise<import('../../stores/abstract').HistoryEntry[]|null>} null when lastSeen
 *   is not in the history
 */
async function entriesAfter(store, scripthash, lastSeen) {
  const loc = await store.getTx(lastSeen);
  if (!loc) return null;
  const out = [];
  let found = false;
  let cursor;
  for (;;) {
    const limit = found ? LIMITS.esploraPage - out.length : LIMITS.esploraPage + 1;
    const page = await store.getHistory(scripthash, { order: 'desc', toHeight: loc.height, limit, cursor });
    for (const e of page.entries) {
      if (found) {
        out.push(e);
        if (out.length === LIMITS.esploraPage) return out;
      } else if (e.txNum === loc.txNum) {
        found = true;
      } else if (e.txNum < loc.txNum) {
        return null; // went past where it would be: the tx is not in this history
      }
    }
    if (!page.next || page.entries.length === 0) return found ? out : null;
    cursor = page.next;
  }
}

async function tipOrFail(store) {
  const tip = await store.getTip();
  if (!tip) throw notFound('ERR_INDEX_EMPTY', 'the index holds no blocks yet');
  return tip;
}

module.exports = { register, broadcast };
