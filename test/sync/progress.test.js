'use strict';

const assert = require('node:assert/strict');
const { ProgressReporter, fmtDuration } = require('../../lib/sync/progress');
const { Batch, batchLimits, catchUpLimits, BATCH_DEFAULTS } = require('../../lib/sync/batch');
const { Channel } = require('../../lib/sync/channel');
const { storeClass } = require('../../lib/stores');

/** A writable that keeps what it is given. */
function sink(isTTY) {
  return { isTTY, out: '', write(s) { this.out += s; return true; } };
}

function batchEvent(height, blocks, txs, bytes, target = 1000) {
  return { phase: 'batch', height, target, hash: 'ab'.repeat(32), blocks, txs, bytes, elapsedMs: 0 };
}

describe('sync progress line', () => {
  it('on a terminal rewrites one line with height/target, rates and ETA', () => {
    let now = 0;
    const s = sink(true);
    const r = new ProgressReporter({ stream: s, now: () => now, intervalMs: 0 });
    r.update(batchEvent(99, 100, 1000, 1e6));
    now = 10000;
    r.update(batchEvent(199, 200, 3000, 3e6));
    const lines = s.out.split('\r').filter(Boolean);
    assert.equal(lines.length, 2);
    // 100 blocks and 2000 txs in 10 s; 801 blocks left at 10 blk/s
    assert.match(lines[1], /^height 199 \/ 1,000 \(19\.9 %\)  10\.0 blk\/s  200 tx\/s  0\.2 MB\/s  ETA 1m20s\x1b\[K$/);
    assert.ok(!s.out.includes('\n'), 'no newline while the line is live');
  });

  it('events get a line of their own: the live line is cleared first', () => {
    const s = sink(true);
    const r = new ProgressReporter({ stream: s, now: () => 0, intervalMs: 0 });
    r.update(batchEvent(10, 11, 11, 100));
    r.update({ phase: 'reorg', height: 7, target: 12, blocks: 11, txs: 11, bytes: 100, reorg: { fromHeight: 10, forkHeight: 7, depth: 3 } });
    assert.ok(s.out.endsWith('\r\x1b[Kreorg: reverted 3 block(s) from height 10 to the fork point 7\n'));
  });

  it('not on a terminal: timestamped plain lines, at most one per interval', () => {
    let now = Date.UTC(2024, 0, 1);
    const s = sink(false);
    const r = new ProgressReporter({ stream: s, now: () => now, intervalMs: 10000 });
    for (let i = 1; i <= 30; i++) {
      now += 1000;
      r.update(batchEvent(i * 10, i * 10, i * 100, i * 1000));
    }
    const lines = s.out.trim().split('\n');
    assert.equal(lines.length, 3);
    for (const l of lines) assert.match(l, /^2024-01-01T00:00:\d\d\.000Z height [\d,]+ \/ 1,000 /);
    assert.ok(!s.out.includes('\r'));
    assert.ok(!s.out.includes('\x1b'));
  });

  it('rates use a trailing window, so an early burst does not skew them', () => {
    let now = 0;
    const r = new ProgressReporter({ stream: sink(false), now: () => now, windowMs: 5000, intervalMs: 1e9 });
    r.update(batchEvent(0, 1, 100000, 0)); // a burst
    for (let i = 1; i <= 20; i++) {
      now = i * 1000;
      r.update(batchEvent(i, 1 + i, 100000 + i * 10, 0));
    }
    assert.ok(Math.abs(r.rates().txPerSec - 10) < 1e-9, String(r.rates().txPerSec));
  });

  it('formats durations', () => {
    assert.equal(fmtDuration(5), '5s');
    assert.equal(fmtDuration(125), '2m05s');
    assert.equal(fmtDuration(3 * 3600 + 7 * 60), '3h07m');
    assert.equal(fmtDuration(Infinity), '?');
  });
});

describe('sync batch limits', () => {
  const cols = (txCount) => ({ txCount });

  it('closes a batch at the first limit reached: blocks, bytes or time', () => {
    let now = 0;
    const limits = batchLimits({ maxBlocks: 3, maxBytes: 1000, maxMs: 50 });
    const byCount = new Batch(limits, () => now);
    for (let i = 0; i < 2; i++) byCount.push({ height: i, hash: '', size: 10, cols: cols(2) });
    assert.equal(byCount.full(), false);
    byCount.push({ height: 2, hash: '', size: 10, cols: cols(2) });
    assert.equal(byCount.full(), true);
    assert.equal(byCount.txs, 6);

    const bySize = new Batch(limits, () => now);
    bySize.push({ height: 0, hash: '', size: 999, cols: cols(1) });
    assert.equal(bySize.full(), false);
    bySize.push({ height: 1, hash: '', size: 1, cols: cols(1) });
    assert.equal(bySize.full(), true);

    const byTime = new Batch(limits, () => now);
    assert.equal(byTime.full(), false, 'an empty batch is never due');
    byTime.push({ height: 0, hash: '', size: 1, cols: cols(1) });
    now += 49;
    assert.equal(byTime.full(), false);
    now += 1;
    assert.equal(byTime.full(), true);
  });

  it('turns --cache-mb into a group and a batch, the same batch for LevelDB, which commits each alone', () => {
    const MiB = 1024 * 1024;
    assert.deepEqual(catchUpLimits(), { bulkBytes: 256 * MiB, batchBytes: 32 * MiB });
    const share = (store) => storeClass(store).catchUpBatchShare;
    assert.deepEqual(catchUpLimits(256, share('level')), { bulkBytes: 256 * MiB, batchBytes: 32 * MiB });
    assert.deepEqual(catchUpLimits(64, share('lmdb')), { bulkBytes: 64 * MiB, batchBytes: 8 * MiB });
    assert.equal(catchUpLimits(16, share('level')).batchBytes, 4 * MiB, 'never under 4 MiB');
    assert.equal(catchUpLimits(4096, share('level')).batchBytes, 32 * MiB, 'never over 32 MiB');
    assert.equal(catchUpLimits(256, share('mongo')).batchBytes, 32 * MiB);
  });

  it('fills in defaults and rejects nonsense', () => {
    assert.deepEqual(batchLimits({}), { ...BATCH_DEFAULTS });
    assert.equal(batchLimits({ maxBlocks: 7 }).maxBlocks, 7);
    for (const bad of [0, -1, 1.5, NaN]) {
      assert.throws(() => batchLimits({ maxMs: bad }), (e) => e.code === 'ERR_USAGE');
    }
  });
});

describe('sync channel', () => {
  it('bounds the producer, keeps order, delivers the end and errors after queued items', async () => {
    const ch = new Channel(2);
    const order = [];
    const producer = (async () => {
      for (let i = 0; i < 5; i++) {
        await ch.put(i);
        order.push(`put${i}`);
      }
      ch.fail(new Error('boom'));
    })();
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(order, ['put0', 'put1'], 'the producer waits at capacity');
    const got = [];
    await assert.rejects(async () => {
      for (;;) got.push(await ch.take());
    }, /boom/);
    await producer;
    assert.deepEqual(got, [0, 1, 2, 3, 4]);
  });

  it('close() releases a waiting producer with false', async () => {
    const ch = new Channel(1);
    await ch.put('a');
    const p = ch.put('b');
    ch.close();
    assert.equal(await p, false);
    const end = new Channel(1);
    end.end();
    assert.equal(await end.take(), undefined);
  });
});
