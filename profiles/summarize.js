#!/usr/bin/env node
'use strict';

/**
 * Summarizes V8 .cpuprofile files (from `node --cpu-prof`) as plain text: total sampled time,
 * then the functions with the most self time (time in the function itself, not its callees),
 * grouped by function name and source location. One section per profile (the main thread and
 * each worker thread write their own).
 *
 *   node profiles/summarize.js PROFILE.cpuprofile... [--top 25] [--out FILE]
 *   node profiles/summarize.js --compare A.cpuprofile:TXS:CPU_S B.cpuprofile:TXS:CPU_S [--top 25]
 *
 * --compare puts two main-thread profiles of syncs side by side as microseconds of the main
 * thread's CPU per transaction, by phase and by function: TXS is the transactions the sync
 * indexed, CPU_S its main thread's CPU seconds (bench/sync.js prints both). A profile samples
 * wall time, which a shared machine stretches; its shares of the non-idle samples, scaled to
 * the thread's measured CPU, are the steadier figure. What grows from A to B is what makes
 * the sync slow down as the index grows.
 */

const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');

const { values: args, positionals } = parseArgs({
  options: { top: { type: 'string', default: '25' }, out: { type: 'string' }, compare: { type: 'boolean', default: false } },
  allowPositionals: true,
});

/**
 * @param {object} profile a parsed .cpuprofile
 * @returns {{totalMs: number, rows: Array<{name: string, where: string, selfMs: number}>}}
 */
function selfTimes(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map();
  const { samples, timeDeltas } = profile;
  for (let i = 0; i < samples.length; i++) {
    selfUs.set(samples[i], (selfUs.get(samples[i]) || 0) + (timeDeltas[i] || 0));
  }
  const groups = new Map();
  let totalUs = 0;
  for (const [id, us] of selfUs) {
    totalUs += us;
    const f = byId.get(id).callFrame;
    const name = f.functionName || '(anonymous)';
    const where = f.url ? `${shorten(f.url)}:${f.lineNumber + 1}` : '';
    const key = `${name}\u0000${where}`;
    const g = groups.get(key) || { name, where, selfMs: 0 };
    g.selfMs += us / 1000;
    groups.set(key, g);
  }
  const rows = [...groups.values()].sort((a, b) => b.selfMs - a.selfMs);
  return { totalMs: totalUs / 1000, rows };
}

function shorten(url) {
  const u = url.replace(/^file:\/\//, '');
  const i = u.lastIndexOf('/node_modules/');
  if (i >= 0) return u.slice(i + 1);
  const lib = u.search(/\/(lib|bench|bin)\//);
  return lib >= 0 ? u.slice(lib + 1) : u;
}

/**
 * The sync phase a function belongs to, by where it is (the phases profiles/README.md uses).
 * @param {{name: string, where: string}} r
 */
function phaseOf(r) {
  const w = r.where;
  if (r.name === '(garbage collector)') return 'garbage collection';
  if (r.name === '(idle)' || r.name === '(program)') return null;
  if (/node_modules\/lmdb\//.test(w)) {
    return /getBinary|getBinaryFast|readBufferKey|next|getRange|get\b|resetReadTxn|renewReadTxn/.test(r.name) ? 'LMDB reads' : 'LMDB puts and commit';
  }
  if (/lib\/sync\/delta\.js/.test(w)) return 'deltas (TxNums, spends within the batch)';
  if (/lib\/stores\/kvstore\.js/.test(w) && r.name === 'getPrevouts') return 'prevout lookups';
  if (/lib\/stores\/(accounts|query)\.js|lib\/codec\/(postings|records)\.js/.test(w)) return 'account and page rewrites (and row codecs)';
  if (/lib\/core\//.test(w)) return 'block effect (lib/core)';
  if (/lib\/stores\/(update|kvstore|lmdb|layout|heights)\.js/.test(w)) return 'rows: tx, outputs, txids, undo; the write batch';
  if (/lib\/sync\/|lib\/chain\/parse-pool/.test(w)) return 'reader loop, batches, parse pool';
  return 'other';
}

/** --compare: two profiles as main-thread CPU µs per transaction, side by side. */
function compare(specs, top) {
  const runs = specs.map((spec) => {
    const [file, txs, cpu] = spec.split(':');
    const { totalMs, rows } = selfTimes(JSON.parse(fs.readFileSync(file, 'utf8')));
    const busyMs = rows.filter((r) => phaseOf(r) !== null).reduce((t, r) => t + r.selfMs, 0);
    // µs of main-thread CPU per tx for a function with selfMs of the samples
    const scale = (1e6 * Number(cpu)) / Number(txs) / busyMs;
    return { file, txs: Number(txs), cpu: Number(cpu), totalMs, rows, scale };
  });
  const [a, b] = runs;
  const lines = [`A: ${path.basename(a.file)}, ${a.txs.toLocaleString('en-US')} txs, ${a.cpu} s of main-thread CPU (${(1e6 * a.cpu / a.txs).toFixed(1)} µs per tx)`,
    `B: ${path.basename(b.file)}, ${b.txs.toLocaleString('en-US')} txs, ${b.cpu} s of main-thread CPU (${(1e6 * b.cpu / b.txs).toFixed(1)} µs per tx)`, ''];
  const table = (title, keyOf) => {
    const sums = new Map();
    runs.forEach((run, k) => {
      for (const r of run.rows) {
        const key = keyOf(r);
        if (key === null) continue;
        const v = sums.get(key) || [0, 0];
        v[k] += r.selfMs * run.scale;
        sums.set(key, v);
      }
    });
    const list = [...sums.entries()].sort((x, y) => (y[1][1] - y[1][0]) - (x[1][1] - x[1][0])).slice(0, top);
    lines.push(`${title.padEnd(60)}  ${'A µs/tx'.padStart(8)}  ${'B µs/tx'.padStart(8)}  ${'B - A'.padStart(7)}`);
    for (const [key, [va, vb]] of list) {
      lines.push(`${key.slice(0, 60).padEnd(60)}  ${va.toFixed(2).padStart(8)}  ${vb.toFixed(2).padStart(8)}  ${(vb - va).toFixed(2).padStart(7)}`);
    }
    lines.push('');
  };
  table('phase', phaseOf);
  table('function (location), most grown first', (r) => (phaseOf(r) === null ? null : `${r.name}${r.where ? ` (${r.where})` : ''}`));
  return lines.join('\n');
}

function main() {
  const top = Number(args.top);
  if (args.compare) {
    if (positionals.length !== 2) throw new Error('--compare takes two PROFILE:TXS:CPU_S arguments');
    const text = compare(positionals, top);
    if (args.out) fs.writeFileSync(args.out, text);
    process.stdout.write(text);
    return;
  }
  const lines = [];
  for (const file of positionals) {
    const { totalMs, rows } = selfTimes(JSON.parse(fs.readFileSync(file, 'utf8')));
    lines.push(`${path.basename(file)}: ${(totalMs / 1000).toFixed(2)} s sampled`);
    lines.push(`${'self ms'.padStart(9)}  ${'self %'.padStart(6)}  function (location)`);
    for (const r of rows.slice(0, top)) {
      lines.push(`${r.selfMs.toFixed(0).padStart(9)}  ${(100 * r.selfMs / totalMs).toFixed(1).padStart(6)}  ${r.name}${r.where ? ` (${r.where})` : ''}`);
    }
    lines.push('');
  }
  const text = lines.join('\n');
  if (args.out) fs.writeFileSync(args.out, text);
  process.stdout.write(text);
}

if (require.main === module) main();

module.exports = { selfTimes, phaseOf };
