'use strict';

const path = require('node:path');
const readline = require('node:readline');
const { spawn } = require('node:child_process');

/**
 * Starts the bitcoind-like bench fixture (rpc-fixture.js) in its own process, as a node would
 * run, on a free port.
 * @param {string} blocks the blocks dir it serves
 * @param {string[]} [argv] more of its options (e.g. --mempool-above H)
 * @returns {Promise<{url: string, pid: number, tell: (line: string) => Promise<{tip: number, count: number}>,
 *   stop: () => Promise<{cpuMs: number, requests: number, calls: number, bytesOut: number, methods: Object<string, number>}>}>}
 *   tell: a control line (`mempool N`, `tip H`), answered once the fixture has done it; stop:
 *   SIGTERM, and the fixture's own CPU time and counts (calls by method)
 */
function startRpcFixture(blocks, argv = []) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(__dirname, 'rpc-fixture.js'), '--blocks', blocks, '--port', '0', ...argv],
      { stdio: ['pipe', 'pipe', 'inherit'] });
    const waiting = [];
    let ready = false;
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      const m = /^ready (\S+)$/.exec(line);
      if (m && !ready) {
        ready = true;
        resolve({
          url: m[1],
          pid: child.pid,
          tell: (cmd) => new Promise((done) => {
            waiting.push(done);
            child.stdin.write(`${cmd}\n`);
          }),
          stop: () => new Promise((done) => {
            waiting.push(done);
            child.kill('SIGTERM');
          }),
        });
        return;
      }
      const w = waiting.shift();
      if (!w) return;
      const ok = /^ok (\d+) (\d+)$/.exec(line);
      w(ok ? { tip: Number(ok[1]), count: Number(ok[2]) } : JSON.parse(line));
    });
    child.on('error', reject);
    child.on('close', (code) => { if (!ready) reject(new Error(`the RPC fixture exited ${code}`)); });
  });
}

module.exports = { startRpcFixture };
