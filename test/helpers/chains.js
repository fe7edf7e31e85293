'use strict';

const { prng } = require('./prng');

/**
 * Generated-chain fixtures and sync helpers for the sync and CLI tests: blocks dirs written by
 * tools/generator (small, deterministic, with in-batch spends and address reuse), and in-process
 * syncs through the real SyncService and store.
 */

const path = require('node:path');
const { tempDir } = require('./tmp');
const { writeChain, appendBranch } = require('../../tools/generator');
const { BlocksDirSource } = require('../../lib/sources/blocksdir');
const { SyncService } = require('../../lib/sync/service');
const { openStore } = require('../../lib/stores');

/**
 * The shape of the test chains: ~30 txs per block, coinbases spendable at once so spending
 * starts at height 2, the generator's default script mix and reuse (about 14 % of spends take
 * an output of the same block, so a batch resolves many inputs from itself).
 */
const SMALL = Object.freeze({ network: 'regtest', txsPerBlock: 30, coinbaseMaturity: 1 });

/**
 * Writes a generated chain into a new blocks dir.
 * @param {object} opts writeChain options ({seed, blocks|txs, stale, …}); SMALL's shape unless overridden
 * @returns {Promise<{dir: string} & import('../../tools/generator/write').ChainSummary>}
 */
async function makeChain(opts) {
  const dir = opts.dir || tempDir('blocks');
  const summary = await writeChain({ ...SMALL, ...opts, dir });
  return { dir, ...summary };
}

/**
 * Appends a competing branch to a dir made by makeChain (same seed and shape).
 * @param {object} opts appendBranch options ({dir, seed, forkHeight, branchSeed, blocks})
 */
function addBranch(opts) {
  return appendBranch({ ...SMALL, ...opts });
}

/**
 * Opens a writable LMDB index.
 * @param {string} datadir
 * @param {{network?: string, undoDepth?: number, readOnly?: boolean}} [opts]
 */
function openIndex(datadir, opts = {}) {
  return openStore({ store: 'lmdb', datadir, network: opts.network || 'regtest', undoDepth: opts.undoDepth, readOnly: Boolean(opts.readOnly) });
}

/**
 * Syncs a blocks dir into an open store, in process, through the real SyncService.
 * @param {string} blocksDir
 * @param {import('../../lib/stores/abstract').AbstractStore} store
 * @param {object} [opts] SyncService options (batch, threads, undoDepth, network, onProgress)
 */
async function syncInto(blocksDir, store, opts = {}) {
  const network = opts.network || 'regtest';
  const source = new BlocksDirSource({ dir: blocksDir, network });
  try {
    const service = new SyncService({ threads: 1, ...opts, source, store, network });
    return await service.run({ signal: opts.signal });
  } finally {
    await source.close();
  }
}

/**
 * The digest of a fresh index of a blocks dir: what any other way of reaching the same best
 * chain (reorgs, restarts) must equal.
 * @param {string} blocksDir
 * @param {object} [opts] SyncService options
 * @returns {Promise<{digest: string, tip: object}>}
 */
async function freshDigest(blocksDir, opts = {}) {
  const store = await openIndex(path.join(tempDir('fresh'), 'index'), { network: opts.network, undoDepth: opts.undoDepth });
  try {
    const r = await syncInto(blocksDir, store, opts);
    return { digest: await store.digest(), tip: r.tip };
  } finally {
    await store.close();
  }
}

/**
 * The digest of an existing datadir (opened read-only).
 * @param {string} datadir
 * @param {string} [network='regtest']
 */
async function digestOf(datadir, network = 'regtest') {
  const store = await openIndex(datadir, { network, readOnly: true });
  try {
    return await store.digest();
  } finally {
    await store.close();
  }
}

/**
 * The tip of a datadir, read beside (or after) a writer in another process; null when the
 * datadir holds no index yet.
 * @param {string} datadir
 * @param {string} [network='regtest']
 */
async function tipOf(datadir, network = 'regtest') {
  let store;
  try {
    store = await openIndex(datadir, { network, readOnly: true });
  } catch (err) {
    if (err.code === 'ERR_NO_INDEX') return null;
    throw err;
  }
  try {
    return await store.getTip();
  } finally {
    await store.close();
  }
}

/**
 * Polls `check` until it returns a truthy value or `ms` pass.
 * @template T
 * @param {() => Promise<T>|T} check
 * @param {number} ms
 * @param {string} what for the timeout message
 * @returns {Promise<T>}
 */
async function waitFor(check, ms, what) {
  const until = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

module.exports = {
  SMALL, makeChain, addBranch, openIndex, syncInto, freshDigest, digestOf, tipOf, waitFor, prng,
};
