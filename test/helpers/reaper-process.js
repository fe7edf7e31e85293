'use strict';

/**
 * The test run's watchdog (started by procs.js): it reads, on stdin, the process groups and
 * temp dirs the test process owns (`+P pid`, `-P pid`, `+D dir`, `-D dir`, one a line), and
 * when stdin closes — the test process has exited, or was killed, or crashed — it kills the
 * groups still registered and removes the dirs, then exits. A test process that exits
 * cleanly has already done both; one that died by a signal has not.
 */

const fs = require('node:fs');

const groups = new Set();
const dirs = new Set();
let partial = '';

process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  const lines = (partial + chunk).split('\n');
  partial = lines.pop();
  for (const line of lines) {
    const [op, kind] = [line[0], line[1]];
    const arg = line.slice(3);
    const set = kind === 'P' ? groups : kind === 'D' ? dirs : null;
    if (!set || !arg) continue;
    const value = kind === 'P' ? Number(arg) : arg;
    if (op === '+') set.add(value);
    else if (op === '-') set.delete(value);
  }
});

process.stdin.on('end', () => {
  for (const pid of groups) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  process.exit(0);
});

// the test process's Ctrl-C reaches its whole terminal group: this one stays to clean up
process.on('SIGINT', () => {});
process.on('SIGHUP', () => {});
