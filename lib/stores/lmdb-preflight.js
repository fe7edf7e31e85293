'use strict';

const fs = require('node:fs');

/**
 * What lmdb-js would find in an LMDB datadir, read before it opens one.
 *
 * lmdb-js 3.x crashes the process (SIGSEGV) whenever `mdb_env_open` fails after the
 * environment's lock file was registered: its error path deletes the environment's
 * ExtendedEnv, then `closeEnv` finds the half-open environment in its registry and deletes it
 * again (tools/lmdb-failed-open/ reproduces it in a few lines). The failures that reach that
 * path are an empty or cut-short data.mdb (a reader opening an index its writer is creating),
 * a file that is not LMDB's or of another LMDB format, and a map the process's address space
 * cannot hold (`ulimit -v`). Each is recognised here, so the store refuses it with an error
 * instead of letting lmdb-js fail on it.
 *
 * The meta page, as lmdb-js's LMDB writes it (24-byte page header, then MDB_meta):
 * byte 18 the page flags (P_META 0x08), 24 the magic, 28 the format version, 48 the page size.
 */

const P_META = 0x08;
const MAGIC = 0xbeefc0de;
const DATA_VERSION = 2;
const HEAD_BYTES = 52;

/**
 * @typedef {object} DataFileState
 * @property {'absent'|'creating'|'cut-short'|'foreign'|'other-version'|'ok'} state
 *   creating: empty, or a first page still all zeros (a writer is creating the index);
 *   cut-short: a valid first meta page in a file too short for the others
 * @property {number} [size] the file's length
 * @property {number} [pageSize] from the meta page, when it has one
 * @property {number} [version] the format version found, for other-version
 */

/**
 * Reads the head of a data.mdb and says whether LMDB can open it.
 * @param {string} file
 * @returns {DataFileState}
 */
function inspectDataFile(file) {
  let fd;
  try {
    fd = fs.openSync(file, 'r');
  } catch (err) {
    if (err.code === 'ENOENT') return { state: 'absent' };
    throw err;
  }
  try {
    const size = fs.fstatSync(fd).size;
    if (size === 0) return { state: 'creating', size };
    const head = Buffer.alloc(Math.min(size, 4096));
    fs.readSync(fd, head, 0, head.length, 0);
    if (head.every((b) => b === 0)) return { state: 'creating', size };
    if (head.length < HEAD_BYTES || head.readUInt32LE(24) !== MAGIC || !(head.readUInt16LE(18) & P_META)) return { state: 'foreign', size };
    const version = head.readUInt32LE(28) & 0xffff;
    if (version !== DATA_VERSION) return { state: 'other-version', size, version };
    const pageSize = head.readUInt32LE(48);
    if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) return { state: 'foreign', size };
    // LMDB reads every meta page in full; a new environment has at least two pages
    if (size < 2 * pageSize) return { state: 'cut-short', size, pageSize };
    return { state: 'ok', size, pageSize };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The process's address-space limit (`ulimit -v`), in bytes; Infinity when there is none or
 * it cannot be read (not Linux).
 * @returns {number}
 */
function addressSpaceLimit() {
  let text;
  try {
    text = fs.readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return Infinity;
  }
  const m = /^Max address space\s+(\S+)/m.exec(text);
  return !m || m[1] === 'unlimited' ? Infinity : Number(m[1]);
}

/**
 * Whether a map of `mapSize` bytes can fit in what the address space has left, with the
 * process's own mappings counted (/proc/self/status VmSize).
 * @param {number} mapSize
 * @returns {{fits: boolean, limit: number, used: number}}
 */
function mapFits(mapSize) {
  const limit = addressSpaceLimit();
  if (limit === Infinity) return { fits: true, limit, used: 0 };
  let used = 0;
  try {
    const m = /^VmSize:\s+(\d+) kB/m.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    if (m) used = Number(m[1]) * 1024;
  } catch {
    // without VmSize, the limit alone decides
  }
  return { fits: used + mapSize < limit, limit, used };
}

module.exports = { inspectDataFile, addressSpaceLimit, mapFits };
