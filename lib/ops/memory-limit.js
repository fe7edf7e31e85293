'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

/**
 * The memory this process may use: its memory cgroup's limit (v2's memory.max, or v1's
 * memory.limit_in_bytes), else the machine's.
 * @param {{root?: string, total?: number}} [at] where /proc and /sys are (tests), the machine's memory
 * @returns {number} bytes
 */
function memoryLimit({ root = '/', total = os.totalmem() } = {}) {
  try {
    for (const line of fs.readFileSync(path.join(root, 'proc/self/cgroup'), 'utf8').split('\n')) {
      const [, controllers, where] = line.split(':');
      if (controllers === '' && where !== undefined) {
        const v = readNumber(path.join(root, 'sys/fs/cgroup', where, 'memory.max'));
        if (v) return Math.min(total, v);
      } else if (controllers && controllers.split(',').includes('memory')) {
        const v = readNumber(path.join(root, 'sys/fs/cgroup/memory', where, 'memory.limit_in_bytes'));
        if (v) return Math.min(total, v);
      }
    }
  } catch {
    // no cgroup information: the machine's memory
  }
  return total;
}

function readNumber(file) {
  try {
    const v = Number(fs.readFileSync(file, 'utf8').trim());
    return Number.isFinite(v) && v > 0 ? v : null;
  } catch {
    return null;
  }
}

module.exports = { memoryLimit };
