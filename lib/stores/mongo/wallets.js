'use strict';

const { Binary } = require('mongodb');
const W = require('../../core/wallets');
const { StoreError } = require('../../errors');

/**
 * The wallets of bitcore-node v8's API in the MongoDB store (docs/MONGO.md, "Wallets"): two
 * collections beside the index's, not chain data (digest() and verify() never read them).
 *
 *   wallets          {_id: pubKey, id, name, path, singleAddress, chain, network, addresses}
 *   walletaddresses  {_id: "<id>:<scripthash hex>", wallet: id, seq, sh: Binary(32), address}
 *                    indexes {wallet: 1, seq: 1} (a wallet's addresses in order) and
 *                    {sh: 1} (the wallets holding a script hash)
 *
 * Adding addresses reserves their places first (`addresses` += n, only if it still holds
 * what was read) and then inserts them, so a writer that dies in between leaves unused places,
 * never two addresses at one; an address whose insert was lost is added again by the next
 * import (it is not found in the wallet).
 */

const WALLETS = 'wallets';
const ADDRESSES = 'walletaddresses';
const INDEXES = [
  { key: { wallet: 1, seq: 1 }, name: 'wallet_1_seq_1' },
  { key: { sh: 1 }, name: 'sh_1' },
];
const MAX_ATTEMPTS = 8;

function fromDoc(d) {
  return {
    id: d.id, pubKey: d._id, name: d.name, path: d.path, singleAddress: d.singleAddress, chain: d.chain, network: d.network,
    addresses: Number(d.addresses),
  };
}

class MongoWallets {
  /** @param {import('./bulk').Database} db */
  constructor(db) {
    this.db = db;
    this.indexed = null;
  }

  /** Creates the address collection's indexes once per process (idempotent on the server). */
  ensureIndexes() {
    if (!this.indexed) {
      this.indexed = this.db.retry('create wallet indexes', () => this.db.coll(ADDRESSES).createIndexes(INDEXES))
        .catch((err) => {
          this.indexed = null;
          throw err;
        });
    }
    return this.indexed;
  }

  async get(pubKey) {
    if (typeof pubKey !== 'string' || pubKey.length === 0 || pubKey.length > W.MAX_FIELD) return null;
    const d = await this.db.retry('read wallet', () => this.db.coll(WALLETS).findOne({ _id: pubKey }));
    return d ? fromDoc(d) : null;
  }

  async create(fields) {
    const f = W.walletFields(fields);
    const existing = await this.get(f.pubKey);
    if (existing) return { wallet: existing, created: false };
    const { pubKey, ...rest } = f;
    const doc = { _id: pubKey, id: W.newWalletId(pubKey), ...rest, addresses: 0 };
    try {
      await this.db.retry('create wallet', () => this.db.coll(WALLETS).insertOne(doc));
    } catch (err) {
      // another writer created it first (or a retried insert landed twice): theirs stands
      if (err && err.code === 11000) return { wallet: await this.get(pubKey), created: false };
      throw err;
    }
    return { wallet: fromDoc(doc), created: true };
  }

  async add(pubKey, entries) {
    const list = W.walletAddresses(entries);
    await this.ensureIndexes();
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const wallet = await this.get(pubKey);
      if (!wallet) return null;
      const ids = list.map((e) => `${wallet.id}:${e.scripthash.toString('hex')}`);
      const present = new Set();
      for (let i = 0; i < ids.length; i += 1000) {
        const chunk = ids.slice(i, i + 1000);
        const found = await this.db.retry('read wallet addresses', () => this.db.coll(ADDRESSES).find({ _id: { $in: chunk } }, { projection: { _id: 1 } }).toArray());
        for (const d of found) present.add(d._id);
      }
      const fresh = list.filter((e, i) => !present.has(ids[i]));
      if (fresh.length === 0) return { wallet, added: 0 };
      const reserved = await this.db.retry('reserve wallet places', () => this.db.coll(WALLETS).updateOne(
        { _id: pubKey, addresses: wallet.addresses }, { $set: { addresses: wallet.addresses + fresh.length } }));
      if (reserved.modifiedCount !== 1) continue;
      const docs = fresh.map((e, i) => ({
        _id: `${wallet.id}:${e.scripthash.toString('hex')}`, wallet: wallet.id, seq: wallet.addresses + i,
        sh: new Binary(e.scripthash), address: e.address,
      }));
      await this.db.retry('add wallet addresses', () => this.db.coll(ADDRESSES).insertMany(docs, { ordered: false }).catch((err) => {
        // a retried insert whose first try landed: those documents are already there
        if (err && (err.code === 11000 || (err.writeErrors && err.writeErrors.every((w) => w.code === 11000)))) return null;
        throw err;
      }));
      return { wallet: { ...wallet, addresses: wallet.addresses + fresh.length }, added: fresh.length };
    }
    throw new StoreError('ERR_CONCURRENT_WRITE', `wallet ${pubKey} kept changing while addresses were added`);
  }

  async list(walletId, opts) {
    W.walletIdBytes(walletId);
    const { from, limit } = W.addressPage(opts);
    const docs = await this.db.retry('list wallet addresses', () => {
      const cursor = this.db.coll(ADDRESSES).find({ wallet: walletId, seq: { $gte: from } }).sort({ wallet: 1, seq: 1 });
      return (limit === Infinity ? cursor : cursor.limit(limit + 1)).toArray();
    });
    const page = limit === Infinity ? docs : docs.slice(0, limit);
    return {
      addresses: page.map((d) => ({ address: d.address, scripthash: Buffer.from(d.sh.buffer) })),
      next: docs.length > page.length ? docs[page.length].seq : null,
    };
  }

  async walletsOf(scripthashes) {
    if (scripthashes.length === 0) return [];
    const docs = await this.db.retry('read wallets of script hashes', () => this.db.coll(ADDRESSES)
      .find({ sh: { $in: scripthashes.map((sh) => new Binary(sh)) } }, { projection: { wallet: 1, sh: 1 } }).toArray());
    const byWallet = new Map();
    if (docs.length) {
      const walletIds = [...new Set(docs.map((d) => d.wallet))];
      const ws = await this.db.retry('read wallets', () => this.db.coll(WALLETS).find({ id: { $in: walletIds } }, { projection: { id: 1 } }).toArray());
      for (const w of ws) byWallet.set(w.id, w._id);
    }
    return scripthashes.map((sh) => docs
      .filter((d) => Buffer.from(d.sh.buffer).equals(sh) && byWallet.has(d.wallet))
      .map((d) => ({ id: d.wallet, pubKey: byWallet.get(d.wallet) }))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)));
  }
}

module.exports = { MongoWallets, WALLET_COLLECTIONS: [WALLETS, ADDRESSES] };
