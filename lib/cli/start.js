'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { SourceError } = require('../errors');
const { getNetwork } = require('../chain/networks');
const { serve, serveConfig } = require('./serve');
const { logOptions, logUsage } = require('../ops/log');

const DATA = path.join(__dirname, '..', '..', 'test', 'fixtures', 'mainnet', 'blk-first-439.dat');
const TIP = { height: 438, hash: '0000000025c6b644f8add734be7e666fa4afa43ca0204d623a0c0b1fd2104c7a' };

// Height 170: Satoshi pays Hal Finney 10 BTC, the first payment from one person to another.
const HAL = '1Q2TWHE3GMdB6BZKafqwxXtWAWgFt5Jvm3';
const SATOSHI = '12cbQLTFMXRnSzktFkuoG3eHoMeFtpTu3S';
const TX170 = 'f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16';

const usage = `usage: addrindex start [--datadir DIR] [--host ADDR] [--port N] [--workers N]

The main job on the bundled data, for a fresh clone: indexes the first 439 mainnet blocks
(test/fixtures/mainnet/blk-first-439.dat, read as a Bitcoin Core blocks directory) into an
LMDB index unless it is already there, then serves the explorer (insight-ui at /insight/) and
the API, and prints the explorer's URL and example requests. Ctrl-C stops it.

  --datadir DIR        the index (default ./data/mainnet-439)
  --host ADDR          listen address (default 127.0.0.1)
  --port N             listen port (default 3000)
  --workers N          HTTP worker processes (default: one per core)
${logUsage}`;

const options = {
  datadir: { type: 'string', default: path.join('data', 'mainnet-439') },
  host: { type: 'string', default: '127.0.0.1' },
  port: { type: 'string', default: '3000' },
  workers: { type: 'string' },
  ...logOptions,
};

/**
 * Syncs the bundled blocks into `datadir` unless its tip already is their tip.
 * @returns {Promise<{synced: boolean, ms: number}>}
 */
async function ensureIndex(datadir, io) {
  if (!fs.existsSync(DATA)) {
    throw new SourceError('ERR_NO_DEMO_DATA',
      `the bundled blocks (${DATA}) are missing: they ship with the git checkout, not the npm package`);
  }
  const { openStore } = require('../stores');
  const network = getNetwork('main');
  const started = Date.now();
  await fs.promises.mkdir(datadir, { recursive: true });
  // The blocks file sits in a blocks directory beside the index, named as Bitcoin Core names
  // it and kept: the server reads transactions and blocks from it.
  const dir = path.join(datadir, 'blocks');
  await fs.promises.mkdir(dir, { recursive: true });
  const blk = path.join(dir, 'blk00000.dat');
  if (!fs.existsSync(blk) || fs.statSync(blk).size !== fs.statSync(DATA).size) await fs.promises.copyFile(DATA, blk);
  const store = await openStore({ store: 'lmdb', datadir, network: network.name, readOnly: false });
  try {
    const info = await store.getSourceInfo();
    if (!info || info.blocksDir !== dir) await store.putSourceInfo({ blocksDir: dir });
    const tip = await store.getTip();
    if (tip && tip.height === TIP.height && tip.hash === TIP.hash) return { synced: false, ms: Date.now() - started };
    io.stderr.write(`addrindex start: indexing the first 439 mainnet blocks into ${datadir} ...\n`);
    const { BlocksDirSource } = require('../sources/blocksdir');
    const { SyncService } = require('../sync/service');
    const source = new BlocksDirSource({ dir, network });
    try {
      await new SyncService({ source, store, network, threads: 0 }).run();
    } finally {
      await source.close();
    }
    return { synced: true, ms: Date.now() - started };
  } finally {
    await store.close();
  }
}

/**
 * Requests that work as printed against the bundled index.
 * @param {string} url base URL of the server
 * @returns {string[]}
 */
function examples(url) {
  const body = JSON.stringify({ addresses: [SATOSHI, HAL], limit: 10 });
  return [
    '# status: tip, network, store',
    `curl ${url}/api/v1/status`,
    `# Hal Finney's address: 10 BTC from Satoshi at height 170, the first payment between two people`,
    `curl ${url}/api/v1/address/${HAL}`,
    `curl '${url}/api/v1/address/${SATOSHI}/history?limit=5&order=desc'`,
    '# two addresses\' histories merged in chain order (one cursor pages through both)',
    `curl -H 'Content-Type: application/json' -d '${body}' ${url}/api/v1/addresses/history`,
    `# where a transaction is: height, block, position; with ?full=1 the whole transaction`,
    `curl ${url}/api/v1/tx/${TX170}`,
    `curl '${url}/api/v1/tx/${TX170}?full=1'`,
    '# Esplora-compatible (blockstream.info / mempool.space clients) and insight-compatible',
    `curl ${url}/api/address/${HAL}`,
    `curl ${url}/api/address/${HAL}/utxo`,
    `curl ${url}/api/tx/${TX170}`,
    `curl ${url}/api/address/${SATOSHI}/txs`,
    `curl ${url}/insight-api/addr/${HAL}`,
    `curl ${url}/insight-api/tx/${TX170}`,
    `# every route: ${url}/api/v1/openapi.json`,
  ];
}

async function run(positionals, values, io) {
  const datadir = path.resolve(values.datadir);
  const cfg = serveConfig({ ...values, datadir, store: 'lmdb', network: 'main', explorer: true });
  const quiet = Boolean(values.quiet);
  const { synced, ms } = await ensureIndex(datadir, quiet ? { stderr: { write() {} } } : io);
  if (!quiet) io.stderr.write(synced ? `addrindex start: indexed 439 blocks in ${ms} ms\n` : `addrindex start: ${datadir} already holds the 439 blocks\n`);
  const shown = (url) => url.replace('//0.0.0.0:', '//127.0.0.1:').replace('//[::]:', '//127.0.0.1:');
  return serve(cfg, io, {
    // what a person opens first: the explorer
    intro: (url) => io.stdout.write(`\nThe explorer (insight-ui): open ${shown(url)}/insight/ in a browser\n\n`),
    onReady: ({ url }) => {
      if (quiet) return;
      io.stdout.write(`\nThe API (docs/API.md), requests that work as printed:\n\n` +
        `${examples(shown(url)).map((l) => (l.startsWith('#') ? `  ${l}` : `  ${l}\n`)).join('\n')}\nCtrl-C stops the server.\n`);
    },
  });
}

module.exports = { usage, options, run, examples, ensureIndex, HAL, SATOSHI, TX170 };
