'use strict';

const { decodeOutputs } = require('../../lib/codec/records');
const { P } = require('../../lib/stores/layout');

/** Bytes of an unsigned LEB128 varint (the index's varint, docs/FORMAT.md). */
function varintLen(v) {
  let n = 1;
  while (v >= 128) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

/**
 * What the rows serving transactions and blocks cost in an LMDB (or LevelDB) index, split by
 * kind, from store.stats() and a walk over the rows it cannot split itself:
 *  - locators: the `l` table (keys and values), every byte of it;
 *  - tx offsets: in each `n` row, what follows the txids (the count byte and the offsets);
 *  - spenders: in each `o` row, the spent-outputs part (its count and entries), and the whole
 *    row of a transaction none of whose indexed outputs is unspent any more (schema 2 dropped
 *    those rows);
 *  - txids: the 32 bytes per transaction in `n` (what keeping no txids would save);
 *  - spent outputs: nothing (previous outputs are read from the funding transactions).
 * @param {import('../../lib/stores/abstract').AbstractStore} store a key-value store, open
 * @param {number} rawBytes the blocks' own bytes
 */
async function txRowSizes(store, rawBytes) {
  const stats = await store.stats();
  const kv = store.kv;
  const table = (byte) => ({ gte: Buffer.from([byte]), lt: Buffer.from([byte + 1]) });
  let offsets = 0;
  let txids = 0;
  let nRows = 0;
  for await (const { value } of kv.range(table(P.txids))) {
    const k = value[1];
    txids += 32 * k;
    offsets += value.length - 1 - 32 * k; // count byte and offsets (the format byte was there before)
    nRows++;
  }
  let spenders = 0;
  let spentEntries = 0;
  let allSpentRows = 0;
  for await (const { key, value } of kv.range(table(P.outputs))) {
    const txNum = key.readUIntBE(1, 5);
    const o = decodeOutputs(value, txNum);
    if (o.count === 0) {
      spenders += key.length + value.length;
      allSpentRows++;
    } else {
      let part = varintLen(o.spent.count);
      let prev = -1;
      for (let i = 0; i < o.spent.count; i++) {
        part += varintLen(o.spent.vouts[i] - prev - 1) + varintLen(o.spent.txNums[i] - txNum - 1) + varintLen(o.spent.vins[i] + 1);
        prev = o.spent.vouts[i];
      }
      spenders += part;
    }
    spentEntries += o.spent.count;
  }
  const locators = stats.tables.locator.bytes;
  const pct = (b) => (100 * b) / rawBytes;
  return {
    rawBytes,
    indexBytes: stats.bytes,
    diskBytes: stats.diskBytes,
    tables: stats.tables,
    locators: { bytes: locators, rows: stats.tables.locator.rows, pct: pct(locators) },
    txOffsets: { bytes: offsets, rows: nRows, pct: pct(offsets) },
    spenders: { bytes: spenders, spent: spentEntries, allSpentRows, pct: pct(spenders) },
    spentOutputs: { bytes: 0, pct: 0 },
    extra: { bytes: locators + offsets + spenders, pct: pct(locators + offsets + spenders) },
    txids: { bytes: txids, pct: pct(txids) },
    withoutTxids: { bytes: stats.bytes - txids, pct: pct(stats.bytes - txids) },
    index: { pct: pct(stats.bytes) },
  };
}

/**
 * What keeping every spent output in the index would cost instead of reading it from its
 * funding transaction (the choice docs/FORMAT.md records): per spent output its value as a
 * varint and its script with a length byte, the least a record that can answer Esplora's
 * prevout (the script itself, not its hash) could hold. One pass over the blocks.
 * @param {string} blocksDir
 * @param {string} network
 * @returns {Promise<{spent: number, bytes: number}>}
 */
async function spentOutputBytes(blocksDir, network) {
  const { BlocksDirSource } = require('../../lib/sources/blocksdir');
  const { parseBlock } = require('../../lib/chain/block');
  const source = new BlocksDirSource({ dir: blocksDir, network });
  const live = new Map(); // txid (latin1) + vout -> the record's bytes
  let bytes = 0;
  let spent = 0;
  try {
    await source.scan();
    for await (const b of source.blocks(0)) {
      for (const tx of parseBlock(b.raw).txs) {
        for (const input of tx.inputs) {
          const k = `${input.txid.latin1Slice(0, 32)}${input.vout}`;
          const cost = live.get(k);
          if (cost === undefined) continue;
          live.delete(k);
          bytes += cost;
          spent++;
        }
        const id = tx.txid.latin1Slice(0, 32);
        tx.outputs.forEach((o, n) => live.set(`${id}${n}`, varintLen(o.value) + varintLen(o.script.length) + o.script.length));
      }
    }
  } finally {
    await source.close();
  }
  return { spent, bytes };
}

module.exports = { txRowSizes, spentOutputBytes, varintLen };
