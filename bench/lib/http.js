'use strict';

const http = require('node:http');
const { spawn } = require('node:child_process');

/**
 * Servers in child processes and a one-request-at-a-time client, for the HTTP benchmarks.
 */

/**
 * Starts a server process and resolves with its URL (the line "... listening on URL").
 * @param {string[]} argv node arguments
 * @param {{cwd?: string}} [opts]
 * @returns {Promise<{proc: import('node:child_process').ChildProcess, url: string}>}
 */
function startProcess(argv, { cwd } = {}) {
  const proc = spawn(process.execPath, argv, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const onData = (d) => {
      out = (out + d).slice(-100000);
      const m = out.match(/listening on (http:\/\/\S+)/);
      if (m) resolve({ proc, url: m[1] });
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', (d) => { out = (out + d).slice(-100000); });
    proc.on('exit', (code) => reject(new Error(`${argv.join(' ')} exited with ${code}:\n${out}`)));
  });
}

/** SIGTERM, and waits for the exit. */
async function stopProcess({ proc }) {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill('SIGTERM');
  await exited;
}

/**
 * One request; resolves with its latency in ms, the body length and (with `keep`) the body.
 * @returns {Promise<{ms: number, bytes: number, body?: string}>}
 */
function once(agent, url, method, body, { keep = false, type = 'application/json' } = {}) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = http.request(url, { method, agent, headers: body ? { 'content-type': type, 'content-length': Buffer.byteLength(body) } : {} }, (res) => {
      let n = 0;
      const chunks = [];
      res.on('data', (c) => {
        n += c.length;
        if (keep) chunks.push(c);
      });
      res.on('end', () => {
        if (res.statusCode !== 200) reject(new Error(`${method} ${url}: ${res.statusCode} ${Buffer.concat(chunks).toString().slice(0, 300)}`));
        else resolve({ ms: Number(process.hrtime.bigint() - t0) / 1e6, bytes: n, body: keep ? Buffer.concat(chunks).toString() : undefined });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

module.exports = { startProcess, stopProcess, once, percentile };
