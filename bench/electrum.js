#!/usr/bin/env node
'use strict';

/**
 * Electrum server benchmark, side by side with the REST equivalents on the same index and the
 * same `addrindex serve` processes (2 workers), the client in this process:
 *
 *   1. subscribe 10,000 script hashes on one connection, pipelined as a wallet does it (and as
 *      10 batches of 1,000): time until every status has arrived. Target <= 1 s.
 *      REST: their summaries in two POST /api/v1/scripthashes/summary of 5,000.
 *   2. get_history of the script hash with ~10,000 history entries, 200 times on one
 *      connection: latency. Target p50 <= 30 ms. REST: the same history through
 *      GET /api/v1/scripthash/:h/history in pages of 1,000 (the largest page).
 *   3. 100 connections, each sending batches of 100 get_balance and the next batch when the
 *      answer is in, for --duration seconds: requests (batch items) per second. Target >=
 *      20,000 on 2 workers. REST: autocannon GET /api/v1/scripthash/:h on 100 connections,
 *      and POST /api/v1/scripthashes/summary with 100 script hashes per body.
 *
 * Then 1-3 again with a mempool snapshot in the index (the transactions of the next three
 * blocks of the same generated chain, ~6,000, resolved as a follower resolves them and written
 * with putMempool beside the running server): every answer then pairs its confirmed read with
 * the snapshot (one more read per request) and counts it.
 *
 * The index: a generated mainnet-like chain (seed "electrum-bench", 43,000 transactions), whose
 * busiest script has 10,261 history entries; the 10,000 script hashes are the first distinct
 * output scripts of the chain.
 *
 *   node bench/electrum.js [--workers 2] [--duration 10] [--connections 100] [--batch 100] [--json FILE]
 */

const fs = require('node:fs');
const os = require('node:os');
const net = require('node:net');
const path = require('node:path');
const http = require('node:http');
const crypto = require('node:crypto');
const { spawn } = require('node:child_process');
const { parseArgs } = require('node:util');
const autocannon = require('autocannon');
const { printTable } = require('./lib/table');

const ROOT = path.join(__dirname, '..');
const { values: args } = parseArgs({
  options: {
    workers: { type: 'string', default: '2' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '100' },
    batch: { type: 'string', default: '100' },
    json: { type: 'string', default: path.join(__dirname, 'results', 'electrum.json') },
  },
});
const WORKERS = Number(args.workers);
const DURATION = Number(args.duration);
const CONNECTIONS = Number(args.connections);
const BATCH = Number(args.batch);
const CHAIN = { seed: 'electrum-bench', txs: 43000 };
const SUBSCRIBE = 10000;
/** Blocks past the index's tip whose transactions make the mempool snapshot. */
const MEMPOOL_BLOCKS = 3;

const displayHex = (b) => Buffer.from(b).reverse().toString('hex');

async function buildIndex(tmp) {
  const { writeChain } = require('../tools/generator');
  const { openStore } = require('../lib/stores');
  const { BlocksDirSource } = require('../lib/sources/blocksdir');
  const { SyncService } = require('../lib/sync/service');
  const { parseBlock } = require('../lib/chain/block');
  const blocksDir = path.join(tmp, 'blocks');
  const datadir = path.join(tmp, 'index');
  fs.mkdirSync(blocksDir);
  fs.mkdirSync(datadir);
  const chain = await writeChain({ dir: blocksDir, ...CHAIN });
  const store = await openStore({ store: 'lmdb', datadir, network: 'regtest' });
  const source = new BlocksDirSource({ dir: blocksDir, network: 'regtest' });
  try {
    await new SyncService({ source, store, network: 'regtest', threads: 1 }).run();
    const seen = new Set();
    for await (const b of source.blocks(1)) {
      for (const tx of parseBlock(b.raw).txs) {
        for (const out of tx.outputs) {
          // OP_RETURN outputs are not indexed
          if (out.script[0] !== 0x6a && seen.size < SUBSCRIBE) seen.add(displayHex(crypto.createHash('sha256').update(out.script).digest()));
        }
      }
      if (seen.size === SUBSCRIBE) break;
    }
    const top = chain.stats.topScripts[0];
    const busiest = displayHex(crypto.createHash('sha256').update(Buffer.from(top.script, 'hex')).digest());
    return { blocksDir, datadir, txs: chain.txs, scripthashes: [...seen], busiest, busiestEntries: top.entries };
  } finally {
    await source.close();
    await store.close();
  }
}

/**
 * Writes a mempool snapshot into the index (beside the running server: LMDB's one writer):
 * the transactions of the MEMPOOL_BLOCKS blocks that follow the index's tip in the same
 * generated chain, those whose inputs are confirmed or earlier ones' outputs (not a coinbase
 * above the tip), resolved through the index's prevouts as a follower resolves them.
 * @returns {Promise<{txs: number, vsize: number}>}
 */
async function writeMempool(tmp, idx) {
  const { writeChain } = require('../tools/generator');
  const { openStore } = require('../lib/stores');
  const { BlocksDirSource } = require('../lib/sources/blocksdir');
  const { parseBlock } = require('../lib/chain/block');
  const { outputScripthash } = require('../lib/chain/script');
  const { encodeReplacement } = require('../lib/codec/mempool');
  const { fromDisplayHex } = require('../lib/chain/hash');
  const store = await openStore({ store: 'lmdb', datadir: idx.datadir, network: 'regtest' });
  const dir = path.join(tmp, 'ahead');
  fs.mkdirSync(dir);
  const source = new BlocksDirSource({ dir, network: 'regtest' });
  try {
    const tip = await store.getTip();
    await writeChain({ dir, seed: CHAIN.seed, blocks: tip.height + MEMPOOL_BLOCKS });
    await source.scan();
    if (source.hashAt(tip.height) !== tip.hash) throw new Error('the longer chain does not extend the index');
    const created = new Map();
    const txs = [];
    for await (const b of source.blocks(tip.height + 1)) {
      for (const tx of parseBlock(b.raw).txs.slice(1)) {
        const outpoints = Buffer.alloc(36 * tx.inputs.length);
        tx.inputs.forEach((i, k) => {
          i.txid.copy(outpoints, 36 * k);
          outpoints.writeUInt32LE(i.vout, 36 * k + 32);
        });
        const confirmed = await store.getPrevouts(outpoints);
        const inputs = tx.inputs.map((i, k) => {
          const mine = created.get(`${i.txid.toString('hex')}:${i.vout}`);
          if (mine) return { txid: i.txid, vout: i.vout, value: mine.value, scripthash: mine.scripthash, unconfirmed: true };
          const o = confirmed[k];
          return o && { txid: i.txid, vout: i.vout, value: o.value, scripthash: o.scripthash.some((x) => x) ? o.scripthash : null, unconfirmed: false };
        });
        if (inputs.some((i) => !i)) continue;
        const outputs = tx.outputs.map((o) => ({ value: o.value, scripthash: outputScripthash(o.script) }));
        outputs.forEach((o, vout) => created.set(`${tx.txid.toString('hex')}:${vout}`, o));
        const fee = inputs.reduce((n, i) => n + i.value, 0) - outputs.reduce((n, o) => n + o.value, 0);
        txs.push({ txid: tx.txid, time: 1700000000 + txs.length, fee, vsize: tx.vsize, raw: Buffer.from(tx.raw), inputs, outputs });
      }
    }
    if (!(await store.putMempool(encodeReplacement({ seq: 1, tip: fromDisplayHex(tip.hash), txs })))) throw new Error('the snapshot was refused');
    return { txs: txs.length, vsize: txs.reduce((n, t) => n + t.vsize, 0) };
  } finally {
    await source.close();
    await store.close();
  }
}

/** Starts `addrindex serve` and resolves with its HTTP URL and Electrum TCP port. */
function startServe(idx) {
  // no --blocks-dir: headers come from the index, and nothing measured reads a raw transaction
  const argv = [path.join(ROOT, 'bin', 'addrindex.js'), 'serve', '--datadir', idx.datadir, '--workers', String(WORKERS), '--port', '0',
    '--electrum-port', '0'];
  const proc = spawn(process.execPath, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const onData = (d) => {
      out += d;
      const url = out.match(/listening on (http:\/\/\S+)/);
      const port = out.match(/electrum tcp \S+:(\d+)/);
      if (url && port) resolve({ proc, url: url[1], port: Number(port[1]) });
    };
    // stdout is a pipe, so serve logs JSON there and writes its start lines to stderr: read both
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.on('exit', (code) => reject(new Error(`serve exited with ${code}:\n${out}`)));
    setTimeout(() => reject(new Error(`serve did not start within 60 s:\n${out}`)), 60000).unref();
  });
}

async function stopProcess({ proc }) {
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill('SIGTERM');
  await exited;
}

/**
 * A minimal line client: `send(text)` writes one line; `expect(n)` resolves with the next n
 * answer lines (each a JSON string, unparsed unless asked).
 */
function lineClient(port) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setNoDelay(true);
    const queue = [];
    let want = null;
    let buf = '';
    socket.on('data', (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf('\n')) !== -1) {
        queue.push(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
      }
      if (want && queue.length >= want.n) {
        const w = want;
        want = null;
        w.resolve(queue.splice(0, w.n));
      }
    });
    socket.once('error', reject);
    socket.once('connect', () => resolve({
      socket,
      send: (text) => socket.write(`${text}\n`),
      expect: (n) => new Promise((res) => {
        if (queue.length >= n) res(queue.splice(0, n));
        else want = { n, resolve: res };
      }),
      close: () => socket.end(),
    }));
  });
}

const request = (id, method, params) => JSON.stringify({ jsonrpc: '2.0', id, method, params });

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;

/** 10,000 subscriptions on a new connection: one write of 10,000 lines, or 10 batches of 1,000. */
async function subscribeAll(port, shs, batched) {
  const c = await lineClient(port);
  const t0 = process.hrtime.bigint();
  let answers;
  if (batched) {
    const lines = [];
    for (let i = 0; i < shs.length; i += 1000) lines.push(`[${shs.slice(i, i + 1000).map((sh, k) => request(i + k, 'blockchain.scripthash.subscribe', [sh])).join(',')}]`);
    c.socket.write(`${lines.join('\n')}\n`);
    answers = (await c.expect(lines.length)).flatMap((l) => JSON.parse(l));
  } else {
    c.socket.write(`${shs.map((sh, i) => request(i, 'blockchain.scripthash.subscribe', [sh])).join('\n')}\n`);
    answers = (await c.expect(shs.length)).map((l) => JSON.parse(l));
  }
  const took = ms(t0);
  const errors = answers.filter((a) => a.error).length;
  const statuses = answers.filter((a) => typeof a.result === 'string').length;
  c.close();
  if (answers.length !== shs.length || errors) throw new Error(`subscribe: ${answers.length} answers, ${errors} errors`);
  return { ms: took, statuses };
}

async function post(url, body) {
  const t0 = process.hrtime.bigint();
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = await res.json();
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${JSON.stringify(json).slice(0, 200)}`);
  return { ms: ms(t0), json };
}

async function historyLatency(port, sh, rounds) {
  const c = await lineClient(port);
  const lat = [];
  let entries = 0;
  let bytes = 0;
  for (let i = 0; i < rounds + 10; i++) {
    const t0 = process.hrtime.bigint();
    c.send(request(i, 'blockchain.scripthash.get_history', [sh]));
    const [line] = await c.expect(1);
    if (i >= 10) lat.push(ms(t0)); // the first ten warm up
    if (i === 0) {
      const msg = JSON.parse(line);
      if (msg.error) throw new Error(`get_history: ${msg.error.message}`);
      entries = msg.result.length;
      bytes = line.length;
    }
  }
  c.close();
  lat.sort((a, b) => a - b);
  return { entries, bytes, p50: percentile(lat, 50), p90: percentile(lat, 90), p99: percentile(lat, 99) };
}

async function restHistoryLatency(url, sh, rounds) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const get = (u) => new Promise((resolve, reject) => {
    http.get(u, { agent }, (res) => {
      let s = '';
      res.on('data', (d) => { s += d; });
      res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(s)) : reject(new Error(`${u}: ${res.statusCode}`))));
    }).on('error', reject);
  });
  const lat = [];
  let entries = 0;
  let pages = 0;
  for (let i = 0; i < rounds + 10; i++) {
    const t0 = process.hrtime.bigint();
    let n = 0;
    let p = 0;
    let cursor = null;
    do {
      const page = await get(`${url}/api/v1/scripthash/${sh}/history?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      n += page.entries.length;
      p++;
      cursor = page.next;
    } while (cursor);
    if (i >= 10) lat.push(ms(t0));
    entries = n;
    pages = p;
  }
  agent.destroy();
  lat.sort((a, b) => a - b);
  return { entries, pages, p50: percentile(lat, 50), p90: percentile(lat, 90), p99: percentile(lat, 99) };
}

/** CONNECTIONS connections, each with one batch of BATCH get_balance in flight, for DURATION s. */
async function balanceLoad(port, shs) {
  const clients = await Promise.all(Array.from({ length: CONNECTIONS }, () => lineClient(port)));
  let items = 0;
  let batches = 0;
  let errors = 0;
  const lat = [];
  const until = Date.now() + DURATION * 1000;
  await Promise.all(clients.map(async (c, k) => {
    let at = (k * BATCH) % shs.length;
    while (Date.now() < until) {
      const body = [];
      for (let i = 0; i < BATCH; i++) {
        body.push(request(i, 'blockchain.scripthash.get_balance', [shs[at]]));
        at = (at + 1) % shs.length;
      }
      const t0 = process.hrtime.bigint();
      c.send(`[${body.join(',')}]`);
      const [line] = await c.expect(1);
      lat.push(ms(t0));
      const answers = JSON.parse(line);
      errors += answers.filter((a) => a.error).length;
      items += answers.length;
      batches++;
    }
    c.close();
  }));
  if (errors) throw new Error(`${errors} get_balance errors`);
  lat.sort((a, b) => a - b);
  return { rps: items / DURATION, batches, p50: percentile(lat, 50), p99: percentile(lat, 99) };
}

async function cannon(url, requests) {
  let i = 0;
  const res = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: DURATION,
    requests: [{ setupRequest: (req) => ({ ...req, ...requests[i++ % requests.length] }) }],
  });
  if (res.errors || res.non2xx) throw new Error(`${url}: ${res.errors} errors, ${res.non2xx} non-2xx answers`);
  return { rps: res.requests.average, p50: res.latency.p50, p99: res.latency.p99 };
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'addrindex-bench-electrum-'));
  const loadBefore = os.loadavg();
  let serve = null;
  try {
    process.stderr.write(`building the index (${CHAIN.txs} txs, seed ${CHAIN.seed}) ...\n`);
    const t0 = Date.now();
    const idx = await buildIndex(tmp);
    process.stderr.write(`  ${idx.txs} txs, busiest script ${idx.busiestEntries} history entries, ${Date.now() - t0} ms\n`);
    serve = await startServe(idx);

    process.stderr.write(`subscribing ${SUBSCRIBE} script hashes on one connection ...\n`);
    // rounds alternate over the workers (round robin): the first two meet cold workers
    const subscribe = [];
    for (let round = 0; round < 4; round++) subscribe.push({ round, mode: 'pipelined', ...(await subscribeAll(serve.port, idx.scripthashes, false)) });
    for (let round = 0; round < 2; round++) subscribe.push({ round, mode: 'batches of 1000', ...(await subscribeAll(serve.port, idx.scripthashes, true)) });
    const restSummaries = [];
    for (let round = 0; round < 4; round++) {
      let total = 0;
      for (let i = 0; i < idx.scripthashes.length; i += 5000) total += (await post(`${serve.url}/api/v1/scripthashes/summary`, { scripthashes: idx.scripthashes.slice(i, i + 5000) })).ms;
      restSummaries.push(total);
    }

    process.stderr.write(`get_history of the busiest script hash (${idx.busiestEntries} entries) ...\n`);
    const history = await historyLatency(serve.port, idx.busiest, 200);
    const restHistory = await restHistoryLatency(serve.url, idx.busiest, 50);

    process.stderr.write(`${CONNECTIONS} connections x batches of ${BATCH} get_balance, ${DURATION} s; then REST ...\n`);
    const balances = await balanceLoad(serve.port, idx.scripthashes);
    const restOne = await cannon(serve.url, idx.scripthashes.map((sh) => ({ method: 'GET', path: `/api/v1/scripthash/${sh}` })));
    const bodies = [];
    for (let i = 0; i + BATCH <= idx.scripthashes.length; i += BATCH) {
      bodies.push({ method: 'POST', path: '/api/v1/scripthashes/summary', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ scripthashes: idx.scripthashes.slice(i, i + BATCH) }) });
    }
    const restBatch = await cannon(serve.url, bodies);

    process.stderr.write(`writing a mempool snapshot (${MEMPOOL_BLOCKS} blocks' transactions), then subscribe, get_history, get_balance again ...\n`);
    const snapshot = await writeMempool(tmp, idx);
    // both workers have seen it once their tip poll ran (1 s): the first answers then decode it
    await new Promise((r) => setTimeout(r, 1500));
    const withMempool = { ...snapshot, subscribe: [] };
    // rounds 1 and 2 meet each worker's first mempool answers (the snapshot decoded, new code paths)
    for (let round = 0; round < 4; round++) withMempool.subscribe.push({ round, mode: 'pipelined', ...(await subscribeAll(serve.port, idx.scripthashes, false)) });
    withMempool.history = await historyLatency(serve.port, idx.busiest, 200);
    withMempool.balances = await balanceLoad(serve.port, idx.scripthashes);

    const worstCold = Math.max(...subscribe.filter((s) => s.mode === 'pipelined' && s.round < 2).map((s) => s.ms));
    const result = {
      date: new Date().toISOString(),
      // the machine is shared: the load averages tell how quiet it was
      machine: { cpus: os.cpus().length, model: os.cpus()[0].model, node: process.version, loadBefore, loadAfter: os.loadavg() },
      settings: { workers: WORKERS, connections: CONNECTIONS, batch: BATCH, durationS: DURATION, chain: CHAIN, subscribed: SUBSCRIBE },
      subscribe, restSummaries,
      history, restHistory,
      balances, restOne, restBatch: { ...restBatch, items: restBatch.rps * BATCH },
      withMempool,
      targets: {
        subscribe10k: { target: '<= 1000 ms', value: worstCold, met: worstCold <= 1000 },
        history10k: { target: '<= 30 ms (p50)', value: history.p50, met: history.p50 <= 30 },
        balanceRps: { target: '>= 20,000 requests/s', value: balances.rps, met: balances.rps >= 20000 },
      },
    };

    console.log(`\nsubscribe ${SUBSCRIBE} script hashes on one connection (${subscribe[0].statuses} have a history)`);
    printTable([
      ...subscribe.map((s) => ({ what: `electrum, ${s.mode}, round ${s.round + 1}`, ms: s.ms.toFixed(0) })),
      ...restSummaries.map((t, i) => ({ what: `REST summaries, 2 x POST of 5000, round ${i + 1}`, ms: t.toFixed(0) })),
    ]);
    console.log(`\nhistory of the busiest script hash (${history.entries} entries, ${(history.bytes / 1024).toFixed(0)} KiB answer)`);
    printTable([
      { what: 'electrum get_history', 'p50 ms': history.p50.toFixed(2), 'p90 ms': history.p90.toFixed(2), 'p99 ms': history.p99.toFixed(2) },
      { what: `REST, ${restHistory.pages} pages of 1000`, 'p50 ms': restHistory.p50.toFixed(2), 'p90 ms': restHistory.p90.toFixed(2), 'p99 ms': restHistory.p99.toFixed(2) },
    ]);
    console.log(`\nbalances, ${CONNECTIONS} connections, ${WORKERS} workers, ${DURATION} s`);
    printTable([
      { what: `electrum, batches of ${BATCH} get_balance`, 'requests/s': balances.rps.toFixed(0), 'p50 ms': balances.p50.toFixed(1), 'p99 ms': balances.p99.toFixed(1) },
      { what: 'REST GET /api/v1/scripthash/:h', 'requests/s': restOne.rps.toFixed(0), 'p50 ms': restOne.p50, 'p99 ms': restOne.p99 },
      { what: `REST POST summary of ${BATCH}`, 'requests/s': (restBatch.rps * BATCH).toFixed(0), 'p50 ms': restBatch.p50, 'p99 ms': restBatch.p99 },
    ]);
    console.log(`\nwith a mempool snapshot of ${withMempool.txs} transactions (${withMempool.vsize} vB) in the index`);
    printTable([
      ...withMempool.subscribe.map((s) => ({ what: `subscribe ${SUBSCRIBE}, pipelined, round ${s.round + 1}`, value: `${s.ms.toFixed(0)} ms`, without: `${subscribe[s.round].ms.toFixed(0)} ms` })),
      { what: `get_history (${withMempool.history.entries} entries) p50`, value: `${withMempool.history.p50.toFixed(2)} ms`, without: `${history.p50.toFixed(2)} ms` },
      { what: `batches of ${BATCH} get_balance`, value: `${withMempool.balances.rps.toFixed(0)} requests/s`, without: `${balances.rps.toFixed(0)} requests/s` },
    ]);
    console.log(`\nelectrum batches / REST one-by-one = ${(balances.rps / restOne.rps).toFixed(2)}x; / REST batches = ${(balances.rps / (restBatch.rps * BATCH)).toFixed(2)}x`);
    console.log(`load average before ${loadBefore.map((l) => l.toFixed(1)).join(' ')}, after ${result.machine.loadAfter.map((l) => l.toFixed(1)).join(' ')}`);
    for (const [k, t] of Object.entries(result.targets)) {
      console.log(`  ${t.met ? 'met    ' : 'MISSED '} ${k}: ${Number(t.value).toFixed(k === 'balanceRps' ? 0 : 2)} (${t.target})`);
    }
    if (args.json) {
      fs.mkdirSync(path.dirname(args.json), { recursive: true });
      fs.writeFileSync(args.json, `${JSON.stringify(result, null, 2)}\n`);
      console.log(`\nwritten to ${path.relative(process.cwd(), args.json)}`);
    }
  } finally {
    if (serve) await stopProcess(serve).catch(() => {});
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
