'use strict';

/**
 * Shared by the API tests: a synced fixture index, an in-process server over it, HTTP
 * helpers, and an independent reference index of the 439 mainnet blocks computed with
 * bitcore-lib (not with addrindex's parser or store) to check answers against.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const bitcore = require('bitcore-lib');
const { MAINNET_439, mainnet439Blocks } = require('../helpers/fixtures');

const ROOT = path.join(__dirname, '..', '..');

// Height 170: Satoshi pays Hal Finney 10 BTC, the first payment from one person to another.
const HAL = '1Q2TWHE3GMdB6BZKafqwxXtWAWgFt5Jvm3';
const SATOSHI = '12cbQLTFMXRnSzktFkuoG3eHoMeFtpTu3S';
const TX170 = 'f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16';
const BIN = path.join(ROOT, 'bin', 'addrindex.js');

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
  '/api/blocks/tip/hash',
  '/api/blocks/tip/height',
  '/api/block-height/170',
  `/api/v1/address/${SATOSHI}/history?cursor=AgAAAAABAAAAAA`,
  '/api/v1/address/not-an-address',
  '/api/v1/tx/00',
  '/no/such/route',
]);

async function tmpdir(prefix) {
  return fs.promises.mkdtemp(path.join(os.tmpdir(), `addrindex-api-${prefix}-`));
}

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
  const blocksDir = await tmpdir('blocks');
  const datadir = await tmpdir('index');
  writeBlocksDir(blocksDir, count);
  const store = await openStore({ store: 'lmdb', datadir, network: 'main' });
  const source = new BlocksDirSource({ dir: blocksDir, network: 'main' });
  try {
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
 * A generated chain (lib/generator) of another network, synced into a new LMDB datadir.
 * @returns {Promise<{datadir: string, network: string, tip: object, addresses: string[], cleanup: () => Promise<void>}>}
 *   addresses: the first addresses paid, in chain order
 */
async function syncedGenerated({ network, seed = 'api-test', blocks = 5, txsPerBlock = 5, ...params }) {
  const { writeChain } = require('../../lib/generator');
  const { openStore } = require('../../lib/stores');
  const { BlocksDirSource } = require('../../lib/sources/blocksdir');
  const { SyncService } = require('../../lib/sync/service');
  const { parseBlock } = require('../../lib/chain/block');
  const { encodeAddress } = require('../../lib/chain/address');
  const blocksDir = await tmpdir(`${network}-blocks`);
  const datadir = await tmpdir(`${network}-index`);
  await writeChain({ dir: blocksDir, seed, blocks, txsPerBlock, network, ...params });
  const store = await openStore({ store: 'lmdb', datadir, network });
  const source = new BlocksDirSource({ dir: blocksDir, network });
  const addresses = [];
  let tip;
  try {
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
    datadir, network, tip, addresses,
    cleanup: async () => {
      await fs.promises.rm(datadir, { recursive: true, force: true });
      await fs.promises.rm(blocksDir, { recursive: true, force: true });
    },
  };
}

/**
 * The API over a read-only store in this process, on a free port.
 * @returns {Promise<{url: string, app: object, server: object, store: object, close: () => Promise<void>}>}
 */
async function startServer(datadir, { network = 'main', ...opts } = {}) {
  const { openStore } = require('../../lib/stores');
  const { ApiApp, createServer, closeGracefully } = require('../../lib/api/server');
  const store = await openStore({ store: 'lmdb', datadir, network, readOnly: true });
  const logs = [];
  const app = new ApiApp({ store, network, storeKind: 'lmdb', log: (m) => logs.push(m), ...opts });
  const server = createServer(app);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url, app, server, store, logs,
    close: async () => {
      await closeGracefully(server, app, 2000);
      await store.close();
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

/**
 * The address an output pays, as bitcore-lib sees it (P2PK counted as its key's P2PKH).
 * @returns {string|null}
 */
function outputAddress(script) {
  if (script.isPublicKeyOut()) return new bitcore.PublicKey(script.chunks[0].buf).toAddress('livenet').toString();
  const a = script.toAddress('livenet');
  return a ? a.toString() : null;
}

let reference = null;

/**
 * An address index of the fixture built with bitcore-lib alone: per address, its
 * transactions in chain order and its outputs; queried at any height.
 */
function referenceIndex() {
  if (reference) return reference;
  const blocks = mainnet439Blocks().map((raw) => bitcore.Block.fromBuffer(raw));
  const txs = []; // chain order: {txid, height, position}
  const byAddr = new Map(); // address -> {events: [{height, txIndex, funded/spent value}]}
  const outputs = new Map(); // "txid:vout" -> {address, value, height, txIndex}
  const addr = (a) => {
    if (!byAddr.has(a)) byAddr.set(a, []);
    return byAddr.get(a);
  };
  blocks.forEach((block, height) => {
    block.transactions.forEach((tx, position) => {
      const txIndex = txs.length;
      txs.push({ txid: tx.hash, height, position, blockHash: block.hash, time: block.header.time });
      if (!tx.isCoinbase()) {
        for (const input of tx.inputs) {
          const key = `${input.prevTxId.toString('hex')}:${input.outputIndex}`;
          const prev = outputs.get(key);
          if (!prev) continue; // spends nothing indexed (never happens in these blocks)
          prev.spentAt = height;
          addr(prev.address).push({ txIndex, height, spent: prev.value });
        }
      }
      if (height === 0) return; // the genesis output is not spendable and not indexed
      tx.outputs.forEach((out, vout) => {
        const a = outputAddress(out.script);
        if (!a) return;
        outputs.set(`${tx.hash}:${vout}`, { address: a, txid: tx.hash, vout, value: out.satoshis, height, txIndex });
        addr(a).push({ txIndex, height, funded: out.satoshis });
      });
    });
  });

  /** The index as of `tip` (inclusive) for one address. */
  function at(address, tip = blocks.length - 1) {
    const events = (byAddr.get(address) || []).filter((e) => e.height <= tip);
    const order = [...new Set(events.map((e) => e.txIndex))].sort((a, b) => a - b);
    const history = order.map((i) => ({
      txid: txs[i].txid, height: txs[i].height,
      funded: events.some((e) => e.txIndex === i && e.funded !== undefined),
      spent: events.some((e) => e.txIndex === i && e.spent !== undefined),
    }));
    const received = events.reduce((s, e) => s + (e.funded || 0), 0);
    const sent = events.reduce((s, e) => s + (e.spent || 0), 0);
    const fundedCount = events.filter((e) => e.funded !== undefined).length;
    const spentCount = events.filter((e) => e.spent !== undefined).length;
    const utxos = [...outputs.values()]
      .filter((o) => o.address === address && o.height <= tip && !(o.spentAt !== undefined && o.spentAt <= tip))
      .sort((a, b) => a.txIndex - b.txIndex || a.vout - b.vout)
      .map((o) => ({ txid: o.txid, vout: o.vout, value: o.value, height: o.height }));
    return {
      summary: history.length ? {
        balance: received - sent, received, sent, txCount: history.length, fundedCount, spentCount,
        utxoCount: fundedCount - spentCount, firstHeight: history[0].height, lastHeight: history[history.length - 1].height,
      } : null,
      history,
      utxos,
    };
  }

  /** Addresses by number of transactions, most first. */
  function busiest(n) {
    return [...byAddr.keys()]
      .map((a) => [a, new Set(byAddr.get(a).map((e) => e.txIndex)).size])
      .sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))
      .slice(0, n)
      .map(([a]) => a);
  }

  reference = { blocks, txs, at, busiest, addresses: () => [...byAddr.keys()] };
  return reference;
}

module.exports = { ROOT, BIN, HAL, SATOSHI, TX170, COMPARE_ROUTES, tmpdir, writeBlocksDir, syncedFixture, syncedGenerated, startServer, request, referenceIndex, outputAddress };
