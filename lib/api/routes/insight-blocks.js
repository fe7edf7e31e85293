'use strict';

const { badRequest } = require('../errors');
const { json } = require('../reply');
const validate = require('../validate');

const DAY = 86400;
/** insight-api's default page of a day's blocks. */
const BLOCK_LIMIT = 200;
/** At most this many summaries in one answer (insight-api had no bound). */
const MAX_LIMIT = 5000;

/** A date as insight writes it: yyyy-mm-dd, UTC. */
function formatDay(seconds) {
  return new Date(seconds * 1000).toISOString().slice(0, 10);
}

/**
 * insight-api's GET /insight-api/blocks?blockDate=yyyy-mm-dd&startTimestamp=S&limit=N: the
 * blocks of one UTC day, newest first, found as the patched node found them (its logical
 * timestamps, lib/bitcore/timestamps.js, the table the bitcore-node service keeps too), each as
 * a summary ({height, size, hash, time, txlength, poolInfo}), and the day's pagination.
 *
 * One difference, on purpose: without `blockDate` insight-api lists *today's* blocks, so on a
 * chain whose newest block is older than today (a node catching up, a test chain, the bundled
 * 2009 blocks) its home page and block list stay empty. Here the day is the newest block's day:
 * today's on a chain that is current, and the newest blocks otherwise. Also, `moreTs` is the
 * time of the oldest block listed (insight-api repeated `startTimestamp`, so its "older blocks"
 * link showed the same page again).
 *
 * The table of logical timestamps is the app's (app.blockTimes): built on first use, 4 bytes a
 * block, read from the index's block rows (on mainnet, some 900,000 reads: `serve --explorer`
 * builds it as the worker starts, so the home page's first visit does not wait for it).
 * @param {import('../router').Router} router
 * @param {import('../server').ApiApp} app
 * @param {{now?: () => number}} [opts] now: the clock, in ms (tests)
 */
function register(router, app, { now = Date.now } = {}) {
  const store = app.store;

  router.add('GET', '/insight-api/blocks', async (ctx) => {
    const limit = validate.integer(ctx.query.get('limit') || undefined, 'limit', { min: 1, max: MAX_LIMIT, def: BLOCK_LIMIT });
    const given = ctx.query.get('blockDate');
    if (given !== null && !/^\d{4}-\d{2}-\d{2}$/.test(given)) throw badRequest('ERR_BAD_PARAM', `blockDate must be yyyy-mm-dd, got "${given}"`);
    const start = ctx.query.get('startTimestamp');
    const startTs = start === null || start === '' ? undefined : validate.integer(start, 'startTimestamp', { max: 0xffffffff });
    const times = app.blockTimes;
    const { value } = await app.consistent(async (tip) => {
      const todayStr = formatDay(Math.floor(now() / 1000));
      let dateStr = given;
      if (dateStr === null) {
        const newest = tip ? await store.getBlock(tip.height) : null;
        dateStr = newest ? formatDay(newest.time) : todayStr;
      }
      const gte = Math.round(Date.parse(dateStr) / 1000);
      if (!Number.isFinite(gte)) throw badRequest('ERR_BAD_PARAM', `blockDate "${dateStr}" is not a date`);
      const lte = startTs || gte + DAY;
      const found = (await times.between(lte, gte)).reverse();
      const more = found.length > limit;
      const rows = await Promise.all(found.slice(0, limit).map((b) => store.getBlockByHash(b.hash)));
      const blocks = rows.filter(Boolean).map((row) => ({
        height: row.height, size: row.size, hash: row.hash, time: row.time, txlength: row.txCount, poolInfo: {},
      }));
      blocks.sort((a, b) => b.height - a.height);
      const pagination = {
        next: formatDay(lte), prev: formatDay(gte - DAY), currentTs: lte - 1, current: dateStr, isToday: dateStr === todayStr, more,
      };
      if (more) pagination.moreTs = blocks.length ? blocks[blocks.length - 1].time : lte;
      return { blocks, length: blocks.length, pagination };
    });
    return json(value);
  });
}

module.exports = { register, formatDay };
