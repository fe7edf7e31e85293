'use strict';

const fs = require('node:fs');
const path = require('node:path');

/**
 * The generated chain the transaction benchmarks read (bench/gen-chain.js's, default 1M
 * transactions, seed 1) and an LMDB index of it synced by the SyncService, with the blocks dir
 * recorded in the index as `addrindex sync` records it. A `chainDir` that already holds the
 * chain (same txs and seed, written by an earlier run) is reused; the index is always new.
 * @param {object} opts
 * @param {string} opts.tmp where the index (and, without chainDir, the chain) is built
 * @param {number} opts.txs
 * @param {string|number} opts.seed
 * @param {string} [opts.chainDir]
 * @param {(msg: string) => void} [opts.say]
 * @returns {Promise<{datadir: string, blocksDir: string, txs: number, blocks: number, rawBytes: number, syncMs: number}>}
 */
async function buildChainIndex({ tmp, txs, seed, chainDir, say = () => {} }) {
  const { writeChain } = require('../../tools/generator');
  const { openStore } = require('../../lib/stores');
  const { BlocksDirSource } = require('../../lib/sources/blocksdir');
  const { SyncService } = require('../../lib/sync/service');
  const blocksDir = chainDir || path.join(tmp, 'chain');
  const marker = path.join(blocksDir, 'addrindex-bench-chain.json');
  const want = { txs, seed: String(seed), network: 'regtest' };
  const have = fs.existsSync(marker) ? JSON.parse(fs.readFileSync(marker, 'utf8')) : null;
  if (!have || have.txs !== want.txs || have.seed !== want.seed) {
    fs.mkdirSync(blocksDir, { recursive: true });
    for (const f of fs.readdirSync(blocksDir)) if (/^blk\d{5}\.dat$|^xor\.dat$/.test(f)) fs.rmSync(path.join(blocksDir, f));
    say(`writing the generated chain (${txs} txs, seed ${seed}) into ${blocksDir} ...`);
    const s = await writeChain({ dir: blocksDir, seed, txs, network: 'regtest' });
    fs.writeFileSync(marker, JSON.stringify({ ...want, blocks: s.blocks, bytes: s.bytes }));
  }
  const datadir = path.join(tmp, 'chain-index');
  fs.mkdirSync(datadir, { recursive: true });
  const store = await openStore({ store: 'lmdb', datadir, network: 'regtest' });
  const source = new BlocksDirSource({ dir: blocksDir, network: 'regtest' });
  try {
    await store.putSourceInfo({ blocksDir: path.resolve(blocksDir) });
    say('syncing it into LMDB ...');
    const t0 = Date.now();
    const r = await new SyncService({ source, store, network: 'regtest' }).run();
    const fileBytes = fs.readdirSync(blocksDir).filter((f) => /^blk\d{5}\.dat$/.test(f))
      .reduce((n, f) => n + fs.statSync(path.join(blocksDir, f)).size, 0);
    const blocks = r.tip.height + 1;
    // the blocks' own bytes: the files less each record's 8-byte magic and size (no padding here)
    return { datadir, blocksDir, txs: r.tip.nextTxNum, blocks, rawBytes: fileBytes - 8 * blocks, syncMs: Date.now() - t0 };
  } finally {
    await source.close();
    await store.close();
  }
}

module.exports = { buildChainIndex };

/**
 * Addresses of a synced chain for the benchmarks to ask about, in order of first appearance
 * (outputs read from the first blocks until enough are found): a wallet of `wallet`
 * addresses with exactly two transactions each (the seed's question), and `busy` addresses
 * with at least `minTxs` transactions, each set taken evenly from its candidates.
 * @param {import('../../lib/stores/abstract').AbstractStore} store
 * @param {string} blocksDir
 * @param {{wallet: number, busy: number, minTxs: number, network?: string}} want
 * @returns {Promise<{wallet: string[], busy: Array<{address: string, txCount: number}>,
 *   candidates: Array<{address: string, txCount: number}>}>} candidates: every address found with >= minTxs
 */
async function pickAddresses(store, blocksDir, { wallet, busy, minTxs, network = 'regtest' }) {
  const { BlocksDirSource } = require('../../lib/sources/blocksdir');
  const { parseBlock } = require('../../lib/chain/block');
  const { encodeAddress, decodeAddress } = require('../../lib/chain/address');
  const source = new BlocksDirSource({ dir: blocksDir, network });
  const two = [];
  const many = [];
  const seen = new Set();
  try {
    await source.scan();
    let batch = [];
    const check = async () => {
      const sums = await store.getSummaries(batch.map((a) => decodeAddress(a, network).scripthash));
      batch.forEach((a, i) => {
        if (!sums[i]) return;
        if (sums[i].txCount === 2) two.push(a);
        else if (sums[i].txCount >= minTxs) many.push({ address: a, txCount: sums[i].txCount });
      });
      batch = [];
    };
    for await (const b of source.blocks(1)) {
      for (const tx of parseBlock(b.raw).txs) {
        for (const out of tx.outputs) {
          const a = encodeAddress(out.script, network);
          if (a && !seen.has(a)) {
            seen.add(a);
            batch.push(a);
          }
        }
      }
      if (batch.length >= 5000) await check();
      if (two.length >= 4 * wallet && many.length >= 4 * busy) break;
    }
    await check();
  } finally {
    await source.close();
  }
  if (two.length < wallet || many.length < busy) throw new Error(`found ${two.length} two-tx and ${many.length} busy addresses`);
  const spread = (list, n) => Array.from({ length: n }, (_, i) => list[Math.floor((i * list.length) / n)]);
  return { wallet: spread(two, wallet), busy: spread(many, busy), candidates: many };
}

module.exports.pickAddresses = pickAddresses;
