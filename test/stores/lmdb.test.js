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
