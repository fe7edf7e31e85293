'use strict';

const path = require('node:path');
const { spawnOwned } = require('./procs');

const ROOT = path.join(__dirname, '..', '..');
const BIN = path.join(ROOT, 'bin', 'addrindex.js');

/**
 * The tests' one way of running the CLI: `addrindex ARGS` as a child process whose output can
 * be awaited line by line, or run to completion.
 */

/**
 * @typedef {import('node:child_process').ChildProcess & {
 *   output: {stdout: string, stderr: string},
 *   lines: string[],
 *   text: () => string,
 *   done: Promise<{code: number|null, signal: string|null, stdout: string, stderr: string}>,
 *   exited: Promise<{code: number|null, signal: string|null, stdout: string, stderr: string}>,
 *   waitFor: (re: RegExp, ms?: number, fromLine?: number) => Promise<RegExpMatchArray>,
 * }} Cli
 */

/**
 * Starts `addrindex ARGS`.
 * @param {string[]} args
 * @param {{cwd?: string, env?: object, inheritEnv?: boolean}} [opts] env is added to the test
 *   process's own, or (inheritEnv false) is the whole environment but PATH
 * @returns {Cli}
 */
function startCli(args, { cwd = ROOT, env, inheritEnv = true } = {}) {
  const base = inheritEnv ? process.env : { PATH: process.env.PATH };
  const child = spawnOwned(process.execPath, [BIN, ...args], {
    cwd, env: env || !inheritEnv ? { ...base, ...env } : process.env, stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  const lines = [];
  let partial = '';
  const take = (which) => (chunk) => {
    const s = chunk.toString();
    output[which] += s;
    const parts = (partial + s).split('\n');
    partial = parts.pop();
    for (const l of parts) if (l) lines.push(l);
  };
  child.stdout.on('data', take('stdout'));
  child.stderr.on('data', take('stderr'));
  child.output = output;
  child.lines = lines;
  child.text = () => `${output.stdout}${output.stderr}`;
  child.done = new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, ...output }));
  });
  child.exited = child.done;
  child.waitFor = async (re, ms = 30000, fromLine = 0) => {
    const until = Date.now() + ms;
    for (;;) {
      const m = [...lines.slice(fromLine), partial].join('\n').match(re);
      if (m) return m;
      if (child.exitCode !== null || child.signalCode !== null || Date.now() > until) {
        throw new Error(`no ${re} from addrindex ${args.join(' ')}${child.exitCode !== null ? ` (exited ${child.exitCode})` : ''}:\n${child.text()}`);
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  return child;
}

/**
 * Runs `addrindex ARGS` to completion, whatever its exit code.
 * @param {string[]} args
 * @param {{cwd?: string, env?: object, inheritEnv?: boolean}} [opts]
 */
function runCli(args, opts) {
  return startCli(args, opts).done;
}

/**
 * Runs `addrindex ARGS --json`, expects exit 0, returns the parsed stdout.
 * @param {string[]} args
 * @param {{cwd?: string, env?: object}} [opts]
 */
async function runJson(args, opts) {
  const r = await runCli([...args, '--json'], opts);
  if (r.code !== 0) throw new Error(`addrindex ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/**
 * A node's index as deployed: `addrindex sync --follow` of the node into `datadir`, then
 * `addrindex serve` of it with the node (its URL in $ADDRINDEX_RPC_URL) on free HTTP and
 * Electrum ports. Resolves once the follower has written its first mempool snapshot and the
 * server listens on both; the caller stops the two children.
 * @param {string} rpcUrl the node's JSON-RPC URL, credentials included
 * @param {string} datadir
 * @param {{workers?: number}} [opts] serve's --workers
 * @returns {Promise<{follow: Cli, serve: Cli, url: string, electrumPort: number}>}
 */
async function followAndServe(rpcUrl, datadir, { workers = 2 } = {}) {
  const follow = startCli(['sync', '--rpc-url', rpcUrl, '--network', 'regtest', '--datadir', datadir, '--follow',
    '--poll-ms', '100', '--mempool-poll-ms', '100', '--threads', '0']);
  let serve = null;
  try {
    await follow.waitFor(/mempool: \d+ transaction\(s\)/, 120000);
    serve = startCli(['serve', '--datadir', datadir, '--workers', String(workers), '--port', '0', '--electrum-port', '0',
      '--electrum-poll-ms', '50', '--grace-ms', '2000'], { env: { ADDRINDEX_RPC_URL: rpcUrl } });
    const url = (await serve.waitFor(/listening on (http:\/\/\S+)/))[1];
    const electrumPort = Number((await serve.waitFor(/electrum tcp 127\.0\.0\.1:(\d+)/))[1]);
    return { follow, serve, url, electrumPort };
  } catch (err) {
    // the caller never gets these children to stop: left running they would keep mocha alive
    for (const child of [serve, follow]) if (child) child.kill('SIGKILL');
    throw err;
  }
}

module.exports = { ROOT, BIN, startCli, runCli, runJson, followAndServe };
