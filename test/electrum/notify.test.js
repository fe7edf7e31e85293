'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { syncedFixture, referenceIndex } = require('../api/helpers');
const { MAINNET_439 } = require('../helpers/fixtures');
const { makeChain, addBranch } = require('../helpers/chains');
const { runCli } = require('../helpers/cli');
const { tempDir } = require('../helpers/tmp');
const { BlocksDirSource } = require('../../lib/sources/blocksdir');
const { parseBlock } = require('../../lib/chain/block');
const { startElectrum, connectClient, rawClient, scripthashOf, toElectrum, expectedStatus } = require('./helpers');

/** Collects a client's notifications; `until(pred)` resolves at the first header notification matching it. */
function listen(client) {
  const statuses = new Map(); // scripthash -> statuses notified, in order
  const headers = [];
  const waiters = [];
  client.subscribe.on('blockchain.scripthash.subscribe', ([sh, status]) => {
    if (!statuses.has(sh)) statuses.set(sh, []);
    statuses.get(sh).push(status);
  });
  client.subscribe.on('blockchain.headers.subscribe', ([header]) => {
    headers.push(header);
    for (const w of [...waiters]) if (w.pred(header)) { waiters.splice(waiters.indexOf(w), 1); w.resolve(header); }
  });
  return {
    statuses, headers,
    until: (pred) => new Promise((resolve) => {
      const seen = headers.find(pred);
      if (seen) resolve(seen);
      else waiters.push({ pred, resolve });
    }),
  };
}

async function sync(blocksDir, datadir, network, extra = []) {
  const r = await runCli(['sync', '--blocks-dir', blocksDir, '--datadir', datadir, '--network', network, '--threads', '0', '--batch-blocks', '13', '--quiet', ...extra]);
  assert.equal(r.code, 0, r.stderr);
}

const nullable = (v) => (v && typeof v === 'object' && 'result' in v ? v.result : v);

describe('electrum: notifications when blocks arrive', function () {
  this.timeout(60000);


  /**
   * A sync process appends blocks 300-438 to an index of 0-299; every address is subscribed.
   * @param {string[]} syncArgs extra sync options
   * @returns {Promise<object>} the subscriptions' stats
   */
  async function append(syncArgs) {
    const fixture = await syncedFixture(300);
    const srv = await startElectrum(fixture.datadir, { blocksDir: fixture.blocksDir, limits: { pollMs: 50 } });
    const client = await connectClient(srv.port);
    try {
      const ref = referenceIndex();
      const sref = referenceIndex('script');
      const heard = listen(client);
      assert.equal((await client.blockchainHeaders_subscribe()).height, 299);
      // every output script (these blocks' are P2PK: each key's own script) and every key's
      // P2PKH script hash, which has nothing in the script view and must stay quiet while P2PK
      // outputs of its key come and go: those paid or spending in 300-438 change, the others not
      const keys = [...new Set([...sref.scripthashes(), ...ref.scripthashes()])];
      const sh = new Map(keys.map((k) => [k, toElectrum(k)]));
      const statusAt = (k, h) => expectedStatus(sref.at(k, h).history);
      const before = new Map();
      for (const k of keys) {
        const status = nullable(await client.blockchainScripthash_subscribe(sh.get(k)));
        assert.equal(status, statusAt(k, 299), k);
        before.set(k, status);
      }
      const dropped = keys.find((k) => statusAt(k, 438) !== before.get(k));
      assert.equal(nullable(await client.request('blockchain.scripthash.unsubscribe', [sh.get(dropped)])), true);

      const blk = path.join(fixture.blocksDir, 'blk00000.dat');
      const all = fs.readFileSync(MAINNET_439);
      fs.appendFileSync(blk, all.subarray(fs.statSync(blk).size));
      await sync(fixture.blocksDir, fixture.datadir, 'main', syncArgs);
      const tip = await heard.until((h) => h.height === 438);
      assert.equal(tip.hex, ref.blocks[438].header.toBuffer().toString('hex'));

      let changed = 0;
      let quietKeys = 0;
      for (const k of keys) {
        const want = statusAt(k, 438);
        const got = heard.statuses.get(sh.get(k));
        if (k === dropped) {
          assert.equal(got, undefined, 'an unsubscribed script hash is not notified');
        } else if (want === before.get(k)) {
          assert.equal(got, undefined, `${k} did not change but was notified`);
          if (!sref.summaries.has(k) && ref.at(k, 438).history.length > ref.at(k, 299).history.length) quietKeys++;
        } else {
          assert.ok(got, `${k} changed but was not notified`);
          assert.equal(got[got.length - 1], want, k);
          changed++;
        }
      }
      assert.ok(quietKeys > 100, `only ${quietKeys} P2PKH script hashes whose key got P2PK outputs`);
      assert.ok(changed > 100, `only ${changed} statuses changed`);
      // the headers in between came in order, each a block of the chain
      for (const h of heard.headers) assert.equal(h.hex, ref.blocks[h.height].header.toBuffer().toString('hex'));
      assert.deepEqual(heard.headers.map((h) => h.height), [...heard.headers.map((h) => h.height)].sort((x, y) => x - y));
      return srv.app.subscriptions.stats;
    } finally {
      client.close();
      await srv.close();
      await fixture.cleanup();
    }
  }

  it('a sync process appends blocks 300-438: the changed statuses are pushed (equal to the bitcore reference), then the new tip', async () => {
    const stats = await append([]);
    assert.ok(stats.touched + stats.scanned > 0);
  });

  it('the same with 3 blocks of undo and commits of 13: the blocks\' touched sets are gone, every last height is read instead', async () => {
    const stats = await append(['--undo-depth', '3']);
    assert.ok(stats.scanned > 0 && stats.touched === 0, JSON.stringify(stats));
  });

  it('a reorg of depth 4 on a generated chain: every subscribed status ends equal to the one its new history gives', async () => {
    const seed = 'electrum-reorg';
    const chain = await makeChain({ seed, blocks: 20 });
    const datadir = tempDir('electrum-reorg');
    await sync(chain.dir, datadir, 'regtest');
    // every output script of the chain
    const source = new BlocksDirSource({ dir: chain.dir, network: 'regtest' });
    await source.scan();
    const shs = new Set();
    for await (const b of source.blocks(1)) for (const tx of parseBlock(b.raw).txs) for (const o of tx.outputs) shs.add(scripthashOf(o.script));
    await source.close();

    const srv = await startElectrum(datadir, { network: 'regtest', blocksDir: chain.dir, limits: { pollMs: 50 } });
    const client = await connectClient(srv.port);
    try {
      const heard = listen(client);
      assert.equal((await client.blockchainHeaders_subscribe()).height, 20);
      const before = new Map();
      for (const sh of shs) before.set(sh, nullable(await client.blockchainScripthash_subscribe(sh)));

      await addBranch({ dir: chain.dir, seed, forkHeight: 16, branchSeed: 'b', blocks: 5 });
      await sync(chain.dir, datadir, 'regtest');
      await heard.until((h) => h.height === 21);

      // the statuses a client computes from the histories a fresh connection reads now
      const fresh = await rawClient(srv.port);
      let changed = 0;
      for (const sh of shs) {
        const hist = (await fresh.call('blockchain.scripthash.get_history', [sh])).result;
        const want = expectedStatus(hist.map((e) => ({ txid: e.tx_hash, height: e.height })));
        const got = heard.statuses.get(sh);
        if (want === before.get(sh)) {
          assert.equal(got, undefined, `${sh} did not change but was notified`);
        } else {
          assert.ok(got, `${sh} changed but was not notified`);
          assert.equal(got[got.length - 1], want, sh);
          changed++;
        }
      }
      assert.ok(changed > 20, `only ${changed} statuses changed`);
      // the new branch's blocks are within the undo kept: their touched sets answered
      assert.ok(srv.app.subscriptions.stats.touched > 0 && srv.app.subscriptions.stats.scanned === 0, JSON.stringify(srv.app.subscriptions.stats));
      fresh.socket.end();
    } finally {
      client.close();
      await srv.close();
    }
  });

  it('the watcher hands on a reorg\'s new tip with its fork height, not the revert to the fork the follower commits first', async () => {
    const { TipWatcher } = require('../../lib/electrum/tip-watcher');
    const { StoreReader } = require('../../lib/electrum/reader');
    const { RewindHold } = require('../../lib/core/rewind-hold');
    const { openStore } = require('../../lib/stores');
    const { mainnetChain, syncBlocks } = require('../stores/data');
    const store = await openStore({ store: 'lmdb', datadir: path.join(tempDir('electrum-rewind'), 'index'), network: 'main' });
    try {
      const { blocks } = mainnetChain();
      await syncBlocks(store, blocks, 0, 20);
      let clock = 0;
      const changes = [];
      const watcher = new TipWatcher({
        reader: new StoreReader({ store }), pollMs: 60000, log: () => {}, rewind: new RewindHold({ holdMs: 2000, now: () => clock }),
        onChange: (c) => { changes.push([c.previous.height, c.tip.height, c.forkHeight]); },
      });
      await watcher.start();
      await watcher.stop();
      await store.revert(17);
      await watcher.poll();
      clock += 1999;
      await watcher.poll();
      assert.deepEqual(changes, []);
      await syncBlocks(store, blocks, 18, 21);
      await watcher.poll();
      assert.deepEqual(changes, [[20, 21, 20]]);
      // a lower tip that stays is notified once it has stayed 2 s
      await store.revert(15);
      await watcher.poll();
      clock += 2000;
      await watcher.poll();
      assert.deepEqual(changes, [[20, 21, 20], [21, 15, 15]]);
    } finally {
      await store.close();
    }
  });
});
