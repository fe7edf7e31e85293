'use strict';

const assert = require('node:assert/strict');
const path = require('node:path');
const { useBtcd } = require('../helpers/btcd');
const { nodeWallet } = require('../helpers/node-chain');
const { followAndServe, runCli, startCli } = require('../helpers/cli');
const { referenceIndex, addressAt } = require('../helpers/reference');
const { startBitcore } = require('../helpers/bitcore-host');
const { tempDir } = require('../helpers/tmp');
const { waitFor } = require('../helpers/chains');
const { request } = require('../api/helpers');
const { connectClient } = require('../electrum/helpers');
const { parseTarget } = require('../../lib/chain/address');
const { useMongo } = require('../helpers/mongo-server');

const { wallet, minerA, minerB } = nodeWallet();

/** Rounds of requests after the index reached the new tip (each round: every reader, every address). */
const ROUNDS_AFTER = 5;
/** At most this many rounds in all (the reorg is committed within a few). */
const MAX_ROUNDS = 400;

/**
 * A 3-block reorg on btcd while REST (native, Esplora, insight), Electrum and the bitcore
 * service (insight-api on addrindex's bitcoind service) are asked, round after round, about
 * the addresses it changes: every answer must be the truth at the old tip or at the new one —
 * confirmed figures from a from-scratch index of that branch's blocks (bitcore-lib,
 * test/helpers/reference.js), unconfirmed ones from the mempool the node has at that tip
 * (empty at the old tip; at the new one, the payment the reorg disconnected, back in btcd's
 * mempool). An answer of the fork point (the revert committed, the new branch not yet) or of
 * the new tip without its mempool matches neither.
 *
 * On LMDB (`sync --follow` beside `serve`) the revert and the new branch are one commit. On
 * LevelDB (`serve --store level` following the node in its primary) they are commits one by
 * one, and the workers' forwarded reads wait while the sync's group is open; on MongoDB
 * (FerretDB: `sync --store mongo --follow` beside `serve --store mongo`) too, and the readers
 * wait out the writer's group lease. The bitcore service is asked on LMDB only (it opens the
 * datadir itself, which LevelDB allows one process only).
 */
describe('a 3-block reorg on btcd while every reader is asked: each answer is the old tip\'s or the new tip\'s (LMDB)', function () {
  reorgWhileAsked.call(this, 'lmdb');
});

describe('a 3-block reorg on btcd while every reader is asked: each answer is the old tip\'s or the new tip\'s (LevelDB, serve following the node)', function () {
  reorgWhileAsked.call(this, 'level');
});

describe('a 3-block reorg on btcd while every reader is asked: each answer is the old tip\'s or the new tip\'s (MongoDB)', function () {
  const mongo = useMongo();
  reorgWhileAsked.call(this, 'mongo', mongo);
});

/**
 * @this {Mocha.Suite}
 * @param {'lmdb'|'level'|'mongo'} store
 * @param {ReturnType<typeof useMongo>} [mongo] the server, for 'mongo'
 */
function reorgWhileAsked(store, mongo) {
  this.timeout(240000);
  let a;
  let b;
  let follow;
  let serve;
  let url;
  let electrum;
  let bc;

  after(async () => {
    if (electrum) electrum.close();
    if (bc) await bc.stop();
    for (const child of [serve, follow]) {
      if (!child) continue;
      child.kill('SIGTERM');
      await child.done;
    }
  });
  const btcd = useBtcd([{ miningAddress: minerA }, { miningAddress: minerB }]);

  it(store === 'lmdb' ? 'REST, Electrum and the bitcore service during the reorg' : `REST and Electrum, through the workers of serve --store ${store}, during the reorg`, async () => {
    [a, b] = btcd.nodes;
    await a.generate(101);
    const [raw1] = await a.rawBlocks(1, 1);
    const coinbase = wallet.coinbaseCoin(raw1, 'miner-a');
    const split = wallet.pay([coinbase], [{ kind: 'p2pkh', label: 'x1', satoshis: 10e8 }, { kind: 'p2pkh', label: 'x2', satoshis: 10e8 }, { kind: 'p2pkh', label: 'miner-a' }], { fee: 3000 });
    await a.sendTx(split.hex);
    await a.generate(1);
    await b.submitBlocks(await a.rawBlocks(1));
    const fork = (await a.tip()).height;
    // A's branch: P1 (x1 → y) confirmed in the first of 3 blocks
    const p1 = wallet.pay([split.coins[0]], [{ kind: 'p2pkh', label: 'y', satoshis: 4e8 }, { kind: 'p2pkh', label: 'x1' }], { fee: 2200 });
    await a.sendTx(p1.hex);
    await a.generate(3);
    // B's branch, one longer: P2 (x2 → z) and no P1
    const p2 = wallet.pay([split.coins[1]], [{ kind: 'p2pkh', label: 'z', satoshis: 3e8 }, { kind: 'p2pkh', label: 'x2' }], { fee: 1800 });
    await b.sendTx(p2.hex);
    await b.generate(4);

    const addresses = [minerA, minerB, ...['x1', 'y'].map((l) => wallet.output('p2pkh', l).address), wallet.output('p2pkh', 'x2').address, wallet.output('p2pkh', 'z').address];
    const shOf = (address) => Buffer.from(parseTarget(address, 'regtest').scripthash);
    const hexOf = (address) => shOf(address).toString('hex');
    // the truth at each tip: confirmed from that branch's blocks, unconfirmed from the node's mempool there
    const oldRef = referenceIndex(await a.rawBlocks(0));
    const newRef = referenceIndex(await b.rawBlocks(0));
    const valueOf = (coin) => coin.satoshis;
    const truth = (ref, pool) => new Map(addresses.map((address) => {
      const at = addressAt(ref, hexOf(address));
      const s = at.summary;
      let unconfirmed = 0;
      let unconfirmedTxs = 0;
      for (const { pay, spent } of pool) {
        let touched = false;
        for (const c of spent) if (c.address === address) { unconfirmed -= valueOf(c); touched = true; }
        pay.tx.outputs.forEach((o) => {
          if (o.script.toAddress('regtest').toString() === address) { unconfirmed += o.satoshis; touched = true; }
        });
        if (touched) unconfirmedTxs++;
      }
      return [address, { balance: s ? s.balance : 0, txCount: s ? s.txCount : 0, unconfirmed, unconfirmedTxs }];
    }));
    const tips = {
      old: { hash: oldRef.blockHashes[fork + 3], height: fork + 3, figures: truth(oldRef, []) },
      new: { hash: newRef.blockHashes[fork + 4], height: fork + 4, figures: truth(newRef, [{ pay: p1, spent: [split.coins[0]] }]) },
    };
    assert.notDeepEqual(tips.old.figures, tips.new.figures, 'the reorg changes what the readers answer');

    const datadir = path.join(tempDir('reorg-readers'), 'index');
    if (store === 'lmdb') {
      ({ follow, serve, url } = await followAndServe(a.url, datadir));
    } else if (store === 'mongo') {
      const where = ['--store', 'mongo', '--mongodb-url', `${mongo.mongo.url.replace(/\/$/, '')}/${mongo.dbName('reorg')}`];
      follow = startCli(['sync', ...where, '--rpc-url', a.url, '--network', 'regtest', '--follow', '--poll-ms', '100', '--mempool-poll-ms', '100', '--threads', '0']);
      await follow.waitFor(/mempool: \d+ transaction\(s\)/, 120000);
      serve = startCli(['serve', ...where, '--workers', '2', '--port', '0', '--electrum-port', '0', '--electrum-poll-ms', '50', '--grace-ms', '2000'],
        { env: { ADDRINDEX_RPC_URL: a.url } });
      url = (await serve.waitFor(/listening on (http:\/\/\S+)/))[1];
    } else {
      const synced = await runCli(['sync', '--rpc-url', a.url, '--network', 'regtest', '--store', 'level', '--datadir', datadir, '--threads', '0']);
      assert.equal(synced.code, 0, synced.stderr);
      serve = startCli(['serve', '--store', 'level', '--datadir', datadir, '--workers', '2', '--port', '0', '--electrum-port', '0',
        '--electrum-poll-ms', '50', '--grace-ms', '2000', '--poll-ms', '100', '--mempool-poll-ms', '100'], { env: { ADDRINDEX_RPC_URL: a.url } });
      url = (await serve.waitFor(/listening on (http:\/\/\S+)/))[1];
    }
    const electrumPort = Number((await serve.waitFor(/electrum tcp 127\.0\.0\.1:(\d+)/))[1]);
    electrum = await connectClient(electrumPort);
    if (store === 'lmdb') bc = await startBitcore({ network: 'regtest', bitcoind: { datadir, rpcUrl: a.url, tipPollMs: 50 } });
    // the old tip, with its (empty) mempool snapshot, everywhere
    const nativeSummaries = async () => (await request(`${url}/api/v1/addresses/summary`, { method: 'POST', body: { addresses } })).json;
    await waitFor(async () => {
      const s = await nativeSummaries();
      return s && s.tip && s.tip.hash === tips.old.hash;
    }, 60000, 'the index at the old tip');

    /** Which tips an answer's figures are the truth at. */
    const matches = (address, got) => Object.keys(tips).filter((k) => {
      const want = tips[k].figures.get(address);
      return Object.keys(got).every((f) => got[f] === want[f]);
    });
    const seen = { old: 0, new: 0 };
    const check = (what, address, got, tipHash) => {
      let at = matches(address, got);
      if (tipHash) at = at.filter((k) => tips[k].hash === tipHash);
      assert.ok(at.length > 0, `${what} ${address}: ${JSON.stringify(got)}${tipHash ? ` at ${tipHash}` : ''} is the truth at neither tip: ` +
        `old ${JSON.stringify(tips.old.figures.get(address))}, new ${JSON.stringify(tips.new.figures.get(address))}`);
      if (at.length === 1) seen[at[0]]++;
    };
    const round = async () => {
      const asks = [];
      asks.push(nativeSummaries().then((s) => {
        // one answer for every address, of one tip
        s.summaries.forEach((x, i) => check('native summary', addresses[i], { balance: x.balance, txCount: x.txCount, unconfirmed: x.unconfirmed.balance, unconfirmedTxs: x.unconfirmed.txCount }, s.tip.hash));
        return s.tip.hash;
      }));
      for (const address of addresses) {
        asks.push(request(`${url}/api/address/${address}`).then(({ json: e }) => check('esplora', address, {
          balance: e.chain_stats.funded_txo_sum - e.chain_stats.spent_txo_sum, txCount: e.chain_stats.tx_count,
          unconfirmed: e.mempool_stats.funded_txo_sum - e.mempool_stats.spent_txo_sum, unconfirmedTxs: e.mempool_stats.tx_count,
        })));
        asks.push(request(`${url}/insight-api/addr/${address}?noTxList=1`).then(({ json: i }) => check('insight', address, {
          balance: i.balanceSat, txCount: i.txApperances, unconfirmed: i.unconfirmedBalanceSat, unconfirmedTxs: i.unconfirmedTxApperances,
        })));
        if (bc) {
          asks.push(request(`${bc.url}/insight-api/addr/${address}?noTxList=1`).then(({ json: i }) => check('bitcore service', address, {
            balance: i.balanceSat, txCount: i.txApperances, unconfirmed: i.unconfirmedBalanceSat, unconfirmedTxs: i.unconfirmedTxApperances,
          })));
        }
        const e = Buffer.from(shOf(address)).reverse().toString('hex');
        asks.push(electrum.blockchainScripthash_getBalance(e).then((x) => check('electrum balance', address, { balance: x.confirmed, unconfirmed: x.unconfirmed })));
        asks.push(electrum.blockchainScripthash_getHistory(e).then((h) => check('electrum history', address, {
          txCount: h.filter((x) => x.height > 0).length, unconfirmedTxs: h.filter((x) => x.height <= 0).length,
        })));
      }
      return (await Promise.all(asks))[0];
    };

    await round();
    // the reorg: B's four blocks reach A, which leaves its three for them and puts P1 back in its mempool
    const submitting = a.submitBlocks(await b.rawBlocks(fork + 1));
    let after = 0;
    let rounds = 0;
    for (; rounds < MAX_ROUNDS && after < ROUNDS_AFTER; rounds++) {
      if ((await round()) === tips.new.hash) after++;
    }
    await submitting;
    assert.equal((await a.tip()).hash, tips.new.hash);
    assert.equal(after, ROUNDS_AFTER, `the index reached the new tip within ${MAX_ROUNDS} rounds`);
    assert.ok(seen.old > 0 && seen.new > 0, `answers of both tips: ${JSON.stringify(seen)}`);
    assert.ok((await a.call('getrawmempool')).includes(p1.txid), 'btcd put the disconnected payment back in its mempool');
  });
}
