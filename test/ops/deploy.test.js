'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { CATALOG } = require('../../lib/ops/catalog');
const { configValues } = require('../../lib/cli/config');

const ROOT = path.join(__dirname, '..', '..');
const read = (p) => fs.readFileSync(path.join(ROOT, p), 'utf8');
const COMMANDS = ['parse', 'demo', 'sync', 'status', 'verify', 'query', 'serve', 'start'];
const allSpecs = Object.fromEntries(COMMANDS.map((c) => [c, require(`../../lib/cli/${c}`).options]));

describe('docs/DEPLOY.md and deploy/: what the guide shows is what ships', () => {
  const doc = read('docs/DEPLOY.md');
  const blocks = [...doc.matchAll(/```(\w+)\n([^]*?)```/g)].map((m) => ({ lang: m[1], text: m[2] }));

  it('the guide\'s listings are the files in deploy/, byte for byte', () => {
    for (const [file, lang] of [['deploy/Dockerfile', 'dockerfile'], ['deploy/addrindex-sync.service', 'ini'], ['deploy/addrindex-serve.service', 'ini'], ['deploy/addrindex.json', 'json']]) {
      assert.ok(blocks.some((b) => b.lang === lang && b.text === read(file)), `${file} is listed in DEPLOY.md as it is`);
    }
  });

  it('the example config file is accepted by sync and serve and gives them what the guide says', () => {
    const file = path.join(ROOT, 'deploy', 'addrindex.json');
    const sync = configValues({ command: 'sync', spec: allSpecs.sync, allSpecs, env: {}, file }).file;
    assert.deepEqual(sync, {
      datadir: '/var/lib/addrindex/index', network: 'main', 'blocks-dir': '/home/bitcoin/.bitcoin/blocks', 'log-format': 'json', follow: true, 'metrics-port': '9464',
    });
    const serve = configValues({ command: 'serve', spec: allSpecs.serve, allSpecs, env: {}, file }).file;
    assert.deepEqual(serve, {
      datadir: '/var/lib/addrindex/index', network: 'main', 'blocks-dir': '/home/bitcoin/.bitcoin/blocks', 'log-format': 'json', port: '3000', 'max-lag': '3', 'cors-origin': ['*'],
    });
  });

  it('every metric of the catalog is in the guide\'s table, and the table names no other', () => {
    const listed = new Set([...doc.matchAll(/^\| `(addrindex_[a-z_]+)` \|/gm)].map((m) => m[1]));
    assert.deepEqual([...listed].sort(), Object.values(CATALOG).map((d) => d.name).sort());
  });

  it('every ADDRINDEX_ variable the guide and the Dockerfile set is a flag of some command', () => {
    const flags = new Set(Object.values(allSpecs).flatMap((s) => Object.keys(s)));
    const reserved = new Set(['CONFIG', 'LZ4', 'WORKER']);
    const names = new Set([...`${doc}\n${read('deploy/Dockerfile')}`.matchAll(/ADDRINDEX_([A-Z_]+[A-Z])\b/g)].map((m) => m[1]));
    for (const n of names) {
      if (reserved.has(n) || n.startsWith('TEST_')) continue;
      assert.ok(flags.has(n.toLowerCase().replace(/_/g, '-')), `ADDRINDEX_${n}`);
    }
    assert.ok(names.has('METRICS_HOST') && names.has('BLOCKS_DIR'));
  });
});
