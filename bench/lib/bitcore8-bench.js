'use strict';

const http = require('node:http');
const path = require('node:path');
const bitcore = require('bitcore-lib');
const { buildChainIndex, pickAddresses } = require('./chain-index');
const { startProcess, once, percentile, ROOT } = require('./http');
const { openStore } = require('../../lib/stores');
const { decodeAddress } = require('../../lib/chain/address');

/**
 * bitcore-node v8's wallet routes on `addrindex serve` (bench/bitcore.js's second part): a
 * wallet of `count` addresses with exactly two transactions each (the seed's cluster question)
 * on the generated chain of `txs` transactions, registered and imported as bitcore-client does
 * (signed requests), then asked, sequentially on one keep-alive connection, for its balance,
 * its first page of transactions (`?limit=PAGE`, an addrindex extension: bitcore streams the
 * whole list, measured too), its unspent coins, and the native merged history of the same
 * addresses in the same run. Targets (2 workers): balance p50 <= 10 ms, first page <= 20 ms,
 * utxos <= 50 ms. Most of those addresses have spent what they received (their second
 * transaction), so the same three routes are also measured on a second wallet of as many
 * addresses that hold one unspent coin each.
 */

const PAGE = 50;

/** x-signature of a request, as bitcore-client signs it. */
function signer(key) {
  return (method, url, body) => {
    const u = new URL(url);
    const hash = bitcore.crypto.Hash.sha256sha256(Buffer.from([method, u.pathname + u.search, JSON.stringify(body === undefined ? {} : body)].join('|')));
    const sig = bitcore.crypto.ECDSA.sign(hash, key, 'big');
    return Buffer.concat([sig.r.toBuffer({ size: 32 }), sig.s.toBuffer({ size: 32 })]).toString('hex');
  };
}

async function measure(n, url, { method = 'GET', body, headers } = {}) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const lat = [];
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    const r = await once(agent, url, method, body, { headers });
    lat.push(r.ms);
    bytes += r.bytes;
  }
  agent.destroy();
  lat.sort((a, b) => a - b);
  return { p50: percentile(lat, 50), p90: percentile(lat, 90), p99: percentile(lat, 99), meanBytes: Math.round(bytes / n), n };
}

/**
 * @param {{tmp: string, servers: object[], txs: number, seed: string, chainDir?: string, count: number,
 *   requests: number, workers: number, say: (m: string) => void}} opts
 */
async function v8Bench({ tmp, servers, txs, seed, chainDir, count, requests, workers, say }) {
  const idx = await buildChainIndex({ tmp, txs, seed, chainDir, say });
  say(`  ${idx.txs} txs in ${idx.blocks} blocks, synced in ${idx.syncMs} ms; picking ${count} addresses with two transactions ...`);
  const store = await openStore({ store: 'lmdb', datadir: idx.datadir, network: 'regtest', readOnly: true });
  let picked;
  let funded;
  try {
    // the seed's question (two transactions each: most have spent what they got), and a
    // second wallet of addresses that hold one unspent coin each, so /utxos has coins to list
    picked = await pickAddresses(store, idx.blocksDir, { wallet: count, busy: count * 2, minTxs: 1 });
    const sums = await store.getSummaries(picked.candidates.map((c) => decodeAddress(c.address, 'regtest').scripthash), { view: 'script' });
    funded = picked.candidates.filter((c, i) => sums[i] && sums[i].utxoCount === 1).slice(0, count).map((c) => c.address);
  } finally {
    await store.close();
  }
  const addresses = picked.wallet;
  const srv = await startProcess([path.join(ROOT, 'bin', 'addrindex.js'), 'serve', '--datadir', idx.datadir, '--workers', String(workers), '--port', '0']);
  servers.push(srv);
  const base = `${srv.url}/api/BTC/regtest`;
  /** A wallet registered and imported as bitcore-client does it; its signed GETs. */
  const walletOf = async (name, list) => {
    const key = new bitcore.PrivateKey(bitcore.crypto.Hash.sha256(Buffer.from(`bench bitcore v8 ${name}`)).toString('hex'));
    const pub = key.toPublicKey().toString();
    const sign = signer(key);
    await once(false, `${base}/wallet`, 'POST', JSON.stringify({ name, pubKey: pub }));
    const lines = list.map((address) => ({ address }));
    const t0 = Date.now();
    await once(false, `${base}/wallet/${pub}`, 'POST', JSON.stringify(lines),
      { type: 'application/octet-stream', headers: { 'x-signature': sign('POST', `${base}/wallet/${pub}`, lines) } });
    const get = (p) => [`${base}/wallet/${pub}${p}`, { headers: { 'x-signature': sign('GET', `${base}/wallet/${pub}${p}`) } }];
    return { get, importMs: Date.now() - t0 };
  };
  const { get, importMs } = await walletOf('bench', addresses);
  const routes = {
    balance: get('/balance'),
    firstPage: get(`/transactions?limit=${PAGE}`),
    utxos: get('/utxos'),
    allTransactions: get('/transactions'),
  };
  const native = [`${srv.url}/api/v1/addresses/history`, { method: 'POST', body: JSON.stringify({ addresses, limit: 5000 }) }];
  const first = JSON.parse((await once(false, routes.balance[0], 'GET', undefined, { keep: true, headers: routes.balance[1].headers })).body);
  const all = (await once(false, routes.allTransactions[0], 'GET', undefined, { keep: true, headers: routes.allTransactions[1].headers })).body;
  const txids = new Set(all.split('\n').filter(Boolean).map((l) => JSON.parse(l).txid));
  say(`  wallet imported in ${importMs} ms: balance ${first.balance} sat, ${txids.size} transactions; warming up ...`);
  for (const [url, o] of [...Object.values(routes), native]) await measure(10, url, o);
  say(`  measuring ${requests} sequential requests each (${Math.max(20, requests / 10)} for the whole list) ...`);
  const result = { chain: { txs: idx.txs, blocks: idx.blocks, seed }, addresses: addresses.length, transactions: txids.size, importMs, page: PAGE };
  result.native1 = await measure(requests, native[0], native[1]);
  result.balance = await measure(requests, ...routes.balance);
  result.firstPage = await measure(requests, ...routes.firstPage);
  result.utxos = await measure(requests, ...routes.utxos);
  result.allTransactions = await measure(Math.max(20, requests / 10), ...routes.allTransactions);
  result.native2 = await measure(requests, native[0], native[1]);
  // the wallet whose addresses hold a coin each
  const rich = await walletOf('funded', funded);
  const held = JSON.parse((await once(false, rich.get('/utxos')[0], 'GET', undefined, { keep: true, headers: rich.get('/utxos')[1].headers })).body);
  const richBalance = JSON.parse((await once(false, rich.get('/balance')[0], 'GET', undefined, { keep: true, headers: rich.get('/balance')[1].headers })).body);
  say(`  a second wallet of ${funded.length} addresses holding ${held.length} unspent coins (${richBalance.balance} sat) ...`);
  for (const p of ['/balance', `/transactions?limit=${PAGE}`, '/utxos']) await measure(10, ...rich.get(p));
  result.funded = {
    addresses: funded.length, coins: held.length, balance: richBalance.balance,
    balance_: await measure(requests, ...rich.get('/balance')),
    firstPage: await measure(requests, ...rich.get(`/transactions?limit=${PAGE}`)),
    utxos: await measure(requests, ...rich.get('/utxos')),
  };
  result.targets = {
    balance: { target: 'p50 <= 10 ms', value: result.balance.p50, met: result.balance.p50 <= 10 },
    firstPage: { target: `first page (limit ${PAGE}) p50 <= 20 ms`, value: result.firstPage.p50, met: result.firstPage.p50 <= 20 },
    utxos: { target: 'p50 <= 50 ms', value: result.utxos.p50, met: result.utxos.p50 <= 50 },
  };
  return result;
}

module.exports = { v8Bench };
