'use strict';

/**
 * Shared by the API tests: a synced fixture index, an in-process server over it, HTTP
 * helpers, and the independent reference index of the 439 mainnet blocks
 * (test/helpers/reference.js) to check answers against.
 */

const fs = require('node:fs');
const path = require('node:path');
const { MAINNET_439 } = require('../helpers/fixtures');
const { tempDir } = require('../helpers/tmp');
const { mainnetReference } = require('../helpers/reference');

// Height 170: Satoshi pays Hal Finney 10 BTC, the first payment from one person to another.
const HAL = '1Q2TWHE3GMdB6BZKafqwxXtWAWgFt5Jvm3';
const SATOSHI = '12cbQLTFMXRnSzktFkuoG3eHoMeFtpTu3S';
const TX170 = 'f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16';

/** A native summary's `unconfirmed` part without a mempool snapshot of the tip. */
const NO_UNCONFIRMED = Object.freeze({ balance: 0, received: 0, sent: 0, txCount: 0, fundedCount: 0, spentCount: 0 });

/**
 * GET routes compared byte for byte between a server under test and an LMDB index of the same
 * blocks served directly: address routes of all three APIs for two addresses, then tx, block
 * and error routes (errors must map to the same statuses whatever the store or process layout).
 */
const COMPARE_ROUTES = Object.freeze([
  ...[HAL, SATOSHI].flatMap((a) => [
    '/api/v1/address/A', '/api/v1/address/A/history?limit=2&order=desc', '/api/v1/address/A/utxos?limit=1', '/api/v1/address/A/utxos',
    '/api/address/A', '/api/address/A/txs/chain', '/api/address/A/utxo', '/insight-api/addr/A', '/insight-api/addr/A/balance',
  ].map((r) => r.replace('A', a))),
  `/api/v1/address/${SATOSHI}/history?limit=3&fromHeight=100`,
  `/insight-api/addrs/${HAL},${SATOSHI}/utxo`,
  `/api/v1/tx/${TX170}`,
  `/api/tx/${TX170}/status`,
  // transactions and blocks, read from the blocks dir the index recorded
  `/api/tx/${TX170}`,
  `/api/tx/${TX170}/outspends`,
  `/api/v1/tx/${TX170}?full=1`,
  `/api/address/${SATOSHI}/txs`,
  `/insight-api/tx/${TX170}`,
  `/insight-api/txs?address=${SATOSHI}`,
  `/insight-api/addrs/${HAL},${SATOSHI}/txs`,
  '/api/block/00000000d1145790a8694403d4063f323d499e655c83426834d4ce2f8dd4a2ee/txs',
  '/insight-api/block/00000000d1145790a8694403d4063f323d499e655c83426834d4ce2f8dd4a2ee',
  '/api/v1/blocks/170',
  '/api/blocks/tip/hash',
  '/api/blocks/tip/height',
  '/api/block-height/170',
  `/api/v1/address/${SATOSHI}/history?cursor=AgAAAAABAAAAAA`,
  '/api/v1/address/not-an-address',
  '/api/v1/tx/00',
  '/no/such/route',
]);

/**
 * A blocks dir holding the first `count` blocks of the mainnet fixture as blk00000.dat.
 * @param {string} dir
 * @param {number} [count=439]
 */
function writeBlocksDir(dir, count = 439) {
  const buf = fs.readFileSync(MAINNET_439);
  let end = 0;
  for (let i = 0; i < count; i++) end += 8 + buf.readUInt32LE(end + 4);
  fs.writeFileSync(path.join(dir, 'blk00000.dat'), buf.subarray(0, end));
  return { file: path.join(dir, 'blk00000.dat'), rest: buf.subarray(end) };
}

/**
 * Syncs the first `count` fixture blocks into a new LMDB datadir with the SyncService.
 * @returns {Promise<{datadir: string, blocksDir: string, cleanup: () => Promise<void>}>}
 */
async function syncedFixture(count = 439) {
  const { openStore } = require('../../lib/stores');
  const { BlocksDirSource } = require('../../lib/sources/blocksdir');
  const { SyncService } = require('../../lib/sync/service');
  const blocksDir = tempDir('blocks');
  const datadir = tempDir('index');
  writeBlocksDir(blocksDir, count);
  const store = await openStore({ store: 'lmdb', datadir, network: 'main' });
  const source = new BlocksDirSource({ dir: blocksDir, network: 'main' });
  try {
    // as `addrindex sync` does: a server started later reads blocks from here
    await store.putSourceInfo({ blocksDir });
    await new SyncService({ source, store, network: 'main', threads: 0 }).run();
  } finally {
    await source.close();
    await store.close();
  }
  return {
    datadir,
    blocksDir,
    cleanup: async () => {
      await fs.promises.rm(datadir, { recursive: true, force: true });
      await fs.promises.rm(blocksDir, { recursive: true, force: true });
    },
  };
}

/**
 * A generated chain (tools/generator) of another network, synced into a new LMDB datadir.
 * @returns {Promise<{datadir: string, network: string, tip: object, addresses: string[], cleanup: () => Promise<void>}>}
 *   addresses: the first addresses paid, in chain order
 */
async function syncedGenerated({ network, seed = 'api-test', blocks = 5, txsPerBlock = 5, ...params }) {
  const { writeChain } = require('../../tools/generator');
  const { openStore } = require('../../lib/stores');
  const { BlocksDirSource } = require('../../lib/sources/blocksdir');
  const { SyncService } = require('../../lib/sync/service');
  const { parseBlock } = require('../../lib/chain/block');
  const { encodeAddress } = require('../../lib/chain/address');
  const blocksDir = tempDir(`${network}-blocks`);
  const datadir = tempDir(`${network}-index`);
  await writeChain({ dir: blocksDir, seed, blocks, txsPerBlock, network, ...params });
  const store = await openStore({ store: 'lmdb', datadir, network });
  const source = new BlocksDirSource({ dir: blocksDir, network });
  const addresses = [];
  let tip;
  try {
    await store.putSourceInfo({ blocksDir });
    ({ tip } = await new SyncService({ source, store, network, threads: 0 }).run());
    for await (const b of source.blocks(1)) {
      for (const tx of parseBlock(b.raw).txs) {
        for (const out of tx.outputs) {
          const a = encodeAddress(out.script, network);
          if (a && !addresses.includes(a)) addresses.push(a);
        }
      }
    }
  } finally {
    await source.close();
    await store.close();
  }
  return {
    datadir, blocksDir, network, tip, addresses,
    cleanup: async () => {
      await fs.promises.rm(datadir, { recursive: true, force: true });
      await fs.promises.rm(blocksDir, { recursive: true, force: true });
    },
  };
}

/**
 * The API over a read-only store in this process, on a free port (or over `opts.store`, an
 * open store of any kind). Blocks are read from `blocksDir` or, as `addrindex serve` finds
 * them, from the dir the index recorded.
 * @returns {Promise<{url: string, app: object, server: object, store: object, close: () => Promise<void>}>}
 */
async function startServer(datadir, { network = 'main', blocksDir, store: given, ...opts } = {}) {
  const { openStore } = require('../../lib/stores');
  const { ApiApp, createServer, closeGracefully } = require('../../lib/api/server');
  const { blocksDirOf } = require('../../lib/api/txdata');
  // an open store of any kind may be given (the caller closes it); else the LMDB index at datadir
  const store = given || await openStore({ store: 'lmdb', datadir, network, readOnly: true });
  const logs = [];
  const { dir } = await blocksDirOf(store, blocksDir);
  const app = new ApiApp({ store, network, storeKind: store.kind || 'lmdb', log: (m) => logs.push(m), blocksDir: dir, ...opts });
  const server = createServer(app);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  await app.start(); // the live feed's watcher, when opts.live asks for one
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url, app, server, store, logs,
    close: async () => {
      await closeGracefully(server, app, 2000);
      if (!given) await store.close();
    },
  };
}

/**
 * One HTTP request (node's fetch). The body is parsed as JSON when the answer says JSON.
 * @returns {Promise<{status: number, headers: Headers, text: string, json: any}>}
 */
async function request(url, { method = 'GET', body, headers = {} } = {}) {
  const init = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    if (!init.headers['content-type']) init.headers['content-type'] = 'application/json';
  }
  const res = await fetch(url, init);
  const text = await res.text();
  const type = res.headers.get('content-type') || '';
  return { status: res.status, headers: res.headers, text, json: type.startsWith('application/json') && text ? JSON.parse(text) : undefined };
}


module.exports = {
  HAL, SATOSHI, TX170, NO_UNCONFIRMED, COMPARE_ROUTES, writeBlocksDir, syncedFixture, syncedGenerated, startServer, request,
  referenceIndex: mainnetReference,
};
