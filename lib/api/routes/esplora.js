'use strict';

const { ApiError, badRequest, notFound } = require('../errors');
const validate = require('../validate');
const format = require('../format');
const { json, text } = require('../reply');

const { LIMITS } = validate;
const HEX64 = /^[0-9a-fA-F]{64}$/;

/**
 * Esplora's address routes under /api/, shaped as blockstream.info and mempool.space answer
 * them, so Esplora clients (@mempool/mempool.js, BDK, wallets) work unchanged. Script hashes
 * here are Esplora's: sha256 of the script in natural byte order (not Electrum's reversed
 * form the native API uses). Routes that need transaction bodies answer 501.
 * @param {import('../router').Router} router
 * @param {import('../server').ApiApp} app
 */
function register(router, app) {
  const store = app.store;

  const families = [
    { kind: 'address', param: 'address', scripthash: (s) => validate.address(s, app.network).scripthash },
    { kind: 'scripthash', param: 'hash', scripthash: validate.esploraScripthash },
  ];

  for (const fam of families) {
    const base = `/api/${fam.kind}/:${fam.param}`;
    const target = (ctx) => fam.scripthash(ctx.params[fam.param]);

    router.add('GET', base, async (ctx) => {
      const sh = target(ctx);
      const { value } = await app.consistent(() => store.getSummary(sh));
      return json(format.esploraAddress(fam.kind, ctx.params[fam.param], value));
    });

    router.add('GET', `${base}/utxo`, async (ctx) => {
      const sh = target(ctx);
      const { value } = await app.consistent(async () => {
        const page = await store.getUtxos(sh, { limit: LIMITS.compatUtxoMax + 1 });
        if (page.utxos.length > LIMITS.compatUtxoMax) {
          throw badRequest('ERR_TOO_MANY_UTXOS',
            `this ${fam.kind} has more than ${LIMITS.compatUtxoMax} unspent outputs, more than this route returns in one answer; ` +
            `page through them with GET /api/v1/${fam.kind === 'address' ? 'address' : 'scripthash'}/.../utxos`);
        }
        const blocks = await app.blocks(page.utxos.map((u) => u.height));
        return page.utxos.map((u) => format.esploraUtxo(u, blocks.get(u.height)));
      });
      return json(value);
    });

    router.add('GET', `${base}/txs/chain`, async (ctx) => json(await chainPage(app, target(ctx), null)));

    router.add('GET', `${base}/txs/chain/:last_seen_txid`, async (ctx) => {
      const sh = target(ctx);
      // electrs ignores a last_seen_txid it cannot parse and answers the first page
      const last = HEX64.test(ctx.params.last_seen_txid) ? validate.txid(ctx.params.last_seen_txid) : null;
      return json(await chainPage(app, sh, last));
    });

    // No mempool in the index: nothing unconfirmed to list (mempool_stats are zero too).
    router.add('GET', `${base}/txs/mempool`, async (ctx) => {
      target(ctx);
      return json([]);
    });

    router.add('GET', `${base}/txs`, async (ctx) => {
      target(ctx);
      throw notImplemented(`GET /api/${fam.kind}/:${fam.param}/txs answers full transactions (inputs, outputs, fees) and the ` +
        `mempool, which addrindex does not store: GET /api/${fam.kind}/:${fam.param}/txs/chain lists the confirmed ` +
        'transactions newest first with their txid and status');
    });
  }

  router.add('GET', '/api/tx/:txid/status', async (ctx) => {
    const txid = validate.txid(ctx.params.txid);
    const { value } = await app.consistent(async () => {
      const loc = await store.getTx(txid);
      if (!loc) return null;
      return (await app.blocks([loc.height])).get(loc.height);
    });
    // Esplora answers an unknown txid with {"confirmed": false} rather than 404
    return json(value ? format.esploraStatus(value) : { confirmed: false });
  });

  for (const suffix of ['', '/hex', '/raw']) {
    router.add('GET', `/api/tx/:txid${suffix}`, async (ctx) => {
      validate.txid(ctx.params.txid);
      throw notImplemented(`GET /api/tx/:txid${suffix} answers the transaction itself, which addrindex does not store: ` +
        'GET /api/tx/:txid/status and GET /api/v1/tx/:txid tell where it is confirmed');
    });
  }

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
 * One page of confirmed history, newest first, 25 per page; with `lastSeen`, the page after
 * that transaction. Like electrs, a lastSeen that is not in this history gives an empty page.
 * @param {import('../server').ApiApp} app
 * @param {Buffer} scripthash
 * @param {Buffer|null} lastSeen txid, internal order
 */
async function chainPage(app, scripthash, lastSeen) {
  const store = app.store;
  const { value } = await app.consistent(async () => {
    const entries = lastSeen
      ? await entriesAfter(store, scripthash, lastSeen)
      : (await store.getHistory(scripthash, { order: 'desc', limit: LIMITS.esploraPage })).entries;
    const blocks = await app.blocks(entries.map((e) => e.height));
    return entries.map((e) => format.esploraTx(e, blocks.get(e.height)));
  });
  return value;
}

/**
 * The up to 25 entries older than `lastSeen` in a newest-first history. Positions by the
 * transaction's height (the store's height bound), then steps over the entries of that
 * height that are newer than it.
 */
async function entriesAfter(store, scripthash, lastSeen) {
  const loc = await store.getTx(lastSeen);
  if (!loc) return [];
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
        return []; // went past where it would be: the tx is not in this history
      }
    }
    if (!page.next || page.entries.length === 0) return found ? out : [];
    cursor = page.next;
  }
}

async function tipOrFail(store) {
  const tip = await store.getTip();
  if (!tip) throw notFound('ERR_INDEX_EMPTY', 'the index holds no blocks yet');
  return tip;
}

function notImplemented(message) {
  return new ApiError(501, 'ERR_NOT_IMPLEMENTED', message);
}

module.exports = { register };
