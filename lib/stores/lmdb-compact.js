'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { Worker } = require('node:worker_threads');
const { StoreError } = require('../errors');

/**
 * The directory a compaction builds the new file in, with an `owner` file naming its process:
 * while it is there and its owner lives, readers wait before they open the environment.
 */
const COMPACTING = 'compacting';

/**
 * Rewrites an environment with every row in key order into full pages, without the free pages
 * copy-on-write leaves behind, and puts the copy in the file's place (lmdb.js, LmdbStore#compact
 * says when). Refused (ERR_IN_USE) while another process has it open. `db` is closed on success;
 * the caller opens the environment again.
 * @param {object} db the environment's lmdb-js root database, open writable
 * @param {string} dir the datadir
 * @param {{pageSize: number, mapSize: number}} opts the copy's environment
 * @returns {Promise<{before: number, after: number, rows: number}>} file bytes, rows copied
 */
async function compactEnv(db, dir, { pageSize, mapSize }) {
  const file = path.join(dir, 'data.mdb');
  const before = allocated(fs.statSync(file));
  const tmp = path.join(dir, COMPACTING); // a directory: lmdb-js takes a name with a dot for a file
  fs.rmSync(tmp, { recursive: true, force: true });
  // The marker first, the readers' check second: a reader opening now either is listed
  // below, or finds the marker when it checks for it after opening (and waits).
  fs.mkdirSync(tmp);
  fs.writeFileSync(path.join(tmp, 'owner'), String(process.pid));
  db.readerCheck(); // forget the slots of processes that died
  const readers = db.readerList().split('\n').slice(1).map((l) => Number(l.trim().split(/\s+/)[0]));
  const others = [...readers, ...lockHolders(dir)].filter((pid) => pid > 0 && pid !== process.pid);
  if (others.length) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw new StoreError('ERR_IN_USE', `datadir ${dir} is open in process ${[...new Set(others)].join(', ')}: stop it before compacting`);
  }
  let copy;
  try {
    // a refused append fails copyRows itself; a count short here is a range that missed rows
    copy = await copyRows(db, { path: tmp, pageSize, mapSize });
    const had = db.getStats().entryCount;
    if (copy.entries !== had) throw new StoreError('ERR_COMPACT', `the compacted copy holds ${copy.entries} rows, the index ${had}: nothing replaced`);
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
  await db.close();
  // the copy takes the file's place in one rename; the lock file is rebuilt by the next open
  fs.renameSync(path.join(tmp, 'data.mdb'), file);
  fs.rmSync(path.join(dir, 'lock.mdb'), { force: true });
  fs.rmSync(tmp, { recursive: true, force: true });
  return { before, after: allocated(fs.statSync(file)), rows: copy.rows };
}

/** A chunk of packed rows (lmdb-compact-worker.js): a write transaction of the copy each. */
const CHUNK_BYTES = 8 * 2 ** 20;

/**
 * Every row of `db`, in key order, appended to a new environment at `to.path` by the writer
 * thread, while this one reads the next: the two halves of a copy take about as long each, so
 * on two cores it takes about half. Two chunks go back and forth between the threads.
 * @param {object} db
 * @param {{path: string, pageSize: number, mapSize: number}} to
 * @returns {Promise<{rows: number, entries: number}>} the rows sent; the rows the copy holds
 */
async function copyRows(db, to) {
  const worker = new Worker(path.join(__dirname, 'lmdb-compact-worker.js'), { workerData: to });
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  const next = replies(worker);
  let ended = false;
  const free = [Buffer.allocUnsafeSlow(CHUNK_BYTES), Buffer.allocUnsafeSlow(CHUNK_BYTES)];
  let chunk = free.pop();
  let at = 0;
  let n = 0;
  let rows = 0;
  const send = async () => {
    worker.postMessage({ chunk, rows: n, first: rows }, [chunk.buffer]);
    rows += n;
    n = 0;
    at = 0;
    if (free.length === 0) {
      const back = (await next()).chunk;
      free.push(Buffer.from(back.buffer, back.byteOffset, back.byteLength));
    }
    chunk = free.pop();
  };
  try {
    // the range keeps its read transaction (a snapshot) across the waits for the writer
    for (const { key, value } of db.getRange({})) {
      const size = 6 + key.length + value.length;
      if (at + size > chunk.length && n > 0) await send();
      // a row larger than a chunk travels in one of its own size, which stays in use after
      if (size > chunk.length) chunk = Buffer.allocUnsafeSlow(size);
      chunk.writeUInt16LE(key.length, at);
      chunk.writeUInt32LE(value.length, at + 2);
      chunk.set(key, at + 6);
      chunk.set(value, at + 6 + key.length);
      at += size;
      n++;
    }
    if (n > 0) await send();
    worker.postMessage({ end: true });
    ended = true;
    // the chunks still in flight come back before the end's answer
    for (;;) {
      const m = await next();
      if (m.closed) return { rows, entries: m.entries };
    }
  } finally {
    // never terminated: a worker stopped inside lmdb-js aborts the process. Told to end, it
    // closes the copy after the chunk it is on and exits.
    if (!ended) worker.postMessage({ end: true });
    await exited;
  }
}

/**
 * The writer's answers in order, until a failure ends them (its error, an error it reported,
 * or an exit before it closed the copy).
 * @param {Worker} worker
 * @returns {() => Promise<{chunk?: Uint8Array, closed?: boolean, entries?: number}>}
 */
function replies(worker) {
  const queued = [];
  const waiting = [];
  let failed = null;
  let gone = null;
  const fail = (err) => {
    failed = failed || err;
    for (const w of waiting.splice(0)) w.reject(failed);
  };
  worker.on('message', (m) => {
    if (m.error) return fail(new StoreError('ERR_COMPACT', `writing the compacted copy failed: ${m.error.message}`));
    const w = waiting.shift();
    if (w) w.resolve(m);
    else queued.push(m);
  });
  worker.on('error', fail);
  // its messages are all delivered before its exit: after them, an exit is the end of answers
  worker.on('exit', (code) => {
    gone = new StoreError('ERR_COMPACT', `the compaction's writer thread exited (code ${code})`);
    for (const w of waiting.splice(0)) w.reject(gone);
  });
  return () => {
    // a failure first: answers queued before it (chunks written, the end's) must not hide it
    if (failed) return Promise.reject(failed);
    if (queued.length) return Promise.resolve(queued.shift());
    if (gone) return Promise.reject(gone);
    return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
  };
}

/**
 * The processes that have the environment open, reading or idle: LMDB keeps a POSIX lock on
 * lock.mdb for as long as a process has it open, and Linux names the holders in /proc/locks.
 * LMDB's reader table names only the processes inside a read transaction, so an idle server or
 * a bitcore wallet writer beside the sync went unseen, and would have gone on with the
 * replaced file. [] where /proc/locks cannot be read (other systems: the reader table alone).
 * @param {string} dir the datadir
 * @returns {number[]} pids, this process's among them
 */
function lockHolders(dir) {
  let st;
  let text;
  try {
    st = fs.statSync(path.join(dir, 'lock.mdb'));
    text = fs.readFileSync('/proc/locks', 'utf8');
  } catch {
    return [];
  }
  // /proc/locks names a file as major:minor:inode, the device numbers in hex
  const major = (st.dev >> 8) & 0xfff;
  const minor = (st.dev & 0xff) | ((st.dev >> 12) & 0xfff00);
  const pids = [];
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    const at = f.findIndex((x) => /^[0-9a-f]+:[0-9a-f]+:\d+$/.test(x));
    if (at < 1 || !f.includes('POSIX')) continue;
    const [maj, min, ino] = f[at].split(':');
    if (parseInt(maj, 16) === major && parseInt(min, 16) === minor && Number(ino) === st.ino) pids.push(Number(f[at - 1]));
  }
  return pids;
}

/**
 * The process compacting the datadir, if one is and lives.
 * @param {string} dir
 * @returns {number|null}
 */
function compactingOwner(dir) {
  let pid;
  try {
    pid = Number(fs.readFileSync(path.join(dir, COMPACTING, 'owner'), 'utf8'));
  } catch {
    return null;
  }
  if (!(pid > 0)) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (err) {
    return err.code === 'EPERM' ? pid : null;
  }
}

/**
 * Resolves once no live process compacts the datadir; onWait(pid) once when it must wait.
 * @param {string} dir
 * @param {(pid: number) => void} [onWait]
 */
async function untilCompacted(dir, onWait) {
  let told = false;
  for (let pid = compactingOwner(dir); pid; pid = compactingOwner(dir)) {
    if (!told && onWait) onWait(pid);
    told = true;
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** The bytes a file occupies (its tail past the data is sparse under MDB_WRITEMAP). */
function allocated(st) {
  return Math.min(st.size, st.blocks * 512);
}

module.exports = { COMPACTING, compactEnv, copyRows, compactingOwner, untilCompacted, lockHolders, allocated };
