#!/usr/bin/env node
'use strict';

/**
 * Compressed answers: CPU spent against bytes saved, on the merged-history answer of the
 * seed's cluster experiment (POST /api/v1/addresses/history for 2,100 addresses x 2 txs, one
 * page; the index of bench/api.js). Two parts, each side by side in one run:
 *
 *   1. the codecs alone, in this process, on that answer's bytes: identity, gzip levels 1, 3,
 *      6 (zlib's default), 9 and brotli qualities 0, 1, 2, 4, 11 (its default): bytes out,
 *      ratio, CPU ms to compress one answer and to decompress it (what a client pays);
 *   2. over HTTP against `addrindex serve --workers 2` with its chosen levels: the same
 *      request asked with Accept-Encoding identity, gzip and br in turn (interleaved rounds,
 *      so drift hits all three alike): latency percentiles on one keep-alive connection,
 *      bytes on the wire, and the server's CPU per answer (process_cpu_seconds_total from its
 *      own /metrics, primary and workers summed, before and after each run).
 *
 * The transfer time at a given link speed is computed from the measured bytes (bytes x 8 /
 * speed), not measured: this machine's loopback is not a client's link.
 *
 *   node bench/compression.js [--rounds 5] [--requests 40] [--json FILE]
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const http = require('node:http');
const zlib = require('node:zlib');
const { parseArgs } = require('node:util');
const { printTable } = require('./lib/table');
const { buildWalletIndex, API_CHAIN: CHAIN } = require('./lib/wallet-index');
const { ROOT, startProcess, stopProcess, fetchRaw, percentile } = require('./lib/http');

const buildIndex = (tmp, count) => buildWalletIndex({ tmp, chain: CHAIN, count });
const { LEVELS } = require('../lib/api/compress');

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    requests: { type: 'string', default: '40' },
    addresses: { type: 'string', default: '2100' },
    json: { type: 'string', default: path.join(__dirname, 'results', 'compression.json') },
  },
});
const ROUNDS = Number(args.rounds);
const REQUESTS = Number(args.requests);
const N_ADDRESSES = Number(args.addresses);

const CODECS = [
  { name: 'identity', compress: (b) => b, decompress: (b) => b },
  ...[1, 3, 6, 9].map((level) => ({
    name: `gzip -${level}${level === 6 ? ' (zlib default)' : ''}${level === LEVELS.gzip.level ? ' (served)' : ''}`,
    compress: (b) => zlib.gzipSync(b, { level }),
    decompress: (b) => zlib.gunzipSync(b),
  })),
  ...[0, 1, 2, 4, 11].map((q) => ({
    name: `brotli q${q}${q === 11 ? ' (brotli default)' : ''}${q === LEVELS.br.params[zlib.constants.BROTLI_PARAM_QUALITY] ? ' (served)' : ''}`,
    compress: (b) => zlib.brotliCompressSync(b, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: q, [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT } }),
    decompress: (b) => zlib.brotliDecompressSync(b),
  })),
];

/** CPU ms per call of fn(input), over at least `minMs` of CPU and 5 calls (median of 5 batches). */
function cpuPerCall(fn, input, minMs = 300) {
  fn(input); // warm-up
  const batches = [];
  for (let b = 0; b < 5; b++) {
    let calls = 0;
    const c0 = process.cpuUsage();
    let used = 0;
    do {
      fn(input);
      calls++;
      const c = process.cpuUsage(c0);
      used = (c.user + c.system) / 1000;
    } while (used < minMs / 5 || calls < 1);
    batches.push(used / calls);
  }
  batches.sort((a, b) => a - b);
  return batches[2];
}

/** The server's CPU seconds so far (every process of the cluster), from its /metrics. */
async function serverCpu(url) {
  const r = await fetchRaw(`${url}/metrics`);
  const m = /^process_cpu_seconds_total (\S+)$/m.exec(r.body.toString());
  if (!m) throw new Error('no process_cpu_seconds_total in /metrics');
  return Number(m[1]);
}

async function httpRun(url, body, encoding) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const headers = encoding === 'identity' ? {} : { 'accept-encoding': encoding };
  const target = `${url}/api/v1/addresses/history`;
  for (let i = 0; i < 5; i++) await fetchRaw(target, { method: 'POST', body, headers, agent }); // warm-up
  const cpu0 = await serverCpu(url);
  const lat = [];
  let wire = 0;
  for (let i = 0; i < REQUESTS; i++) {
    const t0 = process.hrtime.bigint();
    const r = await fetchRaw(target, { method: 'POST', body, headers, agent });
    lat.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (r.status !== 200) throw new Error(`${encoding}: status ${r.status}`);
    const got = r.headers['content-encoding'] || 'identity';
    if (got !== encoding) throw new Error(`asked for ${encoding}, got ${got}`);
    wire = r.body.length;
  }
  // the scrape itself costs the same in every run; it is small next to REQUESTS answers
  const cpuMs = (await serverCpu(url) - cpu0) * 1000;
  agent.destroy();
  return { lat, wire, cpuMsPerAnswer: cpuMs / REQUESTS };
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'addrindex-bench-compression-'));
  let server = null;
  try {
    process.stderr.write(`building the index (${CHAIN.blocks} blocks x ${CHAIN.txsPerBlock} txs, seed ${CHAIN.seed}) ...\n`);
    const idx = await buildIndex(tmp, N_ADDRESSES);
    server = await startProcess([path.join(ROOT, 'bin', 'addrindex.js'), 'serve', '--datadir', idx.datadir, '--workers', '2', '--port', '0', '--log-format', 'text']);
    const body = JSON.stringify({ addresses: idx.addresses, limit: 5000 });
    const plain = await fetchRaw(`${server.url}/api/v1/addresses/history`, { method: 'POST', body });
    if (JSON.parse(plain.body).next !== null) throw new Error('the merged history did not fit one page');
    const answer = plain.body;
    process.stderr.write(`the answer: ${answer.length} bytes, ${JSON.parse(answer).entries.length} entries\n`);

    process.stderr.write('codecs in process ...\n');
    const codecs = CODECS.map((c) => {
      const out = c.compress(answer);
      if (!c.decompress(out).equals(answer)) throw new Error(`${c.name} does not round-trip`);
      const compressMs = c.name === 'identity' ? 0 : cpuPerCall(c.compress, answer);
      const decompressMs = c.name === 'identity' ? 0 : cpuPerCall(c.decompress, out);
      return { codec: c.name, bytes: out.length, ratio: answer.length / out.length, compressMs, decompressMs };
    });

    process.stderr.write(`over HTTP, ${ROUNDS} rounds x ${REQUESTS} requests per encoding ...\n`);
    const encodings = ['identity', 'gzip', 'br'];
    const runs = Object.fromEntries(encodings.map((e) => [e, { lat: [], cpu: [], wire: 0 }]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const e of encodings) {
        const r = await httpRun(server.url, body, e);
        runs[e].lat.push(...r.lat);
        runs[e].cpu.push(r.cpuMsPerAnswer);
        runs[e].wire = r.wire;
      }
    }
    const http2 = encodings.map((e) => {
      const lat = runs[e].lat.sort((a, b) => a - b);
      const cpu = runs[e].cpu.sort((a, b) => a - b);
      return {
        encoding: e, wireBytes: runs[e].wire, p50: percentile(lat, 50), p90: percentile(lat, 90), p99: percentile(lat, 99),
        serverCpuMs: cpu[Math.floor(cpu.length / 2)],
      };
    });
    const base = http2[0];
    const links = [10, 100, 1000]; // Mbit/s
    const transfer = (bytes, mbit) => (bytes * 8) / (mbit * 1e3); // ms

    const result = {
      date: new Date().toISOString(),
      machine: { cpus: os.cpus().length, model: os.cpus()[0].model, node: process.version, loadAvgAtEnd: os.loadavg() },
      command: `node bench/compression.js --rounds ${ROUNDS} --requests ${REQUESTS}`,
      answer: { route: 'POST /api/v1/addresses/history', addresses: idx.addresses.length, entries: JSON.parse(answer).entries.length, bytes: answer.length },
      served: { gzipLevel: LEVELS.gzip.level, brotliQuality: LEVELS.br.params[zlib.constants.BROTLI_PARAM_QUALITY], minBytes: 1024 },
      codecs,
      http: http2.map((h) => ({
        ...h,
        savedBytes: base.wireBytes - h.wireBytes,
        extraServerCpuMs: h.serverCpuMs - base.serverCpuMs,
        transferMs: Object.fromEntries(links.map((l) => [`${l}Mbit`, transfer(h.wireBytes, l)])),
      })),
    };

    console.log(`\nthe merged history of ${result.answer.addresses} addresses: ${result.answer.entries} entries, ${answer.length} bytes`);
    console.log('\n1. codecs on that answer, in process (CPU ms per answer; median of 5 batches)');
    printTable(codecs.map((c) => ({
      codec: c.codec, bytes: c.bytes, ratio: `${c.ratio.toFixed(2)}x`, 'compress ms': c.compressMs.toFixed(2),
      'decompress ms': c.decompressMs.toFixed(2), 'MB/s in': c.compressMs ? (answer.length / 1e3 / c.compressMs).toFixed(0) : '',
    })));
    console.log(`\n2. over HTTP, serve --workers 2, ${ROUNDS} x ${REQUESTS} requests each, interleaved (server CPU from its /metrics)`);
    printTable(result.http.map((h) => ({
      'accept-encoding': h.encoding, 'wire bytes': h.wireBytes, 'vs identity': `${(100 * h.wireBytes / base.wireBytes).toFixed(1)} %`,
      'p50 ms': h.p50.toFixed(2), 'p90 ms': h.p90.toFixed(2), 'server CPU ms': h.serverCpuMs.toFixed(2),
      'extra CPU ms': h.extraServerCpuMs.toFixed(2),
    })));
    console.log('\n   computed: answer transfer time at a link speed (bytes x 8 / speed) + the extra server CPU');
    printTable(result.http.map((h) => ({
      'accept-encoding': h.encoding,
      ...Object.fromEntries(links.map((l) => [`${l} Mbit/s ms`, (transfer(h.wireBytes, l) + Math.max(0, h.extraServerCpuMs)).toFixed(1)])),
    })));
    for (const h of result.http.slice(1)) {
      const kib = h.savedBytes / 1024;
      console.log(`  ${h.encoding}: ${kib.toFixed(0)} KiB saved per answer for ${h.extraServerCpuMs.toFixed(2)} ms of server CPU ` +
        `(${(kib / Math.max(0.01, h.extraServerCpuMs)).toFixed(0)} KiB per CPU ms)`);
    }
    if (args.json) {
      fs.mkdirSync(path.dirname(args.json), { recursive: true });
      fs.writeFileSync(args.json, `${JSON.stringify(result, null, 2)}\n`);
      console.log(`\nwritten to ${path.relative(process.cwd(), args.json)}`);
    }
  } finally {
    if (server) await stopProcess(server).catch(() => {});
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
