'use strict';

const { createHash } = require('node:crypto');
const { sha256d } = require('../../lib/chain/hash');
const { mainnet439Blocks } = require('../helpers/fixtures');
const { parseColumns } = require('../../lib/chain/columns');
const { buildDeltas } = require('../../lib/sync/delta');
const { ChainGenerator } = require('../../tools/generator');
const { ADDR_TYPE_CODE } = require('../../lib/chain/script');

/**
 * Chains for the store conformance suite, parsed once per process: the first 439 mainnet
 * blocks, a generated regtest chain (segwit and taproot outputs, address reuse, spends within
 * a block), and hand-made blocks for what neither has (BIP30 duplicate coinbases).
 */

let mainnet = null;

/** @returns {{raws: Buffer[], blocks: Array<{height: number, cols: object, raw: Buffer}>}} */
function mainnetChain() {
  if (!mainnet) {
    const raws = mainnet439Blocks();
    mainnet = { raws, blocks: raws.map((raw, height) => ({ height, cols: parseColumns(raw), raw })) };
  }
  return mainnet;
}

const generated = new Map();

/**
 * A generated regtest chain: ~60 txs per block, coinbases spendable at once.
 * @param {{seed?: number, blocks?: number, txsPerBlock?: number}} [opts]
 * @returns {{raws: Buffer[], blocks: Array<{height: number, cols: object, raw: Buffer}>, hashes: string[]}}
 */
function generatedChain({ seed = 11, blocks = 60, txsPerBlock = 60 } = {}) {
  const id = `${seed}/${blocks}/${txsPerBlock}`;
  if (!generated.has(id)) {
    const g = new ChainGenerator({ seed, network: 'regtest', txsPerBlock, coinbaseMaturity: 1 });
    const raws = [];
    const hashes = [];
    for (let h = 0; h < blocks; h++) {
      const b = g.nextBlock();
      raws.push(b.raw);
      hashes.push(b.hash);
    }
    generated.set(id, { raws, hashes, blocks: raws.map((raw, height) => ({ height, cols: parseColumns(raw), raw })) });
  }
  return generated.get(id);
}

/**
 * Applies blocks[from..to] the way the sync does (deltas resolved against the store), in
 * batches whose sizes cycle through `sizes`.
 * @param {import('../../lib/stores/abstract').AbstractStore} store
 * @param {Array<{height: number, cols: object}>} blocks
 * @param {number} from
 * @param {number} to inclusive
 * @param {number[]} [sizes=[25]]
 * @param {{chainHeight?: number}} [opts] given to every apply
 */
async function syncBlocks(store, blocks, from, to, sizes = [25], opts = undefined) {
  let k = 0;
  for (let h = from; h <= to;) {
    const n = Math.min(sizes[k++ % sizes.length], to - h + 1);
    const tip = await store.getTip();
    const deltas = await buildDeltas(blocks.slice(h, h + n), store, tip ? tip.nextTxNum : 0);
    await store.apply(deltas, opts);
    h += n;
  }
}

/**
 * Hand-made blocks: each tx is {txid (a label), inputs: [[label, vout]], outputs: [[sh label | null, value]]}.
 * Labels become 32-byte ids (sha256 of the label), so two txs with one label share a txid.
 * @param {Array<Array<object>>} spec one array of txs per block, from height 0
 * @returns {{blocks: Array<{height: number, cols: object}>, id: (label: string) => Buffer}}
 */
function handMadeChain(spec) {
  const id = (label) => createHash('sha256').update(label).digest();
  const hex = (buf) => Buffer.from(buf).reverse().toString('hex');
  let prev = '00'.repeat(32);
  const blocks = spec.map((txs, height) => {
    // a header that hashes to the block's hash (its merkle root is not the txids': no
    // store checks that), and sizes and offsets as if every tx took 100 bytes
    const header = Buffer.alloc(80);
    header.writeInt32LE(1, 0);
    Buffer.from(prev, 'hex').reverse().copy(header, 4);
    id(`merkle ${height}`).copy(header, 36);
    header.writeUInt32LE(1231006505 + 600 * height, 68);
    header.writeUInt32LE(0x207fffff, 72);
    const hash = hex(sha256d(header));
    const I = txs.reduce((s, t) => s + t.inputs.length, 0);
    const O = txs.reduce((s, t) => s + t.outputs.length, 0);
    const size = 81 + 100 * txs.length;
    const cols = {
      hash, prev, time: 1231006505 + 600 * height, header, size, weight: 4 * size, txCount: txs.length,
      txOffsets: Uint32Array.from({ length: txs.length + 1 }, (_, t) => 81 + 100 * t),
      txids: Buffer.alloc(32 * txs.length), inStart: new Uint32Array(txs.length + 1), outStart: new Uint32Array(txs.length + 1),
      prevouts: Buffer.alloc(36 * I), values: new Float64Array(O), idType: new Uint8Array(O), idLen: new Uint8Array(O),
      idHash: Buffer.alloc(32 * O), scripthashes: Buffer.alloc(32 * O), p2pkOuts: new Uint32Array(0), p2pkShs: Buffer.alloc(0),
    };
    let i = 0;
    let o = 0;
    txs.forEach((tx, t) => {
      id(tx.txid).copy(cols.txids, 32 * t);
      cols.inStart[t] = i;
      cols.outStart[t] = o;
      for (const [label, vout] of tx.inputs) {
        id(label).copy(cols.prevouts, 36 * i);
        cols.prevouts.writeUInt32LE(vout, 36 * i + 32);
        i++;
      }
      for (const [sh, value] of tx.outputs) {
        cols.values[o] = value;
        if (sh !== null) {
          cols.idType[o] = ADDR_TYPE_CODE.script;
          id(sh).copy(cols.scripthashes, 32 * o);
        }
        o++;
      }
    });
    cols.inStart[txs.length] = i;
    cols.outStart[txs.length] = o;
    prev = hash;
    return { height, cols };
  });
  return { blocks, id };
}

let p2pk = null;

/**
 * A regtest chain whose keys are paid both as P2PK and as P2PKH (the script view's hard cases),
 * built and signed with bitcore-lib (test/helpers/wallet.js), so that the bitcore-lib reference
 * reads it too:
 * - 'miner' is paid by coinbases as P2PK (as on early mainnet) and, in one coinbase, as P2PK and
 *   P2PKH at once; tx `a` spends its first coinbase with change to both of its scripts;
 * - 'k1' gets one P2PK and one P2PKH output in one tx (a "both" entry that funds), later spent
 *   together (one that spends);
 * - 'k2' gets 20 P2PK outputs (its own account's UTXOs in rows), then 70 transactions each
 *   spending its P2PK output into P2PK and P2PKH ones (more than one sealed page of history,
 *   in both accounts), then its P2PKH outputs into a P2PK one, then all its P2PK outputs in
 *   one transaction (its UTXO set inline again);
 * - 'k4' is paid as P2PKH only, 'k5' as P2PK only.
 * @returns {{raws: Buffer[], blocks: Array<{height: number, cols: object, raw: Buffer}>}}
 */
function p2pkChain() {
  if (p2pk) return p2pk;
  const { Wallet, bitcore } = require('../helpers/wallet');
  const w = new Wallet('addrindex-p2pk-chain');
  const COIN = 1e8;
  const coinOf = (tx, vout, kind, label) => ({
    txId: tx.hash, outputIndex: vout, satoshis: tx.outputs[vout].satoshis, script: tx.outputs[vout].script, kind, signer: w.output(kind, label).signer, label,
  });
  const coinbase = (height, outs) => {
    const tx = new bitcore.Transaction();
    tx.uncheckedAddInput(new bitcore.Transaction.Input({ prevTxId: Buffer.alloc(32), outputIndex: 0xffffffff, script: bitcore.Script.fromBuffer(Buffer.from([2, height & 0xff, height >> 8])) }));
    for (const o of outs) tx.addOutput(new bitcore.Transaction.Output({ script: w.output(o.kind, o.label).script, satoshis: o.satoshis }));
    return tx;
  };
  const pay = (coins, outs) => w.pay(coins, outs, { fee: 1000 });
  const txs = [];
  txs.push([coinbase(0, [{ kind: 'p2pkh', label: 'genesis', satoshis: 50 * COIN }])]);
  const cb1 = coinbase(1, [{ kind: 'p2pk', label: 'miner', satoshis: 50 * COIN }]);
  txs.push([cb1]);
  const cb2 = coinbase(2, [{ kind: 'p2pk', label: 'miner', satoshis: 50 * COIN }]);
  const a = pay([coinOf(cb1, 0, 'p2pk', 'miner')], [
    { kind: 'p2pkh', label: 'miner', satoshis: 10 * COIN }, { kind: 'p2pk', label: 'k1', satoshis: 5 * COIN }, { kind: 'p2pkh', label: 'k1', satoshis: 5 * COIN },
    ...Array.from({ length: 20 }, () => ({ kind: 'p2pk', label: 'k2', satoshis: COIN / 10 })), { kind: 'p2pk', label: 'miner' },
  ]);
  txs.push([cb2, a.tx]);
  const k2 = a.coins.filter((c) => c.label === 'k2');
  const k2Key = [];
  const chain = (n) => {
    const list = [];
    let c = k2.shift();
    for (let i = 0; i < n; i++) {
      const t = pay([c], [{ kind: 'p2pk', label: 'k2' }, { kind: 'p2pkh', label: 'k2', satoshis: 20000 }]);
      list.push(t.tx);
      k2Key.push(t.coins[1]);
      c = t.coins[0];
    }
    k2.push(c);
    return list;
  };
  txs.push([coinbase(3, [{ kind: 'p2pk', label: 'miner', satoshis: 25 * COIN }, { kind: 'p2pkh', label: 'miner', satoshis: 25 * COIN }]), ...chain(30)]);
  txs.push([coinbase(4, [{ kind: 'p2pk', label: 'miner', satoshis: 50 * COIN }]), ...chain(40)]);
  const b = pay([a.coins.find((c) => c.label === 'k1' && c.kind === 'p2pk'), a.coins.find((c) => c.label === 'k1' && c.kind === 'p2pkh')], [{ kind: 'p2wpkh', label: 'k3' }]);
  const c = pay([a.coins.find((x) => x.label === 'miner' && x.kind === 'p2pkh')], [{ kind: 'p2pkh', label: 'k4' }]);
  txs.push([coinbase(5, [{ kind: 'p2pk', label: 'miner', satoshis: 50 * COIN }]), b.tx, c.tx]);
  const d = pay(k2Key.splice(0, 10), [{ kind: 'p2pk', label: 'k2' }]);
  k2.push(d.coins[0]);
  txs.push([coinbase(6, [{ kind: 'p2pk', label: 'k5', satoshis: 50 * COIN }]), d.tx]);
  const e = pay(k2.splice(0), [{ kind: 'p2pkh', label: 'k2' }]);
  txs.push([coinbase(7, [{ kind: 'p2pkh', label: 'miner', satoshis: 50 * COIN }]), e.tx]);
  txs.push([coinbase(8, [{ kind: 'p2pk', label: 'miner', satoshis: 50 * COIN }])]);

  let prev = Buffer.alloc(32);
  const raws = txs.map((list, height) => {
    const bodies = list.map((t) => t.toBuffer());
    let level = list.map((t) => Buffer.from(t.hash, 'hex').reverse());
    while (level.length > 1) {
      const next = [];
      for (let i = 0; i < level.length; i += 2) next.push(sha256d(Buffer.concat([level[i], level[i + 1] || level[i]])));
      level = next;
    }
    const header = Buffer.alloc(80);
    header.writeInt32LE(1, 0);
    prev.copy(header, 4);
    level[0].copy(header, 36);
    header.writeUInt32LE(1296688602 + 600 * height, 68);
    header.writeUInt32LE(0x207fffff, 72);
    prev = sha256d(header);
    return Buffer.concat([header, Buffer.from([bodies.length]), ...bodies]);
  });
  p2pk = { raws, blocks: raws.map((raw, height) => ({ height, cols: parseColumns(raw), raw })) };
  return p2pk;
}

module.exports = { mainnetChain, generatedChain, syncBlocks, handMadeChain, p2pkChain };
