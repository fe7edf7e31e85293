'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { toDisplayHex } = require('../../chain/hash');
const { badRequest, notFound } = require('../errors');
const validate = require('../validate');
const format = require('../format');
const { json, rawJson } = require('../reply');
const { nativeFullTx } = require('../native-format');
const view = require('../esplora-format');
const { moved } = require('../txdata');
const { lagOf } = require('../../ops/ready');
const { mergeUtxos } = require('../../core/mempool-merge');

const { LIMITS } = validate;
const OPENAPI = path.join(__dirname, '..', '..', '..', 'docs', 'openapi.json');

/** Fields a multi-target POST body may hold (anything else is a typo worth a 400). */
const MULTI_HISTORY_FIELDS = new Set(['limit', 'cursor', 'order', 'fromHeight', 'toHeight', 'mempool']);

/**
 * The native API under /api/v1: what addrindex knows, in its own shapes. Every answer
 * carries `tip`, the committed block it is consistent with.
 * @param {import('../router').Router} router
 * @param {import('../server').ApiApp} app
 */
function register(router, app) {
  const store = app.store;
  const tipOf = (tip) => format.nativeTip(tip);

  router.add('GET', '/', async () => json({
    name: 'addrindex',
    version: app.version,
    network: app.network.name,
    docs: '/api/v1/openapi.json',
    apis: { native: '/api/v1', esplora: '/api/', insight: '/insight-api/' },
  }));

  router.add('GET', '/api/v1/status', async () => {
    const { tip, value: block, view: pool } = await app.withMempool((t) => (t ? store.getBlock(t.height) : null));
    return json({
      version: app.version,
      network: app.network.name,
      store: app.storeKind,
      tip: tip ? { height: tip.height, hash: tip.hash, time: block ? block.time : null } : null,
      sync: syncState(app, tip),
      // the snapshot the answers use: null when none goes with this tip (answers are confirmed only)
      mempool: pool ? { seq: pool.seq, count: pool.txs.length, vsize: pool.vsize, fee: pool.fee, evicted: pool.evicted } : null,
      limits: {
        pageDefault: LIMITS.pageDefault,
        pageMax: LIMITS.pageMax,
        maxAddresses: LIMITS.maxAddresses,
        multiPageMax: LIMITS.multiPageMax,
        bodyBytes: LIMITS.bodyBytes,
        requestTimeoutMs: app.timeoutMs,
      },
    });
  });

  if (fs.existsSync(OPENAPI)) {
    const doc = fs.readFileSync(OPENAPI);
    router.add('GET', '/api/v1/openapi.json', async () => rawJson(doc));
  }

  const families = [
    { one: 'address', many: 'addresses', param: 'address', parse: (s) => validate.address(s, app.network), name: (t) => t.address },
    { one: 'scripthash', many: 'scripthashes', param: 'hash', parse: validate.electrumScripthash, name: (t) => toDisplayHex(t.scripthash) },
  ];

  for (const fam of families) {
    const base = `/api/v1/${fam.one}/:${fam.param}`;
    const target = (ctx) => fam.parse(ctx.params[fam.param]);
    const head = (t) => ({ address: t.address, scripthash: t.electrum || toDisplayHex(t.scripthash) });

    router.add('GET', base, async (ctx) => {
      const t = target(ctx);
      const { tip, value, view: pool } = await app.withMempool(() => store.getSummary(t.scripthash));
      return json({ ...format.nativeSummary(t, value), unconfirmed: format.nativeUnconfirmed(pool, t.scripthash), tip: tipOf(tip) });
    });

    router.add('GET', `${base}/history`, async (ctx) => {
      const t = target(ctx);
      const opts = validate.historyOptions((n) => ctx.query.get(n), LIMITS.pageMax);
      const withPool = validate.integer(ctx.query.get('mempool'), 'mempool', { max: 1, def: 0 }) === 1;
      const read = () => store.getHistory(t.scripthash, opts);
      const { tip, value, view: pool } = await (withPool ? app.withMempool(read) : app.consistent(read));
      const out = { ...head(t), entries: value.entries.map(format.nativeEntry), next: value.next, tip: tipOf(tip) };
      if (withPool) out.mempool = pool ? pool.newest(t.scripthash).map((e) => format.nativeMempoolEntry(pool, e.tx, [t.scripthash])) : [];
      return json(out);
    });

    router.add('GET', `${base}/utxos`, async (ctx) => {
      const t = target(ctx);
      const opts = validate.pageOptions((n) => ctx.query.get(n), LIMITS.pageMax);
      const { tip, value, view: pool } = await app.withMempool(() => store.getUtxos(t.scripthash, opts));
      // as Esplora's /utxo: outputs a mempool transaction spends are left out (of every page),
      // and the mempool's own unspent outputs (height null) come first, on the first page
      const { confirmed, unconfirmed } = mergeUtxos(pool, t.scripthash, value.utxos);
      const utxos = confirmed.map(format.nativeUtxo);
      if (!opts.cursor) utxos.unshift(...unconfirmed.map((u) => format.nativeUtxo({ txid: u.tx.txid, vout: u.vout, value: u.value, height: null })));
      return json({ ...head(t), utxos, next: value.next, tip: tipOf(tip) });
    });

    router.add('POST', `/api/v1/${fam.many}/summary`, async (ctx) => {
      const body = objectBody(ctx.body, fam.many, new Set());
      const targets = validate.targetList(body[fam.many], fam.many, fam.parse);
      const { tip, value, view: pool } = await app.withMempool(() => store.getSummaries(targets.map((t) => t.scripthash)));
      return json({
        summaries: targets.map((t, i) => ({ ...format.nativeSummary(t, value[i]), unconfirmed: format.nativeUnconfirmed(pool, t.scripthash) })),
        tip: tipOf(tip),
      });
    }, { body: true });

    router.add('POST', `/api/v1/${fam.many}/history`, async (ctx) => {
      const body = objectBody(ctx.body, fam.many, MULTI_HISTORY_FIELDS);
      const targets = validate.targetList(body[fam.many], fam.many, fam.parse);
      const opts = validate.historyOptions((n) => body[n], LIMITS.multiPageMax);
      if (body.mempool !== undefined && typeof body.mempool !== 'boolean') throw badRequest('ERR_BAD_BODY', '"mempool" must be true or false');
      // one row per script hash: the same address twice (or in two spellings) is asked once
      const names = new format.TargetNames();
      const hashes = [];
      for (const t of targets) if (names.add(t.scripthash, fam.name(t))) hashes.push(t.scripthash);
      const read = () => store.getHistories(hashes, opts);
      const { tip, value, view: pool } = await (body.mempool ? app.withMempool(read) : app.consistent(read));
      const mempool = !body.mempool ? undefined : pool
        ? touchingNewest(pool, hashes).map(({ tx, touched }) => ({ ...format.nativeMempoolEntry(pool, tx, hashes), [fam.many]: touched.map((sh) => names.get(sh)) }))
        : [];
      return rawJson(format.nativeMultiPageJSON(value.entries, names, fam.many, value.next, tipOf(tip), mempool));
    }, { body: true });
  }

  router.add('GET', '/api/v1/tx/:txid', async (ctx) => {
    const txid = validate.txid(ctx.params.txid);
    const full = validate.integer(ctx.query.get('full'), 'full', { max: 1, def: 0 }) === 1;
    // confirmed, else in the mempool snapshot that goes with the tip of the read (read only then)
    const { tip, value } = await app.consistent(async (t) => {
      if (full) return app.txdata.anyTx(txid, { prevouts: true, spends: true, tip: t });
      const loc = await store.getTx(txid);
      if (!loc) {
        const pool = await app.mempool.at(t);
        const m = pool && pool.get(txid);
        return m ? { unconfirmed: m, parentsUnconfirmed: pool.hasUnconfirmedInputs(m) } : null;
      }
      const [block] = (await app.blocks([loc.height])).values();
      return { loc, block };
    });
    if (!value) {
      throw notFound('ERR_TX_NOT_FOUND', `transaction ${ctx.params.txid} is not in the index` +
        (tip ? ` (confirmed transactions of the best chain up to height ${tip.height}, and the mempool that goes with it)` : ' (the index is empty)'));
    }
    let body;
    if (full) body = nativeFullTx(value, tip, app.network);
    else if (value.unconfirmed) body = format.nativeMempoolTx(value.unconfirmed, value.parentsUnconfirmed);
    else body = format.nativeTx(value.loc, value.block, tip);
    return json({ ...body, tip: tipOf(tip) });
  });

  // mempool.space's recommended fees (@mempool/mempool.js fees.getFeesRecommended), from the
  // node's estimates as Esplora's /api/fee-estimates
  router.add('GET', '/api/v1/fees/recommended', async () => json(await app.requireNode('fee estimates').recommendedFees()));

  // mempool.space's block routes, which sit under /api/v1 there: @mempool/mempool.js's
  // getBlock and getBlocks ask for these (Esplora's block with `extras`)
  const mempoolBlock = async (row) => view.mempoolBlock(view.storedBlockFacts(row), {
    height: row.height, mediantime: await app.txdata.medianTime(row.height), header: row.header,
    coinbase: await app.txdata.coinbase(row), network: app.network,
  });

  router.add('GET', '/api/v1/block/:blockhash', async (ctx) => {
    const hash = validate.blockHash(ctx.params.blockhash);
    const { value } = await app.consistent(async () => {
      const row = await store.getBlockByHash(hash);
      return row ? mempoolBlock(row) : null;
    });
    if (!value) throw notFound('ERR_BLOCK_NOT_FOUND', `block ${hash} is not in the index (the best chain it holds)`);
    return json(value);
  });

  const blocks = async (startParam) => {
    // as mempool.space (and electrs' /api/blocks): a start height it cannot parse means the
    // tip (@mempool/mempool.js sends "undefined" without one); above the tip 404
    const given = startParam !== undefined && /^[0-9]+$/.test(startParam) ? Number(startParam) : null;
    const { value } = await app.consistent(async (tip) => {
      if (!tip || (given !== null && given > tip.height)) return null;
      const from = given === null ? tip.height : given;
      const rows = [];
      for (let h = from; h >= 0 && rows.length < LIMITS.esploraBlocks; h--) rows.push(await store.getBlock(h));
      if (rows.some((r) => !r)) throw moved(`the index no longer holds every block below ${from}`);
      return Promise.all(rows.map(mempoolBlock));
    });
    if (!value) throw notFound('ERR_BLOCK_NOT_FOUND', given === null ? 'the index holds no blocks yet' : `the index holds no block at height ${given}`);
    return json(value);
  };
  router.add('GET', '/api/v1/blocks', () => blocks(undefined));
  router.add('GET', '/api/v1/blocks/:start_height', (ctx) => blocks(ctx.params.start_height));
}

/**
 * The mempool transactions touching any of the script hashes, newest first, each with the
 * script hashes it touches (in the order asked): one pass over each script hash's entries,
 * linear in the addresses asked and what they hold.
 */
function touchingNewest(pool, hashes) {
  /** @type {Map<object, Buffer[]>} */
  const by = new Map();
  for (const sh of hashes) {
    for (const e of pool.entries(sh)) {
      const list = by.get(e.tx);
      if (list) list.push(sh);
      else by.set(e.tx, [sh]);
    }
  }
  return [...by].sort(([a], [b]) => pool.newer(a, b)).map(([tx, touched]) => ({ tx, touched }));
}

/**
 * The POST body as an object holding the list field and only known options.
 * @param {unknown} body
 * @param {string} listField
 * @param {Set<string>} optionFields
 */
function objectBody(body, listField, optionFields) {
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw badRequest('ERR_BAD_BODY', `the body must be a JSON object like {"${listField}": [...]}`);
  }
  for (const key of Object.keys(body)) {
    if (key !== listField && !optionFields.has(key)) {
      const known = [listField, ...optionFields].join(', ');
      throw badRequest('ERR_BAD_BODY', `unknown body field "${key}" (this route takes: ${known})`);
    }
  }
  return body;
}

/** How far the index is behind the node, when the server reads the node's tip. */
function syncState(app, tip) {
  if (!app.node.configured) {
    return {
      sourceTip: null,
      lag: null,
      reason: 'this server was started without a node to read (serve --rpc-url or --blocks-dir), so how far the index is behind it is unknown here',
    };
  }
  const node = app.node.tip;
  if (!node) return { sourceTip: null, lag: null, reason: 'the node\'s tip has not been read yet' };
  const from = app.node.source === 'rpc' ? 'over JSON-RPC' : 'from its blocks dir';
  return { sourceTip: node.height, sourceTipHash: node.hash || null, lag: lagOf(tip, node), reason: `the node's best chain, as last read ${from}` };
}

module.exports = { register };
