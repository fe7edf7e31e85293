'use strict';

const http = require('node:http');
const path = require('node:path');
const { spawn } = require('node:child_process');

const ROOT = path.join(__dirname, '..', '..');

/**
 * Servers in child processes and a one-request-at-a-time client, for the HTTP benchmarks.
 */

/**
 * Starts a server process and resolves with its URL (the line "... listening on URL", on
 * stdout or stderr: with JSON logs on stdout the banner goes to stderr).
 * @param {string[]} argv node arguments
 * @param {{cwd?: string}} [opts] default: the project's root
 * @returns {Promise<{proc: import('node:child_process').ChildProcess, url: string}>}
 */
function startProcess(argv, { cwd = ROOT } = {}) {
  const proc = spawn(process.execPath, argv, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let found = false;
  return new Promise((resolve, reject) => {
    const onData = (d) => {
      if (found) return; // keep nothing once started: a long benchmark would pile it up
      out = (out + d).slice(-100000);
      const m = out.match(/listening on (http:\/\/\S+)/);
      if (m) {
        found = true;
        out = '';
        resolve({ proc, url: m[1] });
      }
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
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
 * One request (with `headers`, e.g. a signature); resolves with its latency in ms, the body
 * length and (with `keep`) the body.
 * @returns {Promise<{ms: number, bytes: number, body?: string}>}
 */
function once(agent, url, method, body, { keep = false, type = 'application/json', headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const h = body ? { ...headers, 'content-type': type, 'content-length': Buffer.byteLength(body) } : headers;
    const req = http.request(url, { method, agent, headers: h }, (res) => {
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

/** A whole answer: status, headers and the raw body bytes. */
function fetchRaw(url, { method = 'GET', body, headers = {}, agent = false } = {}) {
  return new Promise((resolve, reject) => {
    const h = { ...headers };
    if (body) {
      h['content-type'] = 'application/json';
      h['content-length'] = Buffer.byteLength(body);
    }
    const req = http.request(url, { method, agent, headers: h }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Requests/s of GETs rotating over `paths` (autocannon); any error or non-2xx answer fails
 * the run, so a throughput figure never counts error answers.
 * @returns {Promise<{rps: number, p50: number, p99: number, total: number}>}
 */
async function cannonGet(url, paths, { connections, duration }) {
  const autocannon = require('autocannon');
  let i = 0;
  const res = await autocannon({
    url,
    connections,
    duration,
    requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: paths[i++ % paths.length] }) }],
  });
  if (res.errors || res.non2xx) throw new Error(`${url}: ${res.errors} errors, ${res.non2xx} non-2xx answers`);
  return { rps: res.requests.average, p50: res.latency.p50, p99: res.latency.p99, total: res.requests.total };
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

module.exports = { ROOT, startProcess, stopProcess, once, fetchRaw, percentile, cannonGet };
