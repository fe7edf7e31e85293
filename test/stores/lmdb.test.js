'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const lmdb = require('lmdb');
const { storeConformance } = require('./conformance');
const layout = require('../../lib/stores/layout');
const { Writer } = require('../../lib/codec/io');
const { encodeMeta, decodeMeta, Account, decodeAccount, encodeAccount } = require('../../lib/codec/records');
const { open } = require('./lmdb-open');

const made = [];
after(() => {
  for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

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
  create() {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'addrindex-lmdb-'));
    made.push(d);
    return d;
  },
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
});
