'use strict';

const path = require('node:path');
const { startBtcd } = require('../../../test/helpers/btcd');
const { nodeWallet } = require('../../../test/helpers/node-chain');
const { prng } = require('../../../test/helpers/prng');
const { tempDir, removeDir } = require('../../../test/helpers/tmp');
const { tipOf } = require('../../../test/helpers/chains');
const { runCli } = require('../../../test/helpers/cli');
const { startMongo } = require('../../../test/helpers/mongo-server');
const { openStore } = require('../../../lib/stores');
const { NETWORKS } = require('../../../lib/chain/networks');
const { ChainTruth } = require('./truth');
const { SoakChain } = require('./chain');
const { Services } = require('./services');
const { RestReader, ElectrumReader, getJson } = require('./readers');
const { checkAnswers } = require('./check');

/**
 * One chaos soak of the live pipeline: btcd regtest making blocks, payments, replacements and
 * reorganisations while addrindex follows it and serves it, and its processes are killed at
 * random (see bench/soak.js for the whole picture). After each round everything is brought
 * up, allowed to catch up with the node, and judged: `addrindex verify`, the digest against a
 * fresh sync of the same chain, every answer against the truth.
 */

/** The blocks mined before the soak starts: coinbases 100 deep can be spent. */
const INIT_BLOCKS = 110;
/** How long the index may take to reach the node's tip after a round. */
const CATCH_UP_MS = 180000;
/** The payees' labels: 5 output kinds each, plus the two miners, are the watched addresses. */
const LABELS = ['alice', 'bob', 'carol'];

/** Actions of a round and their weights (the random schedule). */
const WEIGHTS = {
  kv: { block: 3, pay: 2, replace: 1, reorg: 1, 'kill-follow': 1.5, 'kill-level': 1.5, 'kill-worker': 2, 'kill-node': 0.5 },
  mongo: { block: 3, pay: 2, replace: 1, reorg: 1, 'kill-follow': 1.5, 'kill-mongo': 1, 'kill-worker': 2, 'kill-node': 0.5 },
};

/** A round of the covering schedule: every kind of action, in a seeded order. */
const COVER = {
  kv: ['block', 'pay', 'block', 'replace', 'reorg', 'kill-follow', 'kill-level', 'kill-worker', 'kill-worker', 'kill-node', 'block'],
  mongo: ['block', 'pay', 'block', 'replace', 'reorg', 'kill-follow', 'kill-mongo', 'kill-worker', 'kill-node', 'block'],
};

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

function shuffle(list, rng) {
  const a = [...list];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

function pickWeighted(weights, rng) {
  const entries = Object.entries(weights);
  let x = rng() * entries.reduce((s, [, w]) => s + w, 0);
  for (const [name, w] of entries) {
    x -= w;
    if (x < 0) return name;
  }
  return entries[entries.length - 1][0];
}

/**
 * Runs the soak.
 * @param {object} opts
 * @param {number} [opts.seed=1]
 * @param {number} [opts.rounds] stop after this many rounds
 * @param {number} [opts.seconds] or once this long has passed (checked between rounds)
 * @param {number} [opts.minKills] or not before this many kills (with rounds/seconds as caps)
 * @param {number} [opts.steps=12] actions per round (random schedule)
 * @param {'random'|'cover'} [opts.schedule='random'] cover: each round does every action
 * @param {'kv'|'mongo'} [opts.store='kv'] kv: LMDB (sync --follow + serve) and LevelDB
 *   (serve --store level); mongo: sync --follow and serve on FerretDB, which is killed too
 * @param {(line: string) => void} [opts.log]
 * @returns {Promise<object>} the figures
 */
async function runSoak(opts = {}) {
  const { seed = 1, steps = 12, schedule = 'random', store = 'kv', log = () => {} } = opts;
  const rounds = opts.rounds || Infinity;
  const deadline = opts.seconds ? Date.now() + opts.seconds * 1000 : Infinity;
  if (rounds === Infinity && deadline === Infinity) throw new Error('the soak needs a bound: rounds or seconds');
  const rng = prng(seed);
  const started = Date.now();
  const { wallet, minerA, minerB } = nodeWallet();
  const addresses = SoakChain.addresses(wallet, LABELS, [minerA, minerB]);
  const truth = new ChainTruth(NETWORKS.regtest.genesis, addresses);
  const figures = {
    seed, store, schedule, rounds: 0, seconds: 0,
    kills: { follow: 0, level: 0, mongo: 0, serveWorker: 0, levelWorker: 0, node: 0 },
    chain: null, readers: {}, answersChecked: 0, wrong: 0, wrongExamples: [], fivexx: {}, moving: 0, dropped: 0,
    longestWaitMs: 0, longestRequestMs: 0, problems: [],
  };
  const cleanups = [];
  let readers = [];
  try {
    const a = await startBtcd({ miningAddress: minerA });
    cleanups.push(async () => { await a.stop(); a.cleanup(); });
    const b = await startBtcd({ miningAddress: minerB });
    cleanups.push(async () => { await b.stop(); b.cleanup(); });
    const chain = new SoakChain({ a, b, wallet, minerA: 'miner-a', truth, rng, labels: LABELS });
    await chain.init(INIT_BLOCKS);

    let mongo = null;
    let svc;
    if (store === 'mongo') {
      mongo = await startMongo();
      cleanups.push(() => mongo.stop());
      svc = new Services({ rpcUrl: a.url, mongoUrl: `${mongo.url.replace(/\/$/, '')}/soak_${seed}` });
    } else {
      const root = tempDir('soak');
      cleanups.push(async () => removeDir(root));
      svc = new Services({ rpcUrl: a.url, datadirs: { lmdb: path.join(root, 'lmdb'), level: path.join(root, 'level') } });
    }
    cleanups.unshift(() => svc.stopAll());
    await svc.startFollow();
    await svc.startServe();
    if (store === 'kv') await svc.startLevel();

    readers = [
      new RestReader({ name: `rest-${store === 'kv' ? 'lmdb' : 'mongo'}`, url: () => svc.urls.serve, addresses, rng: prng(seed + 1) }).start(),
      new ElectrumReader({ name: `electrum-${store === 'kv' ? 'lmdb' : 'mongo'}`, port: () => svc.electrumPort, addresses, rng: prng(seed + 2) }).start(),
    ];
    if (store === 'kv') readers.push(new RestReader({ name: 'rest-level', url: () => svc.urls.level, addresses, rng: prng(seed + 3) }).start());

    const totalKills = () => Object.values(figures.kills).reduce((s, n) => s + n, 0);
    const act = async (action) => {
      switch (action) {
        case 'block':
          await chain.pay(Math.floor(rng() * 3));
          await chain.mine(1 + Math.floor(rng() * 2));
          break;
        case 'pay':
          await chain.pay(1 + Math.floor(rng() * 3));
          break;
        case 'replace':
          if (!chain.replaceable.length) await chain.pay(2);
          await chain.replace();
          break;
        case 'reorg':
          await chain.reorg(1 + Math.floor(rng() * 6), async () => {
            await chain.pay(1);
            await sleep(rng() * 800);
          });
          break;
        case 'kill-follow':
          await svc.kill('follow');
          figures.kills.follow++;
          await sleep(rng() * 1000);
          await svc.startFollow();
          break;
        case 'kill-level':
          await svc.kill('level');
          figures.kills.level++;
          await sleep(rng() * 1000);
          await svc.startLevel();
          break;
        case 'kill-worker': {
          const which = store === 'kv' && rng() < 0.5 ? 'level' : 'serve';
          if (svc.killWorker(which, rng()) !== null) figures.kills[which === 'level' ? 'levelWorker' : 'serveWorker']++;
          break;
        }
        case 'kill-mongo':
          await mongo.server.stop({ signal: 'SIGKILL' });
          figures.kills.mongo++;
          await sleep(rng() * 1000);
          await mongo.server.start();
          break;
        case 'kill-node':
          await chain.killNode();
          figures.kills.node++;
          break;
        default:
          throw new Error(`unknown soak action ${action}`);
      }
    };

    for (let round = 1; round <= rounds; round++) {
      if (Date.now() > deadline && !(opts.minKills && totalKills() < opts.minKills)) break;
      const plan = schedule === 'cover' ? shuffle(COVER[store], rng) : Array.from({ length: steps }, () => pickWeighted(WEIGHTS[store], rng));
      for (const action of plan) {
        await act(action);
        await sleep(rng() * 300);
      }
      const problems = await settle(svc, a, store);
      problems.push(...await judgeIndex(svc, a, store, mongo, seed, round));
      const answers = readers.flatMap((r) => r.take());
      const verdict = checkAnswers(truth, answers);
      figures.answersChecked += verdict.checked;
      figures.wrong += verdict.wrong;
      figures.wrongExamples.push(...verdict.examples.slice(0, Math.max(0, 10 - figures.wrongExamples.length)));
      figures.problems.push(...problems.map((p) => `round ${round}: ${p}`));
      figures.rounds = round;
      log(`round ${round}: ${plan.join(' ')} | tip ${(await a.tip()).height}, ${verdict.checked} answers checked, ${verdict.wrong} wrong, ` +
        `kills ${totalKills()}${problems.length ? ` | PROBLEMS: ${problems.join('; ')}` : ''}`);
    }
    // what the readers were told after the last round's check is judged too
    for (const r of readers) await r.stop();
    const last = checkAnswers(truth, readers.flatMap((r) => r.take()));
    figures.answersChecked += last.checked;
    figures.wrong += last.wrong;
    figures.wrongExamples.push(...last.examples.slice(0, Math.max(0, 10 - figures.wrongExamples.length)));
    figures.chain = chain.stats;
  } finally {
    for (const r of readers) await r.stop();
    for (const r of readers) {
      figures.readers[r.name] = r.stats;
      figures.longestWaitMs = Math.max(figures.longestWaitMs, r.stats.longestWaitMs);
      figures.longestRequestMs = Math.max(figures.longestRequestMs, r.stats.longestRequestMs);
      figures.moving += r.stats.moving;
      figures.dropped += r.stats.dropped;
      for (const [k, n] of Object.entries(r.stats.fivexx)) figures.fivexx[k] = (figures.fivexx[k] || 0) + n;
    }
    for (const c of cleanups.reverse()) await c().catch(() => {});
    figures.seconds = Math.round((Date.now() - started) / 1000);
  }
  return figures;
}

/**
 * Brings every process up and waits until each index names the node's tip.
 * @returns {Promise<string[]>} problems
 */
async function settle(svc, node, store) {
  const problems = [];
  if (!svc.running('serve')) problems.push('serve\'s primary died');
  if (!svc.running('follow')) await svc.startFollow();
  if (store === 'kv' && !svc.running('level')) await svc.startLevel();
  await svc.untilWorkers('serve');
  const want = (await node.tip()).hash;
  const until = Date.now() + CATCH_UP_MS;
  const tipOfPrimary = async () => {
    if (store === 'mongo') {
      const r = await getJson(`${svc.urls.serve}/api/v1/status`).catch(() => null);
      return r && r.status === 200 ? r.body.tip.hash : null;
    }
    const t = await tipOf(svc.datadirs.lmdb);
    return t && t.hash;
  };
  const tipOfLevel = async () => {
    if (store !== 'kv') return want;
    if (!svc.urls.level) return null;
    const r = await getJson(`${svc.urls.level}/api/v1/status`).catch(() => null);
    return r && r.status === 200 && r.body.tip ? r.body.tip.hash : null;
  };
  while (await tipOfPrimary() !== want || await tipOfLevel() !== want) {
    if (Date.now() > until) {
      const tails = Object.entries(svc.procs).map(([name, p]) => `--- ${name} (pid ${p.pid}${p.exitCode !== null ? `, exited ${p.exitCode}` : ''}):\n${p.text().slice(-1500)}`);
      problems.push(`the indexes did not reach the node's tip ${want} within ${CATCH_UP_MS / 1000} s ` +
        `(primary at ${await tipOfPrimary()}, LevelDB at ${await tipOfLevel()})\n${tails.join('\n')}`);
      break;
    }
    await sleep(100);
  }
  return problems;
}

/**
 * `addrindex verify` of each index and its digest against a fresh sync of the node's chain
 * (the LevelDB index is stopped for it: it admits one process).
 * @returns {Promise<string[]>} problems
 */
async function judgeIndex(svc, node, store, mongo, seed, round) {
  const problems = [];
  const verify = async (args, what) => {
    const r = await runCli(['verify', '--network', 'regtest', ...args]);
    if (r.code !== 0) problems.push(`verify of ${what} failed (${r.code}): ${r.stdout.slice(-400)}${r.stderr.slice(-400)}`);
  };
  const digest = async (o) => {
    const s = await openStore({ network: 'regtest', readOnly: true, ...o });
    try {
      return { digest: await s.digest(), tip: await s.getTip() };
    } finally {
      await s.close();
    }
  };
  if (store === 'mongo') {
    const fresh = `${mongo.url.replace(/\/$/, '')}/soak_${seed}_fresh_${round}`;
    const r = await runCli(['sync', '--rpc-url', node.url, '--network', 'regtest', '--store', 'mongo', '--mongodb-url', fresh, '--threads', '0']);
    if (r.code !== 0) return [...problems, `the fresh sync failed: ${r.stderr.slice(-400)}`];
    await verify(['--store', 'mongo', '--mongodb-url', svc.mongoUrl], 'the MongoDB index');
    const want = await digest({ store: 'mongo', url: fresh });
    const got = await digest({ store: 'mongo', url: svc.mongoUrl });
    if (got.digest !== want.digest || got.tip.hash !== want.tip.hash) problems.push(`the MongoDB index's digest ${got.digest} (tip ${got.tip.height}) is not a fresh sync's ${want.digest} (tip ${want.tip.height})`);
    return problems;
  }
  const freshDir = path.join(tempDir('soak-fresh'), 'index');
  try {
    const r = await runCli(['sync', '--rpc-url', node.url, '--network', 'regtest', '--datadir', freshDir, '--threads', '0']);
    if (r.code !== 0) return [...problems, `the fresh sync failed: ${r.stderr.slice(-400)}`];
    const want = await digest({ datadir: freshDir });
    await verify(['--datadir', svc.datadirs.lmdb], 'the LMDB index');
    const lmdb = await digest({ datadir: svc.datadirs.lmdb });
    if (lmdb.digest !== want.digest) problems.push(`the LMDB index's digest (tip ${lmdb.tip.height}) is not a fresh sync's (tip ${want.tip.height})`);
    await svc.stop('level');
    await verify(['--store', 'level', '--datadir', svc.datadirs.level], 'the LevelDB index');
    const level = await digest({ store: 'level', datadir: svc.datadirs.level });
    if (level.digest !== want.digest) problems.push(`the LevelDB index's digest (tip ${level.tip.height}) is not a fresh sync's (tip ${want.tip.height})`);
    await svc.startLevel();
  } finally {
    removeDir(path.dirname(freshDir));
  }
  return problems;
}

module.exports = { runSoak };
