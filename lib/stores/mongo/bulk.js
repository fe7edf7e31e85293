'use strict';

const { MongoBulkWriteError } = require('mongodb');
const { withRetry } = require('./retry');
const { COLLECTIONS: C } = require('./documents');

/** Documents per insert command (the driver would split larger ones anyway; smaller retries are cheaper). */
const INSERT_CHUNK = 5000;
/** _ids per `$in` (reads and deletes). */
const IN_CHUNK = 5000;
/** On FerretDB, `_id` lookups under way at once (each an index lookup, see tools/ferretdb/idindex.go). */
const FERRET_READERS = 8;

/**
 * The database as the store uses it: collections, retried commands, and writes and reads of
 * many documents by `_id`, each shaped for the server it talks to (MongoDB, or FerretDB,
 * which pushes down only an `_id` equality). Every write here is idempotent — inserts of
 * deterministic documents (a duplicate `_id` is the same document), deletes by `_id`, whole
 * replaces — so a command cut off by a lost connection is sent again whole.
 */
class Database {
  /**
   * @param {import('mongodb').Db} db
   * @param {{url: string, retryTimeoutMs: number, ferret: boolean, maxUpdates: number}} opts
   */
  constructor(db, opts) {
    this.db = db;
    this.url = opts.url;
    this.retryTimeoutMs = opts.retryTimeoutMs;
    this.ferret = opts.ferret;
    this.maxUpdates = opts.maxUpdates;
  }

  /** @param {string} name */
  coll(name) {
    return this.db.collection(name);
  }

  /**
   * Runs a command, retrying while the server is away (lib/stores/mongo/retry.js).
   * @template T
   * @param {string} what for the error when it stays away
   * @param {() => Promise<T>} fn
   * @returns {Promise<T>}
   */
  retry(what, fn) {
    return withRetry(fn, { timeoutMs: this.retryTimeoutMs, url: this.url, what });
  }

  /** Inserts documents in unordered chunks; a duplicate _id is an earlier attempt's same document. */
  async insert(name, docs) {
    for (let i = 0; i < docs.length; i += INSERT_CHUNK) {
      const chunk = docs.slice(i, i + INSERT_CHUNK);
      await this.retry(`insert into ${name}`, async () => {
        try {
          await this.coll(name).insertMany(chunk, { ordered: false });
        } catch (err) {
          if (!(err instanceof MongoBulkWriteError) || !onlyDuplicates(err)) throw err;
        }
      });
    }
  }

  /**
   * Deletes by _id: MongoDB one `$in` per chunk; FerretDB one bulk of deleteOne statements per
   * chunk (each an index lookup there).
   */
  async deleteIds(name, ids) {
    for (let i = 0; i < ids.length; i += IN_CHUNK) {
      const chunk = ids.slice(i, i + IN_CHUNK);
      await this.retry(`delete from ${name}`, () => (this.ferret
        ? this.coll(name).bulkWrite(chunk.map((id) => ({ deleteOne: { filter: { _id: id } } })), { ordered: false })
        : this.coll(name).deleteMany({ _id: { $in: chunk } })));
    }
  }

  /** Replaces (or inserts) whole documents by _id, at most maxUpdates per command. */
  async replace(name, docs) {
    for (let i = 0; i < docs.length; i += this.maxUpdates) {
      const ops = docs.slice(i, i + this.maxUpdates).map((d) => ({ replaceOne: { filter: { _id: d._id }, replacement: d, upsert: true } }));
      await this.retry(`replace in ${name}`, () => this.coll(name).bulkWrite(ops, { ordered: false }));
    }
  }

  /**
   * Puts the staged versions of accounts in place. MongoDB: replaceOne each, at most maxUpdates
   * per command, so every account changes atomically. FerretDB, where an update costs a table
   * scan per statement: delete and insert per chunk; a reader that finds an account missing
   * meanwhile reads its staged version.
   */
  async swapAccounts(docs) {
    if (!this.ferret) {
      await this.replace(C.accounts, docs);
      return;
    }
    for (let i = 0; i < docs.length; i += IN_CHUNK) {
      const chunk = docs.slice(i, i + IN_CHUNK);
      await this.deleteIds(C.accounts, chunk.map((d) => d._id));
      await this.insert(C.accounts, chunk);
    }
  }

  /**
   * Empties `staging`, which only ever holds the accounts of the one write under way. FerretDB:
   * by `_id` (a deleteMany reads every document it matches, even with no filter), never by
   * dropping the collection: FerretDB v1 creates and drops a collection's table and its
   * catalogue row in two statements, and a server killed between them leaves a table no later
   * create of that name can get past ("table staging_… already exists", on every write after).
   * @param {string[]} [ids] the staged `_id`s, when the caller has them; else they are read
   */
  async clearStaging(ids) {
    if (!this.ferret) {
      await this.retry('clear staging', () => this.coll(C.staging).deleteMany({}));
      return;
    }
    const all = ids || (await this.retry('clear staging', () => this.coll(C.staging).find({}, { projection: { _id: 1 } }).toArray())).map((d) => d._id);
    await this.deleteIds(C.staging, all);
  }

  /**
   * Creates the collections a database lacks, so that FerretDB creates each table once, when
   * the database is opened, and never in the middle of a write (see clearStaging).
   */
  async createCollections() {
    const listed = await this.retry('list collections', () => this.db.listCollections({}, { nameOnly: true }).toArray());
    const have = new Set(listed.map((c) => c.name));
    for (const name of Object.values(C)) {
      if (have.has(name)) continue;
      // a retried create may find the collection its first attempt made
      await this.retry(`create ${name}`, () => this.db.createCollection(name).catch((err) => {
        if (err.codeName !== 'NamespaceExists') throw err;
      }));
    }
  }

  /**
   * Documents by _id, as a Map. MongoDB: `$in` chunks on the _id index. FerretDB: point lookups
   * (pushed down), FERRET_READERS at a time (a `$in` is a scan of the collection there).
   * @returns {Promise<Map<string, object>>}
   */
  async findByIds(name, ids) {
    const out = new Map();
    if (ids.length === 0) return out;
    const coll = this.coll(name);
    if (this.ferret) {
      let next = 0;
      const worker = async () => {
        while (next < ids.length) {
          const id = ids[next++];
          const d = await this.retry(`read ${name}`, () => coll.findOne({ _id: id }));
          if (d) out.set(d._id, d);
        }
      };
      await Promise.all(Array.from({ length: Math.min(FERRET_READERS, ids.length) }, worker));
      return out;
    }
    for (let i = 0; i < ids.length; i += IN_CHUNK) {
      const chunk = ids.slice(i, i + IN_CHUNK);
      const docs = await this.retry(`read ${name}`, () => coll.find({ _id: { $in: chunk } }).toArray());
      for (const d of docs) out.set(d._id, d);
    }
    return out;
  }
}

/** @param {MongoBulkWriteError} err */
function onlyDuplicates(err) {
  const errs = [].concat(err.writeErrors || []);
  return errs.length > 0 && errs.every((w) => w.code === 11000) && !err.writeConcernError;
}

module.exports = { Database };
