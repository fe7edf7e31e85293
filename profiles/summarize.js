#!/usr/bin/env node
'use strict';

/**
 * Summarizes V8 .cpuprofile files (from `node --cpu-prof`) as plain text: total sampled time,
 * then the functions with the most self time (time in the function itself, not its callees),
 * grouped by function name and source location. One section per profile (the main thread and
 * each worker thread write their own).
 *
 *   node profiles/summarize.js PROFILE.cpuprofile... [--top 25] [--out FILE]
 */

const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');

const { values: args, positionals } = parseArgs({
  options: { top: { type: 'string', default: '25' }, out: { type: 'string' } },
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

function main() {
  const top = Number(args.top);
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

module.exports = { selfTimes };
