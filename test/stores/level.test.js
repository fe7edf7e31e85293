'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnOwned: spawn } = require('../helpers/procs');
const { ClassicLevel } = require('classic-level');
const { storeConformance } = require('./conformance');
const layout = require('../../lib/stores/layout');
const { Writer } = require('../../lib/codec/io');
const { encodeMeta, decodeMeta, Account, decodeAccount, encodeAccount } = require('../../lib/codec/records');
const { StoreError } = require('../../lib/errors');
const { open } = require('./level-open');
const { mainnetChain, generatedChain, syncBlocks } = require('./data');
const { tempDir } = require('../helpers/tmp');

const tmp = () => tempDir('level');

/** Runs fn on the raw LevelDB database of a closed store's datadir. */
async function raw(datadir, fn) {
  const db = new ClassicLevel(datadir, { keyEncoding: 'buffer', valueEncoding: 'buffer', createIfMissing: false });
  await db.open();
  try {
    await fn(db);
  } finally {
    await db.close();
  }
}

storeConformance('LevelDB', {
  kind: 'level',
  create: tmp,
  open,
  openerModule: path.join(__dirname, 'level-open.js'),
  readersInOtherProcesses: false,
  async setSchemaVersion(datadir, version) {
    await raw(datadir, async (db) => {
      const meta = decodeMeta(await db.get(layout.META_KEY));
      await db.put(layout.META_KEY, Buffer.from(encodeMeta(new Writer(), { ...meta, schemaVersion: version })));
    });
  },
  async corruptSummary(datadir, scripthash) {
    // a format byte this version knows, then a varint that never ends
    await raw(datadir, (db) => db.put(layout.accountKey(scripthash, 0), Buffer.from([0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])));
  },
  async tamperSummary(datadir, scripthash) {
    await raw(datadir, async (db) => {
      const key = layout.accountKey(scripthash, 0);
      const acc = decodeAccount(await db.get(key), new Account());
      acc.received += 1;
      await db.put(key, Buffer.from(encodeAccount(new Writer(), acc)));
    });
  },
  async dropAccount(datadir, scripthash) {
    await raw(datadir, (db) => db.del(layout.accountKey(scripthash, 0)));
  },
});

/**
 * A node process running `script` (a function body with `openStore`, `datadir` and `print`
 * in scope); its output lines can be awaited.
 */
function nodeProcess(script, datadir) {
  const stores = JSON.stringify(path.join(__dirname, '..', '..', 'lib', 'stores'));
  const data = JSON.stringify(path.join(__dirname, 'data.js'));
  const src = `const { openStore } = require(${stores}); const data = require(${data});
    const datadir = ${JSON.stringify(datadir)}; const print = (x) => process.stdout.write(JSON.stringify(x) + '\\n');
    (async () => { ${script} })().catch((e) => { process.stderr.write(e.stack); process.exit(1); });`;
  const proc = spawn(process.execPath, ['-e', src], { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines = [];
  let stderr = '';
  let wake = null;
  proc.stdout.setEncoding('utf8');
  let partial = '';
  proc.stdout.on('data', (d) => {
    partial += d;
    const parts = partial.split('\n');
    partial = parts.pop();
    for (const p of parts) lines.push(JSON.parse(p));
    if (wake) wake();
  });
  proc.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((resolve) => proc.on('exit', (code, signal) => {
    if (wake) wake();
    resolve({ code, signal });
  }));
  const line = async (n) => {
    while (lines.length < n) {
      if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`child exited after ${lines.length} lines: ${stderr}`);
      await new Promise((resolve) => { wake = resolve; });
    }
    return lines[n - 1];
  };
  return { proc, lines, line, exited };
}

describe('LevelDB store specifics', function () {
  this.timeout(120000);

  it('one process at a time: a second process gets ERR_LOCKED naming the holder, and LevelDB\'s rule', async () => {
    const datadir = tmp();
    const s = await open(datadir, { network: 'main' });
    await syncBlocks(s, mainnetChain().blocks, 0, 5);
    const child = nodeProcess(`
      try { await openStore({ store: 'level', datadir, network: 'main', readOnly: true }); print({ opened: true }); }
      catch (e) { print({ name: e.name, code: e.code, message: e.message }); }`, datadir);
    await child.exited;
    const got = child.lines[0];
    assert.equal(got.name, 'StoreError');
    assert.equal(got.code, 'ERR_LOCKED');
    assert.match(got.message, /LevelDB allows one process at a time/);
    assert.match(got.message, new RegExp(`pid ${process.pid}\\b`));
    // and the other way round: while a child holds it, this process is refused
    await s.close();
    const holder = nodeProcess(`const s = await openStore({ store: 'level', datadir, network: 'main' });
      print({ tip: (await s.getTip()).height }); process.stdin.resume(); process.stdin.on('end', () => process.exit(0));`, datadir);
    assert.deepEqual(await holder.line(1), { tip: 5 });
    await assert.rejects(open(datadir, { network: 'main' }), (err) => err instanceof StoreError && err.code === 'ERR_LOCKED' &&
      err.message.includes(`pid ${holder.proc.pid}`));
    holder.proc.stdin.end();
    await holder.exited;
    const again = await open(datadir, { network: 'main' });
    assert.equal((await again.getTip()).height, 5);
    await again.close();
  });

  it('in one process, store objects on one datadir share the handle; the last close releases it', async () => {
    const datadir = tmp();
    const w = await open(datadir, { network: 'main' });
    const r = await open(datadir, { network: 'main', readOnly: true });
    await syncBlocks(w, mainnetChain().blocks, 0, 20, [7]);
    assert.equal((await r.getTip()).height, 20);
    await w.close();
    assert.equal((await r.getTip()).height, 20, 'the reader still works after the writer closed');
    // an open while the last close is still releasing the lock waits for it instead of failing
    const closing = r.close();
    const again = await open(datadir, { network: 'main' });
    await closing;
    assert.equal((await again.getTip()).height, 20);
    await again.close();
    // released: a raw open of the same directory succeeds now
    await raw(datadir, async (db) => assert.ok(await db.get(layout.TIP_KEY)));
  });

  it('refuses an LMDB datadir instead of writing LevelDB files into it', async () => {
    const datadir = tmp();
    const lmdb = await require('../../lib/stores').openStore({ store: 'lmdb', datadir, network: 'main' });
    await lmdb.close();
    await assert.rejects(open(datadir, { network: 'main' }), (err) => err.code === 'ERR_NOT_AN_INDEX' && /--store lmdb/.test(err.message));
    assert.ok(!fs.existsSync(path.join(datadir, 'CURRENT')));
  });

  it('a commit torn by a crash is dropped whole: the index reopens at the commit before it', async function () {
    this.timeout(180000);
    const CHAIN = { seed: 31, blocks: 24, txsPerBlock: 200 };
    const chain = generatedChain(CHAIN);
    const datadir = tmp();
    // a writer in its own process commits 4 blocks at a time and is killed, so the commits
    // live only in LevelDB's log (nothing was compacted into tables)
    const child = nodeProcess(`const s = await openStore({ store: 'level', datadir, network: 'regtest', undoDepth: 1000 });
      const c = data.generatedChain(${JSON.stringify(CHAIN)});
      for (let h = 0; h < c.blocks.length; h += 4) { await data.syncBlocks(s, c.blocks, h, h + 3, [4]); print(h + 3); }
      process.stdin.resume();`, datadir);
    await child.line(CHAIN.blocks / 4);
    child.proc.kill('SIGKILL');
    await child.exited;
    const logs = fs.readdirSync(datadir).filter((f) => f.endsWith('.log')).sort();
    assert.equal(logs.length, 1, `one log file: ${logs}`);
    const logFile = path.join(datadir, logs[0]);
    const full = fs.readFileSync(logFile);
    const ref = await open(tmp(), { network: 'regtest', undoDepth: 1000 });
    for (const cut of [1, 5000, 40000, Math.floor(full.length / 3)]) {
      // tear the log's tail as a power loss can: the last commit (or more) half written
      fs.writeFileSync(logFile, full.subarray(0, full.length - cut));
      const copy = tmp();
      fs.cpSync(datadir, copy, { recursive: true });
      const s = await open(copy, { network: 'regtest', undoDepth: 1000 });
      const tip = await s.getTip();
      assert.ok(tip, `cut ${cut}: some commit survives`);
      assert.ok(child.lines.includes(tip.height) && tip.height < CHAIN.blocks - 1, `cut ${cut}: tip ${tip.height} is a commit boundary before the last`);
      assert.equal(tip.hash, chain.hashes[tip.height]);
      const v = await s.verify();
      assert.equal(v.ok, true, v.problems.join('\n'));
      const refTip = await ref.getTip();
      if (!refTip || refTip.height < tip.height) await syncBlocks(ref, chain.blocks, refTip ? refTip.height + 1 : 0, tip.height, [4]);
      else if (refTip.height > tip.height) await ref.revert(tip.height);
      assert.equal(await s.digest(), await ref.digest(), `cut ${cut} at height ${tip.height}`);
      // and it resumes from there
      await syncBlocks(s, chain.blocks, tip.height + 1, CHAIN.blocks - 1, [5]);
      assert.equal((await s.getTip()).height, CHAIN.blocks - 1);
      await s.close();
    }
    await ref.close();
  });

  it('a batch reading more keys than one getMany part reads them in parts at once, each answer in its place: the same index as LMDB', async () => {
    const { makeChain, syncInto, freshDigest } = require('../helpers/chains');
    const chain = await makeChain({ seed: 61, txs: 12000 });
    const sizes = [];
    let inFlight = 0;
    let most = 0;
    const getMany = ClassicLevel.prototype.getMany;
    ClassicLevel.prototype.getMany = async function (keys, opts) {
      sizes.push(keys.length);
      most = Math.max(most, ++inFlight);
      try {
        return await getMany.call(this, keys, opts);
      } finally {
        inFlight--;
      }
    };
    const s = await open(tmp(), { network: 'regtest' });
    try {
      // two batches: the second reads the rows of the first (outputs it spends, accounts it pays again)
      await syncInto(chain.dir, s, { batch: { maxBlocks: 200, maxBytes: 64 * 1024 * 1024, maxMs: 60000 } });
    } finally {
      ClassicLevel.prototype.getMany = getMany;
    }
    assert.ok(sizes.includes(4096), `a part of 4,096 keys was read (the largest call: ${Math.max(...sizes)})`);
    assert.ok(most > 1, 'parts were read at once');
    const ref = await freshDigest(chain.dir);
    assert.equal(await s.digest(), ref.digest);
    await s.close();
  });

  it('stats: the same rows and bytes per table as LMDB, LevelDB\'s own size and files per level', async () => {
    const { openStore } = require('../../lib/stores');
    const s = await open(tmp(), { network: 'main' });
    const l = await openStore({ store: 'lmdb', datadir: tmp(), network: 'main' });
    for (const x of [s, l]) await syncBlocks(x, mainnetChain().blocks, 0, 438, [100]);
    const [a, b] = [await s.stats(), await l.stats()];
    assert.deepEqual(a.tables, b.tables);
    assert.deepEqual([a.tables.block.rows, a.tables.undo.rows], [439, 100]);
    assert.equal(a.historyEntries, b.historyEntries);
    assert.ok(a.diskBytes > 0 && a.bytes > 0);
    assert.equal(a.engine.filesAtLevel.length, 7);
    await s.close();
    await l.close();
  });
});
