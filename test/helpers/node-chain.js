'use strict';

const { Wallet, KINDS } = require('./wallet');

/** The seed of the node tests' keys: mining addresses and every wallet output derive from it. */
const SEED = 'addrindex-node-tests';

/** Regtest activates segwit and taproot at this height on btcd. */
const TAPROOT_HEIGHT = 432;

/**
 * The wallet of the node tests and each node's mining address (one per node, so two nodes
 * never mine the same block).
 */
function nodeWallet() {
  const wallet = new Wallet(SEED);
  return { wallet, minerA: wallet.p2pkh('miner-a'), minerB: wallet.p2pkh('miner-b') };
}

/**
 * Builds, on a running btcd mining to `minerLabel`, a chain holding every output kind and a
 * spend of each: past the taproot height in one `generate`, then
 * - block tip+1: tx `fund` pays one output of every kind (label 'a') and a P2WPKH change, and
 *   tx `chained` spends that change in the same block (a mempool chain);
 * - block tip+2: tx `spendAll` spends every spendable output of `fund` (P2PKH, P2SH 2-of-3,
 *   P2WPKH, P2WSH, P2TR key path, P2PK, bare multisig) to P2WPKH 'b' and reuses P2PKH 'a';
 * - two empty blocks on top.
 * @param {import('./btcd').Btcd} node
 * @param {Wallet} wallet
 * @param {string} minerLabel the label whose P2PKH address the node mines to
 * @returns {Promise<{height: number, txs: Record<string, string>, addresses: Record<string, string>,
 *   coins: import('./wallet').Coin[], amounts: {spendAllToA: number, spendAllToB: number}}>}
 */
async function buildScriptChain(node, wallet, minerLabel) {
  const start = (await node.tip()).height;
  const hashes = await node.generate(Math.max(1, TAPROOT_HEIGHT + 8 - start));
  const cb = async (hash) => wallet.coinbaseCoin(Buffer.from(await node.call('getblock', hash, 0), 'hex'), minerLabel);
  const coinbase = await cb(hashes[0]);

  const fund = wallet.pay([coinbase], [
    ...KINDS.map((kind) => ({ kind, label: 'a', satoshis: kind === 'nulldata' ? 0 : 100000000 })),
    { kind: 'p2wpkh', label: 'change' },
  ]);
  await node.sendTx(fund.hex);
  const change = fund.coins.find((c) => c.label === 'change');
  const chained = wallet.pay([change], [{ kind: 'p2tr', label: 'chained', satoshis: 50000000 }, { kind: 'p2pkh', label: 'back' }]);
  await node.sendTx(chained.hex);
  await node.generate(1);

  const spendable = fund.coins.filter((c) => c.label === 'a');
  const spendAll = wallet.pay(spendable, [{ kind: 'p2pkh', label: 'a', satoshis: 12345678 }, { kind: 'p2wpkh', label: 'b' }]);
  await node.sendTx(spendAll.hex);
  await node.generate(1);
  await node.generate(2);

  const addresses = {};
  for (const kind of KINDS) addresses[kind] = wallet.output(kind, 'a').address;
  addresses.b = wallet.output('p2wpkh', 'b').address;
  addresses.chained = wallet.output('p2tr', 'chained').address;
  return {
    height: (await node.tip()).height,
    txs: { fund: fund.txid, chained: chained.txid, spendAll: spendAll.txid },
    addresses,
    coins: [...chained.coins, ...spendAll.coins],
    amounts: { spendAllToA: 12345678, spendAllToB: spendAll.coins.find((c) => c.label === 'b').satoshis },
  };
}

module.exports = { SEED, TAPROOT_HEIGHT, nodeWallet, buildScriptChain };
