'use strict';

const path = require('node:path');
const { spawn } = require('node:child_process');

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
  const child = spawn(process.execPath, [BIN, ...args], {
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

module.exports = { ROOT, BIN, startCli, runCli, runJson };
