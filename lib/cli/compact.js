'use strict';

const { UsageError } = require('../errors');
const { indexLocation, storeOptions } = require('./datadir');
const fs = require('node:fs');
const path = require('node:path');
const { openIndex } = require('../stores');
const { noIndex } = require('../core/checks');

const usage = `usage: addrindex compact --datadir DIR

Rewrites an LMDB index with its rows in key order into full pages and without the free pages
that copy-on-write commits leave behind: after an initial sync the file shrinks to about its
rows (see docs/SCALING.md). Offline maintenance: stop every \`serve\` and \`sync\` on the datadir
first (a process that keeps it open would go on reading the replaced file); while one has it
open (reading, or on Linux idle) it is refused with ERR_IN_USE. The index's answers do not change.
`;

const options = { ...storeOptions };

async function run(positionals, values, io) {
  if (positionals.length) throw new UsageError('ERR_USAGE', 'compact takes no positional arguments (see "addrindex compact --help")');
  const location = indexLocation(values, 'compact');
  if (location.store !== 'lmdb') {
    throw new UsageError('ERR_USAGE', `compact rewrites LMDB indexes; ${location.store === 'level' ? 'LevelDB compacts itself' : 'a MongoDB server manages its own files'}`);
  }
  // opened writable, a missing index would be created: an empty one is not what was meant
  if (!fs.existsSync(path.join(location.datadir, 'data.mdb'))) throw noIndex(`datadir ${location.datadir}`);
  const store = await openIndex({ ...location, network: values.network, readOnly: false });
  try {
    const t0 = Date.now();
    const r = await store.compact();
    const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
    io.stdout.write(`compacted ${location.datadir}: ${mb(r.before)} -> ${mb(r.after)} on disk, ${r.rows} rows, in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
    return 0;
  } finally {
    await store.close();
  }
}

module.exports = { usage, options, run };
