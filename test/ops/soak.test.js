'use strict';

const assert = require('node:assert/strict');
const { runSoak } = require('../../bench/lib/soak/run');

/**
 * The short, seeded variant of bench/soak.js: one round of every action — blocks, payments,
 * a replacement, a reorg, the follower and the LevelDB server SIGKILLed and restarted, a
 * worker of each server killed, btcd killed and restarted — with REST and Electrum readers
 * asking all along; then the same on the MongoDB store, FerretDB killed instead of the LevelDB
 * server. The long soaks' figures are in docs/DEPLOY.md ("Reliability").
 */
describe('chaos soak, short (bench/soak.js, one round of every action)', function () {
  this.timeout(300000);

  it('every answer is the truth at its tip, nothing but 503 index-moving, verify clean, digests a fresh sync\'s', async () => {
    const f = await runSoak({ seed: 24, rounds: 1, schedule: 'cover' });
    assert.deepEqual(f.problems, []);
    assert.equal(f.wrong, 0, JSON.stringify(f.wrongExamples, null, 1));
    assert.deepEqual(f.fivexx, {});
    // what the round did: each kind of kill, a reorg, a replacement offered
    assert.deepEqual({ ...f.kills, serveWorker: Math.min(f.kills.serveWorker, 1), levelWorker: 0 },
      { follow: 1, level: 1, mongo: 0, serveWorker: 1, levelWorker: 0, node: 1 });
    assert.equal(f.kills.serveWorker + f.kills.levelWorker, 2);
    assert.equal(f.chain.reorgs, 1);
    assert.ok(f.chain.payments > 0);
    for (const [name, r] of Object.entries(f.readers)) {
      assert.ok(r.answered > 0, `${name} got answers`);
      assert.equal(r.timeouts, 0, `${name}: no request left hanging`);
    }
    assert.equal(f.answersChecked, Object.values(f.readers).reduce((s, r) => s + r.answered, 0));
  });

  it('the MongoDB store (FerretDB, killed and restarted too): every answer the truth at its tip, verify clean, the digest a fresh sync\'s', async () => {
    const f = await runSoak({ seed: 24, rounds: 1, schedule: 'cover', store: 'mongo' });
    assert.deepEqual(f.problems, []);
    assert.equal(f.wrong, 0, JSON.stringify(f.wrongExamples, null, 1));
    assert.deepEqual(f.fivexx, {});
    assert.deepEqual({ follow: f.kills.follow, mongo: f.kills.mongo, node: f.kills.node, worker: f.kills.serveWorker }, { follow: 1, mongo: 1, node: 1, worker: 1 });
    assert.equal(f.chain.reorgs, 1);
    for (const [name, r] of Object.entries(f.readers)) {
      assert.ok(r.answered > 0, `${name} got answers`);
      assert.equal(r.timeouts, 0, `${name}: no request left hanging`);
    }
  });
});
