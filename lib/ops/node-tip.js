'use strict';

const { EventEmitter } = require('node:events');

/**
 * Reads the node's best-chain tip every `pollMs`, for the lag behind it (metrics, /ready).
 * `read` is any function returning the tip: today the node's blocks dir (blocksDirTip below,
 * the same reader `sync` uses); a node RPC source plugs in the same way. A failed read keeps
 * the last tip (a node's chain does not shrink because one read failed), counts
 * `addrindex_node_errors_total{code}` and is logged; the next poll tries again.
 *
 * Events: 'tip' ({height, hash}) when it changed, 'error' is never emitted (errors are counted).
 */
class NodeTipWatcher extends EventEmitter {
  /**
   * @param {object} opts
   * @param {() => Promise<{height: number, hash: string}|null>} opts.read
   * @param {number} [opts.pollMs=2000]
   * @param {{nodeErrors: import('prom-client').Counter}} [opts.metrics]
   * @param {import('pino').Logger} [opts.logger]
   * @param {(msg: string) => void} [opts.say] readable lines (stderr)
   */
  constructor({ read, pollMs = 2000, metrics, logger, say }) {
    super();
    this.read = read;
    this.pollMs = pollMs;
    this.metrics = metrics;
    this.logger = logger;
    this.say = say || (() => {});
    this.tip = null;
    this.timer = null;
    this.stopped = false;
    this.lastError = null;
  }

  /** Reads once now, then every pollMs until stop(). @returns {Promise<void>} after the first read */
  async start() {
    await this.poll();
    this.schedule();
  }

  schedule() {
    if (this.stopped) return;
    this.timer = setTimeout(() => this.poll().then(() => this.schedule()), this.pollMs);
    this.timer.unref();
  }

  async poll() {
    try {
      const tip = await this.read();
      if (this.lastError) {
        this.lastError = null;
        this.say('the node\'s tip is readable again');
      }
      if (tip && (!this.tip || tip.hash !== this.tip.hash || tip.height !== this.tip.height)) {
        this.tip = { height: tip.height, hash: tip.hash };
        this.emit('tip', this.tip);
      }
    } catch (err) {
      const code = err.code || 'ERR_UNKNOWN';
      if (this.metrics) this.metrics.nodeErrors.inc({ code });
      if (this.logger) this.logger.warn({ err, code }, 'reading the node\'s tip failed');
      // one readable line per kind of failure, not one per poll
      if (!this.lastError || this.lastError !== code) this.say(`reading the node's tip failed: ${err.message} [${code}]`);
      this.lastError = code;
    }
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}

/**
 * The tip of a Bitcoin Core blocks dir's best chain (incremental scans: after the first, each
 * reads only what was appended).
 * @param {{dir: string, network: string}} opts
 * @returns {{read: () => Promise<{height: number, hash: string}|null>, close: () => Promise<void>}}
 */
function blocksDirTip({ dir, network }) {
  const { BlocksDirSource } = require('../sources/blocksdir');
  const source = new BlocksDirSource({ dir, network });
  return {
    read: async () => {
      await source.scan();
      return source.tip();
    },
    close: () => source.close(),
  };
}

module.exports = { NodeTipWatcher, blocksDirTip };
