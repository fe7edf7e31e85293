'use strict';

const crypto = require('node:crypto');
const { UsageError } = require('../errors');

/**
 * Wallets of bitcore-node v8's API (lib/api/routes/bitcore8.js) as every store keeps them: a
 * wallet is a name, its owner's public key (the key its requests are signed with) and a set of
 * addresses, each kept with its script hash so that balances, unspent outputs and histories
 * are read from the address rows the index already keeps. Not chain data: no wallet row is in
 * digest() or verify(), and a reorg leaves them alone.
 *
 * The checks here are the contract's, run by every backend before it writes, so a bad wallet
 * is the same UsageError whichever store is asked.
 */

/** bitcore-node refuses strings of 255 characters or more (its `isTooLong`); so do we. */
const MAX_FIELD = 254;

/**
 * @typedef {object} Wallet
 * @property {string} id        24 hex digits, what bitcore shows as the wallet's `_id`
 * @property {string} pubKey    as the client registered it (requests are verified against it)
 * @property {string} name
 * @property {string|null} path
 * @property {boolean|null} singleAddress
 * @property {string} chain     'BTC'
 * @property {string} network   bitcore's name of the network ('mainnet', 'regtest', …)
 * @property {number} addresses how many addresses it holds
 */

/**
 * @typedef {object} WalletAddress
 * @property {string} address   as the client gave it, checked against the network
 * @property {Buffer} scripthash 32 bytes, internal order (sha256 of its script)
 */

/**
 * The fields of a new wallet, checked.
 * @param {object} w
 * @returns {{pubKey: string, name: string, path: string|null, singleAddress: boolean|null, chain: string, network: string}}
 * @throws {UsageError} ERR_WALLET_FIELD
 */
function walletFields(w) {
  if (!w || typeof w !== 'object') throw new UsageError('ERR_WALLET_FIELD', 'a wallet must be an object');
  const str = (v, name, optional) => {
    if (v === undefined || v === null) {
      if (optional) return null;
      throw new UsageError('ERR_WALLET_FIELD', `a wallet needs "${name}"`);
    }
    if (typeof v !== 'string' || v.length === 0 || v.length > MAX_FIELD) {
      throw new UsageError('ERR_WALLET_FIELD', `a wallet's "${name}" must be a string of 1 to ${MAX_FIELD} characters`);
    }
    return v;
  };
  const singleAddress = w.singleAddress === undefined || w.singleAddress === null ? null : Boolean(w.singleAddress);
  return {
    pubKey: str(w.pubKey, 'pubKey'), name: str(w.name, 'name'), path: str(w.path, 'path', true), singleAddress,
    chain: str(w.chain, 'chain'), network: str(w.network, 'network'),
  };
}

/**
 * Addresses to add, checked: each a string and a 32-byte script hash; repeats (by script hash)
 * kept once, first spelling first.
 * @param {WalletAddress[]} entries
 * @returns {WalletAddress[]}
 * @throws {UsageError} ERR_WALLET_ADDRESS
 */
function walletAddresses(entries) {
  if (!Array.isArray(entries)) throw new UsageError('ERR_WALLET_ADDRESS', 'addresses must be an array');
  const seen = new Set();
  const out = [];
  for (const e of entries) {
    if (!e || typeof e.address !== 'string' || e.address.length === 0 || e.address.length > MAX_FIELD
      || !Buffer.isBuffer(e.scripthash) || e.scripthash.length !== 32) {
      throw new UsageError('ERR_WALLET_ADDRESS', 'each address must be {address: string, scripthash: 32-byte Buffer}');
    }
    const k = e.scripthash.latin1Slice(0, 32);
    if (seen.has(k)) continue;
    seen.add(k);
    out.push({ address: e.address, scripthash: e.scripthash });
  }
  return out;
}

/**
 * A new wallet's id: 4 bytes of creation time (seconds) then 8 of sha256(pubKey), so ids sort
 * by creation as MongoDB's ObjectIds (what bitcore-node shows) do and differ between keys.
 * @param {string} pubKey
 * @param {number} [nowMs]
 * @returns {string} 24 hex digits
 */
function newWalletId(pubKey, nowMs = Date.now()) {
  const id = Buffer.alloc(12);
  id.writeUInt32BE(Math.floor(nowMs / 1000) >>> 0, 0);
  crypto.createHash('sha256').update(pubKey).digest().copy(id, 4, 0, 8);
  return id.toString('hex');
}

/**
 * A wallet id given to a read, checked.
 * @param {string} id
 * @returns {Buffer} 12 bytes
 * @throws {UsageError} ERR_WALLET_ID
 */
function walletIdBytes(id) {
  if (typeof id !== 'string' || !/^[0-9a-f]{24}$/.test(id)) throw new UsageError('ERR_WALLET_ID', 'a wallet id is 24 lower-case hex digits');
  return Buffer.from(id, 'hex');
}

/**
 * Paging of a wallet's addresses, checked: `from` the first position, `limit` how many.
 * @param {{from?: number, limit?: number}} [opts]
 * @returns {{from: number, limit: number}}
 */
function addressPage(opts = {}) {
  const from = opts.from === undefined ? 0 : opts.from;
  const limit = opts.limit === undefined ? Infinity : opts.limit;
  if (!Number.isSafeInteger(from) || from < 0) throw new UsageError('ERR_WALLET_PAGE', '"from" must be a non-negative integer');
  if (limit !== Infinity && (!Number.isSafeInteger(limit) || limit < 1)) throw new UsageError('ERR_WALLET_PAGE', '"limit" must be a positive integer');
  return { from, limit };
}

module.exports = { MAX_FIELD, walletFields, walletAddresses, newWalletId, walletIdBytes, addressPage };
