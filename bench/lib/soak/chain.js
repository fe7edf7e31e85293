'use strict';

/**
 * The soak's chain, made on two btcd regtest nodes that are not peers (blocks move between
 * them only by submitblock): A is the node every addrindex process follows; B builds the
 * heavier branches that reorganise A. Every block either node makes is handed to the truth
 * (truth.js) before anything can name it, stale ones included.
 *
 * Payments spend A's coinbases once they are 100 deep (never reorganised: reorgs here are at
 * most 6 deep), to the watched addresses, some of them replaceable (BIP125) and replaced by a
 * payment with a higher fee to other addresses.
 */

const COINBASE_MATURITY = 100;

/** Output kinds the soak pays: each has an address, the same in the address and script views. */
const PAY_KINDS = ['p2pkh', 'p2sh', 'p2wpkh', 'p2wsh', 'p2tr'];

class SoakChain {
  /**
   * @param {object} opts
   * @param {import('../../../test/helpers/btcd').Btcd} opts.a
   * @param {import('../../../test/helpers/btcd').Btcd} opts.b
   * @param {import('../../../test/helpers/wallet').Wallet} opts.wallet
   * @param {string} opts.minerA wallet label A mines to
   * @param {import('./truth').ChainTruth} opts.truth
   * @param {() => number} opts.rng
   * @param {string[]} opts.labels the watched payees' labels
   */
  constructor({ a, b, wallet, minerA, truth, rng, labels }) {
    Object.assign(this, { a, b, wallet, minerA, truth, rng, labels });
    /** the next height whose coinbase may be spent */
    this.nextCoinHeight = 1;
    /** replaceable payments sent, not yet replaced: {coin, txid} */
    this.replaceable = [];
    this.stats = { blocks: 0, payments: 0, replacements: 0, replaceTooLate: 0, refused: 0, reorgs: 0, reorgDepths: {} };
  }

  /** The watched addresses: the payees of every kind and both miners. */
  static addresses(wallet, labels, miners) {
    const out = [];
    for (const label of labels) for (const kind of PAY_KINDS) out.push(wallet.output(kind, label).address);
    return [...out, ...miners];
  }

  /** Hands blocks of `node` (by hash) to the truth. */
  async record(node, hashes, seenAt) {
    const hexes = await node.batch(hashes.map((h) => ['getblock', [h, 0]]));
    for (const hex of hexes) this.truth.add(Buffer.from(hex, 'hex'), seenAt);
  }

  /** A mines `n` blocks (its mempool in them). */
  async mine(n) {
    const seenAt = Date.now();
    const hashes = await this.a.generate(n);
    await this.record(this.a, hashes, seenAt);
    this.stats.blocks += n;
    return hashes;
  }

  /** The first blocks of the chain: past coinbase maturity, so payments can start. */
  async init(blocks) {
    await this.mine(blocks);
  }

  /**
   * A's coinbase coins deep enough to spend and never used, oldest first: heights are taken
   * in order (a coin is used once), and blocks that far down are never reorganised.
   */
  async spendable(max) {
    const top = (await this.a.tip()).height - COINBASE_MATURITY;
    const coins = [];
    for (; this.nextCoinHeight <= top && coins.length < max; this.nextCoinHeight++) {
      const raw = Buffer.from(await this.a.call('getblock', await this.a.call('getblockhash', this.nextCoinHeight), 0), 'hex');
      try {
        coins.push(this.wallet.coinbaseCoin(raw, this.minerA));
      } catch {
        // a block of B's branch: its coinbase pays B's miner
      }
    }
    return coins;
  }

  _payees(n) {
    const out = [];
    for (let i = 0; i < n; i++) {
      out.push({ kind: PAY_KINDS[Math.floor(this.rng() * PAY_KINDS.length)], label: this.labels[Math.floor(this.rng() * this.labels.length)] });
    }
    return out;
  }

  /**
   * Sends `n` payments from coinbases to 1–3 watched outputs each (the change to a watched
   * address too), a share of them replaceable.
   */
  async pay(n) {
    const coins = await this.spendable(n);
    for (const coin of coins) {
      const share = Math.floor(coin.satoshis / 8);
      const outs = this._payees(1 + Math.floor(this.rng() * 3)).map((o) => ({ ...o, satoshis: share }));
      const [change] = this._payees(1);
      const rbf = this.rng() < 0.4;
      const p = this.wallet.pay([coin], [...outs, change], { fee: 2000 + Math.floor(this.rng() * 3000), rbf });
      try {
        await this.a.sendTx(p.hex);
        this.stats.payments++;
        if (rbf) this.replaceable.push({ coin, fee: 5000 });
      } catch {
        // each coin is spent once and 100 deep: a refusal is reported, not expected
        this.stats.refused++;
      }
    }
  }

  /**
   * Replaces a replaceable payment still in A's mempool by one spending the same coin with a
   * higher fee, to other watched outputs.
   */
  async replace() {
    while (this.replaceable.length) {
      const [r] = this.replaceable.splice(Math.floor(this.rng() * this.replaceable.length), 1);
      const outs = this._payees(1 + Math.floor(this.rng() * 2)).map((o) => ({ ...o, satoshis: Math.floor(r.coin.satoshis / 5) }));
      const p = this.wallet.pay([r.coin], [...outs, ...this._payees(1)], { fee: r.fee + 20000, rbf: true });
      try {
        await this.a.sendTx(p.hex);
        this.stats.replacements++;
        return true;
      } catch {
        // the original was mined meanwhile: it can no longer be replaced
        this.stats.replaceTooLate++;
      }
    }
    return false;
  }

  /**
   * A reorganisation of `depth` blocks: B takes A's chain, A mines `depth` blocks (with its
   * mempool), B mines `depth + 1` on the old tip, and A is handed B's branch.
   * @param {number} depth
   * @param {() => Promise<void>} [between] runs while A's doomed blocks are its best chain
   */
  async reorg(depth, between) {
    const bTip = (await this.b.tip()).height;
    await this.b.submitBlocks(await this.a.rawBlocks(bTip + 1));
    await this.mine(depth);
    if (between) await between();
    const seenAt = Date.now();
    const branch = await this.b.generate(depth + 1);
    await this.record(this.b, branch, seenAt);
    await this.a.submitBlocks(await this.b.rawBlocks((await this.b.tip()).height - depth));
    const tip = await this.a.tip();
    if (tip.hash !== branch[branch.length - 1]) throw new Error(`A did not take B's branch (A at ${tip.height} ${tip.hash})`);
    this.stats.reorgs++;
    this.stats.reorgDepths[depth] = (this.stats.reorgDepths[depth] || 0) + 1;
  }

  /** A is killed and started again (its mempool is lost; the helper hands its chain back). */
  async killNode() {
    await this.a.restart({ kill: true });
    // the payments waiting in its mempool are gone: their coins stay marked used
    this.replaceable = [];
  }
}

module.exports = { SoakChain, PAY_KINDS };
