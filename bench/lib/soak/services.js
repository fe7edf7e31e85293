'use strict';

const { startCli } = require('../../../test/helpers/cli');
const { childrenOf } = require('../../../test/helpers/procs');
const { freePort } = require('../../../test/helpers/ports');

/**
 * The addrindex processes of the soak, as an operator deploys them beside one node, each
 * startable again after it was killed:
 * - `follow`: `sync --rpc-url --follow` writing an LMDB index (or a MongoDB one);
 * - `serve`: `serve` of that index, REST and Electrum from two cluster workers;
 * - `level`: `serve --store level --rpc-url`, a LevelDB index its primary follows itself,
 *   REST from two workers that forward to it.
 * Every process is started through the tests' helper, so none outlives the soak. Each server
 * keeps the ports it was first given, as a deployed one does: with --port 0, a server whose
 * workers had all died would listen again on new ports, and its clients would knock on the
 * old ones.
 */

/** How long a (re)started process may take to say it is up. */
const START_MS = 120000;

class Services {
  /**
   * @param {object} opts
   * @param {string} opts.rpcUrl the node (credentials included)
   * @param {{lmdb?: string, level?: string}} opts.datadirs
   * @param {string} [opts.mongoUrl] instead of datadirs.lmdb: the MongoDB store
   * @param {number} [opts.workers=2]
   */
  constructor({ rpcUrl, datadirs, mongoUrl = null, workers = 2 }) {
    Object.assign(this, { rpcUrl, datadirs, mongoUrl, workers });
    /** name → Cli */
    this.procs = {};
    this.urls = { serve: null, level: null };
    this.electrumPort = null;
    /** name → the port it listens on, chosen once */
    this.ports = {};
  }

  async portOf(name) {
    if (!this.ports[name]) this.ports[name] = await freePort();
    return String(this.ports[name]);
  }

  /** The primary store's --store/--datadir/--mongodb-url arguments. */
  storeArgs() {
    return this.mongoUrl ? ['--store', 'mongo', '--mongodb-url', this.mongoUrl] : ['--datadir', this.datadirs.lmdb];
  }

  /** Starts (or starts again) the follower; resolves once it runs its follow loop. */
  async startFollow() {
    const cli = startCli(['sync', '--rpc-url', this.rpcUrl, '--network', 'regtest', ...this.storeArgs(), '--follow',
      '--poll-ms', '100', '--mempool-poll-ms', '100', '--threads', '0', '--rpc-retry-s', '600']);
    this.procs.follow = cli;
    await cli.waitFor(/mempool: \d+ transaction\(s\)|at the source's tip|synced/, START_MS);
    return cli;
  }

  /** Starts the reader of the primary store: REST and Electrum, two workers. */
  async startServe() {
    const cli = startCli(['serve', ...this.storeArgs(), '--workers', String(this.workers), '--port', await this.portOf('serve'),
      '--electrum-port', await this.portOf('electrum'),
      '--electrum-poll-ms', '50', '--poll-ms', '200', '--grace-ms', '1000'], { env: { ADDRINDEX_RPC_URL: this.rpcUrl } });
    this.procs.serve = cli;
    this.urls.serve = (await cli.waitFor(/listening on (http:\/\/\S+)/, START_MS))[1];
    this.electrumPort = Number((await cli.waitFor(/electrum tcp 127\.0\.0\.1:(\d+)/, START_MS))[1]);
    await this.untilWorkers('serve');
    return cli;
  }

  /** Starts (or starts again) `serve --store level --rpc-url`: its primary follows the node. */
  async startLevel() {
    this.urls.level = null;
    const cli = startCli(['serve', '--store', 'level', '--datadir', this.datadirs.level, '--rpc-url', this.rpcUrl, '--network', 'regtest',
      '--workers', String(this.workers), '--port', await this.portOf('level'), '--poll-ms', '100', '--mempool-poll-ms', '100', '--grace-ms', '1000']);
    this.procs.level = cli;
    const url = (await cli.waitFor(/listening on (http:\/\/\S+)/, START_MS))[1];
    await this.untilWorkers('level');
    this.urls.level = url;
    return cli;
  }

  /** Waits until a server's primary has all its workers. */
  async untilWorkers(name) {
    const until = Date.now() + START_MS;
    while (this.workersOf(name).length < this.workers) {
      if (Date.now() > until) throw new Error(`${name}: its ${this.workers} workers did not start`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** The pids of a server's cluster workers (its primary's children). */
  workersOf(name) {
    const p = this.procs[name];
    if (!p || p.exitCode !== null || p.signalCode !== null) return [];
    return childrenOf(p.pid);
  }

  /** SIGKILL to a process; resolves once it has exited. */
  async kill(name) {
    const p = this.procs[name];
    if (name === 'level') this.urls.level = null;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    p.kill('SIGKILL');
    await p.done;
  }

  /** SIGTERM (a clean stop); resolves with its exit. */
  async stop(name) {
    const p = this.procs[name];
    if (name === 'level') this.urls.level = null;
    if (!p || p.exitCode !== null || p.signalCode !== null) return null;
    p.kill('SIGTERM');
    return p.done;
  }

  /**
   * SIGKILL to one worker of a server, chosen by `pick` among them; the primary forks another.
   * @returns {number|null} the pid killed
   */
  killWorker(name, pick) {
    const workers = this.workersOf(name);
    if (!workers.length) return null;
    const pid = workers[Math.floor(pick * workers.length)];
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      return null;
    }
    return pid;
  }

  /** Whether a process is running. */
  running(name) {
    const p = this.procs[name];
    return Boolean(p && p.exitCode === null && p.signalCode === null);
  }

  async stopAll() {
    for (const name of Object.keys(this.procs)) await this.stop(name);
  }
}

module.exports = { Services };
