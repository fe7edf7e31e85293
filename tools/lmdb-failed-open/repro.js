'use strict';

/**
 * lmdb-js 3.5.6 dies with SIGSEGV when an environment fails to open after its lock file was
 * registered. Run: `node tools/lmdb-failed-open/repro.js [empty|cut-short|no-room]`.
 *
 * EnvWrap::openEnv (src/env.cpp) registers the environment by its lock file's inode
 * (checkExistingEnvs, called from mdb_env_setup_locks), and on a later failure of mdb_env_open
 * it deletes the ExtendedEnv and calls closeEnv(), which finds the environment registered with
 * one user, deletes the same ExtendedEnv again (~ExtendedEnv frees its maps' buckets from
 * freed memory) and crashes; before that it locks a mutex inside the freed object.
 *
 * - empty: a read-only open of a datadir whose data.mdb is empty (what a reader sees while
 *   a writer creates the index) fails with ENOENT in mdb_env_read_header;
 * - cut-short: a data.mdb with a valid first meta page and nothing after fails MDB_INVALID;
 * - no-room: a read-only open of a real environment with a 1 TiB map under `ulimit -v 4000000`
 *   fails ENOMEM in mmap (run it as `sh -c 'ulimit -v 4000000; node repro.js no-room'`).
 *
 * Each prints "threw: …" and "survived" if lmdb-js handles the failure; with 3.5.6 the
 * process ends with signal SIGSEGV (exit 139) before either.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { open } = require('lmdb');

const kind = process.argv[2] || 'empty';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lmdb-failed-open-'));
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));

const options = { path: dir, readOnly: true };
if (kind === 'empty') {
  fs.writeFileSync(path.join(dir, 'data.mdb'), '');
} else if (kind === 'cut-short') {
  const page = Buffer.alloc(100);
  page.writeUInt16LE(0x08, 18); // P_META
  page.writeUInt32LE(0xbeefc0de, 24); // MDB_MAGIC
  page.writeUInt32LE(2, 28); // the data format version
  page.writeUInt32LE(4096, 48); // the page size
  fs.writeFileSync(path.join(dir, 'data.mdb'), page);
} else if (kind === 'no-room') {
  const db = open({ path: dir });
  db.putSync('k', 'v');
  db.close();
  options.mapSize = 2 ** 40;
} else {
  console.error(`unknown case ${kind}: empty, cut-short or no-room`);
  process.exit(2);
}

try {
  open(options).close();
  console.log('opened');
} catch (err) {
  console.log(`threw: ${err.message}`);
}
console.log('survived');
