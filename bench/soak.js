#!/usr/bin/env node
'use strict';

/**
 * The chaos soak of the live pipeline, on 127.0.0.1 only, bounded by rounds or time:
 *
 * - btcd v0.24.2 regtest (node A) makes blocks, payments to watched addresses of every kind,
 *   BIP125 replacements, and reorganisations of 1–6 blocks (node B mines the heavier branch);
 * - `addrindex sync --rpc-url --follow` writes an LMDB index, `addrindex serve` reads it (REST
 *   and Electrum, two cluster workers), and `addrindex serve --store level --rpc-url` follows
 *   the node into a LevelDB index itself (REST, two workers);
 * - readers ask both servers about the watched addresses all the time;
 * - at random: the follower and the LevelDB server are SIGKILLed and started again, workers
 *   of either server are SIGKILLed (the primary replaces them), btcd is killed and restarted.
 *
 * After each round every process is brought up and the indexes catch up with the node; then
 * `addrindex verify` must pass, each index's digest must equal a fresh sync's of the same
 * chain, and every answer must equal the truth (bitcore-lib over every block seen) at the tip
 * it names — Electrum's get_balance, which names none, must be a balance the address had at
 * some tip by then. Only 503 ERR_INDEX_MOVING may stand in for an answer.
 *
 * `--store mongo`: the same with `sync --follow` and `serve` on the MongoDB store (FerretDB,
 * built and started as the tests do), FerretDB killed and restarted instead of the LevelDB server.
 *
 *   nice -n 19 node bench/soak.js [--rounds N] [--seconds S] [--min-kills K] [--seed 1]
 *        [--steps 12] [--store kv|mongo] [--json FILE]
 */

const fs = require('node:fs');
const { parseArgs } = require('node:util');
const { runSoak } = require('./lib/soak/run');

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string' },
    seconds: { type: 'string' },
    'min-kills': { type: 'string' },
    seed: { type: 'string', default: '1' },
    steps: { type: 'string', default: '12' },
    store: { type: 'string', default: 'kv' },
    json: { type: 'string' },
  },
});

async function main() {
  if (!args.rounds && !args.seconds) throw new Error('give --rounds N or --seconds S (the soak is always bounded)');
  if (!['kv', 'mongo'].includes(args.store)) throw new Error('--store is kv (LMDB and LevelDB) or mongo');
  const figures = await runSoak({
    seed: Number(args.seed),
    rounds: args.rounds ? Number(args.rounds) : undefined,
    seconds: args.seconds ? Number(args.seconds) : undefined,
    minKills: args['min-kills'] ? Number(args['min-kills']) : undefined,
    steps: Number(args.steps),
    store: args.store,
    log: (line) => console.log(line),
  });
  const kills = Object.values(figures.kills).reduce((s, n) => s + n, 0);
  console.log('');
  console.log(`rounds ${figures.rounds} in ${figures.seconds} s (seed ${figures.seed}, store ${figures.store})`);
  console.log(`kills ${kills}: ${Object.entries(figures.kills).filter(([, n]) => n).map(([k, n]) => `${k} ${n}`).join(', ')}`);
  console.log(`chain: ${JSON.stringify(figures.chain)}`);
  for (const [name, s] of Object.entries(figures.readers)) {
    console.log(`${name}: ${s.answered} answered, ${s.moving} × 503 index moving, ${s.dropped} dropped (server or worker killed), ` +
      `${s.timeouts} timeouts, longest wait ${s.longestWaitMs} ms, longest request ${s.longestRequestMs} ms`);
  }
  console.log(`answers checked ${figures.answersChecked}, wrong ${figures.wrong}, other 5xx ${JSON.stringify(figures.fivexx)}`);
  for (const w of figures.wrongExamples) console.log(`  wrong: ${JSON.stringify(w)}`);
  console.log(`problems: ${figures.problems.length ? `\n  ${figures.problems.join('\n  ')}` : 'none'}`);
  if (args.json) fs.writeFileSync(args.json, `${JSON.stringify(figures, null, 2)}\n`);
  const ok = figures.wrong === 0 && !Object.keys(figures.fivexx).length && !figures.problems.length;
  process.exitCode = ok ? 0 : 1;
}

main().catch((err) => {
  console.error(err.stack || err.message);
  process.exitCode = 2;
});
