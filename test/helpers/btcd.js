'use strict';

const { execFile } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { freePort } = require('./ports');
const { spawnOwned } = require('./procs');
const { tempDir, removeDir } = require('./tmp');

/**
 * btcd v0.24.2 in regtest, the real node of the node-facing tests: built once by
 * scripts/build-btcd.sh (go install, cached in .cache/btcd), started on free loopback ports
 * with its data and logs in a temp dir, driven over its own JSON-RPC.
 *
 * The RPC calls here go through a few lines of node:http of their own, not through
 * lib/node, so a test of the project's client does not lean on that client to set up.
 *
 * btcd facts the helpers work around:
 * - it deletes its regtest database at every start, so `restart()` hands the chain it had
 *   back to it with `submitblock`, as a node reloading its chain from disk would have it;
 * - its `generate` mines on the node's own template: two nodes with the same mining address
 *   and clock can mine the same block, so each node gets its own address;
 * - it relays transactions in trickles (`--trickleinterval 100ms` keeps that short).
 */

const ROOT = path.join(__dirname, '..', '..');
const BUILD_SCRIPT = path.join(ROOT, 'scripts', 'build-btcd.sh');
const BUILD_TIMEOUT_MS = 5 * 60 * 1000;
const READY_TIMEOUT_MS = 30 * 1000;

/** The test nodes' RPC credentials (they listen on loopback only). */
const DEFAULT_USER = 'addrindex';
const DEFAULT_PASS = 'regtest-password';

let built = null;
/**
 * Builds btcd once (cached in .cache/btcd) and returns the binary's path.
 * @returns {Promise<string>}
 */
function buildBtcd() {
  if (!built) {
    built = new Promise((resolve, reject) => {
      if (!fs.existsSync(path.join(ROOT, '.cache', 'btcd', 'version'))) console.log('    (building btcd v0.24.2 with Go, once: about half a minute)');
      execFile('bash', [BUILD_SCRIPT], { timeout: BUILD_TIMEOUT_MS, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
        if (err) {
          const tail = String(stderr).trim().split('\n').slice(-5).join('\n');
          reject(new Error(`scripts/build-btcd.sh failed (${err.code ?? err.signal}): ${tail}`));
          return;
        }
        resolve(String(stdout).trim().split('\n').pop());
      });
    });
    built.catch(() => { built = null; });
  }
  return built;
}

/** A JSON-RPC error from btcd, with its code. */
class BtcdRpcError extends Error {
  constructor(method, error) {
    super(`btcd ${method}: ${error.message} (${error.code})`);
    this.rpcCode = error.code;
  }
}

/**
 * One btcd process with fixed ports and dirs: it can be stopped, killed and started again
 * on the same ones.
 */
class Btcd {
  /**
   * @param {object} opts
   * @param {string} opts.bin
   * @param {string} opts.dir        data and logs go under it
   * @param {number} opts.rpcPort
   * @param {number} opts.p2pPort
   * @param {string} opts.miningAddress
   * @param {string} [opts.user]
   * @param {string} [opts.pass]
   * @param {string[]} [opts.args]   more btcd flags (e.g. --txindex)
   */
  constructor(opts) {
    Object.assign(this, { user: DEFAULT_USER, pass: DEFAULT_PASS, args: [] }, opts);
    this.child = null;
    this.logTail = '';
    this.nextId = 1;
  }

  /** http://USER:PASS@127.0.0.1:PORT */
  get url() {
    return `http://${encodeURIComponent(this.user)}:${encodeURIComponent(this.pass)}@127.0.0.1:${this.rpcPort}`;
  }

  /** The P2P address other nodes connect to. */
  get p2pAddress() {
    return `127.0.0.1:${this.p2pPort}`;
  }

  /** Starts the process and resolves once its RPC server answers. */
  async start() {
    if (this.child) throw new Error('btcd is already running');
    const args = [
      '--regtest', '--notls',
      '--rpcuser', this.user, '--rpcpass', this.pass,
      '--rpclisten', `127.0.0.1:${this.rpcPort}`,
      '--listen', `127.0.0.1:${this.p2pPort}`,
      '--miningaddr', this.miningAddress,
      '--trickleinterval', '100ms',
      '--datadir', path.join(this.dir, 'data'),
      '--logdir', path.join(this.dir, 'logs'),
      '--nodnsseed', '--nocfilters', '--debuglevel', 'warn',
      ...this.args,
    ];
    const child = spawnOwned(this.bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    const keep = (d) => { this.logTail = (this.logTail + d).slice(-4000); };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    child.once('exit', () => {
      if (this.child === child) this.child = null;
    });
    this.exited = exited;
    const until = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      const dead = await Promise.race([exited, new Promise((r) => setTimeout(() => r(null), 50))]);
      if (dead) throw new Error(`btcd exited (${dead.code ?? dead.signal}) before its RPC answered: ${this.logTail.trim().slice(-1500)}`);
      try {
        await this.call('getblockcount');
        return this;
      } catch (err) {
        if (err instanceof BtcdRpcError) throw err;
        if (Date.now() > until) {
          child.kill('SIGKILL');
          throw new Error(`btcd's RPC did not answer within ${READY_TIMEOUT_MS} ms: ${err.message}; ${this.logTail.trim().slice(-1500)}`);
        }
      }
    }
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  async stop({ graceMs = 10000 } = {}) {
    const child = this.child;
    if (!child) return;
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.kill('SIGTERM');
    await this.exited;
    clearTimeout(timer);
  }

  /** SIGKILL: the node vanishes at once. */
  async kill() {
    const child = this.child;
    if (!child) return;
    child.kill('SIGKILL');
    await this.exited;
  }

  /**
   * Stops (or kills) the node and starts it again on the same ports and dirs, then gives it
   * back the chain it had (btcd wipes regtest data at start) unless `keepChain` is false.
   * @param {{kill?: boolean, keepChain?: boolean, pauseMs?: number}} [opts]
   */
  async restart({ kill = false, keepChain = true, pauseMs = 0 } = {}) {
    const blocks = keepChain ? await this.rawBlocks(1) : [];
    if (kill) await this.kill();
    else await this.stop();
    if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs));
    await this.start();
    await this.submitBlocks(blocks);
  }

  /**
   * A JSON-RPC call, straight over node:http.
   * @param {string} method
   * @param {...any} params
   */
  async call(method, ...params) {
    const [reply] = await this._post([{ jsonrpc: '1.0', id: this.nextId++, method, params }]);
    if (reply.error) throw new BtcdRpcError(method, reply.error);
    return reply.result;
  }

  /**
   * Calls in one batch request; rejects on the first error.
   * @param {Array<[string, Array<any>]>} calls
   */
  async batch(calls) {
    if (!calls.length) return [];
    const first = this.nextId;
    this.nextId += calls.length;
    const replies = await this._post(calls.map(([method, params], i) => ({ jsonrpc: '2.0', id: first + i, method, params })), true);
    return calls.map(([method], i) => {
      const r = replies.find((x) => x.id === first + i);
      if (!r) throw new Error(`btcd batch: no reply to ${method}`);
      if (r.error) throw new BtcdRpcError(method, r.error);
      return r.result;
    });
  }

  _post(body, isBatch = false) {
    const payload = JSON.stringify(isBatch ? body : body[0]);
    return new Promise((resolve, reject) => {
      const req = http.request({
        host: '127.0.0.1', port: this.rpcPort, method: 'POST', path: '/',
        auth: `${this.user}:${this.pass}`,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) },
      }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          if (res.statusCode !== 200) return reject(new Error(`btcd answered HTTP ${res.statusCode}: ${text.slice(0, 200)}`));
          try {
            const parsed = JSON.parse(text);
            resolve(Array.isArray(parsed) ? parsed : [parsed]);
          } catch (err) {
            reject(new Error(`btcd answered no JSON: ${text.slice(0, 200)}`));
          }
        });
        res.on('error', reject);
      });
      req.setTimeout(60000, () => req.destroy(new Error('btcd did not answer within 60 s')));
      req.on('error', reject);
      req.end(payload);
    });
  }

  /**
   * Mines `n` blocks (on its own template: its mempool, its mining address).
   * @returns {Promise<string[]>} their hashes
   */
  generate(n) {
    return this.call('generate', n);
  }

  /** @returns {Promise<{height: number, hash: string}>} */
  async tip() {
    const [hash, height] = await this.batch([['getbestblockhash', []], ['getblockcount', []]]);
    return { hash, height };
  }

  /**
   * Raw blocks of the node's best chain, heights from..to.
   * @returns {Promise<Buffer[]>}
   */
  async rawBlocks(from = 0, to) {
    const top = to === undefined ? (await this.tip()).height : to;
    const out = [];
    for (let h = from; h <= top; h += 200) {
      const heights = [];
      for (let k = h; k <= Math.min(top, h + 199); k++) heights.push(k);
      const hashes = await this.batch(heights.map((k) => ['getblockhash', [k]]));
      const hexes = await this.batch(hashes.map((x) => ['getblock', [x, 0]]));
      for (const hex of hexes) out.push(Buffer.from(hex, 'hex'));
    }
    return out;
  }

  /** Hands blocks to the node (`submitblock`), in order; each must be accepted. */
  async submitBlocks(raws) {
    for (const raw of raws) {
      const res = await this.call('submitblock', raw.toString('hex'));
      if (res !== null && res !== 'duplicate') throw new Error(`btcd refused a submitted block: ${res}`);
    }
  }

  /**
   * Broadcasts a raw transaction.
   * @param {string|Buffer} tx
   * @returns {Promise<string>} txid
   */
  sendTx(tx) {
    return this.call('sendrawtransaction', Buffer.isBuffer(tx) ? tx.toString('hex') : tx);
  }

  /** Removes the data dir; the process must be stopped. */
  cleanup() {
    removeDir(this.dir);
  }
}

/**
 * Starts a btcd on free loopback ports in a new temp dir.
 * @param {object} opts
 * @param {string} opts.miningAddress  a regtest address (test/helpers/wallet.js derives them from seeds)
 * @param {string} [opts.user]
 * @param {string} [opts.pass]
 * @param {string[]} [opts.args]
 * @returns {Promise<Btcd>}
 */
async function startBtcd(opts) {
  const bin = await buildBtcd();
  const dir = tempDir('btcd');
  const node = new Btcd({ ...opts, bin, dir, rpcPort: await freePort(), p2pPort: await freePort() });
  try {
    await node.start();
  } catch (err) {
    node.cleanup();
    throw err;
  }
  return node;
}

/**
 * Mocha glue: the nodes start in a `before` hook (building btcd first if needed) and stop in
 * `after`. Each entry of `specs` is startBtcd's options; the holder's `nodes` are in order.
 * @param {Array<Parameters<typeof startBtcd>[0]>} specs
 * @returns {{nodes: Btcd[]}}
 */
function useBtcd(specs) {
  const holder = { nodes: [] };
  before(async function () {
    this.timeout(BUILD_TIMEOUT_MS + specs.length * READY_TIMEOUT_MS);
    for (const spec of specs) holder.nodes.push(await startBtcd(spec));
  });
  after(async function () {
    this.timeout(30000);
    for (const node of holder.nodes) {
      await node.stop();
      node.cleanup();
    }
  });
  return holder;
}

module.exports = { buildBtcd, startBtcd, useBtcd, Btcd, BtcdRpcError };
