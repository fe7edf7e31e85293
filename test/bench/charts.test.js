'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { tempDir } = require('../helpers/tmp');
const { syncRuns, syncChart, drawAll } = require('../../bench/charts');

const RESULTS = path.join(__dirname, '..', '..', 'bench', 'results');

/** Tags open and close in order, attributes are quoted, text has no raw "<" or "&": well-formed enough for a browser. */
function assertWellFormed(svg) {
  const stack = [];
  const re = /<(\/?)([a-zA-Z]+)((?:\s+[a-zA-Z][a-zA-Z0-9:-]*="[^"<]*")*)\s*(\/?)>|([^<]+)/g;
  let m;
  let consumed = 0;
  while ((m = re.exec(svg))) {
    assert.equal(m.index, consumed, `unparsable at ${svg.slice(consumed, consumed + 60)}`);
    consumed = re.lastIndex;
    if (m[5] !== undefined) {
      assert.ok(!/&(?!amp;|lt;|gt;|quot;)/.test(m[5]), `raw & in ${m[5]}`);
    } else if (m[1]) {
      assert.equal(stack.pop(), m[2]);
    } else if (!m[4]) {
      stack.push(m[2]);
    }
  }
  assert.equal(consumed, svg.length);
  assert.deepEqual(stack, []);
}

describe('bench/charts.js: SVG charts from the results JSON', () => {
  it('finds every run of the committed sync.json (bench/sync.js documents by store): its store, size and tenths', () => {
    const doc = JSON.parse(fs.readFileSync(path.join(RESULTS, 'sync.json'), 'utf8'));
    const want = [];
    for (const part of Object.values(doc)) {
      if (part && Array.isArray(part.runs)) for (const r of part.runs) want.push({ store: r.store, txs: r.txs, tenths: r.tenths });
    }
    assert.ok(want.length >= 2, 'the committed file holds several runs');
    const found = syncRuns(doc).map((r) => ({ store: r.store, txs: r.txs, tenths: r.tenths }));
    const key = (r) => `${r.store} ${r.txs}`;
    assert.deepEqual(found.map(key).sort(), want.map(key).sort());
    for (const r of want) assert.deepEqual(found.find((f) => key(f) === key(r)).tenths, r.tenths);
  });

  it('finds every run of a file holding several stores and sizes, however nested', () => {
    const run = (txs, base) => ({ ours: { txs }, tenths: Array.from({ length: 10 }, (_, i) => base + i) });
    const doc = {
      runs: [{ ...run(1e6, 100), options: { store: 'lmdb' } }, { ...run(3e6, 200), store: 'level' }],
      lmdb: { 5000000: run(5e6, 300), 10000000: run(1e7, 400) },
      byStore: [{ store: 'mongo', results: [run(1e5, 500)] }],
      notes: { tenths: 'not numbers' },
    };
    const runs = syncRuns(doc);
    assert.deepEqual(runs.map((r) => [r.store, r.txs, r.tenths[0]]), [
      ['lmdb', 1e6, 100], ['lmdb', 5e6, 300], ['lmdb', 1e7, 400], ['level', 3e6, 200], ['mongo', 1e5, 500],
    ]);
    assert.deepEqual(runs.map((r) => r.label), ['LMDB, 1M tx', 'LMDB, 5M tx', 'LMDB, 10M tx', 'LevelDB, 3M tx', 'MongoDB, 100k tx']);
    const svg = syncChart(runs);
    assertWellFormed(svg);
    assert.equal((svg.match(/<polyline /g) || []).length, 5);
    for (const r of runs) assert.ok(svg.includes(r.label), r.label);
    // the y axis reaches the fastest tenth
    assert.ok(svg.includes('>600<'), 'the y axis reaches above the fastest tenth (509)');
  });

  it('draws every chart whose results exist, well formed', () => {
    const out = tempDir('charts');
    const written = drawAll(RESULTS, out);
    for (const name of ['sync-tenths.svg', 'stores.svg', 'api.svg']) assert.ok(written.includes(name), name);
    for (const f of written) assertWellFormed(fs.readFileSync(path.join(out, f), 'utf8'));
    const stores = fs.readFileSync(path.join(out, 'stores.svg'), 'utf8');
    const doc = JSON.parse(fs.readFileSync(path.join(RESULTS, 'stores.json'), 'utf8'));
    for (const r of doc.rows) assert.ok(stores.includes(`${Math.round(r.write.ms).toLocaleString('en-US')} ms`), r.row);
    // a results dir with only some files: only their charts
    const partial = tempDir('charts-partial');
    fs.copyFileSync(path.join(RESULTS, 'api.json'), path.join(partial, 'api.json'));
    assert.deepEqual(drawAll(partial, partial), ['api.svg']);
  });
});
