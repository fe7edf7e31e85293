'use strict';

const bitcore = require('bitcore-lib');

/**
 * A small regtest wallet for the node tests, on bitcore-lib: keys derived from seeds (so
 * every run uses the same addresses), coins it can spend, and transactions paying every
 * output kind addrindex indexes, signed for real (btcd verifies every script).
 */

const NET = bitcore.Networks.get('regtest');
const { Script, Transaction, Address, PrivateKey } = bitcore;

/** Output kinds a coin can have, and what spending it needs. */
const KINDS = ['p2pkh', 'p2sh', 'p2wpkh', 'p2wsh', 'p2tr', 'p2pk', 'multisig', 'nulldata'];

/**
 * @typedef {object} Coin
 * @property {string} txId
 * @property {number} outputIndex
 * @property {number} satoshis
 * @property {bitcore.Script} script
 * @property {string} kind
 * @property {string} [address]   its address (null for p2pk's key-hash view, bare multisig)
 * @property {{keys: bitcore.PrivateKey[], pubkeys?: bitcore.PublicKey[], threshold?: number}} signer
 */

class Wallet {
  /** @param {string} seed every key is a function of it and a label */
  constructor(seed) {
    this.seed = seed;
    this.keys = new Map();
  }

  /**
   * The key for `label`: sha256 of "seed/label" as the secret.
   * @param {string} label
   * @returns {bitcore.PrivateKey}
   */
  key(label) {
    let k = this.keys.get(label);
    if (!k) {
      k = new PrivateKey(bitcore.crypto.Hash.sha256(Buffer.from(`${this.seed}/${label}`)).toString('hex'), NET);
      this.keys.set(label, k);
    }
    return k;
  }

  /** The regtest P2PKH address of `label`'s key (btcd's --miningaddr takes these). */
  p2pkh(label) {
    return this.key(label).toAddress(NET).toString();
  }

  /**
   * An output of `kind` owned by keys of `label` (multisig kinds: label/0, label/1, label/2).
   * @param {string} kind one of KINDS
   * @param {string} label
   * @returns {{script: bitcore.Script, address: string|null, signer: Coin['signer']}}
   */
  output(kind, label) {
    const k = this.key(label);
    const many = [0, 1, 2].map((i) => this.key(`${label}/${i}`));
    const pubs = many.map((x) => x.publicKey);
    switch (kind) {
      case 'p2pkh': {
        const a = k.toAddress(NET);
        return { script: Script.fromAddress(a), address: a.toString(), signer: { keys: [k] } };
      }
      case 'p2wpkh': {
        const a = new Address(k.publicKey, NET, 'witnesspubkeyhash');
        return { script: Script.fromAddress(a), address: a.toString(), signer: { keys: [k] } };
      }
      case 'p2tr': {
        const a = new Address(k.publicKey, NET, 'taproot');
        return { script: Script.fromAddress(a), address: a.toString(), signer: { keys: [k] } };
      }
      case 'p2sh': { // 2-of-3 multisig behind P2SH
        const a = Address.createMultisig(pubs, 2, NET);
        return { script: Script.fromAddress(a), address: a.toString(), signer: { keys: many.slice(0, 2), pubkeys: pubs, threshold: 2 } };
      }
      case 'p2wsh': { // 1-of-2 multisig behind P2WSH
        const a = Address.createMultisig(pubs.slice(0, 2), 1, NET, false, 'witnessscripthash');
        return { script: Script.fromAddress(a), address: a.toString(), signer: { keys: many.slice(0, 1), pubkeys: pubs.slice(0, 2), threshold: 1 } };
      }
      case 'p2pk': // indexed under the key's P2PKH address
        return { script: Script.buildPublicKeyOut(k.publicKey), address: k.toAddress(NET).toString(), signer: { keys: [k] } };
      case 'multisig': // bare 1-of-2: reachable by script hash only
        return { script: Script.buildMultisigOut(pubs.slice(0, 2), 1), address: null, signer: { keys: many.slice(0, 1), pubkeys: pubs.slice(0, 2), threshold: 1 } };
      case 'nulldata':
        return { script: Script.buildDataOut(Buffer.from(`addrindex ${label}`)), address: null, signer: null };
      default:
        throw new Error(`unknown output kind ${kind}`);
    }
  }

  /**
   * The coinbase output of a raw block mined to `label`'s P2PKH address.
   * @param {Buffer} raw
   * @param {string} label
   * @returns {Coin}
   */
  coinbaseCoin(raw, label) {
    const tx = bitcore.Block.fromBuffer(raw).transactions[0];
    const out = this.output('p2pkh', label);
    const vout = tx.outputs.findIndex((o) => o.script.toBuffer().equals(out.script.toBuffer()));
    if (vout < 0) throw new Error(`the coinbase of this block does not pay ${out.address}`);
    return { txId: tx.hash, outputIndex: vout, satoshis: tx.outputs[vout].satoshis, script: out.script, kind: 'p2pkh', address: out.address, signer: out.signer };
  }

  /**
   * A signed transaction spending `coins` to `outputs`; whatever is left after `fee` goes to
   * the last output that has no value.
   * @param {Coin[]} coins
   * @param {Array<{kind: string, label: string, satoshis?: number}>} outputs
   * @param {{fee?: number, rbf?: boolean}} [opts]
   * @returns {{tx: bitcore.Transaction, hex: string, txid: string, coins: Coin[]}} coins: its spendable outputs
   */
  pay(coins, outputs, { fee = 2000, rbf = false } = {}) {
    const tx = new Transaction();
    for (const c of coins) {
      const utxo = { txId: c.txId, outputIndex: c.outputIndex, satoshis: c.satoshis, script: c.script };
      if (c.signer.threshold) tx.from(utxo, c.signer.pubkeys, c.signer.threshold);
      else tx.from(utxo);
    }
    const total = coins.reduce((s, c) => s + c.satoshis, 0);
    const fixed = outputs.reduce((s, o) => s + (o.satoshis || 0), 0);
    const rest = total - fixed - fee;
    const built = outputs.map((o) => ({ ...this.output(o.kind, o.label), kind: o.kind }));
    const restAt = outputs.map((o) => o.satoshis === undefined && o.kind !== 'nulldata').lastIndexOf(true);
    if (restAt >= 0 && rest < 1000) throw new Error(`the coins (${total} sat) do not cover the outputs and the fee`);
    built.forEach((o, i) => {
      const sats = o.kind === 'nulldata' ? 0 : i === restAt ? rest : outputs[i].satoshis;
      tx.addOutput(new Transaction.Output({ script: o.script, satoshis: sats }));
    });
    if (rbf) tx.enableRBF();
    // input by input with its own keys: Transaction#sign tries every input with each key, and
    // a key in two multisig scripts would sign one of them past its threshold
    coins.forEach((c, i) => {
      for (const k of c.signer.keys) {
        if (tx.inputs[i].isFullySigned()) break;
        for (const sig of tx.inputs[i].getSignatures(tx, k, i)) tx.applySignature(sig);
      }
    });
    if (!tx.isFullySigned()) throw new Error('bitcore-lib could not sign every input');
    const txid = tx.hash;
    const made = [];
    tx.outputs.forEach((out, i) => {
      if (built[i].kind === 'nulldata') return;
      made.push({ txId: txid, outputIndex: i, satoshis: out.satoshis, script: built[i].script, kind: built[i].kind, address: built[i].address, signer: built[i].signer, label: outputs[i].label });
    });
    return { tx, hex: tx.serialize({ disableAll: true }), txid, coins: made };
  }
}

/**
 * bitcore-lib's view of an output script's kind (an independent classifier, to check that a
 * chain really holds every kind).
 * @param {bitcore.Script} s
 * @returns {string}
 */
function kindOf(s) {
  if (s.isPublicKeyHashOut()) return 'p2pkh';
  if (s.isScriptHashOut()) return 'p2sh';
  if (s.isWitnessPublicKeyHashOut()) return 'p2wpkh';
  if (s.isWitnessScriptHashOut()) return 'p2wsh';
  if (s.isTaproot()) return 'p2tr';
  if (s.isPublicKeyOut()) return 'p2pk';
  if (s.isMultisigOut()) return 'multisig';
  if (s.isDataOut()) return 'nulldata';
  return 'other';
}

module.exports = { Wallet, KINDS, kindOf, NET, bitcore };
