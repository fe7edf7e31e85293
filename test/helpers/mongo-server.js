'use strict';

const { execFile } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { freePort } = require('./ports');
const { spawnOwned } = require('./procs');
const { tempDir, removeDir } = require('./tmp');

const ROOT = path.join(__dirname, '..', '..');
const BUILD_SCRIPT = path.join(ROOT, 'scripts', 'build-ferretdb.sh');

/** How long the first build (module download + compile) may take before we give up. */
const BUILD_TIMEOUT_MS = 5 * 60 * 1000;
/** How long a started server may take to print its `ready` line. */
const READY_TIMEOUT_MS = 30 * 1000;

/**
 * Builds (once, cached in .cache/ferretdb) the FerretDB v1.24 SQLite server and returns its path.
 * @returns {Promise<string>}
 */
function buildFerretDB() {
  return new Promise((resolve, reject) => {
    // the script answers at once when the cached binary matches the sources; say so only
    // when it has to compile
    const stamp = path.join(ROOT, '.cache', 'ferretdb', 'sources.sha256');
    if (!fs.existsSync(stamp)) console.log('    (building the FerretDB test server with Go, once: about a minute)');
    execFile('bash', [BUILD_SCRIPT], { timeout: BUILD_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) {
        const tail = String(stderr).trim().split('\n').slice(-5).join('\n');
        reject(new Error(`scripts/build-ferretdb.sh failed (${err.code ?? err.signal}): ${tail}`));
        return;
      }
      resolve(String(stdout).trim().split('\n').pop());
    });
  });
}

/**
 * A running FerretDB process on a given port and data dir. Kept separate from startMongo so a
 * test can stop the server and start it again on the same port and dir (connection-loss tests).
 */
class FerretServer {
  /**
   * @param {string} bin
   * @param {number} port
   * @param {string} dir
   */
  constructor(bin, port, dir) {
    this.bin = bin;
    this.port = port;
    this.dir = dir;
    this.child = null;
    this.url = null;
  }

  /** Starts the process and resolves when it prints `ready URL`. */
  start() {
    return new Promise((resolve, reject) => {
      const child = spawnOwned(this.bin, ['-listen', `127.0.0.1:${this.port}`, '-dir', this.dir], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      this.child = child;
      let out = '';
      let err = '';
      let settled = false;
      const fail = (why) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        child.kill('SIGKILL');
        reject(new Error(`FerretDB did not start on 127.0.0.1:${this.port}: ${why}; stderr: ${err.trim().slice(-2000) || '(empty)'}`));
      };
      const timer = setTimeout(() => fail(`no "ready" line within ${READY_TIMEOUT_MS} ms`), READY_TIMEOUT_MS);
      child.stdout.on('data', (d) => {
        out += d;
        const m = /^ready (\S+)/m.exec(out);
        if (m && !settled) {
          settled = true;
          clearTimeout(timer);
          this.url = `mongodb://127.0.0.1:${this.port}/`;
          resolve(this.url);
        }
      });
      // FerretDB logs every connection on stderr: keep only a tail for error messages
      child.stderr.on('data', (d) => {
        err = (err + d).slice(-8000);
      });
      child.on('error', (e) => fail(e.message));
      child.on('exit', (code, signal) => {
        if (this.child === child) this.child = null;
        fail(`exited (${code ?? signal})`);
      });
    });
  }

  /**
   * Stops the process: SIGTERM, then SIGKILL after `graceMs`.
   * @param {{signal?: string, graceMs?: number}} [opts] signal 'SIGKILL' kills at once
   */
  stop({ signal = 'SIGTERM', graceMs = 5000 } = {}) {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill(signal);
    });
  }
}

/**
 * A MongoDB-wire server for one test file: $MONGODB_URL when set, else a FerretDB (SQLite
 * backend) built once with Go and started on a free loopback port with a temporary data dir.
 * Each test should use a database name of its own on it.
 *
 * @returns {Promise<{url: string, external: boolean, server: FerretServer|null, stop: () => Promise<void>}>}
 *   rejects when neither is possible (no Go, a failed build, a server that does not start):
 *   callers turn that into a skip with the reason (see mongoOrSkip)
 */
async function startMongo() {
  if (process.env.MONGODB_URL) {
    return { url: process.env.MONGODB_URL, external: true, server: null, stop: async () => {} };
  }
  const bin = await buildFerretDB();
  // in memory: SQLite fails a write with "database or disk is full (13)" whenever the disk,
  // shared with the benchmarks, is full for a moment
  const dir = tempDir('ferretdb', { inMemory: true });
  const server = new FerretServer(bin, await freePort(), dir);
  try {
    await server.start();
  } catch (e) {
    removeDir(dir);
    throw e;
  }
  return {
    url: server.url,
    external: false,
    server,
    stop: async () => {
      await server.stop();
      removeDir(dir);
    },
  };
}

/**
 * Mocha glue: starts the server in a `before` hook, or skips the whole suite with the reason
 * printed when no server can be had. Returns a holder whose `mongo` is set once started.
 * @param {Mocha.Suite} [suite] unused; call inside describe()
 * @returns {{mongo: Awaited<ReturnType<typeof startMongo>>|null, dbName: (tag: string) => string}}
 */
function useMongo() {
  const holder = {
    mongo: null,
    dbName(tag) {
      counter++;
      return `addrindex_${process.pid}_${counter}_${tag}`.replace(/[^A-Za-z0-9_]/g, '_').slice(0, 60);
    },
  };
  let counter = 0;
  before(async function () {
    this.timeout(BUILD_TIMEOUT_MS + READY_TIMEOUT_MS);
    try {
      holder.mongo = await startMongo();
    } catch (e) {
      console.log(`    skipping the MongoDB tests: ${e.message}`);
      this.skip();
    }
  });
  after(async function () {
    this.timeout(15000);
    if (holder.mongo) await holder.mongo.stop();
  });
  return holder;
}

module.exports = { startMongo, useMongo, freePort, buildFerretDB, FerretServer };
