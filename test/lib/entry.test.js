'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const ts = require('typescript');
const { tempDir } = require('../helpers/tmp');

const ROOT = path.join(__dirname, '..', '..');

/** The names index.d.ts exports, read by the TypeScript compiler. */
function declaredExports() {
  const program = ts.createProgram([path.join(ROOT, 'index.d.ts')], { noEmit: true, types: ['node'], typeRoots: [path.join(ROOT, 'node_modules/@types')] });
  const checker = program.getTypeChecker();
  const file = program.getSourceFile(path.join(ROOT, 'index.d.ts'));
  const symbols = checker.getExportsOfModule(checker.getSymbolAtLocation(file));
  return { program, checker, symbols };
}

describe('the library entry (require("addrindex"), index.d.ts)', function () {
  this.timeout(180000);

  it('index.d.ts compiles, and a strict consumer of it compiles', () => {
    const out = (() => {
      try {
        execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(__dirname, 'ts/tsconfig.json')], { encoding: 'utf8' });
        return '';
      } catch (err) {
        return `${err.stdout}${err.stderr}`;
      }
    })();
    assert.equal(out, '');
  });

  it('declares exactly what lib/index.js exports, and the store contract it implements', () => {
    const lib = require('../../lib');
    const { checker, symbols } = declaredExports();
    const values = symbols.filter((s) => s.flags & ts.SymbolFlags.Value).map((s) => s.name).sort();
    assert.deepEqual(values, Object.keys(lib).sort());
    // every method of the contract is declared on AbstractStore, and every backend has it
    const abstract = symbols.find((s) => s.name === 'AbstractStore');
    const type = checker.getDeclaredTypeOfSymbol(abstract);
    const declared = new Set(checker.getPropertiesOfType(type).map((p) => p.name));
    for (const m of [...lib.READ_METHODS, ...lib.WRITE_METHODS, 'open', 'close', 'describe']) {
      assert.ok(declared.has(m), `AbstractStore declares ${m}`);
      for (const Store of [lib.LmdbStore, lib.LevelStore, lib.MongoStore]) {
        assert.equal(typeof Store.prototype[m], 'function', `${Store.name}.${m}`);
        assert.notEqual(Store.prototype[m], lib.AbstractStore.prototype[m], `${Store.name} implements ${m}`);
      }
    }
  });

  it('installs from a packed tarball into another project: require("addrindex") opens, syncs and reads an index', () => {
    const dir = tempDir('addrindex-pack-');
    const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', dir], { cwd: ROOT, encoding: 'utf8' }))[0];
    const files = packed.files.map((f) => f.path);
    assert.ok(files.includes('lib/index.js') && files.includes('index.d.ts'));
    assert.deepEqual(files.filter((f) => /^(test|bench|tools|profiles|scripts)\//.test(f)), [], 'only what the library needs is shipped');
    const app = path.join(dir, 'app');
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
    // the dependencies come from npm's cache, filled by this project's own install
    execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', path.join(dir, packed.filename)], { cwd: app, stdio: 'pipe' });
    fs.copyFileSync(path.join(ROOT, 'test/fixtures/mainnet/blk-first-439.dat'), path.join(dir, 'blk00000.dat'));
    const script = `
      const addrindex = require('addrindex');
      (async () => {
        const store = await addrindex.openStore({ datadir: ${JSON.stringify(path.join(dir, 'idx'))}, network: 'main', readOnly: false });
        const source = new addrindex.BlocksDirSource({ dir: ${JSON.stringify(dir)}, network: 'main' });
        await new addrindex.SyncService({ source, store, network: 'main', threads: 0 }).run();
        await source.close();
        const { scripthash } = addrindex.parseTarget('1Q2TWHE3GMdB6BZKafqwxXtWAWgFt5Jvm3', 'main');
        const s = await store.getSummary(scripthash);
        let code = null;
        try { await addrindex.openStore({ datadir: '/x', network: 'bogus' }); } catch (err) { code = err instanceof addrindex.UsageError && err.code; }
        // the bitcore-node service, found as bitcore-node's loader finds one: package.json's bitcoreNode field
        const pkg = require('addrindex/package.json');
        const Service = require('addrindex/' + pkg.bitcoreNode);
        const service = Service === require('addrindex/bitcore') && Service.BitcoindService === Service &&
          Array.isArray(Service.dependencies) && typeof Service.prototype.start === 'function' && typeof Service.prototype.stop === 'function';
        // a node source, built as an embedder builds one (no node is asked here)
        const client = addrindex.NodeClient.fromEndpoint(addrindex.resolveEndpoint({ rpcUrl: 'http://u:secret@127.0.0.1:1', network: 'main', env: {} }));
        const node = new addrindex.NodeSource({ client, network: 'main' }).nodeUrl;
        await new addrindex.NodeSource({ client, network: 'main' }).close();
        console.log(JSON.stringify({ tip: (await store.getTip()).height, balance: s.balance, code, main: require.resolve('addrindex'), service, node }));
        await store.close();
      })().catch((err) => { console.error(err); process.exit(1); });`;
    const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: app, encoding: 'utf8' }));
    assert.deepEqual({ ...out, main: path.relative(app, out.main) }, {
      tip: 438, balance: 10e8, code: 'ERR_UNKNOWN_NETWORK', main: path.join('node_modules', 'addrindex', 'lib', 'index.js'), service: true,
      node: 'http://u:***@127.0.0.1:1/',
    });
  });
});
