#!/usr/bin/env node
'use strict';

/**
 * Draws the benchmark results as SVG charts people can look at (hand-written SVG, no
 * dependency), from the JSON the bench scripts write:
 *
 *   sync.json         → sync-tenths.svg   tx/s of each tenth of the chain, one line per run
 *                                         (store and chain size: every run the file holds)
 *   stores.json       → stores.svg        the seed's storage experiments, every store and schema
 *   api.json          → api.svg           API latency percentiles, the 200-at-once bursts,
 *                                         the summary route against bare node:http
 *   compression.json  → compression.svg   CPU per answer against compression ratio, per codec
 *
 * A missing file skips its chart. sync.json may hold one run (what bench/sync.js writes), a
 * list of runs, or runs nested under any keys (by store, by size): every object with a
 * `tenths` array is a run; its store is its own `store` (or `options.store`, or the nearest
 * key or field naming one), LMDB when none is named (bench/sync.js syncs into LMDB); its size
 * is the transactions it synced.
 *
 *   node bench/charts.js [--dir bench/results] [--out DIR]
 */

const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const S = require('./lib/svg');

const STORES = ['lmdb', 'level', 'mongo'];
const STORE_NAMES = { lmdb: 'LMDB', level: 'LevelDB', mongo: 'MongoDB' };

/**
 * Every sync run in a sync.json document.
 * @param {unknown} doc
 * @returns {Array<{store: string, txs: number|null, tenths: number[], date: string|null, label: string}>}
 */
function syncRuns(doc) {
  const runs = [];
  const walk = (node, ctx, key) => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      node.forEach((n) => walk(n, ctx, null));
      return;
    }
    const here = { ...ctx };
    const named = storeName(node.store) || storeName(node.options && node.options.store) || storeName(key);
    if (named) here.store = named;
    if (node.date) here.date = node.date;
    if (Array.isArray(node.tenths) && node.tenths.length && node.tenths.every((v) => typeof v === 'number')) {
      const txs = firstNumber(node.ours && node.ours.txs, node.txs, node.generate && node.generate.txs, node.chainStats && node.chainStats.txs,
        node.options && Number(node.options.txs));
      runs.push({ store: here.store || 'lmdb', txs, tenths: node.tenths, date: here.date || null });
      return;
    }
    for (const [k, v] of Object.entries(node)) walk(v, here, k);
  };
  walk(doc, {}, null);
  runs.sort((a, b) => STORES.indexOf(a.store) - STORES.indexOf(b.store) || (a.txs || 0) - (b.txs || 0));
  const seen = new Map();
  for (const r of runs) {
    const base = `${STORE_NAMES[r.store] || r.store}, ${r.txs ? `${S.short(r.txs)} tx` : 'size not recorded'}`;
    const n = (seen.get(base) || 0) + 1;
    seen.set(base, n);
    r.label = n === 1 ? base : `${base} (${n})`;
  }
  return runs;
}

function storeName(v) {
  if (typeof v !== 'string') return null;
  const s = v.toLowerCase();
  if (STORES.includes(s)) return s;
  if (s === 'leveldb') return 'level';
  if (s === 'mongodb') return 'mongo';
  return null;
}

function firstNumber(...vs) {
  for (const v of vs) if (typeof v === 'number' && Number.isFinite(v) && v > 0) return v;
  return null;
}

/** Line chart: tx/s by tenth of the chain, one line per run. */
function syncChart(runs, doc) {
  const W = 760;
  const H = 440;
  const left = 70;
  const right = W - 24;
  const top = 64;
  const bottom = 330;
  const max = Math.max(...runs.flatMap((r) => r.tenths));
  const y = S.linearScale(0, max, bottom, top);
  const x = (i) => left + ((i + 0.5) / 10) * (right - left);
  let body = S.text(left, 24, 'Sync speed along the chain: transactions per second in each tenth', { size: 16, weight: 'bold' });
  body += S.text(left, 44, `bench/sync.js on generated mainnet-like chains (seeded), one line per run; ${doc && doc.cores ? `${doc.cores} cores, ` : ''}higher is better`, { fill: '#555' });
  for (const t of y.ticks) {
    body += S.line(left, y.map(t), right, y.map(t), { stroke: '#e5e5e5' });
    body += S.text(left - 8, y.map(t) + 4, S.short(t), { anchor: 'end', fill: '#555' });
  }
  body += S.line(left, bottom, right, bottom, { stroke: '#888' });
  for (let i = 0; i < 10; i++) body += S.text(x(i), bottom + 18, `${i + 1}`, { anchor: 'middle', fill: '#555' });
  body += S.text((left + right) / 2, bottom + 38, 'tenth of the chain (by transactions)', { anchor: 'middle', fill: '#555' });
  body += S.text(18, (top + bottom) / 2, 'tx/s', { anchor: 'middle', fill: '#555', rotate: -90 });
  const entries = [];
  runs.forEach((r, k) => {
    const color = S.PALETTE[k % S.PALETTE.length];
    const dash = r.store === 'lmdb' ? undefined : r.store === 'level' ? '6 3' : '2 3';
    const pts = r.tenths.map((v, i) => [x(i), y.map(v)]);
    body += S.polyline(pts, color, { dash });
    r.tenths.forEach((v, i) => { body += S.circle(x(i), y.map(v), 3, color, `${r.label}, tenth ${i + 1}: ${Math.round(v)} tx/s`); });
    const mean = r.tenths.reduce((a, b) => a + b, 0) / r.tenths.length;
    entries.push({ color, dash, label: `${r.label} (mean of tenths ${S.short(Math.round(mean))} tx/s)` });
  });
  const lg = S.legend(left, bottom + 64, entries, { width: right - left, swatch: 'line' });
  body += lg.svg;
  return S.svgDoc(W, Math.max(H, lg.bottom + 20), 'addrindex sync tx/s by tenth of the chain', body);
}

/**
 * Horizontal bar panels, one under the other.
 * @param {string} title
 * @param {string} subtitle
 * @param {Array<{title: string, unit: string, log?: boolean, rows: Array<{label: string, value: number|null, color: string, note?: string}>,
 *   ref?: {value: number, label: string}}>} panels
 */
function barPanels(title, subtitle, panels, name) {
  const W = 860;
  const labelW = 360;
  const left = labelW + 16;
  const right = W - 210;
  const rowH = 20;
  let yPos = 70;
  let body = S.text(16, 26, title, { size: 16, weight: 'bold' });
  body += S.text(16, 46, subtitle, { fill: '#555' });
  for (const p of panels) {
    body += S.text(16, yPos + 4, p.title, { weight: 'bold' });
    yPos += 14;
    const vals = p.rows.map((r) => r.value).filter((v) => v !== null && v !== undefined);
    const max = Math.max(...vals, p.ref ? p.ref.value : 0);
    const sx = p.log ? S.logScale(Math.min(...vals.filter((v) => v > 0)), max, left, right) : S.linearScale(0, max, left, right, 4);
    const y0 = yPos;
    for (const t of sx.ticks) {
      body += S.line(sx.map(t), y0, sx.map(t), y0 + p.rows.length * rowH, { stroke: '#eeeeee' });
      body += S.text(sx.map(t), y0 + p.rows.length * rowH + 14, `${S.short(t)}`, { anchor: 'middle', fill: '#777', size: 10 });
    }
    for (const r of p.rows) {
      body += S.text(left - 8, yPos + 14, r.label, { anchor: 'end' });
      if (r.value === null || r.value === undefined) {
        body += S.text(left + 4, yPos + 14, r.note || 'not measured', { fill: '#999' });
      } else {
        body += S.rect(left, yPos + 3, sx.map(r.value) - left, rowH - 6, r.color, `${r.label}: ${r.value} ${p.unit}`);
        body += S.text(sx.map(r.value) + 5, yPos + 14, `${fmt(r.value)} ${p.unit}${r.note ? ` ${r.note}` : ''}`, { fill: '#333', size: 11 });
      }
      yPos += rowH;
    }
    if (p.ref) {
      body += S.line(sx.map(p.ref.value), y0 - 2, sx.map(p.ref.value), yPos + 18, { stroke: '#D55E00', width: 1.5, dash: '5 3' });
      body += S.text(sx.map(p.ref.value) + 4, yPos + 28, p.ref.label, { fill: '#D55E00', size: 10 });
      yPos += 12;
    }
    yPos += 34;
  }
  return S.svgDoc(W, yPos, name, body);
}

/** The seed's storage experiments (bench/stores.js), every row of stores.json. */
function storesChart(doc) {
  const color = (row) => (/^addrindex/.test(row.row) ? '#0072B2' : /^seed/.test(row.row) ? '#999999' : '#E69F00');
  const fewer = (r) => r.addresses && r.addresses < doc.addresses;
  const ms = (key) => doc.rows.map((r) => ({
    label: shortRow(r.row), value: r[key] ? round(r[key].ms) : null, color: color(r),
    note: r[key] ? (fewer(r) && key === 'write' ? `(${S.short(r.addresses)} addresses)` : '')
      : `not measured${fewer(r) ? ` (this row ran ${S.short(r.addresses)} addresses)` : ''}`,
  }));
  const seed = doc.seedFigures || {};
  // addrindex's rows have two writes: the rows a history read needs in one commit (the seed's
  // own experiment) and the whole index through apply() (txid map, outputs, undo too)
  const writes = doc.rows.flatMap((r) => (r.writeAccountRows
    ? [{ label: `${shortRow(r.row)}: history rows`, value: round(r.writeAccountRows.ms), color: color(r) },
      { label: `${shortRow(r.row)}: whole index`, value: round(r.write.ms), color: '#56B4E9' }]
    : ms('write').filter((x) => x.label === shortRow(r.row)).map((x) => (/^addrindex/.test(r.row) ? { ...x, label: `${x.label}: whole index`, color: '#56B4E9' } : x))));
  const panels = [
    { title: `Write ${S.short(doc.addresses)} addresses x ${doc.txs / doc.addresses} txids (ms, lower is better; light blue: the whole index, txid map, outputs and undo too)`, unit: 'ms', rows: writes, ref: seed.write ? { value: seed.write, label: `seed's published ${seed.write} ms` } : undefined },
    { title: 'Merged history of 10,000 addresses (ms)', unit: 'ms', rows: ms('hist10k'), ref: seed.hist10k ? { value: seed.hist10k, label: `seed's published ${seed.hist10k} ms` } : undefined },
    { title: `Merged history of all ${S.short(doc.addresses)} addresses (ms)`, unit: 'ms', rows: ms('hist100k'), ref: seed.hist100k ? { value: seed.hist100k, label: `seed's published ${seed.hist100k} ms` } : undefined },
  ];
  if (Array.isArray(doc.sync) && doc.sync.length) {
    panels.push({
      title: `Sync of the first ${doc.chain ? S.short(doc.chain.txs) : ''} txs of a generated chain (tx/s, higher is better)`,
      unit: 'tx/s',
      rows: doc.sync.map((r) => ({ label: shortRow(r.row), value: Math.round(r.txPerSec), color: color(r), note: r.txs && doc.chain && r.txs < doc.chain.txs ? `(first ${S.short(r.txs)} txs)` : '' })),
    });
  }
  return barPanels('Stores: the seed\'s storage experiments, run side by side', `bench/stores.js, seed ${doc.seed}, ${doc.cores} cores, ${doc.date ? doc.date.slice(0, 10) : ''}; blue: addrindex, grey: the seed's schemas, orange: node-lmdb`,
    panels, 'addrindex store comparison');
}

function shortRow(s) {
  return s.replace(', measured on FerretDB v1.24 (SQLite)', ' (FerretDB)').replace(/^seed schema: /, 'seed: ').replace(/^seed schema /, 'seed ');
}

/** 10551 → "10,551", 32.7 → "32.7" */
function fmt(v) {
  return v >= 100 ? Math.round(v).toLocaleString('en-US') : String(Math.round(v * 10) / 10);
}

function round(v) {
  return v >= 100 ? Math.round(v) : Math.round(v * 10) / 10;
}

/** API latency (bench/api.js). */
function apiChart(doc) {
  const m = doc.multiHistory;
  const s = doc.summary;
  const blue = '#0072B2';
  const grey = '#999999';
  const panels = [
    {
      title: `Merged history of ${S.short(doc.settings.addresses)} addresses x 2 txs, one request at a time (ms)`,
      unit: 'ms',
      rows: [['p50', m.p50], ['p90', m.p90], ['p99', m.p99]].map(([k, v]) => ({ label: k, value: round(v), color: blue })),
      ref: doc.targets && doc.targets.multiP50 ? { value: 10, label: 'target p50 10 ms' } : undefined,
    },
    {
      title: '200 such requests at once: until the last answer (ms)',
      unit: 'ms',
      rows: m.bursts.map((b, i) => ({ label: `round ${i + 1}`, value: round(b.totalMs), color: blue })),
      ref: { value: 1000, label: 'target 1,000 ms' },
    },
    {
      title: `Address summary under load, ${doc.settings.connections} connections (ms; autocannon: whole ms)`,
      unit: 'ms',
      rows: [
        { label: 'API p50', value: s.api.p50, color: blue }, { label: 'API p99', value: s.api.p99, color: blue },
        { label: 'bare node:http p50 (before, after)', value: Math.max(s.bare1.p50, s.bare2.p50), color: grey },
        { label: 'bare node:http p99 (before, after)', value: Math.max(s.bare1.p99, s.bare2.p99), color: grey, note: `(${s.bare1.p99}, ${s.bare2.p99})` },
      ],
      ref: { value: 5, label: 'target p99 5 ms' },
    },
    {
      title: 'Address summary requests per second (higher is better)',
      unit: 'req/s',
      rows: [
        { label: 'GET /api/v1/address/:a', value: Math.round(s.api.rps), color: blue, note: `(${(100 * s.ratio).toFixed(0)} % of bare)` },
        { label: 'bare node:http, same body (before)', value: Math.round(s.bare1.rps), color: grey },
        { label: 'bare node:http, same body (after)', value: Math.round(s.bare2.rps), color: grey },
      ],
    },
  ];
  return barPanels('API latency', `bench/api.js, ${doc.settings.workers} workers, ${doc.machine.cpus} cores, ${doc.date.slice(0, 10)}`, panels, 'addrindex API latency');
}

/** Compression: bytes saved against CPU spent (bench/compression.js). */
function compressionChart(doc) {
  const blue = '#0072B2';
  const grey = '#999999';
  const served = (c) => /served/.test(c.codec);
  const label = (c) => c.codec.replace(' (served)', '');
  const panels = [
    {
      title: `The ${fmt(doc.answer.bytes / 1024)} KiB answer compressed (KiB, smaller is better)`,
      unit: 'KiB',
      rows: doc.codecs.map((c) => ({ label: label(c), value: round(c.bytes / 1024), color: served(c) ? blue : grey, note: `(${c.ratio.toFixed(2)}x)` })),
    },
    {
      title: 'CPU to compress it once (ms, log scale)',
      unit: 'ms',
      log: true,
      rows: doc.codecs.filter((c) => c.compressMs > 0).map((c) => ({ label: label(c), value: round(c.compressMs), color: served(c) ? blue : grey })),
    },
    {
      title: `Over HTTP, serve --workers 2: server CPU per answer (ms)`,
      unit: 'ms',
      rows: doc.http.map((h) => ({ label: `Accept-Encoding: ${h.encoding}`, value: round(h.serverCpuMs), color: h.encoding === 'identity' ? grey : blue, note: `(${fmt(h.wireBytes / 1024)} KiB on the wire)` })),
    },
    {
      title: 'Over HTTP: latency on one keep-alive connection, p50 (ms; loopback, so no transfer time to save)',
      unit: 'ms',
      rows: doc.http.map((h) => ({ label: `Accept-Encoding: ${h.encoding}`, value: round(h.p50), color: h.encoding === 'identity' ? grey : blue })),
    },
  ];
  return barPanels('Compressed answers: the merged history of 2,100 addresses', `bench/compression.js, ${doc.machine.cpus} cores, ${doc.date.slice(0, 10)}; blue: the levels serve uses (brotli q${doc.served.brotliQuality}, gzip -${doc.served.gzipLevel})`,
    panels, 'addrindex answer compression');
}

/**
 * Writes every chart whose results exist.
 * @param {string} dir where the results JSON are
 * @param {string} out where the SVGs go
 * @returns {string[]} the files written
 */
function drawAll(dir, out) {
  const read = (name) => {
    const p = path.join(dir, name);
    return fs.existsSync(p) ? JSON.parse(fs.readFileSync(p, 'utf8')) : null;
  };
  const written = [];
  const write = (name, svg) => {
    fs.mkdirSync(out, { recursive: true });
    fs.writeFileSync(path.join(out, name), svg);
    written.push(name);
  };
  const sync = read('sync.json');
  if (sync) {
    const runs = syncRuns(sync);
    if (runs.length) write('sync-tenths.svg', syncChart(runs, Array.isArray(sync) ? null : sync));
  }
  const stores = read('stores.json');
  if (stores) write('stores.svg', storesChart(stores));
  const api = read('api.json');
  if (api) write('api.svg', apiChart(api));
  const compression = read('compression.json');
  if (compression) write('compression.svg', compressionChart(compression));
  return written;
}

if (require.main === module) {
  const { values } = parseArgs({
    options: {
      dir: { type: 'string', default: path.join(__dirname, 'results') },
      out: { type: 'string' },
    },
  });
  const files = drawAll(values.dir, values.out || values.dir);
  for (const f of files) console.log(path.join(path.relative(process.cwd(), values.out || values.dir), f));
}

module.exports = { syncRuns, syncChart, storesChart, apiChart, compressionChart, drawAll };
