'use strict';

/**
 * Mempool snapshots for the reader tests (Electrum, REST), as a follower would write them:
 * a generated chain whose index holds heights 0..M, and the transactions of blocks M+1..B that
 * a mempool at tip M can hold, read by bitcore-lib with the reference's outputs (never by
 * addrindex's parser), encoded and handed to store.putMempool by the test.
 */

const bitcore = require('bitcore-lib');
const { makeChain } = require('./chains');
const { referenceIndex, addressAt, outputScripthash } = require('./reference');
const { BlocksDirSource } = require('../../lib/sources/blocksdir');
const { encodeReplacement, encodeChange, encodeMempoolTx} = require('../../lib/codec/mempool');
const { fromDisplayHex } = require('../../lib/chain/hash');

/** First-seen time of the snapshot's k-th transaction: later in the pool is newer. */
const T0 = 1700000000;

/** The raw blocks of a blocks dir, from height 0. */
async function rawBlocks(dir, network = 'regtest') {
  const source = new BlocksDirSource({ dir, network });
  try {
    await source.scan();
    const raws = [];
    for await (const b of source.blocks(0)) raws.push(b.raw);
    return raws;
  } finally {
    await source.close();
  }
}

/**
 * The chain of `seed` to height B and its prefix to M (the index's), with the reference of
 * the long one in one view (the script view for Electrum's answers).
 * @param {{view?: 'address'|'script'}} [opts]
 * @returns {Promise<{full: object, part: object, raws: Buffer[], ref: import('./reference').Reference}>}
 */
async function mempoolChains(seed, M, B, { view = 'address' } = {}) {
  const full = await makeChain({ seed, blocks: B });
  const part = await makeChain({ seed, blocks: M });
  const raws = await rawBlocks(full.dir);
  const prefix = await rawBlocks(part.dir);
  if (prefix.length !== M + 1 || !prefix.every((r, h) => r.equals(raws[h]))) throw new Error('the short chain is not the long one\'s prefix');
  return { full, part, raws, ref: referenceIndex(raws, undefined, { view }) };
}

/**
 * The transactions of blocks M+1..B that a mempool at tip M can hold (those spending only
 * outputs confirmed by M or of earlier such transactions: not a coinbase above M), in block
 * order, each with what a follower resolves: inputs' values and script hashes (internal hex),
 * outputs' script hashes, fee, vsize. `sh` is the script hash in `view` (the reference's),
 * `indexKey` the index key (the address view's) and `own` sha256 of the script itself: these
 * two differ for a P2PK output only, and the snapshot carries both.
 * @param {'address'|'script'} [view='address']
 */
function mempoolOf(ref, M, B, view = 'address') {
  const scripts = new Map();
  for (const block of ref.blocks) for (const tx of block.transactions) tx.outputs.forEach((o, n) => scripts.set(`${tx.hash}:${n}`, o.script));
  const confirmed = new Map(ref.outputs.filter((o) => o.height <= M).map((o) => [`${o.txid}:${o.vout}`, o]));
  const created = new Map();
  const txs = [];
  for (let h = M + 1; h <= B; h++) {
    for (const tx of ref.blocks[h].transactions.slice(1)) {
      const ins = tx.inputs.map((i) => {
        const txid = i.prevTxId.toString('hex');
        const key = `${txid}:${i.outputIndex}`;
        const o = confirmed.get(key) || created.get(key);
        return o && { key, txid, vout: i.outputIndex, value: o.value, ...hashes(scripts.get(key), view), script: scripts.get(key).toBuffer(), unconfirmed: created.has(key) };
      });
      if (ins.some((i) => !i)) continue;
      const outs = tx.outputs.map((o) => ({ value: o.satoshis, ...hashes(o.script, view), script: o.script.toBuffer() }));
      outs.forEach((o, vout) => created.set(`${tx.hash}:${vout}`, o));
      const fee = ins.reduce((n, i) => n + i.value, 0) - outs.reduce((n, o) => n + o.value, 0);
      txs.push({ tx, height: h, ins, outs, fee, vsize: tx.vsize, time: T0 + txs.length });
    }
  }
  return txs;
}

/** An output script's script hash in `view`, its index key and its own script hash (internal hex; null for OP_RETURN). */
function hashes(script, view) {
  return { sh: outputScripthash(script, view), indexKey: outputScripthash(script), own: outputScripthash(script, 'script') };
}

/** The snapshot's script hash (the index key) and, for a P2PK output, its own script hash. */
function keys({ indexKey, own }) {
  if (!indexKey) return { scripthash: null, p2pk: null };
  return { scripthash: Buffer.from(indexKey, 'hex'), p2pk: own !== indexKey ? Buffer.from(own, 'hex') : null };
}

/**
 * An encoded change replacing the store's snapshot with `txs` (from mempoolOf) resolved
 * against the block at `tipHeight`.
 */
function snapshot(ref, seq, txs, tipHeight) {
  return encodeReplacement(snapshotOf(ref, seq, txs, tipHeight));
}

/**
 * A writer of changes as a follower writes them, from whole snapshots: each call gives the
 * change from the last snapshot to this one (what left, what entered or changed its part or
 * place; places kept where the order allows, as lib/mempool/pool.js keeps them).
 * @returns {(ref: object, seq: number, txs: object[], tipHeight: number) => Buffer}
 */
function changeWriter() {
  /** @type {Map<string, {part: Buffer, rank: number}>} by txid hex */
  let held = new Map();
  let last = 0;
  let prevSeq = 0;
  return (ref, seq, txs, tipHeight) => {
    const snap = snapshotOf(ref, seq, txs, tipHeight);
    const next = new Map();
    const upserts = [];
    let after = 0;
    let vsize = 0;
    let fee = 0;
    for (const t of snap.txs) {
      const id = t.txid.toString('hex');
      const part = encodeMempoolTx(t);
      const old = held.get(id);
      const rank = old && old.rank > after ? old.rank : ++last;
      after = rank;
      next.set(id, { part, rank });
      if (!old || old.rank !== rank || !old.part.equals(part)) upserts.push({ rank, part, raw: t.raw });
      vsize += t.vsize;
      fee += t.fee;
    }
    // a transaction leaves its stored place when it leaves, or moves to another
    const leaving = [...held.entries()].filter(([id, old]) => !next.has(id) || next.get(id).rank !== old.rank);
    const removed = leaving.map(([id]) => Buffer.from(id, 'hex'));
    const removedRanks = leaving.map(([, old]) => old.rank);
    const change = encodeChange({ seq, prev: prevSeq, tip: snap.tip, count: snap.txs.length, vsize, fee, evicted: 0, reset: false, removed, removedRanks, upserts });
    held = next;
    prevSeq = seq;
    return change;
  };
}

/** The snapshot `txs` make (lib/codec/mempool.js MempoolSnapshot). */
function snapshotOf(ref, seq, txs, tipHeight) {
  return {
    seq,
    tip: fromDisplayHex(ref.blockHashes[tipHeight]),
    txs: txs.map((p) => ({
      txid: fromDisplayHex(p.tx.hash), time: p.time, fee: p.fee, vsize: p.vsize, raw: p.tx.toBuffer(),
      inputs: p.ins.map((i) => ({ txid: fromDisplayHex(i.txid), vout: i.vout, value: i.value, ...keys(i), unconfirmed: i.unconfirmed })),
      outputs: p.outs.map((o) => ({ value: o.value, ...keys(o) })),
    })),
  };
}

/**
 * What the mempool `txs` do to a script hash (internal hex), from the reference alone: its
 * transactions in pool order, the outputs it gains and loses, the confirmed (at M) outputs no
 * pool transaction spends and the pool's outputs no other spends.
 */
function unconfirmedOf(ref, sh, txs, M) {
  const at = addressAt(ref, sh, M);
  const spentBy = new Set(txs.flatMap((p) => p.ins.map((i) => i.key)));
  const mine = txs.filter((p) => p.ins.some((i) => i.sh === sh) || p.outs.some((o) => o.sh === sh));
  const stats = { funded_txo_count: 0, funded_txo_sum: 0, spent_txo_count: 0, spent_txo_sum: 0, tx_count: mine.length };
  const poolUtxos = [];
  for (const p of mine) {
    for (const i of p.ins) {
      if (i.sh !== sh) continue;
      stats.spent_txo_count++;
      stats.spent_txo_sum += i.value;
    }
    p.outs.forEach((o, vout) => {
      if (o.sh !== sh) return;
      stats.funded_txo_count++;
      stats.funded_txo_sum += o.value;
      if (!spentBy.has(`${p.tx.hash}:${vout}`)) poolUtxos.push({ p, txid: p.tx.hash, vout, value: o.value });
    });
  }
  const confirmedUtxos = at.utxos.filter((u) => !spentBy.has(`${u.txid}:${u.vout}`));
  return { at, mine, stats, balance: stats.funded_txo_sum - stats.spent_txo_sum, confirmedUtxos, poolUtxos };
}

/**
 * The regtest address of a script hash the reference files under a (mainnet) address, through
 * bitcore-lib; null when it has none.
 * @param {import('./reference').Reference} ref
 * @param {string} sh internal hex
 */
function regtestAddress(ref, sh) {
  const main = ref.addressOf.get(sh);
  if (!main) return null;
  const a = bitcore.Address.fromString(main);
  return new bitcore.Address(a.hashBuffer, 'regtest', a.type).toString();
}

module.exports = { T0, regtestAddress, rawBlocks, mempoolChains, mempoolOf, snapshot, snapshotOf, changeWriter, unconfirmedOf };
