'use strict';

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

function mb(bytes) {
  return `${(bytes / 1048576).toFixed(1)} MiB`;
}

function toText(s) {
  const lines = [
    `network   ${s.network}`,
    `tip       ${s.tip ? `${s.tip.height} ${s.tip.hash}` : '(empty)'}`,
    `txs       ${s.txs}`,
    `disk      ${mb(s.diskBytes)}`,
    'tables',
  ];
  const rows = Object.entries(s.tables);
  const w = Math.max(...rows.map(([name]) => name.length));
  for (const [name, t] of rows) lines.push(`  ${name.padEnd(w)}  ${t.rows} rows, ${mb(t.bytes)}`);
  return `${lines.join('\n')}\n`;
}

async function run(positionals, values, io) {
  if (positionals.length) throw new UsageError('ERR_USAGE', `status takes no positional arguments (see "addrindex status --help")`);
  return withIndex(values, 'status', async (store, network) => {
    const stats = await store.stats();
    const { tip } = stats;
    const status = {
      network: network.name,
      tip: tip ? { height: tip.height, hash: tip.hash } : null,
      txs: tip ? tip.nextTxNum : 0,
      tables: stats.tables,
      diskBytes: stats.diskBytes,
    };
    io.stdout.write(values.json ? `${JSON.stringify(status, null, 2)}\n` : toText(status));
    return 0;
  });
}

module.exports = { usage, options, run };
