'use strict';

const { P } = require('./layout');
const { StoreError } = require('../errors');
const W = require('../core/wallets');

/**
 * The wallets of bitcore-node v8's API in the key-value schema (LMDB and LevelDB), table `W`
 * (docs/FORMAT.md, "Wallets"). Not chain data: digest(), verify() and reorgs never touch
 * these rows; they are written by one process (`serve`'s primary, lib/cluster/wallet-writes.js)
 * while `sync` writes the chain, each write a commit guarded by the wallet's own row.
 *
 *   W 00 pubKey (utf8)               wallet: version byte 1, then JSON {id, pubKey, name,
 *                                    path, singleAddress, chain, network, addresses}
 *   W 01 id:12 seq:u32               the wallet's seq-th address: scripthash:32, address (utf8)
 *   W 02 id:12 scripthash:32         seq:u32 (is this script hash in the wallet, and where)
 *   W 03 scripthash:32 id:12         pubKey (utf8): the wallets holding a script hash (the
 *                                    live feed's wallet rooms)
 *
 * Addresses keep the order they were added in (seq), as bitcore-node lists them.
 */

const SUB = { wallet: 0, address: 1, member: 2, holder: 3 };
const RECORD_VERSION = 1;
/** A wallet written by another writer between our read and our commit: read and try again. */
const MAX_ATTEMPTS = 8;

const walletKey = (pubKey) => Buffer.concat([Buffer.from([P.wallet, SUB.wallet]), Buffer.from(pubKey, 'utf8')]);

function addressKey(id, seq) {
  const k = Buffer.allocUnsafe(2 + 12 + 4);
  k[0] = P.wallet;
  k[1] = SUB.address;
  id.copy(k, 2);
  k.writeUInt32BE(seq, 14);
  return k;
}

function memberKey(id, scripthash) {
  return Buffer.concat([Buffer.from([P.wallet, SUB.member]), id, scripthash]);
}

function holderKey(scripthash, id) {
  return Buffer.concat([Buffer.from([P.wallet, SUB.holder]), scripthash, id]);
}

function encodeWallet(w) {
  return Buffer.concat([Buffer.from([RECORD_VERSION]), Buffer.from(JSON.stringify(w), 'utf8')]);
}

/** @returns {import('../core/wallets').Wallet} */
function decodeWallet(raw, key) {
  if (!raw || raw[0] !== RECORD_VERSION) throw new StoreError('ERR_CORRUPT', `wallet row ${key.toString('hex')} has an unknown format`);
  try {
    return JSON.parse(raw.toString('utf8', 1));
  } catch {
    throw new StoreError('ERR_CORRUPT', `wallet row ${key.toString('hex')} is not JSON`);
  }
}

function u32(n) {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(n, 0);
  return b;
}

/**
 * @param {object} kv kvstore.js's key-value surface (latest committed state)
 * @param {string} pubKey
 * @returns {Promise<import('../core/wallets').Wallet|null>}
 */
async function readWallet(kv, pubKey) {
  if (typeof pubKey !== 'string' || pubKey.length === 0 || pubKey.length > W.MAX_FIELD) return null;
  const key = walletKey(pubKey);
  const raw = await kv.get(key);
  return raw ? decodeWallet(raw, key) : null;
}

/**
 * Creates a wallet unless one with this pubKey exists.
 * @param {object} kv
 * @param {object} fields see lib/core/wallets.js walletFields
 * @returns {Promise<{wallet: import('../core/wallets').Wallet, created: boolean}>}
 */
async function createWallet(kv, fields) {
  const f = W.walletFields(fields);
  const key = walletKey(f.pubKey);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const raw = await kv.get(key);
    if (raw) return { wallet: decodeWallet(raw, key), created: false };
    const wallet = { id: W.newWalletId(f.pubKey), ...f, addresses: 0 };
    if (await kv.write({ keys: [key], values: [encodeWallet(wallet)] }, { key, value: undefined })) return { wallet, created: true };
  }
  throw new StoreError('ERR_CONCURRENT_WRITE', `wallet ${f.pubKey} kept changing while it was created`);
}

/**
 * Adds addresses to a wallet: those it holds already (by script hash) are left as they are.
 * @param {object} kv
 * @param {string} pubKey
 * @param {import('../core/wallets').WalletAddress[]} entries
 * @returns {Promise<{wallet: import('../core/wallets').Wallet, added: number}|null>} null: no such wallet
 */
async function addAddresses(kv, pubKey, entries) {
  const list = W.walletAddresses(entries);
  const key = walletKey(pubKey);
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const raw = await kv.get(key);
    if (!raw) return null;
    const wallet = decodeWallet(raw, key);
    const id = Buffer.from(wallet.id, 'hex');
    const present = list.length ? await kv.getMany(list.map((e) => memberKey(id, e.scripthash))) : [];
    const fresh = list.filter((e, i) => !present[i]);
    if (fresh.length === 0) return { wallet, added: 0 };
    const keys = [];
    const values = [];
    const owner = Buffer.from(wallet.pubKey, 'utf8');
    fresh.forEach((e, i) => {
      const seq = wallet.addresses + i;
      keys.push(addressKey(id, seq), memberKey(id, e.scripthash), holderKey(e.scripthash, id));
      values.push(Buffer.concat([e.scripthash, Buffer.from(e.address, 'utf8')]), u32(seq), owner);
    });
    const updated = { ...wallet, addresses: wallet.addresses + fresh.length };
    keys.push(key);
    values.push(encodeWallet(updated));
    if (await kv.write({ keys, values }, { key, value: raw })) return { wallet: updated, added: fresh.length };
  }
  throw new StoreError('ERR_CONCURRENT_WRITE', `wallet ${pubKey} kept changing while addresses were added`);
}

/**
 * A wallet's addresses in the order they were added, from position `from`.
 * @param {object} kv
 * @param {string} walletId
 * @param {{from?: number, limit?: number}} [opts]
 * @returns {Promise<{addresses: import('../core/wallets').WalletAddress[], next: number|null}>}
 */
async function listAddresses(kv, walletId, opts) {
  const id = W.walletIdBytes(walletId);
  const { from, limit } = W.addressPage(opts);
  const gte = addressKey(id, from);
  const lt = Buffer.concat([Buffer.from([P.wallet, SUB.address]), id, Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff])]);
  const addresses = [];
  let next = null;
  for await (const { key, value } of kv.range({ gte, lt, limit: limit === Infinity ? undefined : limit + 1 })) {
    if (addresses.length === limit) {
      next = key.readUInt32BE(14);
      break;
    }
    if (value.length < 32) throw new StoreError('ERR_CORRUPT', `wallet address row ${key.toString('hex')} is truncated`);
    addresses.push({ address: value.toString('utf8', 32), scripthash: Buffer.from(value.subarray(0, 32)) });
  }
  return { addresses, next };
}

/**
 * The wallets holding each script hash.
 * @param {object} kv
 * @param {Buffer[]} scripthashes
 * @returns {Promise<Array<Array<{id: string, pubKey: string}>>>} aligned with scripthashes
 */
async function walletsOf(kv, scripthashes) {
  return Promise.all(scripthashes.map(async (sh) => {
    const gte = Buffer.concat([Buffer.from([P.wallet, SUB.holder]), sh]);
    const lt = Buffer.concat([gte, Buffer.alloc(12, 0xff), Buffer.from([0xff])]);
    const out = [];
    for await (const { key, value } of kv.range({ gte, lt })) {
      out.push({ id: key.toString('hex', 2 + 32, 2 + 32 + 12), pubKey: value.toString('utf8') });
    }
    return out;
  }));
}

module.exports = { readWallet, createWallet, addAddresses, listAddresses, walletsOf };
