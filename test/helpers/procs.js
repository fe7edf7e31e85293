'use strict';

const { spawn, fork } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

/**
 * Every process the tests start goes through here, so none outlives the run that started it:
 *
 * - each child leads a process group of its own (`detached`), so what it starts in turn (a
 *   `serve`'s cluster workers, a bitcore host's node) is stopped with it;
 * - the test process's `exit` hook kills the groups still running (a test that forgot one,
 *   a failed `before` whose `after` never ran);
 * - a watchdog process (reaper-process.js) holds a pipe from this process and kills the same
 *   groups, and removes the registered temp dirs, when that pipe closes: it covers what no
 *   `exit` hook can, a test process killed by a signal or crashing natively (SIGSEGV).
 *
 * A process group is named by its leader's pid; one is unregistered when its leader exits.
 */

const REAPER = path.join(__dirname, 'reaper-process.js');

/** Leader pid → {what was started, the ChildProcess}, for the exit hook and the leak check. */
const live = new Map();
let reaper = null;

function tell(line) {
  if (!reaper) {
    reaper = spawn(process.execPath, [REAPER], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
    reaper.on('error', () => { reaper = null; });
    // the watchdog must never keep the test process alive, nor be killed with its group
    reaper.unref();
    reaper.stdin.on('error', () => {});
    reaper.stdin.unref();
  }
  reaper.stdin.write(`${line}\n`);
}

process.on('exit', () => {
  for (const pid of live.keys()) killGroup(pid);
  // the watchdog sees its pipe close and finds nothing left to do but the dirs
});

/** SIGKILL to a whole process group; a group already gone is no error. */
function killGroup(pid, signal = 'SIGKILL') {
  try {
    process.kill(-pid, signal);
  } catch (err) {
    if (err.code !== 'ESRCH') throw err;
  }
}

function own(child, what) {
  if (!child.pid) return child; // failed to start: its 'error' event says why
  live.set(child.pid, { what, child });
  tell(`+P ${child.pid}`);
  child.once('exit', () => {
    // the leader is gone; what it started in its group may not be: end those too
    killGroup(child.pid);
    live.delete(child.pid);
    tell(`-P ${child.pid}`);
  });
  return child;
}

/**
 * child_process.spawn in a process group of its own, stopped when the test process ends,
 * however it ends.
 * @param {string} command
 * @param {string[]} args
 * @param {import('node:child_process').SpawnOptions} [opts]
 * @returns {import('node:child_process').ChildProcess}
 */
function spawnOwned(command, args, opts = {}) {
  return own(spawn(command, args, { ...opts, detached: true }), `${path.basename(command)} ${args.join(' ')}`.slice(0, 200));
}

/**
 * child_process.fork, owned as spawnOwned's children are.
 * @param {string} modulePath
 * @param {string[]} [args]
 * @param {import('node:child_process').ForkOptions} [opts]
 * @returns {import('node:child_process').ChildProcess}
 */
function forkOwned(modulePath, args = [], opts = {}) {
  if (!Array.isArray(args)) return forkOwned(modulePath, [], args); // fork(modulePath, options)
  return own(fork(modulePath, args, { ...opts, detached: true }), `node ${path.basename(modulePath)} ${args.join(' ')}`.slice(0, 200));
}

/**
 * Runs a command to its end as an owned child, collecting its output.
 * @param {string} command
 * @param {string[]} args
 * @param {import('node:child_process').SpawnOptions} [opts]
 * @returns {Promise<{code: number|null, signal: string|null, stdout: string, stderr: string}>}
 */
function runOwned(command, args, opts = {}) {
  return new Promise((resolve, reject) => {
    const child = spawnOwned(command, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = { stdout: '', stderr: '' };
    child.stdout.on('data', (d) => { out.stdout += d; });
    child.stderr.on('data', (d) => { out.stderr += d; });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, ...out }));
  });
}

/**
 * Asks the watchdog to remove `dir` should the test process die before removing it itself.
 * @param {string} dir
 */
function ownDir(dir) {
  tell(`+D ${dir}`);
}

/** The watchdog may forget `dir`: it is gone. */
function disownDir(dir) {
  if (reaper) tell(`-D ${dir}`);
}

/**
 * The children started here that are still running (their leaders' pids and commands).
 * @returns {Array<{pid: number, what: string}>}
 */
function running() {
  return [...live].map(([pid, { what }]) => ({ pid, what }));
}

/**
 * The children still running once those already told to stop have had `graceMs` to exit:
 * a test's `after` may signal a child without waiting for it.
 * @param {number} graceMs
 * @returns {Promise<Array<{pid: number, what: string}>>}
 */
async function leftRunning(graceMs) {
  const exits = [...live.values()].map(({ child }) => new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', resolve);
  }));
  let timer;
  await Promise.race([Promise.all(exits), new Promise((resolve) => { timer = setTimeout(resolve, graceMs); })]);
  clearTimeout(timer);
  return running();
}

/**
 * The pids of a process's children (Linux's /proc list, of its main thread): a `serve`
 * primary's cluster workers. Empty when the process is gone.
 * @param {number} pid
 * @returns {number[]}
 */
function childrenOf(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

module.exports = { spawnOwned, forkOwned, runOwned, ownDir, disownDir, running, leftRunning, killGroup, childrenOf };
