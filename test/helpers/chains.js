'use strict';

const { prng } = require('./prng');

/**
 * Generated-chain fixtures and sync helpers for the sync and CLI tests: blocks dirs written by
 * lib/generator (small, deterministic, with in-batch spends and address reuse), in-process
 * syncs through the real SyncService and store, and `addrindex` run as a child process.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { writeChain, appendBranch } = require('../../lib/generator');
const { BlocksDirSource } = require('../../lib/sources/blocksdir');
const { SyncService } = require('../../lib/sync/service');
const { openStore } = require('../../lib/stores');

const BIN = path.join(__dirname, '..', '..', 'bin', 'addrindex.js');

/**
 * The shape of the test chains: ~30 txs per block, coinbases spendable at once so spending
 * starts at height 2, the generator's default script mix and reuse (about 14 % of spends take
 * an output of the same block, so a batch resolves many inputs from itself).
 */
const SMALL = Object.freeze({ network: 'regtest', txsPerBlock: 30, coinbaseMaturity: 1 });

const made = [];
process.on('exit', () => {
  for (const d of made) fs.rmSync(d, { recursive: true, force: true });
});

/**
 * A new empty directory, removed when the test process exits.
 * @param {string} prefix
 */
function tmpDir(prefix) {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), `addrindex-${prefix}-`));
  made.push(d);
  return d;
}

/**
 * Writes a generated chain into a new blocks dir.
 * @param {object} opts writeChain options ({seed, blocks|txs, stale, …}); SMALL's shape unless overridden
 * @returns {Promise<{dir: string} & import('../../lib/generator/write').ChainSummary>}
 */
async function makeChain(opts) {
  const dir = opts.dir || tmpDir('blocks');
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
  const store = await openIndex(path.join(tmpDir('fresh'), 'index'), { network: opts.network, undoDepth: opts.undoDepth });
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
 * Starts `addrindex ARGS` as a child process; `done` resolves when it exits.
 * @param {string[]} args
 * @returns {import('node:child_process').ChildProcess & {done: Promise<{code: number|null, signal: string|null, stdout: string, stderr: string}>, output: {stdout: string, stderr: string}}}
 */
function startCli(args) {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const output = { stdout: '', stderr: '' };
  child.stdout.on('data', (d) => { output.stdout += d; });
  child.stderr.on('data', (d) => { output.stderr += d; });
  child.output = output;
  child.done = new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, ...output }));
  });
  return child;
}

/**
 * Runs `addrindex ARGS` to completion.
 * @param {string[]} args
 */
function runCli(args) {
  return startCli(args).done;
}

/**
 * Runs `addrindex ARGS --json`, expects exit 0, returns the parsed stdout.
 * @param {string[]} args
 */
async function runJson(args) {
  const r = await runCli([...args, '--json']);
  if (r.code !== 0) throw new Error(`addrindex ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout);
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
  SMALL, BIN, tmpDir, makeChain, addBranch, openIndex, syncInto, freshDigest, digestOf, tipOf,
  startCli, runCli, runJson, waitFor, prng,
};
