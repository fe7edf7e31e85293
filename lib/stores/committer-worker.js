'use strict';

/**
 * The LMDB committer's thread (committer.js): writes a row cache generation
 * (read in place from its shared arena, sorted here) in one write transaction, guarded by the tip row, while
 * the sync's main thread goes on with the next batches. It shares the writer's environment
 * (lmdb-js opens one environment per file and process) and is the only one writing while a
 * commit is under way: the main thread waits for it before it commits anything else.
 */

const { parentPort, workerData } = require('node:worker_threads');
const { open, ABORT } = require('lmdb');
const { sharedInOrder } = require('./packed-rows');
const { guardHolds } = require('./guard');

const db = open(workerData.options);

/**
 * Brings the pages the commit will rewrite into the page cache first, `lanes` reads at a time
 * (lmdb-js's prefetch, on libuv's thread pool): the write transaction then copies pages in
 * memory instead of faulting them in one after another. Only when asked (the index outgrew
 * the memory: prefetcher.js decides), as in RAM it would only cost CPU.
 */
async function warm(rows, lanes) {
  const keys = [];
  rows.each((key) => keys.push(key));
  const per = Math.ceil(keys.length / lanes);
  const parts = [];
  for (let i = 0; i < keys.length; i += per) parts.push(db.prefetch(keys.slice(i, i + per)));
  await Promise.all(parts);
}

parentPort.on('message', async ({ id, shared, guardKey, guardValue, prefetchLanes }) => {
  try {
    const rows = sharedInOrder(shared);
    if (prefetchLanes > 0 && rows.count > 0) await warm(rows, prefetchLanes);
    const guard = { key: Buffer.from(guardKey), value: guardValue ? Buffer.from(guardValue) : undefined };
    const ok = db.transactionSync(() => {
      if (!guardHolds(db.getBinary(guard.key), guard)) return ABORT;
      rows.each((key, value) => {
        if (value === null) db.removeSync(key);
        else db.putSync(key, value);
      });
      return true;
    }) === true;
    parentPort.postMessage({ id, ok });
  } catch (err) {
    parentPort.postMessage({ id, error: { message: err.message, code: err.code } });
  }
});
