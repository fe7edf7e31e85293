'use strict';

const bitcore = require('bitcore-lib');
const { sha256 } = require('../../lib/chain/hash');

/**
 * An independent index of raw blocks, computed with bitcore-lib's own parser and script
 * classifier and plain Maps: what the store conformance suite compares every backend with.
 * Its rules are the ones DESIGN.md and INTERFACES.md state, written the obvious way: P2PK
 * counts as its key's P2PKH script, OP_RETURN is not indexed, height 0 is filed nowhere, a
 * tx is one history entry per script hash with funded/spent flags.
 */

/**
 * @param {Buffer[]} raws blocks from height 0
 * @param {number} [toHeight=raws.length - 1]
 * @returns {{
 *   summaries: Map<string, object>, history: Map<string, object[]>, utxos: Map<string, object[]>,
 *   txids: string[], blockHashes: string[], heightOf: number[]
 * }} keyed by script hash hex (internal order); txids by TxNum (display hex)
 */
function referenceIndex(raws, toHeight = raws.length - 1) {
  const outs = new Map();
  const summaries = new Map();
  const history = new Map();
  const txids = [];
  const heightOf = [];
  const blockHashes = [];
  const sum = (sh) => {
    if (!summaries.has(sh)) {
      summaries.set(sh, { balance: 0, received: 0, sent: 0, txCount: 0, fundedCount: 0, spentCount: 0, utxoCount: 0, firstHeight: null, lastHeight: null });
      history.set(sh, []);
    }
    return summaries.get(sh);
  };
  for (let h = 0; h <= toHeight; h++) {
    const block = bitcore.Block.fromBuffer(raws[h]);
    blockHashes.push(block.hash);
    block.transactions.forEach((tx, position) => {
      const txNum = txids.length;
      txids.push(tx.hash);
      heightOf.push(h);
      const touched = new Map();
      const mark = (sh, k) => {
        if (!touched.has(sh)) touched.set(sh, { funded: false, spent: false });
        touched.get(sh)[k] = true;
      };
      if (!tx.isCoinbase()) {
        for (const input of tx.inputs) {
          const key = `${input.prevTxId.toString('hex')}:${input.outputIndex}`;
          const o = outs.get(key);
          if (!o) throw new Error(`reference: ${tx.hash} spends unknown ${key}`);
          outs.delete(key);
          const s = sum(o.sh);
          s.sent += o.value;
          s.spentCount++;
          mark(o.sh, 'spent');
        }
      }
      if (h > 0) {
        tx.outputs.forEach((out, vout) => {
          const sh = outputScripthash(out.script);
          if (sh === null) return;
          outs.set(`${tx.hash}:${vout}`, { sh, value: out.satoshis, height: h, txNum, vout, txid: tx.hash, position });
          const s = sum(sh);
          s.received += out.satoshis;
          s.fundedCount++;
          mark(sh, 'funded');
        });
      }
      for (const [sh, f] of touched) {
        const s = sum(sh);
        s.txCount++;
        if (s.firstHeight === null) s.firstHeight = h;
        s.lastHeight = h;
        history.get(sh).push({ txNum, txid: tx.hash, height: h, funded: f.funded, spent: f.spent });
      }
    });
  }
  for (const s of summaries.values()) {
    s.balance = s.received - s.sent;
    s.utxoCount = s.fundedCount - s.spentCount;
  }
  const utxos = new Map();
  for (const o of outs.values()) {
    if (!utxos.has(o.sh)) utxos.set(o.sh, []);
    utxos.get(o.sh).push(o);
  }
  for (const list of utxos.values()) list.sort((a, b) => a.txNum - b.txNum || a.vout - b.vout);
  return { summaries, history, utxos, txids, blockHashes, heightOf };
}

/**
 * The index key of an output as bitcore-lib classifies it, or null for OP_RETURN.
 * @param {bitcore.Script} script
 */
function outputScripthash(script) {
  const b = script.toBuffer();
  if (b.length > 0 && b[0] === bitcore.Opcode.OP_RETURN) return null;
  // P2PK: <33-byte compressed or 65-byte uncompressed/hybrid key> OP_CHECKSIG; the key is not
  // checked to be on the curve (a script is P2PK by its shape, as Bitcoin Core's Solver says)
  const p2pk = b[b.length - 1] === bitcore.Opcode.OP_CHECKSIG && (
    (b.length === 35 && b[0] === 33 && (b[1] === 2 || b[1] === 3))
    || (b.length === 67 && b[0] === 65 && (b[1] === 4 || b[1] === 6 || b[1] === 7)));
  if (!p2pk) return sha256(b).toString('hex');
  const keyHash = bitcore.crypto.Hash.sha256ripemd160(b.subarray(1, b.length - 1));
  return sha256(Buffer.concat([Buffer.from([0x76, 0xa9, 0x14]), keyHash, Buffer.from([0x88, 0xac])])).toString('hex');
}

/** Electrum script hash (internal order) of an address, through bitcore-lib. */
function addressScripthash(address) {
  return sha256(bitcore.Script.fromAddress(address).toBuffer());
}

module.exports = { referenceIndex, outputScripthash, addressScripthash };
