'use strict';

/**
 * The other lmdb-js paths suspected of the suite's SIGSEGV, driven on purpose, one case per
 * process: `node tools/lmdb-failed-open/other-paths.js` runs them all and prints how each
 * child ended (`node other-paths.js CASE` runs one). With lmdb-js 3.5.6 only close-vs-worker
 * ends a process, now and then (the suite's SIGSEGV was the failed open, repro.js):
 *
 * - close-mid-range: the environment closed while a range iterator is half way: the next
 *   step throws MDB_BAD_TXN;
 * - fast-buffer-kept: getBinaryFast's buffers kept past their transaction and the close: one
 *   reused buffer (every kept value is the last one read), not a crash — use it before the
 *   next read, as lib/stores/lmdb.js's forEachValue does;
 * - read-after-close: a read transaction used after its environment closed: an error;
 * - growth-vs-worker: the map grown (2 MiB to hundreds) by a writer while a worker thread of
 *   the same process reads in a loop;
 * - close-vs-worker: the main thread closes the environment while a worker thread reads, and
 *   the worker is terminated mid-read: about one run in 25 aborts the process (SIGABRT,
 *   "FATAL ERROR: Error::ThrowAsJavaScriptException napi_throw" from the worker's cursor). The
 *   store never does this: LmdbStore closes (or compacts) only after its prefetch thread has
 *   ended, and that thread reads from an environment still open;
 * - killed-readers: reader processes SIGKILLed mid-read, twenty times, the writer writing on.
 */

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Worker, isMainThread, workerData } = require('node:worker_threads');
const { open } = require('lmdb');

const CASES = ['close-mid-range', 'fast-buffer-kept', 'read-after-close', 'growth-vs-worker', 'close-vs-worker', 'killed-readers'];
const key = (i) => Buffer.from(String(i).padStart(8, '0'));
const BIN = { encoding: 'binary', keyEncoding: 'binary' };

function fill(db, n, size) {
  db.transactionSync(() => {
    for (let i = 0; i < n; i++) db.putSync(key(i), Buffer.alloc(size, i & 0xff));
  });
}

function readForever(db) {
  for (;;) {
    const t = db.useReadTransaction();
    for (const { value } of db.getRange({ transaction: t, limit: 500 })) value.readUInt8(0);
    t.done();
  }
}

const run = {
  async 'close-mid-range'(dir) {
    const db = open({ path: dir, ...BIN });
    fill(db, 2000, 100);
    let n = 0;
    try {
      for (const { value } of db.getRange({})) {
        if (++n === 500) await db.close();
        value.readUInt8(0);
      }
      return `iterated ${n}`;
    } catch (err) {
      return `iterated ${n}, then: ${err.message}`;
    }
  },
  async 'fast-buffer-kept'(dir) {
    const db = open({ path: dir, ...BIN });
    fill(db, 100, 20000);
    const t = db.useReadTransaction();
    const kept = [];
    for (let i = 0; i < 100; i++) kept.push(db.getBinaryFast(key(i), { transaction: t }));
    t.done();
    await db.close();
    return `kept buffers read after the close: ${new Set(kept.map((b) => b[0])).size} distinct first byte(s) of 100 values`;
  },
  async 'read-after-close'(dir) {
    const db = open({ path: dir, ...BIN });
    fill(db, 10, 100);
    const t = db.useReadTransaction();
    await db.close();
    try {
      db.getBinary(key(1), { transaction: t });
      return 'read';
    } catch (err) {
      return `refused: ${err.message}`;
    }
  },
  async 'growth-vs-worker'(dir) {
    const db = open({ path: dir, ...BIN, mapSize: 2 ** 21, useWritemap: true, pageSize: 4096 });
    fill(db, 10, 100);
    const w = new Worker(__filename, { workerData: { dir } });
    for (let round = 0; round < 30; round++) fill(db, 2000, 2000 + round);
    await w.terminate();
    const size = db.getStats().mapSize;
    await db.close();
    return `the map grew to ${size} bytes with a worker reading`;
  },
  async 'close-vs-worker'(dir) {
    const db = open({ path: dir, ...BIN });
    fill(db, 2000, 500);
    const w = new Worker(__filename, { workerData: { dir } });
    await new Promise((r) => setTimeout(r, 300));
    await db.close();
    await new Promise((r) => setTimeout(r, 500));
    await w.terminate();
    return 'closed beside a reading worker, then terminated it mid-read';
  },
  async 'killed-readers'(dir) {
    const db = open({ path: dir, ...BIN });
    fill(db, 2000, 500);
    for (let i = 0; i < 20; i++) {
      const r = spawnSync(process.execPath, [__filename, '--read', dir], { timeout: 100 + i * 10, killSignal: 'SIGKILL' });
      if (r.signal !== 'SIGKILL') return `a reader ended by ${r.signal || r.status}`;
      fill(db, 2000, 500 + i);
    }
    await db.close();
    return '20 readers killed mid-read; the writer wrote on';
  },
};

async function child(name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lmdb-paths-'));
  try {
    console.log(await run[name](dir));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (!isMainThread) {
  readForever(open({ path: workerData.dir, ...BIN }));
} else if (process.argv[2] === '--read') {
  readForever(open({ path: process.argv[3], ...BIN, readOnly: true }));
} else if (process.argv[2]) {
  child(process.argv[2]);
} else {
  for (const name of CASES) {
    const r = spawnSync(process.execPath, [__filename, name], { encoding: 'utf8', timeout: 120000 });
    const end = r.signal ? `killed by ${r.signal}` : `exit ${r.status}`;
    console.log(`${name}: ${end}: ${(r.stdout + r.stderr).trim().split('\n').pop()}`);
  }
}
