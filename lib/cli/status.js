'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { UsageError } = require('../errors');
const { withIndex, storeOptions, storeUsage } = require('./datadir');

const usage = `usage: addrindex status (--datadir DIR | --store mongo --mongodb-url URL) [--json]

Prints the index's network, tip (height and hash), transaction count, per-table row counts
and sizes, and the datadir's size on disk. Safe beside a running sync.

${storeUsage}  --json               one JSON object: {network, tip, txs, tables, diskBytes}
`;

const options = {
  ...storeOptions,
  json: { type: 'boolean', default: false },
};

/**
 * Bytes the files under `dir` take on disk (allocated blocks, so sparse files count as what
 * they really use).
 * @param {string} dir
 * @returns {number}
 */
function diskUsage(dir) {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) total += diskUsage(p);
    else if (entry.isFile()) {
      const st = fs.statSync(p);
      total += st.blocks !== undefined ? Math.min(st.size, st.blocks * 512) : st.size;
    }
  }
  return total;
}

function mb(bytes) {
  return `${(bytes / 1048576).toFixed(1)} MiB`;
}

function toText(s) {
  const lines = [
    `network   ${s.network}`,
    `tip       ${s.tip ? `${s.tip.height} ${s.tip.hash}` : '(empty)'}`,
    `txs       ${s.txs}`,
    `disk      ${mb(s.diskBytes)}`,
  ];
  const rows = Object.entries(s.tables || {});
  if (rows.length) {
    lines.push('tables');
    const w = Math.max(...rows.map(([name]) => name.length));
    for (const [name, t] of rows) {
      const parts = [];
      if (t && typeof t === 'object') {
        if (t.rows !== undefined) parts.push(`${t.rows} rows`);
        if (t.bytes !== undefined) parts.push(mb(t.bytes));
        for (const [k, v] of Object.entries(t)) if (k !== 'rows' && k !== 'bytes') parts.push(`${k} ${v}`);
      } else {
        parts.push(String(t));
      }
      lines.push(`  ${name.padEnd(w)}  ${parts.join(', ')}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

async function run(positionals, values, io) {
  if (positionals.length) throw new UsageError('ERR_USAGE', `status takes no positional arguments (see "addrindex status --help")`);
  return withIndex(values, 'status', async (store, network) => {
    const tip = await store.getTip();
    const stats = await store.stats();
    const status = {
      network: network.name,
      tip: tip ? { height: tip.height, hash: tip.hash } : null,
      txs: tip ? tip.nextTxNum : 0,
      tables: stats.tables || stats,
      // a server-side store says what it takes; a datadir is measured here
      diskBytes: stats.diskBytes !== undefined ? stats.diskBytes : diskUsage(values.datadir),
    };
    io.stdout.write(values.json ? `${JSON.stringify(status, null, 2)}\n` : toText(status));
    return 0;
  });
}

module.exports = { usage, options, run, diskUsage };
