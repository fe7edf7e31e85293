'use strict';

const { UsageError, StoreError } = require('../errors');
const { intOption, withIndex, storeOptions, storeUsage } = require('./datadir');

const usage = `usage: addrindex verify (--datadir DIR | --store mongo --mongodb-url URL) [--max-problems N] [--json]

Walks the whole index: recomputes every address summary from its history and unspent
outputs, and checks the txid⇄TxNum tables both ways. Exits 0 when everything agrees;
otherwise prints the first problems and exits non-zero. Safe beside a running sync (it reads
one consistent snapshot).

${storeUsage}  --max-problems N     list at most N problems, count the rest (default 20)
  --json               print the result as JSON
`;

const options = {
  ...storeOptions,
  'max-problems': { type: 'string' },
  json: { type: 'boolean', default: false },
};

async function run(positionals, values, io) {
  if (positionals.length) throw new UsageError('ERR_USAGE', `verify takes no positional arguments (see "addrindex verify --help")`);
  const maxProblems = intOption(values, 'max-problems', 1);
  return withIndex(values, 'verify', async (store) => {
    const t0 = Date.now();
    const result = await store.verify({ maxProblems });
    const ms = Date.now() - t0;
    if (values.json) {
      io.stdout.write(`${JSON.stringify({ ...result, ms }, null, 2)}\n`);
    } else {
      const checked = Object.entries(result.checked || {}).map(([k, v]) => `${v} ${k}`).join(', ');
      io.stdout.write(`checked ${checked || 'nothing'} in ${(ms / 1000).toFixed(1)} s\n`);
      for (const p of result.problems) io.stdout.write(`problem: ${p}\n`);
      if (result.problemCount > result.problems.length) io.stdout.write(`… and ${result.problemCount - result.problems.length} more\n`);
    }
    if (!result.ok) {
      throw new StoreError('ERR_VERIFY_FAILED', `verify found ${result.problemCount} problem(s), the first: ${result.problems[0]}`);
    }
    if (!values.json) io.stdout.write('ok\n');
    return 0;
  });
}

module.exports = { usage, options, run };
