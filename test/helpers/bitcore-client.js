'use strict';

const path = require('node:path');
const { execFile } = require('node:child_process');
const { spawnOwned } = require('./procs');

const ROOT = path.join(__dirname, '..', '..');
const INSTALL_SCRIPT = path.join(ROOT, 'scripts', 'install-bitcore.sh');

const installed = new Map();

/**
 * A host of scripts/install-bitcore.sh, installed once (later calls share it), apart from the
 * project's node_modules: bitcore-lib refuses a second copy in one process, so everything that
 * uses a host runs as a child process there.
 * @param {'bitcore-client-host'|'bws-host'} name tools/<name>
 * @returns {Promise<string>} the host dir
 */
function installHost(name) {
  if (!installed.has(name)) {
    installed.set(name, new Promise((resolve, reject) => {
      execFile('bash', [INSTALL_SCRIPT, name], { timeout: 5 * 60 * 1000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
        if (err) reject(new Error(`install-bitcore.sh ${name} failed: ${String(stderr).trim().split('\n').slice(-5).join('\n')}`));
        else resolve(String(stdout).trim().split('\n').pop());
      });
    }));
  }
  return installed.get(name);
}

/** bitcore-client 8.25.47 and socket.io-client 2, in .cache/bitcore-client. */
const bitcoreClientHost = () => installHost('bitcore-client-host');

/** bitcore-wallet-service and bitcore-wallet-client 8.25.47, in .cache/bws. */
const bwsHost = () => installHost('bws-host');

/**
 * Runs one of bitcore-client's commands (its bin/ scripts, unchanged) to its end.
 * @param {string} command e.g. 'wallet-create'
 * @param {string[]} args
 * @param {{stdin?: string, timeoutMs?: number}} [opts] stdin: what its password prompts read
 * @returns {Promise<{code: number, stdout: string, stderr: string}>}
 */
async function runWalletCommand(command, args, { stdin = '', timeoutMs = 60000 } = {}) {
  const host = await bitcoreClientHost();
  const bin = path.join(host, 'node_modules', 'bitcore-client', 'bin', command);
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [bin, ...args], { cwd: host, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? (err.code ?? 1) : 0, stdout: String(stdout), stderr: String(stderr) });
    });
    child.stdin.end(stdin);
  });
}

/**
 * A script run with the host's node_modules (socket.io-client 2, bitcore-lib 8): `source` is
 * the body of a CommonJS module; what it prints on stdout is the result.
 * @param {string} source
 * @param {string[]} [args]
 * @returns {import('node:child_process').ChildProcess & {lines: string[]}}
 */
async function spawnInHost(source, args = []) {
  const host = await bitcoreClientHost();
  const child = spawnOwned(process.execPath, ['-e', source, '--', ...args], { cwd: host, stdio: ['pipe', 'pipe', 'pipe'] });
  child.lines = [];
  let partial = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d) => {
    const parts = (partial + d).split('\n');
    partial = parts.pop();
    child.lines.push(...parts);
    child.emit('lines');
  });
  child.stderrText = '';
  child.stderr.on('data', (d) => { child.stderrText += d; });
  return child;
}

module.exports = { bitcoreClientHost, bwsHost, runWalletCommand, spawnInHost };
