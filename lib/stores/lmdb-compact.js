'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { open } = require('lmdb');
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
  const out = open({ path: tmp, encoding: 'binary', keyEncoding: 'binary', pageSize, useWritemap: true, mapSize });
  let rows = 0;
  try {
    // in key order, appended: each page filled before the next is started. A range yields
    // its keys and values as copies of its own, so they go into the copy's write transaction
    // as they come, a chunk of rows per commit (one commit of millions of rows would hold
    // every dirty page of the copy in its transaction)
    const CHUNK = 100000;
    const it = db.getRange({})[Symbol.iterator]();
    try {
      for (let done = false; !done;) {
        out.transactionSync(() => {
          for (let n = 0; n < CHUNK; n++) {
            const next = it.next();
            if (next.done) {
              done = true;
              return;
            }
            out.putSync(next.value.key, next.value.value, { append: true });
            rows++;
          }
        });
      }
    } finally {
      it.return(); // ends the range's cursor should a write have thrown
    }
    const copied = out.getStats().entryCount;
    const had = db.getStats().entryCount;
    if (copied !== had) throw new StoreError('ERR_COMPACT', `the compacted copy holds ${copied} rows, the index ${had}: nothing replaced`);
  } catch (err) {
    await out.close();
    fs.rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
  await out.close();
  await db.close();
  // the copy takes the file's place in one rename; the lock file is rebuilt by the next open
  fs.renameSync(path.join(tmp, 'data.mdb'), file);
  fs.rmSync(path.join(dir, 'lock.mdb'), { force: true });
  fs.rmSync(tmp, { recursive: true, force: true });
  return { before, after: allocated(fs.statSync(file)), rows };
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

module.exports = { COMPACTING, compactEnv, compactingOwner, untilCompacted, lockHolders };
