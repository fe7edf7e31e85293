'use strict';

const bitcore = require('bitcore-lib');
const { sha256 } = require('../../lib/chain/hash');
const { RAW_BLOCKS, readFixture, networkOf, mainnet439Blocks } = require('./fixtures');

/**
 * The tests' one independent index: raw blocks read with bitcore-lib's own parser and script
 * classifier into plain Maps, never with addrindex's parser or stores. Every store, the CLI and
 * the API are checked against it. Its rules are the ones README.md and docs/FORMAT.md state, written
 * the obvious way: P2PK counts as its key's P2PKH script, OP_RETURN is not indexed, height 0 is
 * filed nowhere, a tx is one history entry per script hash with funded/spent flags. In the
 * script view (Electrum's) every output, P2PK included, counts toward sha256 of its own script.
 */

/**
 * @typedef {object} Reference
 * @property {Map<string, object>} summaries   by script hash hex (internal order): the Summary at the top
 * @property {Map<string, object[]>} history   entries {txNum, txid, height, funded, spent, received, sent, fundedCount, spentCount}
 * @property {Map<string, object[]>} utxos     unspent at the top: {txid, vout, value, height, txNum, sh}
 * @property {object[]} outputs                every indexed output: {txid, vout, value, height, txNum, sh, address,
 *   spentAt, spentTxid, spentVin} (spentAt null while unspent)
 * @property {string[]} txids                  by TxNum, display hex
 * @property {number[]} heightOf               by TxNum
 * @property {string[]} blockHashes            by height
 * @property {Map<string, string>} addressOf   script hash hex -> the address it is filed under (when it has one)
 * @property {object[]} blocks                 bitcore-lib blocks, by height
 * @property {Array<{txid: string, height: number, position: number, blockHash: string, time: number}>} txs  by TxNum
 */

/**
 * @param {Buffer[]} raws blocks from height 0
 * @param {number} [toHeight=raws.length - 1]
 * @param {{view?: 'address'|'script'}} [opts] which script hash an output counts toward
 * @returns {Reference}
 */
function referenceIndex(raws, toHeight = raws.length - 1, { view = 'address' } = {}) {
  const unspent = new Map();
  const outputs = [];
  const summaries = new Map();
  const history = new Map();
  const addressOf = new Map();
  const txids = [];
  const heightOf = [];
  const blockHashes = [];
  const blocks = [];
  const txs = [];
  const sum = (sh) => {
    if (!summaries.has(sh)) {
      summaries.set(sh, { balance: 0, received: 0, sent: 0, txCount: 0, fundedCount: 0, spentCount: 0, utxoCount: 0, firstHeight: null, lastHeight: null });
      history.set(sh, []);
    }
    return summaries.get(sh);
  };
  for (let h = 0; h <= toHeight; h++) {
    const block = bitcore.Block.fromBuffer(raws[h]);
    blocks.push(block);
    blockHashes.push(block.hash);
    block.transactions.forEach((tx, position) => {
      const txNum = txids.length;
      txids.push(tx.hash);
      heightOf.push(h);
      txs.push({ txid: tx.hash, height: h, position, blockHash: block.hash, time: block.header.time });
      const touched = new Map();
      const mark = (sh) => {
        if (!touched.has(sh)) touched.set(sh, { funded: false, spent: false, received: 0, sent: 0, fundedCount: 0, spentCount: 0 });
        return touched.get(sh);
      };
      if (!tx.isCoinbase()) {
        tx.inputs.forEach((input, vin) => {
          const key = `${input.prevTxId.toString('hex')}:${input.outputIndex}`;
          const o = unspent.get(key);
          if (!o) throw new Error(`reference: ${tx.hash} spends unknown ${key}`);
          unspent.delete(key);
          o.spentAt = h;
          o.spentTxid = tx.hash;
          o.spentVin = vin;
          const t = mark(o.sh);
          t.spent = true;
          t.sent += o.value;
          t.spentCount++;
        });
      }
      if (h > 0) {
        tx.outputs.forEach((out, vout) => {
          const sh = outputScripthash(out.script, view);
          if (sh === null) return;
          const address = outputAddress(out.script);
          if (address) addressOf.set(sh, address);
          const o = { sh, address, value: out.satoshis, height: h, txNum, vout, txid: tx.hash, position, spentAt: null };
          unspent.set(`${tx.hash}:${vout}`, o);
          outputs.push(o);
          const t = mark(sh);
          t.funded = true;
          t.received += out.satoshis;
          t.fundedCount++;
        });
      }
      for (const [sh, t] of touched) {
        const s = sum(sh);
        s.txCount++;
        s.received += t.received;
        s.sent += t.sent;
        s.fundedCount += t.fundedCount;
        s.spentCount += t.spentCount;
        if (s.firstHeight === null) s.firstHeight = h;
        s.lastHeight = h;
        history.get(sh).push({ txNum, txid: tx.hash, height: h, ...t });
      }
    });
  }
  for (const s of summaries.values()) {
    s.balance = s.received - s.sent;
    s.utxoCount = s.fundedCount - s.spentCount;
  }
  const utxos = new Map();
  for (const o of unspent.values()) {
    if (!utxos.has(o.sh)) utxos.set(o.sh, []);
    utxos.get(o.sh).push(o);
  }
  for (const list of utxos.values()) list.sort((a, b) => a.txNum - b.txNum || a.vout - b.vout);
  return { summaries, history, utxos, outputs, txids, heightOf, blockHashes, addressOf, blocks, txs };
}

/**
 * What the reference says about one address (or script hash hex) as of a height: its summary
 * (null when it has no history yet), history in chain order and unspent outputs.
 * @param {Reference} ref
 * @param {string} target an address, or a script hash hex (internal order)
 * @param {number} [tip] the last height counted (default: all)
 */
function addressAt(ref, target, tip = Infinity) {
  const sh = /^[0-9a-f]{64}$/.test(target) ? target : addressScripthash(target).toString('hex');
  const entries = (ref.history.get(sh) || []).filter((e) => e.height <= tip);
  const history = entries.map((e) => ({ txid: e.txid, height: e.height, funded: e.funded, spent: e.spent }));
  const add = (k) => entries.reduce((n, e) => n + e[k], 0);
  const [received, sent, fundedCount, spentCount] = ['received', 'sent', 'fundedCount', 'spentCount'].map(add);
  const utxos = ref.outputs
    .filter((o) => o.sh === sh && o.height <= tip && !(o.spentAt !== null && o.spentAt <= tip))
    .sort((a, b) => a.txNum - b.txNum || a.vout - b.vout)
    .map((o) => ({ txid: o.txid, vout: o.vout, value: o.value, height: o.height }));
  return {
    summary: history.length ? {
      balance: received - sent, received, sent, txCount: history.length, fundedCount, spentCount,
      utxoCount: fundedCount - spentCount, firstHeight: history[0].height, lastHeight: history[history.length - 1].height,
    } : null,
    history,
    utxos,
  };
}

/**
 * The addresses of the most active script hashes, most transactions first (in the script view,
 * where a P2PK script has no address, the script hashes themselves).
 * @param {Reference} ref
 * @param {number} n
 * @param {'address'|'script'} [view='address']
 */
function busiest(ref, n, view = 'address') {
  return [...ref.history.entries()]
    .filter(([sh]) => view === 'script' || ref.addressOf.has(sh))
    .map(([sh, list]) => [view === 'script' ? sh : ref.addressOf.get(sh), list.length])
    .sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))
    .slice(0, n)
    .map(([a]) => a);
}

const mainnet = new Map();

/**
 * The reference of the bundled first 439 mainnet blocks in one view, computed once per test
 * process, with its lookups bound to it. In the script view `at` takes script hashes, and
 * `p2pkOf(address)` names the P2PK script through which these blocks paid an address's key
 * (they pay almost only P2PK outputs: coinbases and the first payments).
 * @param {'address'|'script'} [view='address']
 */
function mainnetReference(view = 'address') {
  if (!mainnet.has(view)) {
    const ref = referenceIndex(mainnet439Blocks(), undefined, { view });
    mainnet.set(view, {
      ...ref,
      at: (target, tip) => addressAt(ref, target, tip),
      busiest: (n) => busiest(ref, n, view),
      addresses: () => [...new Set(ref.addressOf.values())],
      scripthashes: () => [...ref.summaries.keys()],
      p2pkOf: (address) => {
        const p2pkh = addressScripthash(address).toString('hex');
        const o = ref.outputs.find((x) => x.address === address && x.sh !== p2pkh);
        if (!o) throw new Error(`reference: no P2PK output pays ${address}`);
        return o.sh;
      },
    });
  }
  return mainnet.get(view);
}

/**
 * The index key of an output as bitcore-lib classifies it, or null for OP_RETURN.
 * @param {bitcore.Script} script
 * @param {'address'|'script'} [view='address'] 'script': sha256 of the script itself, P2PK too
 */
function outputScripthash(script, view = 'address') {
  const b = script.toBuffer();
  if (b.length > 0 && b[0] === bitcore.Opcode.OP_RETURN) return null;
  if (view === 'script') return sha256(b).toString('hex');
  // P2PK: <33-byte compressed or 65-byte uncompressed/hybrid key> OP_CHECKSIG; the key is not
  // checked to be on the curve (a script is P2PK by its shape, as Bitcoin Core's Solver says)
  const p2pk = b[b.length - 1] === bitcore.Opcode.OP_CHECKSIG && (
    (b.length === 35 && b[0] === 33 && (b[1] === 2 || b[1] === 3))
    || (b.length === 67 && b[0] === 65 && (b[1] === 4 || b[1] === 6 || b[1] === 7)));
  if (!p2pk) return sha256(b).toString('hex');
  const keyHash = bitcore.crypto.Hash.sha256ripemd160(b.subarray(1, b.length - 1));
  return sha256(Buffer.concat([Buffer.from([0x76, 0xa9, 0x14]), keyHash, Buffer.from([0x88, 0xac])])).toString('hex');
}

/**
 * The mainnet address an output is filed under (P2PK: its key's P2PKH address), through
 * bitcore-lib; null when it has none.
 * @param {bitcore.Script} script
 */
function outputAddress(script) {
  try {
    if (script.isPublicKeyOut()) return new bitcore.PublicKey(script.chunks[0].buf).toAddress('livenet').toString();
    const a = script.toAddress('livenet');
    return a ? a.toString() : null;
  } catch {
    return null; // a key not on the curve, a script bitcore-lib has no address for
  }
}

/** Electrum script hash (internal order) of an address, through bitcore-lib. */
function addressScripthash(address) {
  return sha256(bitcore.Script.fromAddress(address).toBuffer());
}

/**
 * @typedef {object} RefBlock
 * @property {string} name      fixture name (or "mainnet/439:<height>")
 * @property {string} network   addrindex network name
 * @property {Buffer} raw
 * @property {number|null} height known for the 439-block chain, null for the single raw blocks
 * @property {import('bitcore-lib').Block} ref bitcore-lib's decoding
 */

let blockCache = null;

/**
 * Every bundled block decoded by bitcore-lib, once per process: what the formatter and
 * parser tests compare against.
 * @returns {RefBlock[]} the ten raw blocks, then heights 0-438
 */
function referenceBlocks() {
  if (blockCache) return blockCache;
  blockCache = [];
  for (const rel of RAW_BLOCKS) {
    const raw = readFixture(rel);
    blockCache.push({ name: rel, network: networkOf(rel), raw, height: null, ref: bitcore.Block.fromBuffer(raw) });
  }
  mainnet439Blocks().forEach((raw, height) => {
    blockCache.push({ name: `mainnet/439:${height}`, network: 'main', raw, height, ref: bitcore.Block.fromBuffer(raw) });
  });
  return blockCache;
}

let outputCache = null;

/**
 * Every output of the 439-block chain by outpoint, as bitcore-lib reads it: the prevouts of
 * every input in that chain (they all spend outputs of earlier blocks).
 * @returns {Map<string, {value: number, script: Buffer}>} "txid:vout" (display hex) → output
 */
function chainOutputs() {
  if (outputCache) return outputCache;
  outputCache = new Map();
  for (const b of referenceBlocks()) {
    if (b.height === null) continue;
    for (const tx of b.ref.transactions) {
      tx.outputs.forEach((o, n) => outputCache.set(`${tx.hash}:${n}`, { value: o.satoshis, script: o.script.toBuffer() }));
    }
  }
  return outputCache;
}

module.exports = {
  referenceIndex, addressAt, busiest, mainnetReference, outputScripthash, outputAddress, addressScripthash, referenceBlocks, chainOutputs,
};
