#!/usr/bin/env node
'use strict';

/**
 * Runs the whole test suite N times, one run after another, and lists every test that failed
 * in any run, with how often and its first error — a flake shows up as failing 1 of N.
 *
 *   nice -n 19 node scripts/repeat-suite.js [N=3] [--out DIR] [-- MOCHA ARGS]
 *
 * Each run's mocha writes its JSON report to DIR/run-K.json (by default a new dir under the OS
 * temp dir, printed first); `--report-on-fatalerror` is on, so a V8 fatal error leaves a report
 * in DIR too. A run that ends by a signal (SIGSEGV: a native crash) is listed as such, with
 * the tests it had passed. Exit status: 0 when every run passed, else 1.
 */

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const MOCHA = path.join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js');

function parseArgs(argv) {
  const opts = { runs: 3, out: null, mocha: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      opts.mocha = argv.slice(i + 1);
      break;
    } else if (a === '--out') opts.out = argv[++i];
    else if (/^\d+$/.test(a)) opts.runs = Number(a);
    else throw new Error(`unknown argument ${a} (usage: repeat-suite.js [N] [--out DIR] [-- MOCHA ARGS])`);
  }
  if (!(opts.runs >= 1)) throw new Error('N must be at least 1');
  return opts;
}

/** One whole mocha run with the JSON reporter; resolves with its report (or what is known). */
function runOnce(k, dir, mochaArgs) {
  const report = path.join(dir, `run-${k}.json`);
  const log = fs.openSync(path.join(dir, `run-${k}.log`), 'w');
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MOCHA, '--reporter', 'json', '--reporter-option', `output=${report}`, ...mochaArgs], {
      cwd: ROOT,
      stdio: ['ignore', log, log],
      env: { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS || ''} --report-on-fatalerror --report-directory=${dir}`.trim() },
    });
    child.on('exit', (code, signal) => {
      fs.closeSync(log);
      let json = null;
      try {
        json = JSON.parse(fs.readFileSync(report, 'utf8'));
      } catch {
        // a run killed before its reporter wrote: only the exit says what happened
      }
      resolve({ k, code, signal, seconds: (Date.now() - started) / 1000, json });
    });
  });
}

function firstLine(err) {
  return String((err && (err.message || err.stack)) || '').split('\n')[0].slice(0, 200);
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const dir = opts.out || fs.mkdtempSync(path.join(os.tmpdir(), 'addrindex-repeat-'));
  fs.mkdirSync(dir, { recursive: true });
  console.log(`${opts.runs} run(s) of the suite; reports in ${dir}`);
  const failed = new Map(); // full title → {runs: [k], error}
  const runs = [];
  for (let k = 1; k <= opts.runs; k++) {
    const r = await runOnce(k, dir, opts.mocha);
    runs.push(r);
    const s = r.json && r.json.stats;
    for (const t of (r.json && r.json.failures) || []) {
      const entry = failed.get(t.fullTitle) || { runs: [], error: firstLine(t.err) };
      entry.runs.push(k);
      failed.set(t.fullTitle, entry);
    }
    const how = r.signal ? `killed by ${r.signal}` : `exit ${r.code}`;
    console.log(`run ${k}: ${how}, ${s ? `${s.passes} passing, ${s.failures} failing, ${s.pending} pending` : 'no report'}, ${r.seconds.toFixed(0)} s`);
  }
  console.log('');
  if (!failed.size && runs.every((r) => r.code === 0)) {
    console.log(`no test failed in ${opts.runs} run(s)`);
    return 0;
  }
  for (const r of runs.filter((x) => x.signal || (x.code !== 0 && !(x.json && x.json.failures.length)))) {
    console.log(`run ${r.k} ended without a full report (${r.signal || `exit ${r.code}`}): see ${path.join(dir, `run-${r.k}.log`)}`);
  }
  for (const [title, { runs: ks, error }] of failed) {
    console.log(`failed ${ks.length}/${opts.runs} (run ${ks.join(', ')}): ${title}\n    ${error}`);
  }
  return 1;
}

main().then((code) => { process.exitCode = code; }, (err) => {
  console.error(err.message);
  process.exitCode = 2;
});
