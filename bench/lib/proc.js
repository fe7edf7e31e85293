'use strict';

const fs = require('node:fs');
const { spawn } = require('node:child_process');

/**
 * CPU seconds of this process's main thread (Linux /proc): on a machine shared with other
 * work, wall time stretches but the main thread's own CPU time (the sync's bottleneck) does not.
 * @returns {number} NaN where /proc is missing
 */
function mainThreadCpuSec() {
  try {
    const f = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return NaN;
  }
}

/** @param {bigint} t0 from process.hrtime.bigint() @returns {number} milliseconds since */
function msSince(t0) {
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

/**
 * Runs one phase of a bench script in a process of its own (`node [execArgv] script --phase
 * PHASE argv…`): each measured part starts from a fresh heap, and its RSS is its own.
 * @param {string} script
 * @param {string} phase
 * @param {string[]} argv
 * @param {string[]} [execArgv] node's own flags (e.g. --expose-gc)
 * @param {(child: import('node:child_process').ChildProcess) => void} [onSpawn] called at once
 *   with the child (e.g. to move it into a cgroup before it does anything)
 * @returns {Promise<any>} the JSON the phase printed on stdout
 */
function runPhase(script, phase, argv, execArgv = [], onSpawn = () => {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...execArgv, script, '--phase', phase, ...argv], { stdio: ['ignore', 'pipe', 'inherit'] });
    onSpawn(child);
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`phase ${phase} exited ${code}`));
      resolve(JSON.parse(out));
    });
  });
}

/**
 * A bench script's entry: with `--phase`, that phase runs and prints its result as JSON (the
 * parent's runPhase reads it); without, the driver `main` runs. Either way a failure exits 1.
 * @param {Object<string, () => Promise<any>>} phases
 * @param {string|undefined} phase
 * @param {() => Promise<void>} main
 */
function runBench(phases, phase, main) {
  const fail = (err) => {
    console.error(err);
    process.exit(1);
  };
  if (phase) phases[phase]().then((r) => process.stdout.write(JSON.stringify(r)), fail);
  else main().catch(fail);
}

module.exports = { mainThreadCpuSec, msSince, runPhase, runBench };
