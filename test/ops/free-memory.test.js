'use strict';

const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const path = require('node:path');

/**
 * In a process of its own (its resident set is what is measured): 256 MB of small buffers, one
 * in 64 kept so that what is freed lies between what is not, freed and collected; then the
 * allocator asked to give its free pages back.
 */
const CHILD = `
const { returnFreeMemory } = require(${JSON.stringify(path.resolve(__dirname, '../../lib/ops/free-memory'))});
const anon = () => Number(require('fs').readFileSync('/proc/self/status', 'utf8').match(/^RssAnon:\\s+(\\d+) kB/m)[1]) / 1024;
(async () => {
  let bufs = [];
  for (let i = 0; i < 128 * 1024; i++) bufs.push(Buffer.allocUnsafeSlow(2048).fill(i & 255));
  const kept = bufs.filter((b, i) => i % 64 === 0);
  bufs = null;
  for (let k = 0; k < 3; k++) {
    global.gc();
    await new Promise((r) => setTimeout(r, 100));
  }
  const before = anon();
  const asked = await returnFreeMemory();
  console.log(JSON.stringify({ before, after: anon(), asked, kept: kept.length }));
})();
`;

describe('returning the allocator\'s free pages (lib/ops/free-memory.js)', function () {
  this.timeout(60000);

  it('what was freed between live allocations leaves the resident set only when returned (glibc malloc_trim, through koffi)', function () {
    if (process.platform !== 'linux') this.skip();
    const r = JSON.parse(execFileSync(process.execPath, ['--expose-gc', '-e', CHILD], { encoding: 'utf8' }));
    assert.equal(r.asked, true, 'glibc and koffi are here');
    assert.equal(r.kept, 2048);
    // ~250 MB were freed; glibc had kept them (only a heap's top goes back by itself)
    assert.ok(r.before - r.after > 150, `RssAnon ${r.before.toFixed(0)} MB before, ${r.after.toFixed(0)} MB after`);
  });
});
