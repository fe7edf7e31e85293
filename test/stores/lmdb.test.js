'use strict';

const fs = require('node:fs');
const path = require('node:path');
const lmdb = require('lmdb');
const { storeConformance } = require('./conformance');
const layout = require('../../lib/stores/layout');
const { Writer } = require('../../lib/codec/io');
const { encodeMeta, decodeMeta, Account, decodeAccount, encodeAccount } = require('../../lib/codec/records');
const { open } = require('./lmdb-open');
const { tempDir } = require('../helpers/tmp');

/** Runs fn on the raw LMDB environment of a closed store's datadir. */
function raw(datadir, fn) {
  const db = lmdb.open({ path: datadir, encoding: 'binary', keyEncoding: 'binary' });
  try {
    db.transactionSync(() => fn(db));
  } finally {
    db.close();
  }
}

storeConformance('LMDB', {
  kind: 'lmdb',
  create: () => tempDir('lmdb'),
  open,
  openerModule: path.join(__dirname, 'lmdb-open.js'),
  readersInOtherProcesses: true,
  async setSchemaVersion(datadir, version) {
    raw(datadir, (db) => {
      const meta = decodeMeta(db.getBinary(layout.META_KEY));
      db.putSync(layout.META_KEY, Buffer.from(encodeMeta(new Writer(), { ...meta, schemaVersion: version })));
    });
  },
  async corruptSummary(datadir, scripthash) {
    // a format byte this version knows, then a varint that never ends
    raw(datadir, (db) => db.putSync(layout.accountKey(scripthash, 0), Buffer.from([0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])));
  },
  async tamperSummary(datadir, scripthash) {
    raw(datadir, (db) => {
      const key = layout.accountKey(scripthash, 0);
      const acc = decodeAccount(db.getBinary(key), new Account());
      acc.received += 1;
      db.putSync(key, Buffer.from(encodeAccount(new Writer(), acc)));
    });
  },
  async dropAccount(datadir, scripthash) {
    raw(datadir, (db) => db.removeSync(layout.accountKey(scripthash, 0)));
  },
});

describe('LMDB store specifics', () => {
  const { openStore } = require('../../lib/stores');
  const { UsageError } = require('../../lib/errors');
  const { mainnetChain, syncBlocks } = require('./data');
  const assert = require('node:assert/strict');
  const tmp = () => {
    const d = tempDir('lmdb');
    return d;
  };

  it('openStore refuses an unknown store name', async () => {
    await assert.rejects(openStore({ store: 'rocks', datadir: tmp(), network: 'main' }),
      (err) => err instanceof UsageError && err.code === 'ERR_UNKNOWN_STORE' && /lmdb/.test(err.message));
  });

  it('stats: rows and bytes per table, history entries, size on disk', async () => {
    const s = await open(tmp(), { network: 'main' });
    await syncBlocks(s, mainnetChain().blocks, 0, 438, [100]);
    const st = await s.stats();
    assert.equal(st.tables.block.rows, 439);
    assert.equal(st.tables.tx.rows, 446);
    assert.equal(st.tables.undo.rows, 100);
    assert.equal(st.tables.meta.rows, 1);
    assert.equal(st.historyEntries, (await s.verify()).checked.historyEntries);
    assert.ok(st.diskBytes >= st.bytes && st.bytes > 0);
    assert.ok(st.engine.entries > 1000);
    await s.close();
  });


  it('the writer\'s map leaves the room asked for: rows that fit in it are written without lmdb-js mapping the file again', async () => {
    // lmdb-js keeps every old mapping of the file open until the environment closes (its
    // pages counted again in the process's RSS): the room given to a mempool follower's store
    const mappings = (file) => fs.readFileSync('/proc/self/smaps', 'utf8').split('\n').filter((l) => /^[0-9a-f]+-[0-9a-f]+ /.test(l) && l.endsWith(` ${file}`)).length;
    const fill = (s) => {
      const value = Buffer.alloc(1000, 7);
      s.kv.db.transactionSync(() => {
        for (let i = 0; i < 90000; i++) s.kv.db.putSync(Buffer.from(`Z${String(i).padStart(8, '0')}`), value);
      });
    };
    const room = 160 * 2 ** 20;
    for (const mapRoom of [undefined, room]) {
      const dir = tmp();
      const file = fs.realpathSync(dir) + '/data.mdb';
      const s = await open(dir, { network: 'main', ...(mapRoom === undefined ? {} : { mapRoom }) });
      // the file's length is the writer's map (MDB_WRITEMAP)
      const length = fs.statSync(file).size;
      if (mapRoom === undefined) assert.equal(length, 2 ** 26, 'no room asked: the least map');
      else assert.ok(length >= room && length < room + 2 ** 27, `room asked: a map of ${length}`);
      assert.equal(mappings(file), 1);
      fill(s);
      assert.equal(mappings(file), mapRoom === undefined ? 2 : 1, '90 MB of rows in a 64 MiB map make a second mapping, in the room none');
      await s.close();
      assert.equal(mappings(file), 0);
    }
    await assert.rejects(open(tmp(), { network: 'main', mapRoom: -1 }), (err) => err instanceof UsageError && err.code === 'ERR_USAGE');
  });

  it('prevout lookups: a sync\'s (indexed) kept for its apply, anyone else\'s (a mempool follower\'s, poll after poll at one tip) not kept', async () => {
    const s = await open(tmp(), { network: 'main' });
    await syncBlocks(s, mainnetChain().blocks, 0, 200, [200]);
    const { fromDisplayHex } = require('../../lib/chain/hash');
    // block 170's payment: output 0 pays Hal, unspent at 200
    const op = Buffer.concat([fromDisplayHex('f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16'), Buffer.alloc(4)]);
    const [got] = await s.getPrevouts(op);
    assert.equal(got.value, 10e8);
    assert.equal(s.prevoutCache, null, 'nothing kept after a lookup that is not indexed');
    assert.deepEqual(await s.getPrevouts(op, { indexed: true }), [got]);
    assert.ok(s.prevoutCache && s.prevoutCache.outputs.size === 1, 'the sync\'s lookup kept for the apply that follows');
    await s.close();
  });
  it('bulk groups: their blocks reach other processes at endBulk; a discarded group leaves the last commit', async function () {
    this.timeout(60000);
    const { execFileSync } = require('node:child_process');
    // the tip another process sees (this one reads through an open group)
    const tipElsewhere = (datadir) => Number(execFileSync(process.execPath, ['-e', `
      require(${JSON.stringify(path.join(__dirname, '../../lib/stores'))})
        .openStore({ store: 'lmdb', datadir: ${JSON.stringify(datadir)}, network: 'main', readOnly: true })
        .then(async (s) => { const t = await s.getTip(); process.stdout.write(String(t ? t.height : -1)); await s.close(); });
    `]).toString());
    const { blocks } = mainnetChain();
    const dir = tmp();
    const s = await open(dir, { network: 'main' });
    await syncBlocks(s, blocks, 0, 99, [100]);
    await s.beginBulk();
    await syncBlocks(s, blocks, 100, 199, [30]);
    assert.equal((await s.getTip()).height, 199);
    assert.equal(tipElsewhere(dir), 99);
    await s.endBulk();
    assert.equal(tipElsewhere(dir), 199);

    await s.beginBulk();
    await syncBlocks(s, blocks, 200, 299, [50]);
    await s.endBulk({ commit: false });
    assert.equal((await s.getTip()).height, 199);
    assert.equal(tipElsewhere(dir), 199);
    const ref = await open(tmp(), { network: 'main' });
    await syncBlocks(ref, blocks, 0, 199, [100]);
    assert.equal(await s.digest(), await ref.digest());

    await syncBlocks(s, blocks, 200, 438, [100]);
    await syncBlocks(ref, blocks, 200, 438, [239]);
    assert.equal(await s.digest(), await ref.digest());
    assert.equal((await s.verify()).ok, true);
    await s.close();
    await ref.close();
  });

  it('a write its guard refuses, another writer process having committed first, is followed by reads that see that commit', async function () {
    this.timeout(60000);
    const { execFileSync } = require('node:child_process');
    const dir = tmp();
    const s = await open(dir, { network: 'main' });
    const key = Buffer.from([0x7a, 0x01]); // no key of the schema
    // this process's read transaction begins...
    assert.equal(await s.kv.get(key), undefined);
    // ...and another process commits the key before the event loop turns (lmdb-js renews its
    // read transaction on the next macrotask): how a sync creating an index met a bitcore
    // wallet writer that opened it first, and found no meta row after its own was refused
    execFileSync(process.execPath, ['-e', `
      const key = Buffer.from([0x7a, 0x01]);
      require(${JSON.stringify(path.join(__dirname, '../../lib/stores'))})
        .openStore({ store: 'lmdb', datadir: ${JSON.stringify(dir)}, network: 'main' })
        .then(async (s) => { s.kv.write({ keys: [key], values: [Buffer.from('theirs')] }, { key, value: undefined }); await s.close(); });
    `]);
    assert.equal(s.kv.write({ keys: [key], values: [Buffer.from('mine')] }, { key, value: undefined }), false, 'the guard sees their commit');
    assert.equal(Buffer.from(await s.kv.get(key)).toString(), 'theirs', 'and so does the read after it');
    await s.close();
  });

  it('a data.mdb that is not LMDB\'s: ERR_NOT_AN_INDEX, not a crash', async () => {
    const dir = tmp();
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'data.mdb'), Buffer.alloc(8192, 0x61));
    for (const readOnly of [false, true]) {
      await assert.rejects(open(dir, { network: 'main', readOnly }), (err) => err.code === 'ERR_NOT_AN_INDEX' && /not an LMDB environment/.test(err.message));
    }
  });

  it('reverts to -1: an empty index, as fresh as a new one', async () => {
    const empty = await open(tmp(), { network: 'main' });
    const s = await open(tmp(), { network: 'main', undoDepth: 1000 });
    await syncBlocks(s, mainnetChain().blocks, 0, 200, [60]);
    await s.revert(-1);
    assert.equal(await s.getTip(), null);
    assert.equal(await s.digest(), await empty.digest());
    await syncBlocks(s, mainnetChain().blocks, 0, 10, [11]);
    assert.equal((await s.getTip()).height, 10);
    await s.close();
    await empty.close();
  });
});
