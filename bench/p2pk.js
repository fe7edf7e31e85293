#!/usr/bin/env node
'use strict';

/**
 * What the script view costs an index (docs/FORMAT.md, "Two views"): the bytes of every row
 * that holds it, split out of an LMDB index's tables — the P2PK scripts' own accounts (their
 * account, page and UTXO rows), the P2PK parts of address accounts, the own script hashes in
 * outputs rows, undo and touched sets — beside the whole index and the raw blocks.
 *
 *   node bench/p2pk.js [--datadir DIR] [--blocks-bytes N] [--json FILE]
 *
 * Without --datadir it indexes the bundled first 439 mainnet blocks (nearly every output a
 * P2PK one: the most the script view can cost) into a temporary LMDB datadir. --blocks-bytes
 * gives the raw blocks' size of an index synced elsewhere (bench/sync.js prints it).
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { printTable } = require('./lib/table');
const layout = require('../lib/stores/layout');
const { openStore } = require('../lib/stores');
const { Writer } = require('../lib/codec/io');
const { Account, decodeAccount, encodeAccount, decodeOutputs, decodeUndo, decodeTouched } = require('../lib/codec/records');

const { values: args } = parseArgs({
  options: {
    datadir: { type: 'string' },
    'blocks-bytes': { type: 'string' },
    json: { type: 'string' },
  },
});

const { P } = layout;

/** Indexes the bundled mainnet blocks into a new datadir; returns it and their raw size. */
async function fixtureIndex() {
  const { mainnet439Blocks } = require('../test/helpers/fixtures');
  const { parseColumns } = require('../lib/chain/columns');
  const { buildDeltas } = require('../lib/sync/delta');
  const raws = mainnet439Blocks();
  const datadir = fs.mkdtempSync(path.join(os.tmpdir(), 'addrindex-p2pk-'));
  const store = await openStore({ store: 'lmdb', datadir, network: 'main', undoDepth: 100 });
  const blocks = raws.map((raw, height) => ({ height, cols: parseColumns(raw) }));
  for (let h = 0; h < blocks.length; h += 100) {
    const tip = await store.getTip();
    await store.apply(await buildDeltas(blocks.slice(h, h + 100), store, tip ? tip.nextTxNum : 0));
  }
  await store.close();
  return { datadir, rawBytes: raws.reduce((n, r) => n + r.length, 0), temporary: true };
}

async function main() {
  const target = args.datadir
    ? { datadir: args.datadir, rawBytes: args['blocks-bytes'] ? Number(args['blocks-bytes']) : null, temporary: false }
    : await fixtureIndex();
  const store = await openStore({ store: 'lmdb', datadir: target.datadir, network: await networkOf(target.datadir), readOnly: true });
  try {
    const snap = await store.kv.snapshot();
    try {
      const r = await measure(snap);
      report(r, target.rawBytes);
    } finally {
      snap.release();
    }
  } finally {
    await store.close();
    if (target.temporary) fs.rmSync(target.datadir, { recursive: true, force: true });
  }
}

/** The network an index was made for, from its meta row. */
async function networkOf(datadir) {
  const { open } = require('lmdb');
  const db = open({ path: datadir, readOnly: true, encoding: 'binary', keyEncoding: 'binary' });
  try {
    const { decodeMeta } = require('../lib/codec/records');
    return decodeMeta(db.get(layout.META_KEY)).network;
  } finally {
    await db.close();
  }
}

/**
 * One pass over the index, then the P2PK accounts' own rows.
 * @param {object} snap
 */
async function measure(snap) {
  const bytes = { all: 0 };
  const tables = {};
  const w = new Writer();
  const acc = new Account();
  const partsOf = []; // the P2PK scripts' own script hashes (their hashX), from the address accounts' parts
  const cost = {
    partsBytes: 0, accountsWithParts: 0, bothEntries: 0,
    p2pkUnspent: 0, outputsOwnBytes: 0, undoP2pk: 0, undoOwnBytes: 0, touchedBytes: 0,
  };
  const touched = []; // `c` rows sort before the accounts: counted once every part is known
  for await (const { key, value } of snap.range({})) {
    const n = key.length + value.length;
    const t = layout.TABLE_OF.get(key[0]) || 'other';
    tables[t] = (tables[t] || 0) + n;
    bytes.all += n;
    if (key[0] === P.account) {
      decodeAccount(value, acc);
      if (!acc.parts) continue;
      cost.accountsWithParts++;
      cost.bothEntries += acc.parts.both.length;
      for (const p of acc.parts.p2pk) partsOf.push(p.sh);
      const parts = acc.parts;
      acc.parts = null;
      cost.partsBytes += value.length - encodeAccount(w, acc).length;
      acc.parts = parts;
    } else if (key[0] === P.outputs) {
      const rec = decodeOutputs(value, layout.readU40(key, 1));
      if (rec.p2pk) {
        cost.p2pkUnspent += rec.p2pk.size;
        cost.outputsOwnBytes += 32 * rec.p2pk.size;
      }
    } else if (key[0] === P.undo) {
      const u = decodeUndo(value);
      cost.undoP2pk += u.p2pk.size;
      cost.undoOwnBytes += 32 * u.p2pk.size;
    } else if (key[0] === P.touched) {
      touched.push(decodeTouched(value));
    }
  }
  // touched sets: the P2PK scripts' own hashes in the first list (the second list holds script
  // hashes the one list of schema 3 held too; parts name their P2PK scripts by hashX)
  const ownSet = new Set(partsOf.map((sh) => sh.latin1Slice(0, layout.HASHX_LEN)));
  for (const t of touched) {
    for (let at = 0; at < t.both.length; at += 32) if (ownSet.has(t.both.latin1Slice(at, at + layout.HASHX_LEN))) cost.touchedBytes += 32;
  }
  // the P2PK scripts' own accounts: their account row, sealed pages and UTXO rows
  const own = { accounts: 0, accountBytes: 0, pageBytes: 0, utxoBytes: 0, entries: 0, utxos: 0 };
  const seen = new Set();
  for (const sh of partsOf) {
    const id = sh.latin1Slice(0, layout.HASHX_LEN);
    if (seen.has(id)) continue;
    // (two parts sharing a hashX are one account: counted once)
    seen.add(id);
    const key = layout.accountKey(sh, 0);
    const value = await snap.get(key);
    if (!value) continue;
    decodeAccount(value, acc);
    own.accounts++;
    own.accountBytes += key.length + value.length;
    own.entries += acc.txCount;
    own.utxos += acc.utxoCount;
    for await (const row of snap.range(layout.scan(P.history, sh, 0))) own.pageBytes += row.key.length + row.value.length;
    for await (const row of snap.range(layout.scan(P.utxo, sh, 0))) own.utxoBytes += row.key.length + row.value.length;
  }
  return { bytes, tables, cost, own };
}

function report({ bytes, tables, cost, own }, rawBytes) {
  const MB = 1e6;
  const pct = (n, of) => `${((100 * n) / of).toFixed(2)} %`;
  const ownBytes = own.accountBytes + own.pageBytes + own.utxoBytes;
  // the undo and touched rows hold the last undoDepth blocks only; undo may be LZ4-compressed
  // (its own script hashes are counted uncompressed: an upper bound)
  const rows = [
    { what: 'P2PK scripts\' own accounts (account rows)', bytes: own.accountBytes },
    { what: '  their sealed history pages', bytes: own.pageBytes },
    { what: '  their UTXO rows (sets over 16)', bytes: own.utxoBytes },
    { what: 'P2PK parts of address accounts', bytes: cost.partsBytes },
    { what: 'own script hashes in outputs rows', bytes: cost.outputsOwnBytes },
    { what: 'own script hashes in undo (raw)', bytes: cost.undoOwnBytes },
    { what: 'own script hashes in touched sets', bytes: cost.touchedBytes },
  ];
  const total = rows.reduce((n, r) => n + r.bytes, 0);
  rows.push({ what: 'the script view, all', bytes: total });
  printTable(rows.map((r) => ({
    what: r.what,
    MB: (r.bytes / MB).toFixed(3),
    'of the index': pct(r.bytes, bytes.all),
    'of the raw blocks': rawBytes ? pct(r.bytes, rawBytes) : '',
  })));
  console.log(`\nindex: ${(bytes.all / MB).toFixed(2)} MB of rows${rawBytes ? `, raw blocks ${(rawBytes / MB).toFixed(2)} MB` : ''}; ` +
    `${own.accounts.toLocaleString('en-US')} P2PK scripts with ${own.entries.toLocaleString('en-US')} history entries and ` +
    `${own.utxos.toLocaleString('en-US')} unspent outputs of their own; ${cost.accountsWithParts.toLocaleString('en-US')} address accounts ` +
    `with parts, ${cost.bothEntries.toLocaleString('en-US')} "both" entries; ${cost.p2pkUnspent.toLocaleString('en-US')} unspent P2PK outputs`);
  console.log('rows by table (MB):', Object.entries(tables).map(([t, n]) => `${t} ${(n / MB).toFixed(2)}`).join(', '));
  if (args.json) {
    fs.writeFileSync(args.json, JSON.stringify({
      date: new Date().toISOString(), datadir: args.datadir || 'the bundled mainnet blocks', rawBytes, bytes, tables, cost, own, scriptViewBytes: total,
    }, null, 2));
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
