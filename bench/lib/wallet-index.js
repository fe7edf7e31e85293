'use strict';

const fs = require('node:fs');
const path = require('node:path');

/**
 * The chain bench/api.js and bench/compression.js serve: 150 blocks of 100 transactions,
 * mainnet-like shape, seeded.
 */
const API_CHAIN = Object.freeze({ seed: 'api-bench', blocks: 150, txsPerBlock: 100 });

/**
 * The seed's wallet question as an index: a generated regtest chain synced into LMDB, and
 * `count` addresses that have exactly two transactions each (every k-th of those, in order of
 * first appearance). bench/api.js and bench/bitcore.js ask about them.
 * @param {object} opts
 * @param {string} opts.tmp a directory to build in
 * @param {object} opts.chain writeChain parameters ({seed, blocks, txsPerBlock, mix, ...})
 * @param {number} opts.count addresses wanted
 * @param {(address: string) => boolean} [opts.accept] which addresses may be picked (default all)
 * @returns {Promise<{datadir: string, blocksDir: string, addresses: string[], txs: number, withTwo: number}>}
 */
async function buildWalletIndex({ tmp, chain, count, accept = () => true }) {
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
  const written = await writeChain({ dir: blocksDir, ...chain });
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
          if (a && !seen.has(a) && accept(a)) {
            seen.add(a);
            all.push(a);
          }
        }
      }
    }
    const summaries = await store.getSummaries(all.map((a) => decodeAddress(a, 'regtest').scripthash));
    const two = all.filter((a, i) => summaries[i] && summaries[i].txCount === 2);
    const step = Math.floor(two.length / count);
    if (step < 1) throw new Error(`only ${two.length} addresses have two transactions; need ${count}`);
    const picked = [];
    for (let i = 0; picked.length < count; i += step) picked.push(two[i]);
    return { datadir, blocksDir, addresses: picked, txs: written.txs, withTwo: two.length };
  } finally {
    await source.close();
    await store.close();
  }
}

module.exports = { buildWalletIndex, API_CHAIN };
