'use strict';

const assert = require('node:assert/strict');
const bitcore = require('bitcore-lib');

/**
 * insight-api 0.4.3's JSON of a transaction (through addrindex's bitcoind service) beside
 * addrindex's own /insight-api route's, in what both must agree on. Their differences, by
 * design: the service hands out bitcore-node's view of a transaction (its non-witness bytes,
 * so its `size`, checked apart; no address for segwit scripts, which insight 0.4.3 cannot
 * read; an empty scriptSig's asm null), an unconfirmed one's `time` is insight's own clock
 * (checked to be now-ish), and an output spent in the mempool has `spentHeight` -1 (the patched
 * node's mempool spent index; addrindex's route: null). Both name an input spending a P2PK
 * output by its key's P2PKH address, the address the index counts it for.
 * @param {object} theirs insight-api's JSON
 * @param {object} ours addrindex's route's
 * @param {object} opts
 * @param {number} opts.since seconds: an unconfirmed transaction's `time` is at least this
 * @param {(txid: string, vout: number) => Buffer} opts.scriptOf the script an input spends
 * @param {string} [opts.network='regtest']
 */
function assertSameTx(theirs, ours, { since, scriptOf, network = 'regtest' }) {
  const base58 = (a) => (typeof a === 'string' && /^[123mn]/.test(a) ? a : null);
  const comparable = (t, service) => ({
    ...t,
    time: t.confirmations === 0 ? undefined : t.time,
    size: undefined,
    vin: t.isCoinBase ? t.vin : t.vin.map((v) => {
      const key = p2pkKey(scriptOf(v.txid, v.vout));
      // both name a P2PK output's spender by its key's address: checked against bitcore-lib's
      const addr = base58(v.addr);
      if (key) assert.equal(addr, new bitcore.Address(bitcore.crypto.Hash.sha256ripemd160(key), network, 'pubkeyhash').toString(), `${t.txid} spends a P2PK output`);
      return { ...v, addr, scriptSig: { hex: v.scriptSig.hex, asm: v.scriptSig.hex ? v.scriptSig.asm : null } };
    }),
    vout: t.vout.map((o) => {
      const a = base58(o.scriptPubKey.addresses && o.scriptPubKey.addresses[0]);
      return {
        ...o,
        spentHeight: !service && o.spentTxId && o.spentHeight === null ? -1 : o.spentHeight,
        scriptPubKey: { hex: o.scriptPubKey.hex, asm: o.scriptPubKey.asm, addresses: a ? [a] : undefined, type: a ? o.scriptPubKey.type : undefined },
      };
    }),
  });
  if (theirs.confirmations === 0) assert.ok(theirs.time >= since && theirs.time <= Math.ceil(Date.now() / 1000), `${theirs.txid} time ${theirs.time}`);
  assert.deepEqual(comparable(theirs, true), comparable(ours, false), theirs.txid);
}

/** A P2PK script's key, by its shape (as Bitcoin Core's Solver: the key need not be on the curve), else null. */
function p2pkKey(b) {
  const n = b[0];
  return (n === 33 || n === 65) && b.length === n + 2 && b[n + 1] === 0xac ? b.subarray(1, n + 1) : null;
}

module.exports = { assertSameTx };
