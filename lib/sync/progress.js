'use strict';

/**
 * Shows a sync's progress. On a terminal: one line rewritten in place (height / target,
 * blocks/s, tx/s, ETA). Otherwise (a log file, systemd, a pipe): a plain timestamped line
 * every `intervalMs`, since carriage returns turn logs into noise. Events that matter on
 * their own (a reorg, catching up, a source behind the index) always get a line of their own.
 */
class ProgressReporter {
  /**
   * @param {object} [opts]
   * @param {NodeJS.WritableStream} [opts.stream=process.stderr]
   * @param {boolean} [opts.tty=stream.isTTY]
   * @param {number} [opts.intervalMs]  between lines: 250 on a terminal, 10000 otherwise
   * @param {number} [opts.windowMs=20000] rates are measured over this trailing window
   * @param {() => number} [opts.now]
   * @param {boolean} [opts.follow=false] say so each time the sync reaches the source's tip
   */
  constructor(opts = {}) {
    this.stream = opts.stream || process.stderr;
    this.tty = opts.tty === undefined ? Boolean(this.stream.isTTY) : opts.tty;
    this.intervalMs = opts.intervalMs === undefined ? (this.tty ? 250 : 10000) : opts.intervalMs;
    this.windowMs = opts.windowMs || 20000;
    this.now = opts.now || Date.now;
    this.follow = Boolean(opts.follow);
    this.samples = [];
    this.lastPrint = -Infinity;
    this.lineOpen = false;
    this.last = null;
  }

  /**
   * Feeds one SyncService progress event.
   * @param {import('./service').SyncProgress} p
   */
  update(p) {
    const t = this.now();
    this.last = p;
    if (p.phase === 'scan') {
      // a pass starts: rates count from here, not from an idle pause of follow mode
      this.samples = [{ t, blocks: p.blocks, txs: p.txs, bytes: p.bytes }];
      return;
    }
    if (p.phase === 'batch') {
      this.samples.push({ t, blocks: p.blocks, txs: p.txs, bytes: p.bytes });
      while (this.samples.length > 2 && t - this.samples[1].t >= this.windowMs) this.samples.shift();
      if (t - this.lastPrint >= this.intervalMs) {
        this.lastPrint = t;
        this._status(this.format(p));
      }
      return;
    }
    if (p.phase === 'reorg') {
      const r = p.reorg;
      this._event(`reorg: reverted ${r.depth} block(s) from height ${r.fromHeight} to the fork point ${r.forkHeight}`);
    } else if (p.phase === 'changed') {
      this._event(`the block source's chain changed while it was read: rescanning (${p.reason})`);
    } else if (p.phase === 'behind') {
      this._event(`the block source's best chain (tip ${p.target}) is behind the index (tip ${p.height}): waiting for it`);
    } else if (p.phase === 'caught-up' && this.follow && p.hash !== this.lastCaughtUp) {
      this.lastCaughtUp = p.hash;
      this._event(`at the source's tip: height ${fmtInt(p.height)}${p.hash ? ` ${p.hash}` : ''}`);
    }
  }

  /** @returns {{blocksPerSec: number, txPerSec: number, bytesPerSec: number}} over the trailing window */
  rates() {
    const s = this.samples;
    if (s.length < 2) return { blocksPerSec: 0, txPerSec: 0, bytesPerSec: 0 };
    const a = s[0];
    const b = s[s.length - 1];
    const dt = Math.max(1, b.t - a.t) / 1000;
    return { blocksPerSec: (b.blocks - a.blocks) / dt, txPerSec: (b.txs - a.txs) / dt, bytesPerSec: (b.bytes - a.bytes) / dt };
  }

  /**
   * One status line.
   * @param {import('./service').SyncProgress} p
   */
  format(p) {
    const r = this.rates();
    const pct = p.target > 0 ? ` (${(100 * Math.max(0, p.height) / p.target).toFixed(1)} %)` : '';
    const left = p.target - p.height;
    const eta = r.blocksPerSec > 0 && left > 0 ? fmtDuration(left / r.blocksPerSec) : left <= 0 ? '0s' : '?';
    return `height ${fmtInt(p.height)} / ${fmtInt(p.target)}${pct}  ` +
      `${fmtRate(r.blocksPerSec)} blk/s  ${fmtRate(r.txPerSec)} tx/s  ${(r.bytesPerSec / 1e6).toFixed(1)} MB/s  ETA ${eta}`;
  }

  /**
   * Final line after run() returns.
   * @param {{tip: {height: number, hash: string}|null, blocks: number, txs: number, bytes: number, elapsedMs: number}} summary
   */
  finish(summary) {
    const s = Math.max(1, summary.elapsedMs) / 1000;
    const tip = summary.tip ? `height ${fmtInt(summary.tip.height)} ${summary.tip.hash}` : 'empty';
    this._event(`synced ${fmtInt(summary.blocks)} blocks, ${fmtInt(summary.txs)} txs in ${fmtDuration(s)} ` +
      `(${fmtRate(summary.txs / s)} tx/s, ${(summary.bytes / 1e6 / s).toFixed(1)} MB/s); tip ${tip}`);
  }

  _status(line) {
    if (this.tty) {
      this.stream.write(`\r${line}\x1b[K`);
      this.lineOpen = true;
    } else {
      this.stream.write(`${new Date(this.now()).toISOString()} ${line}\n`);
    }
  }

  _event(line) {
    if (this.tty) {
      this.stream.write(`${this.lineOpen ? '\r\x1b[K' : ''}${line}\n`);
      this.lineOpen = false;
      this.lastPrint = -Infinity;
    } else {
      this.stream.write(`${new Date(this.now()).toISOString()} ${line}\n`);
    }
  }
}

function fmtInt(n) {
  return Math.round(n).toLocaleString('en-US');
}

function fmtRate(x) {
  return x >= 100 ? fmtInt(x) : x.toFixed(1);
}

/** @param {number} s seconds */
function fmtDuration(s) {
  if (!Number.isFinite(s)) return '?';
  s = Math.round(s);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  const h = Math.floor(s / 3600);
  return `${h}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

module.exports = { ProgressReporter, fmtDuration };
