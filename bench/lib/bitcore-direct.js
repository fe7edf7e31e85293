'use strict';

/**
 * bench/bitcore.js's breakdown, run as a child in the bitcore-node host (it loads the host's
 * bitcore-lib 0.13): the time of the service's own getAddressHistory for one insight page,
 * called in process, and the time insight-api 0.4.3 spends checking the addresses of one
 * request with that bitcore-lib (its checkAddrs: `new bitcore.Address(a)` for each). Prints
 * one JSON line.
 *
 *   node bench/lib/bitcore-direct.js HOST_DIR DATADIR BLOCKS_DIR ADDRESSES_JSON REQUESTS PAGE
 */

const fs = require('node:fs');
const path = require('node:path');
const { createRequire } = require('node:module');
const { percentile } = require('./http');

const [host, datadir, blocksDir, addressesFile, requests, page] = process.argv.slice(2);
const hostRequire = createRequire(path.join(host, 'noop.js'));
const bitcore = hostRequire('bitcore-lib');
const index = hostRequire('bitcore-node/lib');
const Node = hostRequire('bitcore-node/lib/node');
const BitcoindService = require('../../lib/bitcore');

index.log.info = () => {};
index.log.debug = () => {};

function stats(lat) {
  lat.sort((a, b) => a - b);
  return { p50: percentile(lat, 50), p90: percentile(lat, 90), p99: percentile(lat, 99), n: lat.length };
}

async function main() {
  const addresses = JSON.parse(fs.readFileSync(addressesFile, 'utf8'));
  const n = Number(requests);
  const size = Number(page);
  const node = new Node({ network: 'regtest', services: [{ name: 'bitcoind', module: BitcoindService, config: { datadir, blocksDir } }] });
  await new Promise((resolve, reject) => node.start((err) => (err ? reject(err) : resolve())));
  const history = (from) => new Promise((resolve, reject) => {
    node.getAddressHistory(addresses, { from, to: from + size }, (err, r) => (err ? reject(err) : resolve(r)));
  });
  const first = await history(0);
  const pages = Math.floor(first.totalCount / size);
  for (let i = 0; i < 20; i++) await history(size * ((pages - 1 - i) % pages)); // warm-up, on pages not measured first
  const service = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await history(size * (i % pages));
    service.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const check = [];
  for (let i = 0; i < 40; i++) {
    const t0 = process.hrtime.bigint();
    for (const a of addresses) new bitcore.Address(a); // eslint-disable-line no-new
    check.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  await new Promise((resolve) => node.stop(resolve));
  process.stdout.write(`${JSON.stringify({ serviceHistoryPage: stats(service), insightAddressCheck: stats(check) })}\n`);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
