'use strict';

const fs = require('node:fs');
const path = require('node:path');
const http = require('node:http');
const { spawnSync } = require('node:child_process');
const { ROOT, startProcess, stopProcess, once, percentile, cannonGet } = require('./http');
const { buildChainIndex, pickAddresses } = require('./chain-index');
const { txRowSizes, spentOutputBytes } = require('./tx-sizes');
const { TxidPaths } = require('./txid-paths');
const { printTable } = require('./table');

const say = (msg) => process.stderr.write(`${msg}\n`);

/**
 * Drops a blocks dir's blk files from the page cache (GNU dd's nocache: posix_fadvise
 * DONTNEED over the whole file, no privileges needed), so the next reads come from the disk.
 * @returns {boolean} whether every file was dropped
 */
function dropPageCache(dir) {
  let ok = true;
  for (const f of fs.readdirSync(dir).filter((n) => /^blk\d{5}\.dat$/.test(n))) {
    const r = spawnSync('dd', [`if=${path.join(dir, f)}`, 'iflag=nocache', 'count=0', 'status=none']);
    if (r.status !== 0) ok = false;
  }
  return ok;
}

function stats(list) {
  const sorted = [...list].sort((a, b) => a - b);
  return { n: sorted.length, p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99) };
}

/**
 * Section 3 of bench/api.js (see there): transactions and blocks on the generated chain.
 * @param {object} o
 * @returns {Promise<object>} the figures, with `targets`
 */
async function txBench({ tmp, servers, workers, duration, connections, txs, seed, chainDir }) {
  const { openStore } = require('../../lib/stores');
  const { BlockReader } = require('../../lib/sources/blockreader');
  const { TxData } = require('../../lib/api/txdata');
  const { decodeAddress } = require('../../lib/chain/address');
  const { toDisplayHex } = require('../../lib/chain/hash');

  const idx = await buildChainIndex({ tmp, txs, seed, chainDir, say: (m) => say(m) });
  say(`  ${idx.txs} txs in ${idx.blocks} blocks, ${(idx.rawBytes / 1e6).toFixed(1)} MB of blocks, synced in ${idx.syncMs} ms`);

  const store = await openStore({ store: 'lmdb', datadir: idx.datadir, network: 'regtest', readOnly: true });
  let picked;
  let sizes;
  let paths;
  const sample = [];
  const wide = [];
  try {
    const tip = await store.getTip();
    for (let i = 0; i < 2000; i++) sample.push(toDisplayHex(await store.getTxids(Math.floor(((i + 0.5) * tip.nextTxNum) / 2000), 1)));
    // for requests/s without the caches' help: more txids than a run asks for, each once
    const stride = 7;
    for (let n = 3; n < tip.nextTxNum && wide.length < 120000; n += stride) wide.push(toDisplayHex(await store.getTxids(n, 1)));
    say('picking addresses: a 2,100-address wallet (2 txs each), 100 with >= 25 txs ...');
    picked = await pickAddresses(store, idx.blocksDir, { wallet: 2100, busy: 100, minTxs: 25 });
    // the same kind of address with a page of ordinary wallet transactions (at most 150 inputs
    // and outputs in its newest 25): the heavily reused addresses above mostly take part in
    // batch payouts and consolidations
    {
      const reader = new BlockReader({ dir: idx.blocksDir, network: 'regtest' });
      const data = new TxData({ store, reader });
      picked.ordinary = [];
      try {
        for (const c of picked.candidates) {
          const page = await store.getHistory(decodeAddress(c.address, 'regtest').scripthash, { order: 'desc', limit: 25 });
          const txs = await data.txs(page.entries.map((e) => e.txid));
          if (txs.reduce((n, f) => n + f.tx.inputs.length + f.tx.outputs.length, 0) <= 150) picked.ordinary.push(c);
          if (picked.ordinary.length === 100) break;
        }
      } finally {
        await reader.close();
      }
    }
    say('walking the rows for the size split ...');
    sizes = await txRowSizes(store, idx.rawBytes);
    const kept = await spentOutputBytes(idx.blocksDir, 'regtest');
    sizes.spentOutputsIfKept = { ...kept, pct: (100 * kept.bytes) / idx.rawBytes };
    say('the TxNum -> txid table: both read paths side by side ...');
    const reader = new BlockReader({ dir: idx.blocksDir, network: 'regtest' });
    const tp = new TxidPaths(store, new TxData({ store, reader }), idx.blocksDir);
    try {
      const sh = (a) => decodeAddress(a, 'regtest').scripthash;
      paths = await tp.compare(picked.wallet.map(sh), picked.busy.map((b) => sh(b.address)), 5);
    } finally {
      tp.close();
      await reader.close();
    }
  } finally {
    await store.close();
  }

  const serve = async () => {
    const api = await startProcess([path.join(ROOT, 'bin', 'addrindex.js'), 'serve', '--datadir', idx.datadir, '--workers', String(workers), '--port', '0']);
    servers.push(api);
    return api;
  };
  const stop = async (api) => {
    await stopProcess(api);
    servers.splice(servers.indexOf(api), 1);
  };
  let dropped = true;

  /**
   * /api/address/:a/txs of a set of addresses on a fresh server, its blk files just dropped
   * from the page cache: cold (one pass), the addresses in turn, each asked again at once.
   */
  const measure = async (set) => {
    dropped = dropPageCache(idx.blocksDir) && dropped;
    const api = await serve();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const txsPath = (b) => `${api.url}/api/address/${b.address}/txs`;
      // the code compiled by one page of an address outside the set (two transactions): the
      // first request of a fresh process would otherwise count the JIT, not the disk
      await once(agent, txsPath({ address: picked.wallet[0] }), 'GET');
      const cold = [];
      for (const b of set) cold.push((await once(agent, txsPath(b), 'GET')).ms);
      const pages = [];
      const inTurn = [];
      for (let round = 0; round < 2; round++) {
        for (const b of set) {
          const r = await once(agent, txsPath(b), 'GET', undefined, { keep: round === 0 });
          if (round === 0) {
            const j = JSON.parse(r.body);
            pages.push({ inputs: j.reduce((n, t) => n + t.vin.length, 0), outputs: j.reduce((n, t) => n + t.vout.length, 0), bytes: r.bytes });
          } else {
            inTurn.push(r.ms);
          }
        }
      }
      const warm = [];
      for (const b of set) {
        await once(agent, txsPath(b), 'GET');
        for (let k = 0; k < 2; k++) warm.push((await once(agent, txsPath(b), 'GET')).ms);
      }
      return {
        addresses: set.length,
        txCount: stats(set.map((b) => b.txCount)),
        pageInputs: stats(pages.map((p) => p.inputs)),
        pageOutputs: stats(pages.map((p) => p.outputs)),
        pageBytes: stats(pages.map((p) => p.bytes)),
        cold: stats(cold),
        warm: stats(warm),
        inTurn: stats(inTurn),
      };
    } finally {
      agent.destroy();
      await stop(api);
    }
  };
  say(`/api/address/:a/txs of ${picked.busy.length} addresses with >= 25 txs, cold (fresh server, blk files dropped from the page cache), then warm ...`);
  const busyTxs = await measure(picked.busy);
  say(`... and of ${picked.ordinary.length} with ordinary pages ...`);
  const ordinaryTxs = await measure(picked.ordinary);

  const api = await serve();
  try {
    say(`/api/tx/:txid over ${sample.length} txids ...`);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const txUrl = (t) => `${api.url}/api/tx/${t}`;
    // warm-up on new connections, which the cluster hands to the workers in turn: each
    // worker's caches see every txid (three rounds, in case the turns fall in step)
    for (let round = 0; round < 3; round++) for (const t of sample) await once(false, txUrl(t), 'GET');
    const txLat = [];
    for (const t of sample) txLat.push((await once(agent, txUrl(t), 'GET')).ms);
    agent.destroy();
    say(`/api/tx/:txid requests/s, ${connections} connections, ${duration} s: the 2,000 again, then txids never asked ...`);
    const rps = await cannonGet(api.url, sample.map((t) => `/api/tx/${t}`), { connections, duration });
    const rpsFresh = await cannonGet(api.url, wide.map((t) => `/api/tx/${t}`), { connections, duration });
    if (rpsFresh.total > wide.length) say(`  (${rpsFresh.total} requests over ${wide.length} txids: some were asked twice)`);

    const out = {
      loadavg: require('node:os').loadavg(),
      chain: { txs: idx.txs, blocks: idx.blocks, rawBytes: idx.rawBytes, seed: String(seed), syncMs: idx.syncMs },
      tx: { warm: stats(txLat), rps, rpsFresh: { ...rpsFresh, txids: wide.length } },
      addressTxs: { ...busyTxs, coldPageCacheDropped: dropped, ordinary: ordinaryTxs },
      sizes,
      txidTable: paths,
    };
    const ms = (v) => `${Number(v).toFixed(2)} ms`;
    out.targets = {
      txP50: { target: '<= 2 ms', value: out.tx.warm.p50, shown: ms(out.tx.warm.p50), met: out.tx.warm.p50 <= 2 },
      txRps: { target: `>= 3000 req/s on ${workers} workers`, value: rps.rps, shown: `${rps.rps.toFixed(0)} req/s`, met: rps.rps >= 3000 },
      txRpsFresh: {
        target: `>= 3000 req/s on ${workers} workers (txids never asked before)`, value: rpsFresh.rps, shown: `${rpsFresh.rps.toFixed(0)} req/s`, met: rpsFresh.rps >= 3000,
      },
      addressTxsWarmP50: { target: '<= 5 ms', value: out.addressTxs.warm.p50, shown: ms(out.addressTxs.warm.p50), met: out.addressTxs.warm.p50 <= 5 },
      addressTxsColdP50: { target: '<= 20 ms', value: out.addressTxs.cold.p50, shown: ms(out.addressTxs.cold.p50), met: out.addressTxs.cold.p50 <= 20 },
      txRowBytes: { target: '<= 5 % of the raw blocks', value: sizes.extra.pct, shown: `${sizes.extra.pct.toFixed(2)} %`, met: sizes.extra.pct <= 5 },
    };
    return out;
  } finally {
    await stop(api);
  }
}

const val = (v) => (v === undefined ? '-' : v.toFixed(2));

function printTxBench(t) {
  const mb = (b) => (b / 1e6).toFixed(2);
  console.log(`\ntransactions and blocks: generated chain, ${t.chain.txs} txs, ${t.chain.blocks} blocks, ${mb(t.chain.rawBytes)} MB (seed ${t.chain.seed})`);
  const a = t.addressTxs;
  const o = a.ordinary;
  const row = (measure, x, target = '') => ({ measure, p50: val(x.p50), p90: val(x.p90), p99: val(x.p99), target });
  printTable([
    row('GET /api/tx/:txid, warm', t.tx.warm, 'p50 <= 2'),
    row(`GET /api/address/:a/txs, ${a.addresses} addresses >= 25 txs: cold`, a.cold, 'p50 <= 20'),
    row('  warm (asked again)', a.warm, 'p50 <= 5'),
    row('  warm, the addresses in turn', a.inTurn),
    row(`  ${o.addresses} others with ordinary pages: cold`, o.cold),
    row('  warm (asked again)', o.warm),
    row('  warm, the addresses in turn', o.inTurn),
  ]);
  for (const [name, x] of [['the first', a], ['the others', o]]) {
    console.log(`  ${name}: txs p50 ${x.txCount.p50}; a page of 25 txs holds p50 ${x.pageInputs.p50} inputs, ${x.pageOutputs.p50} outputs, ${(x.pageBytes.p50 / 1024).toFixed(0)} KiB`);
  }
  console.log(`  GET /api/tx/:txid: ${t.tx.rps.rps.toFixed(0)} req/s over the 2,000 txids asked before (p50 ${t.tx.rps.p50} ms, p99 ${t.tx.rps.p99} ms); ` +
    `${t.tx.rpsFresh.rps.toFixed(0)} req/s over txids never asked (p50 ${t.tx.rpsFresh.p50} ms, p99 ${t.tx.rpsFresh.p99} ms)`);
  const s = t.sizes;
  console.log(`\nindex rows for transactions and blocks (of ${mb(s.rawBytes)} MB of blocks; the whole index ${mb(s.indexBytes)} MB = ${s.index.pct.toFixed(1)} %)`);
  printTable([
    { rows: 'block locators (l)', MB: mb(s.locators.bytes), '% of blocks': s.locators.pct.toFixed(3) },
    { rows: 'tx offsets (in n)', MB: mb(s.txOffsets.bytes), '% of blocks': s.txOffsets.pct.toFixed(3) },
    { rows: 'spenders (spent part of o)', MB: mb(s.spenders.bytes), '% of blocks': s.spenders.pct.toFixed(3) },
    { rows: 'spent outputs (none kept)', MB: mb(0), '% of blocks': '0' },
    { rows: 'together (target <= 5 %)', MB: mb(s.extra.bytes), '% of blocks': s.extra.pct.toFixed(3) },
    { rows: 'txids (in n)', MB: mb(s.txids.bytes), '% of blocks': s.txids.pct.toFixed(3) },
    { rows: 'the index without them', MB: mb(s.withoutTxids.bytes), '% of blocks': s.withoutTxids.pct.toFixed(2) },
  ]);
  const p = t.txidTable;
  console.log(`\nthe TxNum -> txid table: read from the index (A) or by hashing the transaction read from its blk file (B), in process, p50 of ${p.rounds} rounds`);
  printTable([
    { read: `merged history, ${p.wallet} addresses (${p.entries} entries)`, 'A ms': p.mergedA.p50.toFixed(2), 'B ms': p.mergedB.p50.toFixed(2), 'B / A': p.mergedRatio.toFixed(2) },
    { read: `newest 25 whole txs of ${p.busy} addresses`, 'A ms': p.txsA.p50.toFixed(2), 'B ms': p.txsB.p50.toFixed(2), 'B / A': p.txsRatio.toFixed(2) },
  ]);
  console.log(`\nprevious outputs: read from the funding transactions (kept: none), or kept in the index: ${mb(s.spentOutputsIfKept.bytes)} MB ` +
    `for ${s.spentOutputsIfKept.spent} spent outputs = ${s.spentOutputsIfKept.pct.toFixed(2)} % of the blocks; the newest 25 txs with their prevouts ` +
    `${p.txsA.p50.toFixed(2)} ms, without reading any ${p.txsBare.p50.toFixed(2)} ms (p50, in process, warm)`);
}

module.exports = { txBench, printTxBench, dropPageCache };
