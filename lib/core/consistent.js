'use strict';

const { StoreError } = require('../errors');

/** How many times a read is tried while the index keeps moving under it. */
const READ_ATTEMPTS = 4;

/**
 * Runs `read(tip)` so that what it returns belongs to one committed tip, for a reader beside
 * the writer (another process, or a follower in this one): the tip is read before and after,
 * and the read is repeated when a commit landed in between (a seqlock). Stores promise
 * per-call consistency only; this makes an answer of several calls consistent too, on every
 * store, without holding a read transaction across turns. The REST API, the Electrum server,
 * the bitcore service and `addrindex tx` all read this way.
 *
 * @template T
 * @param {{getTip(): Promise<{height: number, hash: string}|null>}} store
 * @param {(tip: import('../stores/abstract').Tip|null) => Promise<T>} read
 * @param {object} [opts]
 * @param {number} [opts.attempts=4]
 * @param {(err: Error) => boolean} [opts.retry] an error of the read that means it met rows
 *   of two states (ERR_INDEX_MOVED), tried again like a tip that moved
 * @returns {Promise<{tip: import('../stores/abstract').Tip|null, value: T}>}
 * @throws {StoreError} ERR_INDEX_MOVING when every attempt saw the index move
 */
async function readConsistent(store, read, { attempts = READ_ATTEMPTS, retry = null } = {}) {
  for (let attempt = 1; ; attempt++) {
    const before = await store.getTip();
    let value;
    try {
      value = await read(before);
    } catch (err) {
      if (!(retry && retry(err))) throw err;
      if (attempt === attempts) throw indexMoving(attempts);
      continue;
    }
    const after = await store.getTip();
    if (sameTip(before, after)) return { tip: before, value };
    if (attempt === attempts) throw indexMoving(attempts);
  }
}

/** A read that met rows of two states (see readConsistent's `retry`). */
const movedRows = (err) => Boolean(err && err.code === 'ERR_INDEX_MOVED');

function sameTip(a, b) {
  if (!a || !b) return a === b;
  return a.height === b.height && a.hash === b.hash;
}

/**
 * @param {number} [attempts]
 * @returns {StoreError} ERR_INDEX_MOVING
 */
function indexMoving(attempts = READ_ATTEMPTS) {
  return new StoreError('ERR_INDEX_MOVING', `the index committed new blocks during each of ${attempts} attempts to read a consistent answer; retry`);
}

module.exports = { readConsistent, movedRows, indexMoving, READ_ATTEMPTS };
