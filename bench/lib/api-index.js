'use strict';

/**
 * The index bench/api.js and bench/compression.js serve: a generated regtest chain (seed
 * "api-bench", 150 blocks of 100 transactions, mainnet-like shape), synced with the
 * SyncService into LMDB; `addresses` are every n-th of those with exactly two transactions, in
 * order of first appearance (the seed's cluster experiment: 2,100 addresses x 2 txs).
 */

const fs = require('node:fs');
const path = require('node:path');
const http = require('node:http');
const { spawn } = require('node:child_process');

const ROOT = path.join(__dirname, '..', '..');
const CHAIN = Object.freeze({ seed: 'api-bench', blocks: 150, txsPerBlock: 100 });

/**
 * @param {string} tmp an empty directory
 * @param {number} nAddresses
 * @returns {Promise<{datadir: string, addresses: string[], txs: number, withTwo: number}>}
 */
async function buildIndex(tmp, nAddresses) {
  const { writeChain } = require('../../tools/generator');
  const { openStore } = require('../../lib/stores');
  const { BlocksDirSource } = require('../../lib/sources/blocksdir');
  const { SyncService } = require('../../lib/sync/service');
  const { parseBlock } = require('../../lib/chain/block');
  const { encodeAddress, decodeAddress } = require('../../lib/chain/address');
  const blocksDir = path.join(tmp, 'blocks');
  const datadir = path.join(tmp, 'index');
  fs.mkdirSync(blocksDir);
  fs.mkdirSync(datadir);
  const chain = await writeChain({ dir: blocksDir, ...CHAIN });
  const store = await openStore({ store: 'lmdb', datadir, network: 'regtest' });
  const source = new BlocksDirSource({ dir: blocksDir, network: 'regtest' });
  try {
    await new SyncService({ source, store, network: 'regtest', threads: 0 }).run();
    const seen = new Set();
    const all = [];
    for await (const b of source.blocks(0)) {
      for (const tx of parseBlock(b.raw).txs) {
        for (const out of tx.outputs) {
          const a = encodeAddress(out.script, 'regtest');
          if (a && !seen.has(a)) {
            seen.add(a);
            all.push(a);
          }
        }
      }
    }
    const summaries = await store.getSummaries(all.map((a) => decodeAddress(a, 'regtest').scripthash));
    const two = all.filter((a, i) => summaries[i] && summaries[i].txCount === 2);
    const step = Math.floor(two.length / nAddresses);
    if (step < 1) throw new Error(`only ${two.length} addresses have two transactions; need ${nAddresses}`);
    const picked = [];
    for (let i = 0; picked.length < nAddresses; i += step) picked.push(two[i]);
    return { datadir, addresses: picked, txs: chain.txs, withTwo: two.length };
  } finally {
    await source.close();
    await store.close();
  }
}

/**
 * Starts a server process and resolves with its URL (the line "... listening on URL", on
 * stdout or stderr).
 * @param {string[]} argv
 * @returns {Promise<{proc: import('node:child_process').ChildProcess, url: string}>}
 */
function startProcess(argv) {
  const proc = spawn(process.execPath, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let found = false;
  return new Promise((resolve, reject) => {
    const onData = (d) => {
      if (found) return; // keep nothing once started: a long benchmark would pile it up
      out += d;
      const m = out.match(/listening on (http:\/\/\S+)/);
      if (m) {
        found = true;
        out = '';
        resolve({ proc, url: m[1] });
      }
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.on('exit', (code) => reject(new Error(`${argv.join(' ')} exited with ${code}:\n${out}`)));
  });
}

async function stopProcess({ proc }) {
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill('SIGTERM');
  await exited;
}

/** A whole answer: status, headers and the raw body bytes. */
function fetchRaw(url, { method = 'GET', body, headers = {}, agent = false } = {}) {
  return new Promise((resolve, reject) => {
    const h = { ...headers };
    if (body) {
      h['content-type'] = 'application/json';
      h['content-length'] = Buffer.byteLength(body);
    }
    const req = http.request(url, { method, agent, headers: h }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

module.exports = { CHAIN, ROOT, buildIndex, startProcess, stopProcess, fetchRaw, percentile };
