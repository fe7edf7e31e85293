'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

/**
 * A memory-limited cgroup for one benchmark process, so a sync can be measured with less
 * memory than its index and blocks take (page cache included: Linux charges a file's cached
 * pages to the cgroup that read them). cgroup v2 (`memory.max`) where the unified hierarchy
 * has the memory controller, else cgroup v1's memory controller (`memory.limit_in_bytes`).
 * Needs write access to the cgroup filesystem (root, or a delegated subtree).
 */
class MemoryCgroup {
  /**
   * @param {number} maxBytes
   * @param {string} [name]
   */
  constructor(maxBytes, name = `addrindex-bench-${process.pid}`) {
    const v2 = '/sys/fs/cgroup';
    const v1 = '/sys/fs/cgroup/memory';
    if (hasController(path.join(v2, 'cgroup.controllers'), 'memory')) {
      this.dir = path.join(v2, name);
      this.limitFile = 'memory.max';
      this.peakFile = 'memory.peak';
      this.version = 2;
    } else if (fs.existsSync(path.join(v1, 'memory.limit_in_bytes'))) {
      this.dir = path.join(v1, name);
      this.limitFile = 'memory.limit_in_bytes';
      this.peakFile = 'memory.max_usage_in_bytes';
      this.version = 1;
    } else {
      throw new Error('no cgroup memory controller found under /sys/fs/cgroup (v2 or v1)');
    }
    try {
      fs.mkdirSync(this.dir);
      fs.writeFileSync(path.join(this.dir, this.limitFile), String(maxBytes));
    } catch (err) {
      throw new Error(`cannot create the memory cgroup ${this.dir} (${err.code || err.message}): run as root or in a delegated cgroup`);
    }
    this.maxBytes = maxBytes;
  }

  /** The file a process writes its pid into to join the cgroup (before it execs what is measured). */
  get procsFile() {
    return path.join(this.dir, 'cgroup.procs');
  }

  /**
   * Processes the OOM killer killed in this cgroup (v2 memory.events, v1 memory.oom_control;
   * null where the kernel does not count them).
   * @returns {number|null}
   */
  oomKills() {
    try {
      const text = fs.readFileSync(path.join(this.dir, this.version === 2 ? 'memory.events' : 'memory.oom_control'), 'utf8');
      const m = /^oom_kill (\d+)$/m.exec(text);
      return m ? Number(m[1]) : null;
    } catch {
      return null;
    }
  }

  /** Moves a process (and the threads it starts afterwards) into the cgroup. */
  add(pid) {
    fs.writeFileSync(path.join(this.dir, 'cgroup.procs'), String(pid));
  }

  /** @returns {{limit: number, peak: number|null, version: number}} */
  usage() {
    const read = (f) => {
      try {
        return Number(fs.readFileSync(path.join(this.dir, f), 'utf8').trim());
      } catch {
        return null;
      }
    };
    return { limit: this.maxBytes, peak: read(this.peakFile), version: this.version };
  }

  /** Removes the cgroup (its processes must have exited). */
  remove() {
    try {
      fs.rmdirSync(this.dir);
    } catch {
      // a process still in it: left for the system to clean
    }
  }
}

function hasController(file, name) {
  try {
    return fs.readFileSync(file, 'utf8').split(/\s+/).includes(name);
  } catch {
    return false;
  }
}

/**
 * Drops a file's pages from the page cache (GNU dd's nocache flag: posix_fadvise DONTNEED),
 * so the next reads come from the disk and are charged to whoever reads them.
 * @param {string} file
 */
function evictFromCache(file) {
  execFileSync('dd', [`if=${file}`, 'iflag=nocache', 'count=0', 'status=none']);
}

module.exports = { MemoryCgroup, evictFromCache };
