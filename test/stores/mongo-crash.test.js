'use strict';

/**
 * Crash safety of the MongoDB store: a writer process is SIGKILLed at every step of its
 * commit protocol (undo, data, stage, swap, tip, cleanup), then the index is reopened. Each
 * time it must be at a block boundary, pass verify, and equal (digest) a store synced
 * straight to that boundary.
 *
 * Run by mocha as a test file; run by node with `child DBNAME` as the writer it kills.
 */

const { spawnOwned: spawn } = require('../helpers/procs');
const { prng } = require('../helpers/prng');

const BATCH = 40;

if (require.main === module) {
  runChild().catch((err) => {
    process.stderr.write(`${err.stack}\n`);
    process.exit(1);
  });
} else {
  defineTests();
}

/** The writer: applies the 439 mainnet blocks in batches of BATCH, printing each commit step. */
async function runChild() {
  const { MongoStore } = require('../../lib/stores/mongo');
  const { mainnetChain } = require('./data');
  const { buildDeltas } = require('../../lib/sync/delta');
  const [, , , url, dbName] = process.argv;
  const say = (line) => new Promise((resolve) => process.stdout.write(`${line}\n`, resolve));
  const store = await MongoStore.open({ url, dbName, network: 'main', repairSettleMs: 300, onStep: (step) => say(`step ${step}`) });
  const { blocks } = mainnetChain();
  for (;;) {
    const tip = await store.getTip();
    const next = tip ? tip.height + 1 : 0;
    if (next >= blocks.length) break;
    // batch ends on multiples of BATCH (and the last block), whatever the tip a crash left
    const end = Math.min(blocks.length - 1, (Math.floor(next / BATCH) + 1) * BATCH - 1);
    await store.apply(await buildDeltas(blocks.slice(next, end + 1), store, tip ? tip.nextTxNum : 0));
    await say(`committed ${end}`);
  }
  await store.close();
  await say('finished');
}

function defineTests() {
  const assert = require('node:assert/strict');
  const { MongoStore } = require('../../lib/stores/mongo');
  const { useMongo } = require('../helpers/mongo-server');
  const { mainnetChain, syncBlocks } = require('./data');

  describe('MongoDB store: SIGKILL of the writer at every commit step', function () {
    this.timeout(180000);
    const env = useMongo();
    const digests = new Map();

    before(async function () {
      if (!env.mongo) return;
      // the reference: digests at every batch boundary of an uninterrupted sync
      const ref = await MongoStore.open({ url: env.mongo.url, dbName: env.dbName('reference'), network: 'main' });
      digests.set(-1, await ref.digest());
      for (let h = 0; h <= 438; h += BATCH) {
        const end = Math.min(438, h + BATCH - 1);
        await syncBlocks(ref, mainnetChain().blocks, h, end, [BATCH]);
        digests.set(end, await ref.digest());
      }
      await ref.close();
    });

    /** Starts the writer; resolves `at(pattern)` when it prints a matching line. */
    function startWriter(dbName) {
      const proc = spawn(process.execPath, [__filename, 'child', env.mongo.url, dbName], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      const waiters = [];
      proc.stdout.setEncoding('utf8');
      proc.stdout.on('data', (d) => {
        out += d;
        for (const check of waiters.splice(0)) if (!check()) waiters.push(check);
      });
      proc.stderr.on('data', (d) => { err += d; });
      const exited = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
      return {
        proc,
        exited,
        /** waits until `skip` + 1 lines matching `re` have been printed from now on */
        at(re, skip = 0) {
          const from = out.length;
          const g = new RegExp(re.source, 'gm');
          return new Promise((resolve, reject) => {
            const check = () => {
              if ((out.slice(from).match(g) || []).length <= skip) return false;
              resolve();
              return true;
            };
            if (check()) return;
            waiters.push(check);
            exited.then(({ code, signal }) => reject(new Error(`writer exited (${code ?? signal}) before ${re}: ${err.slice(-2000)}`)));
          });
        },
        output: () => out,
      };
    }

    it('every kill leaves a block boundary equal to an uninterrupted sync; the last run completes it', async () => {
      const dbName = env.dbName('crash');
      // step and how many of them to let pass first: kills land in different batches and phases
      const plan = [['undo', 0], ['data', 1], ['stage', 0], ['swap', 1], ['tip', 1], ['done', 0]];
      const seen = [];
      let rounds = 0;
      const random = prng(5);
      for (const [step, skip] of plan) {
        const w = startWriter(dbName);
        await w.at(new RegExp(`^step ${step}$`, 'm'), skip);
        // somewhere inside the step's writes
        await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 40)));
        w.proc.kill('SIGKILL');
        await w.exited;
        const s = await MongoStore.open({ url: env.mongo.url, dbName, network: 'main', repairSettleMs: 300 });
        try {
          const tip = (await s.getTip()) || { height: -1 };
          assert.ok(digests.has(tip.height), `round ${rounds}: tip ${tip.height} is a batch boundary`);
          const v = await s.verify();
          assert.deepEqual(v.problems, [], `round ${rounds} (killed at ${step})`);
          assert.equal(await s.digest(), digests.get(tip.height), `round ${rounds} (killed at ${step}) at height ${tip.height}`);
          seen.push(`${step}→${tip.height}`);
        } finally {
          await s.close();
        }
        rounds++;
      }
      const last = startWriter(dbName);
      await last.at(/^finished$/m);
      await last.exited;
      const s = await MongoStore.open({ url: env.mongo.url, dbName, network: 'main' });
      try {
        assert.equal((await s.getTip()).height, 438);
        assert.equal(await s.digest(), digests.get(438));
        assert.equal((await s.verify()).ok, true);
      } finally {
        await s.close();
      }
      console.log(`      (killed at, reopened at: ${seen.join(', ')})`);
    });
  });
}
