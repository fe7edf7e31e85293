'use strict';

const fs = require('node:fs');

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

module.exports = { mainThreadCpuSec, msSince };
