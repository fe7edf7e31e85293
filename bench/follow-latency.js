#!/usr/bin/env node
'use strict';

/**
 * A block mined on a node → the block visible through the API: `addrindex sync --rpc-url
 * --follow` beside `addrindex serve`, against btcd v0.24.2 in regtest (built and started by
 * the test helpers, as the node tests do). Each round sends a payment, mines one block
 * (`generate 1` returns once the node has accepted it) and polls the Esplora route
 * `/api/blocks/tip/hash` every 10 ms until it names the new block. Rounds start after a
 * seeded random pause, so blocks land at every phase of the follower's poll.
 *
 * Two followers are measured side by side in one run: the default poll (1 s) and a 100 ms
 * poll — the second shows what is left when the poll interval is not the cost (scan,
 * fetch, parse, commit, the API's read).
 *
 *   node bench/follow-latency.js [--blocks 20] [--seed 1] [--fast-poll-ms 100] [--json FILE]
 *
 * Target (issue 12): p50 <= 1.5 s with the default poll.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const http = require('node:http');
const { spawn } = require('node:child_process');
const { parseArgs } = require('node:util');
const { printTable } = require('./lib/table');
const { startBtcd } = require('../test/helpers/btcd');
const { freePort } = require('../test/helpers/ports');
const { nodeWallet } = require('../test/helpers/node-chain');
const { prng } = require('../test/helpers/prng');

const { values: args } = parseArgs({
  options: {
    blocks: { type: 'string', default: '20' },
    seed: { type: 'string', default: '1' },
    'fast-poll-ms': { type: 'string', default: '100' },
    json: { type: 'string', default: path.join(__dirname, 'results', 'follow-latency.json') },
  },
});

const BIN = path.join(__dirname, '..', 'bin', 'addrindex.js');

function start(argv) {
  const child = spawn(process.execPath, [BIN, ...argv], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => { err = (err + d).slice(-4000); });
  child.done = new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr: err })));
  return child;
}

function get(port, route) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: route, agent: false }, (res) => {
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve(res.statusCode === 200 ? body : null));
    });
    req.on('error', () => resolve(null));
  });
}

async function until(check, ms, what) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function quantile(sorted, q) {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}

async function main() {
  const rounds = Number(args.blocks);
  const { wallet, minerA } = nodeWallet();
  console.log(`bench/follow-latency: ${rounds} blocks per follower, seed ${args.seed}; ${os.cpus().length} cores, node ${process.version}, ` +
    `load average ${os.loadavg()[0].toFixed(2)}`);
  const node = await startBtcd({ miningAddress: minerA });
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'addrindex-bench-follow-'));
  const setups = [
    { name: 'default poll (1 s)', pollArgs: [] },
    { name: `--poll-ms ${args['fast-poll-ms']}`, pollArgs: ['--poll-ms', args['fast-poll-ms']] },
  ];
  const results = [];
  try {
    await node.generate(110 + 2 * rounds);
    let coinbaseHeight = 1;
    const rand = prng(Number(args.seed));
    for (const setup of setups) {
      const datadir = path.join(work, `index-${results.length}`);
      const port = await freePort();
      const sync = start(['sync', '--rpc-url', node.url, '--network', 'regtest', '--datadir', datadir, '--follow', '--threads', '1', ...setup.pollArgs]);
      let serve = null;
      const latencies = [];
      try {
        const want = (await node.tip()).hash;
        // serve needs the index to exist: the follower's first sync creates it
        await until(() => fs.existsSync(datadir), 30000, 'the index');
        serve = start(['serve', '--datadir', datadir, '--port', String(port), '--workers', '1']);
        await until(async () => (await get(port, '/api/blocks/tip/hash')) === want, 60000, 'the initial sync through the API');
        for (let k = 0; k < rounds; k++) {
          await sleep(Math.floor(rand() * 1500));
          const cb = Buffer.from(await node.call('getblock', await node.call('getblockhash', coinbaseHeight++), 0), 'hex');
          const pay = wallet.pay([wallet.coinbaseCoin(cb, 'miner-a')], [{ kind: 'p2wpkh', label: `bench-${k}`, satoshis: 1e6 }, { kind: 'p2pkh', label: 'miner-a' }]);
          await node.sendTx(pay.hex);
          const [hash] = await node.generate(1);
          const t1 = process.hrtime.bigint();
          await until(async () => (await get(port, '/api/blocks/tip/hash')) === hash, 30000, `block ${hash}`);
          latencies.push(Number(process.hrtime.bigint() - t1) / 1e6);
        }
      } finally {
        sync.kill('SIGTERM');
        if (serve) serve.kill('SIGTERM');
        const s = await sync.done;
        if (s.code !== 0) console.error(`sync exited ${s.code}: ${s.stderr}`);
        if (serve) await serve.done;
      }
      const sorted = [...latencies].sort((x, y) => x - y);
      results.push({ setup: setup.name, latencies, p50: quantile(sorted, 0.5), p90: quantile(sorted, 0.9), max: sorted[sorted.length - 1], min: sorted[0] });
    }
  } finally {
    await node.stop();
    node.cleanup();
    fs.rmSync(work, { recursive: true, force: true });
  }

  console.log('');
  printTable(results.map((r) => ({
    follower: r.setup, blocks: r.latencies.length, 'min ms': r.min.toFixed(0), 'p50 ms': r.p50.toFixed(0), 'p90 ms': r.p90.toFixed(0), 'max ms': r.max.toFixed(0),
  })));
  const [def, fast] = results;
  console.log(`\ndefault poll p50 = ${(def.p50 / fast.p50).toFixed(1)}x the ${fast.setup} follower's p50 (the poll interval is most of the wait)`);
  console.log('\ntargets:');
  printTable([{ target: 'block mined → visible in the API, p50 <= 1.5 s (default poll)', measured: `${(def.p50 / 1000).toFixed(2)} s`, met: def.p50 <= 1500 ? 'yes' : 'no' }]);
  const result = { date: new Date().toISOString(), node: process.version, cores: os.cpus().length, loadAvgAtEnd: os.loadavg(), options: args, results };
  fs.mkdirSync(path.dirname(args.json), { recursive: true });
  fs.writeFileSync(args.json, JSON.stringify(result, null, 2));
  console.log(`\nresults written to ${path.relative(process.cwd(), args.json)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
