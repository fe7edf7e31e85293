'use strict';

const { leftRunning, killGroup } = require('./procs');

/**
 * Mocha root hooks (.mocharc's `require`): after the last file, every process a test started
 * must have been stopped by the test that started it (a signalled one gets a few seconds to
 * exit). One still running is a leak — it would have run on had the run not ended here — so
 * the run fails naming it (and then kills it).
 */
exports.mochaHooks = {
  async afterAll() {
    this.timeout(30000);
    const left = await leftRunning(10000);
    for (const { pid } of left) killGroup(pid);
    if (left.length) {
      throw new Error(`processes started by the tests and never stopped:\n${left.map((p) => `  ${p.pid}: ${p.what}`).join('\n')}`);
    }
  },
};
