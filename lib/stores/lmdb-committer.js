'use strict';

/**
 * The LMDB committer's thread (lmdb.js, LmdbKv#commitAsync): writes a row cache generation
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

parentPort.on('message', ({ id, shared, guardKey, guardValue }) => {
  try {
    const rows = sharedInOrder(shared);
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
