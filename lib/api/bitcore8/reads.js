'use strict';

const { toDisplayHex, sha256 } = require('../../chain/hash');
const { BlockTimes } = require('../../bitcore/timestamps');
const { decodeAddress } = require('../../chain/address');
const { moved } = require('../txdata');
const S = require('./shapes');

/**
 * What bitcore-node v8's answers need from the index, gathered for lib/api/routes/bitcore8.js:
 * blocks with their normalized times, coins (outputs with who spent them, mempool ones
 * included, as bitcore's coins collection holds them), and wallets' balances, coins and
 * transaction lists from the address rows. Addresses are read in the index's *script view*:
 * an address means exactly its own script, as bitcore-node files coins by `Script#toAddress`
 * (a P2PK output belongs to no address there). Every method runs inside ApiApp.consistent(),
 * with the mempool view of the tip it read (null: confirmed data alone).
 */

const VIEW = 'script';
/** Rows asked of the store per call when a whole list is read. */
const CHUNK = 5000;
/** Wallets whose address lists a worker keeps (the wallets asked lately). */
const WALLET_LISTS = 256;

class V8Reads {
  /** @param {import('../server').ApiApp} app */
  constructor(app) {
    this.app = app;
    this.store = app.store;
    this.net = app.network;
    this.network = S.NETWORK_NAMES[app.network.name];
    /** bitcore's `timeNormalized` of every block of the best chain, in ms */
    this.times = new BlockTimes(app.store, { scale: 1000 });
    /** @type {Map<string, {count: number, list: import('../../core/wallets').WalletAddress[]}>} recent wallets' addresses */
    this.walletLists = new Map();
  }

  /**
   * A request's memo of block rows by height (a wallet's coins share few blocks).
   * @returns {(height: number) => Promise<import('../../stores/abstract').Block>}
   */
  blocks() {
    const rows = new Map();
    return (height) => {
      let p = rows.get(height);
      if (!p) {
        p = this.store.getBlock(height).then((row) => {
          if (!row) throw moved(`the index holds no block at height ${height} any more`);
          return row;
        });
        rows.set(height, p);
      }
      return p;
    };
  }

  /**
   * The normalized time of the block at a height, ms.
   * @param {number} height
   */
  async normalizedMs(height) {
    let t = this.times.at(height);
    if (t === null) {
      await this.times.update();
      t = this.times.at(height);
    }
    if (t === null) throw moved(`the index holds no block at height ${height} any more`);
    return t;
  }

  /**
   * A block's JSON (confirmations added by the caller where bitcore adds them).
   * @param {import('../../stores/abstract').Block} row
   */
  async blockJson(row) {
    const [normalizedMs, next, coinbase] = await Promise.all([
      this.normalizedMs(row.height), this.store.getBlockHash(row.height + 1), this.app.txdata.coinbase(row),
    ]);
    return S.blockJson(row, { network: this.network, normalizedMs, next, reward: coinbase.outputs.reduce((n, o) => n + o.value, 0) });
  }

  /**
   * The block a transaction's JSON names.
   * @param {{height: number, blockHash: string}} loc
   */
  async txBlock(loc, blockAt) {
    const row = await blockAt(loc.height);
    return { height: loc.height, hash: loc.blockHash, timeMs: row.time * 1000, normalizedMs: await this.normalizedMs(loc.height) };
  }

  /**
   * A confirmed or mempool transaction's JSON, with its fee (its inputs' previous outputs read).
   * @param {Buffer} txid
   * @param {object|null} tip
   * @param {import('../../core/mempool').MempoolView|null} pool
   * @returns {Promise<{json: object, full: import('../txdata').FullTx}|null>}
   */
  async tx(txid, tip, pool) {
    const full = await this.app.txdata.anyTx(txid, { prevouts: true, spends: true, tip, view: pool });
    if (!full) return null;
    return { json: await this.txJsonOf(full, tip, this.blocks()), full };
  }

  /** The JSON of a transaction the txdata layer read (with its prevouts). */
  async txJsonOf(full, tip, blockAt) {
    const fee = full.mempool ? full.mempool.fee : feeOf(full);
    const id = full.mempool ? S.mempoolId(full.tx.txid) : S.confirmedId(full.loc.txNum);
    const block = full.loc ? await this.txBlock(full.loc, blockAt) : null;
    return S.txJson({ id, txid: full.tx.hash, network: this.network, block, tx: full.tx, fee, tipHeight: tip ? tip.height : null });
  }

  /**
   * The coins a transaction spends and those it makes, as bitcore's /tx/:txid/coins lists them.
   * @param {import('../txdata').FullTx & {mempool?: object}} full with prevouts and spends
   * @param {import('../../core/mempool').MempoolView|null} pool
   */
  async txCoins(full, pool) {
    const blockAt = this.blocks();
    const height = full.loc ? full.loc.height : S.SPENT.pending;
    const inputs = [];
    if (!full.tx.coinbase) {
      for (let i = 0; i < full.tx.inputs.length; i++) {
        const input = full.tx.inputs[i];
        const prev = full.prevouts[i];
        const mint = await this.mintOf(input.txid, pool, blockAt);
        inputs.push(this.coinJson({
          id: mint.txNum === null ? S.mempoolId(input.txid, input.vout) : S.confirmedId(mint.txNum, input.vout),
          mintTxid: toDisplayHex(input.txid), mintIndex: input.vout, mintHeight: mint.height, coinbase: mint.coinbase,
          value: prev.value, script: prev.script, spentTxid: full.tx.hash, spentHeight: height,
        }));
      }
    }
    const coinbase = full.tx.coinbase;
    const outputs = full.tx.outputs.map((o, vout) => {
      const spend = full.spends[vout];
      return this.coinJson({
        id: full.loc ? S.confirmedId(full.loc.txNum, vout) : S.mempoolId(full.tx.txid, vout),
        mintTxid: full.tx.hash, mintIndex: vout, mintHeight: height, coinbase, value: o.value, script: o.script,
        spentTxid: spend ? spend.txid : '', spentHeight: spend ? (spend.height === null ? S.SPENT.pending : spend.height) : S.SPENT.unspent,
      });
    });
    return { inputs, outputs };
  }

  /** Where an output's transaction was made: {txNum, height, coinbase} (txNum null: in the mempool). */
  async mintOf(txid, pool, blockAt) {
    const loc = await this.store.getTx(txid);
    if (loc) {
      const row = await blockAt(loc.height);
      return { txNum: loc.txNum, height: loc.height, coinbase: loc.txNum === row.firstTxNum };
    }
    if (pool && pool.get(txid)) return { txNum: null, height: S.SPENT.pending, coinbase: false };
    throw moved(`transaction ${toDisplayHex(txid)} left the index during the read`);
  }

  /** @param {import('./shapes').Coin} c @param {number} [confirmations] */
  coinJson(c, confirmations) {
    return S.coinJson(c, { network: this.network, net: this.net, confirmations });
  }

  /**
   * The mempool's coins paying a script hash, each with its mempool spender if any.
   * @param {Buffer} sh
   * @param {import('../../core/mempool').MempoolView|null} pool
   * @returns {Promise<import('./shapes').Coin[]>}
   */
  async mempoolCoins(sh, pool) {
    if (!pool) return [];
    const out = [];
    const entries = pool.entries(sh, VIEW);
    // the transactions' bytes are the store's: read at once, not one after another
    const txs = await Promise.all(entries.map((e) => pool.parsed(e.tx)));
    entries.forEach((e, k) => {
      const parsed = txs[k];
      for (const vout of e.vouts) {
        const spender = pool.spender(e.tx.txid, vout);
        out.push({
          id: S.mempoolId(e.tx.txid, vout), mintTxid: parsed.hash, mintIndex: vout, mintHeight: S.SPENT.pending, coinbase: false,
          value: parsed.outputs[vout].value, script: parsed.outputs[vout].script,
          spentTxid: spender ? toDisplayHex(spender.tx.txid) : '', spentHeight: spender ? S.SPENT.pending : S.SPENT.unspent,
        });
      }
    });
    return out;
  }

  /**
   * Every confirmed unspent output of a script hash (those a mempool transaction spends marked
   * so), chain order.
   * @param {Buffer} sh
   * @param {Buffer} script the script whose sha256 sh is
   * @param {object|null} pool
   * @param {Function} blockAt from blocks()
   * @param {string} [address] the script's address as coins show it (named once by the caller)
   */
  async utxoCoins(sh, script, pool, blockAt, address = S.coinAddress(script, this.net)) {
    const out = [];
    let cursor;
    do {
      const page = await this.store.getUtxos(sh, { limit: CHUNK, cursor, view: VIEW });
      for (const u of page.utxos) {
        const row = await blockAt(u.height);
        const spender = pool && pool.spender(u.txid, u.vout);
        out.push({
          id: S.confirmedId(u.txNum, u.vout), mintTxid: toDisplayHex(u.txid), mintIndex: u.vout, mintHeight: u.height,
          coinbase: u.txNum === row.firstTxNum, value: u.value, script, address,
          spentTxid: spender ? toDisplayHex(spender.tx.txid) : '', spentHeight: spender ? S.SPENT.pending : S.SPENT.unspent,
        });
      }
      cursor = page.next;
    } while (cursor);
    return out;
  }

  /**
   * Confirmed coins of a script hash, spent or not, newest first, read until `enough` says so.
   * @param {Buffer} sh
   * @param {(coin: import('./shapes').Coin) => boolean} take keeps a coin; returns true when enough are kept
   */
  async historyCoins(sh, pool, tip, take) {
    let cursor;
    do {
      const page = await this.store.getHistory(sh, { limit: 100, cursor, order: 'desc', view: VIEW });
      const funded = page.entries.filter((e) => e.funded);
      const fulls = await this.app.txdata.txs(funded.map((e) => e.txid), { spends: true, tip, view: pool });
      for (let k = 0; k < funded.length; k++) {
        const { tx, loc, spends } = fulls[k];
        const block = await this.store.getBlock(loc.height);
        if (!block || block.hash !== loc.blockHash) throw moved(`block ${loc.blockHash} left the index during the read`);
        for (let vout = tx.outputs.length - 1; vout >= 0; vout--) {
          const o = tx.outputs[vout];
          if (!sha256(o.script).equals(sh)) continue;
          const s = spends[vout];
          const coin = {
            id: S.confirmedId(loc.txNum, vout), mintTxid: tx.hash, mintIndex: vout, mintHeight: loc.height, coinbase: tx.coinbase,
            value: o.value, script: o.script,
            spentTxid: s ? s.txid : '', spentHeight: s ? (s.height === null ? S.SPENT.pending : s.height) : S.SPENT.unspent,
          };
          if (take(coin)) return;
        }
      }
      cursor = page.next;
    } while (cursor);
  }

  /**
   * An address's coins as bitcore's /address/:address lists them: newest first (by id), `limit`
   * of them below `since`; `unspent`: only those no block spent (a mempool spend still counts).
   * @param {{scripthash: Buffer, script: Buffer}} target
   * @param {{unspent: boolean, limit: number, since: string|null}} q
   */
  async addressCoins(target, q, tip, pool) {
    const below = (c) => q.since === null || c.id < q.since;
    const coins = (await this.mempoolCoins(target.scripthash, pool)).filter(below).sort(byIdDesc);
    if (coins.length >= q.limit) return coins.slice(0, q.limit);
    if (q.unspent) {
      const utxos = (await this.utxoCoins(target.scripthash, target.script, pool, this.blocks())).filter(below).sort(byIdDesc);
      return coins.concat(utxos).slice(0, q.limit);
    }
    await this.historyCoins(target.scripthash, pool, tip, (c) => {
      if (below(c)) coins.push(c);
      return coins.length >= q.limit;
    });
    return coins;
  }

  /**
   * Every address of a wallet, with its script hash (a wallet's answers need them all).
   * @param {import('../../core/wallets').Wallet} wallet
   * @returns {Promise<import('../../core/wallets').WalletAddress[]>}
   */
  async walletAddresses(wallet) {
    // addresses are only ever added: a list read at the same count is still the wallet's
    const kept = this.walletLists.get(wallet.id);
    if (kept && kept.count === wallet.addresses) return kept.list;
    const out = [];
    let from = 0;
    while (from !== null) {
      const page = await this.store.getWalletAddresses(wallet.id, { from, limit: CHUNK });
      out.push(...page.addresses);
      from = page.next;
    }
    if (this.walletLists.size >= WALLET_LISTS) this.walletLists.delete(this.walletLists.keys().next().value);
    this.walletLists.set(wallet.id, { count: out.length, list: out });
    return out;
  }

  /**
   * A wallet address's script and the address its coins show, computed once per address of a
   * kept list (a wallet's coins are asked for again and again).
   * @param {import('../../core/wallets').WalletAddress & {script?: Buffer, shown?: string}} a
   * @returns {{script: Buffer, shown: string}}
   */
  scriptOf(a) {
    if (!a.script) {
      a.script = decodeAddress(a.address, this.net).script;
      a.shown = S.coinAddress(a.script, this.net);
    }
    return a;
  }

  /**
   * bitcore's balance of a set of script hashes: its coins no block spent, confirmed (minted in a
   * block) and unconfirmed (minted in the mempool); an output a mempool transaction spends still
   * counts, as bitcore-node counts it until a block spends it.
   * @param {Buffer[]} hashes distinct
   */
  async balance(hashes, pool) {
    const summaries = hashes.length ? await this.store.getSummaries(hashes, { view: VIEW }) : [];
    let confirmed = 0;
    for (const s of summaries) if (s) confirmed += s.balance;
    let unconfirmed = 0;
    if (pool) for (const sh of hashes) for (const e of pool.entries(sh, VIEW)) unconfirmed += e.received;
    return { confirmed, unconfirmed, balance: confirmed + unconfirmed };
  }

  /**
   * bitcore's balance at a time: at the last block whose normalized time is at most `timeMs`,
   * from the confirmed balance now less what the blocks after it did to these script hashes;
   * plus, as bitcore's query counts them, the mempool's coins as unconfirmed.
   * @param {Buffer[]} hashes distinct
   * @param {number} timeMs
   * @returns {Promise<{confirmed: number, unconfirmed: number, balance: number}|null>} null: no block that early
   */
  async balanceAt(hashes, timeMs, tip, pool) {
    const height = await this.times.lastAtOrBefore(timeMs);
    if (height < 0) return null;
    const now = await this.balance(hashes, pool);
    const mine = new Set(hashes.map((h) => h.latin1Slice(0, 32)));
    let later = 0;
    await this.eachHistory(hashes, { fromHeight: height + 1 }, async (entries) => {
      const fulls = await this.app.txdata.txs(entries.map((e) => e.txid), { prevouts: true });
      for (const f of fulls) later += walletDelta(f, mine);
    });
    const confirmed = now.confirmed - later;
    return { confirmed, unconfirmed: now.unconfirmed, balance: confirmed + now.unconfirmed };
  }

  /**
   * The merged history of script hashes in chain order, a page at a time.
   * @param {Buffer[]} hashes
   * @param {{fromHeight?: number, toHeight?: number, limit?: number, cursor?: string}} range
   * @param {(entries: Array<import('../../stores/abstract').HistoryEntry>) => Promise<void>} fn
   * @returns {Promise<string|null>} the cursor after the last entry read when `range.limit` stopped it
   */
  async eachHistory(hashes, range, fn) {
    if (hashes.length === 0) return null;
    let cursor = range.cursor;
    let left = range.limit === undefined ? Infinity : range.limit;
    do {
      const page = await this.store.getHistories(hashes, {
        limit: Math.min(CHUNK, left), cursor, order: 'asc', view: VIEW, fromHeight: range.fromHeight, toHeight: range.toHeight,
      });
      if (page.entries.length) await fn(page.entries);
      left -= page.entries.length;
      cursor = page.next;
    } while (cursor && left > 0);
    return cursor || null;
  }
}

function byIdDesc(a, b) {
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** A confirmed transaction's fee from its prevouts (a coinbase: 0). */
function feeOf(full) {
  if (full.tx.coinbase) return 0;
  const paid = full.tx.outputs.reduce((n, o) => n + o.value, 0);
  return full.prevouts.reduce((n, p) => n + p.value, 0) - paid;
}

/** What a transaction (with prevouts) did to the balance of a set of script hashes (latin1 keys). */
function walletDelta(full, mine) {
  let d = 0;
  for (const o of full.tx.outputs) if (mine.has(sha256(o.script).latin1Slice(0, 32))) d += o.value;
  if (!full.tx.coinbase) for (const p of full.prevouts) if (mine.has(sha256(p.script).latin1Slice(0, 32))) d -= p.value;
  return d;
}

module.exports = { V8Reads, feeOf, VIEW };
