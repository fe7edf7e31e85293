'use strict';

const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnOwned: spawn, forkOwned: fork } = require('../helpers/procs');
const { StoreError, CodecError, UsageError } = require('../../lib/errors');
const { buildDeltas } = require('../../lib/sync/delta');
const { fromDisplayHex, toDisplayHex, sha256d } = require('../../lib/chain/hash');
const { mainnetChain, generatedChain, syncBlocks, handMadeChain, p2pkChain } = require('./data');
const { referenceIndex, addressScripthash } = require('../helpers/reference');
const { prng } = require('../helpers/prng');
const { serveStore } = require('../../lib/cluster/forward');
const { READ_METHODS } = require('../../lib/stores/abstract');
const { encodeChange, encodeMempoolTx, decodeMempoolTx, decodeWhole } = require('../../lib/codec/mempool');

/**
 * The store conformance suite: one set of behaviours every backend must have, written once
 * and run unchanged against each (as abstract-level's shared tests are).
 *
 *   storeConformance('LMDB', backend)
 *
 * @param {string} name
 * @param {object} backend
 * @param {'lmdb'|'level'|'mongo'} backend.kind what its stats() says it is
 * @param {() => Promise<string>|string} backend.create a new, empty location (a datadir, a database name)
 * @param {(location: string, opts: {network: string, undoDepth?: number, readOnly?: boolean}) => Promise<import('../../lib/stores/abstract').AbstractStore>} backend.open
 *   an opened store at location
 * @param {string} backend.openerModule absolute path of a module whose `open(location, opts)`
 *   does the same in a child process (the kill and concurrent-reader tests)
 * @param {(location: string, version: number) => Promise<void>} backend.setSchemaVersion
 *   rewrites the stored schema version (store closed)
 * @param {(location: string, scripthash: Buffer) => Promise<void>} backend.corruptSummary
 *   replaces the stored summary of a script hash with bytes that do not decode (store closed)
 * @param {(location: string, scripthash: Buffer) => Promise<void>} backend.tamperSummary
 *   adds one satoshi to its stored receipts, still decodable (store closed)
 * @param {(location: string, scripthash: Buffer) => Promise<void>} backend.dropAccount
 *   deletes the account of a script hash, and nothing else (store closed)
 * @param {boolean} backend.readersInOtherProcesses whether readOnly opens in other processes
 *   may run beside the writer (LMDB yes, LevelDB no)
 * @param {{generated?: object, writer?: object}} [backend.chains] smaller generated chains
 *   ({seed, blocks, txsPerBlock}) for a backend whose test server is slow (FerretDB): `generated`
 *   for the segwit/taproot section (default 60 blocks of 60 txs), `writer` for the kill and
 *   concurrent-reader tests (default 40 of 150). Heights the tests use scale with the chain.
 */
function storeConformance(name, backend) {
  describe(`store conformance: ${name}`, function () {
    this.timeout(120000);
    const opened = [];
    const open = async (location, opts) => {
      const s = await backend.open(location, opts);
      opened.push(s);
      return s;
    };
    const fresh = async (opts) => {
      const location = await backend.create();
      return { location, store: await open(location, opts) };
    };
    const closeAll = async () => {
      while (opened.length) await opened.pop().close();
    };
    after(closeAll);

    const GENERATED = { seed: 11, blocks: 60, txsPerBlock: 60, ...(backend.chains && backend.chains.generated) };
    const WRITER = { seed: 23, blocks: 40, txsPerBlock: 150, ...(backend.chains && backend.chains.writer) };
    const MAIN = { network: 'main', undoDepth: 1000 };
    const REGTEST = { network: 'regtest', undoDepth: 1000 };
    const HAL = addressScripthash('1Q2TWHE3GMdB6BZKafqwxXtWAWgFt5Jvm3');
    const SATOSHI9 = addressScripthash('12cbQLTFMXRnSzktFkuoG3eHoMeFtpTu3S');
    const GENESIS_ADDR = addressScripthash('1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa');
    const TX170 = 'f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16';
    const GENESIS_TX = '4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b';
    const BLOCK170 = '00000000d1145790a8694403d4063f323d499e655c83426834d4ce2f8dd4a2ee';
    const COIN = 1e8;

    describe('empty and opening', () => {
      it('opens empty: no tip, no rows', async () => {
        const { store } = await fresh(MAIN);
        assert.equal(await store.getTip(), null);
        assert.equal(await store.getSummary(HAL), null);
        assert.deepEqual(await store.getHistory(HAL), { entries: [], next: null });
        assert.deepEqual(await store.getUtxos(HAL), { utxos: [], next: null });
        assert.equal(await store.getTx(fromDisplayHex(TX170)), null);
        assert.equal(await store.getTxid(0), null);
        assert.equal(await store.getBlockHash(0), null);
        assert.deepEqual(await store.getPrevouts(Buffer.alloc(36)), [null]);
        assert.equal((await store.verify()).ok, true);
      });

      it('refuses a datadir of another network, naming both', async () => {
        const { location, store } = await fresh(MAIN);
        await syncBlocks(store, mainnetChain().blocks, 0, 3);
        await store.close();
        await assert.rejects(open(location, { network: 'testnet' }), (err) => {
          assert.ok(err instanceof StoreError);
          assert.equal(err.code, 'ERR_WRONG_NETWORK');
          assert.match(err.message, /holds a main index; this run asked for testnet/);
          return true;
        });
        const again = await open(location, MAIN);
        assert.equal((await again.getTip()).height, 3);
      });

      it('refuses another schema version', async () => {
        const { location, store } = await fresh(MAIN);
        await syncBlocks(store, mainnetChain().blocks, 0, 3);
        await store.close();
        await backend.setSchemaVersion(location, 99);
        await assert.rejects(open(location, MAIN), (err) => err instanceof StoreError && err.code === 'ERR_SCHEMA_VERSION' && /99/.test(err.message));
      });

      it('refuses a bad network or undo depth with the same UsageError as every store', async () => {
        for (const [opts, code] of [
          [{ network: 'bogus' }, 'ERR_UNKNOWN_NETWORK'],
          [{ network: undefined }, 'ERR_USAGE'],
          [{ network: 'main', undoDepth: -1 }, 'ERR_BAD_UNDO_DEPTH'],
          [{ network: 'main', undoDepth: 1.5 }, 'ERR_BAD_UNDO_DEPTH'],
          [{ network: 'main', undoDepth: '100' }, 'ERR_BAD_UNDO_DEPTH'],
        ]) {
          const location = await backend.create();
          await assert.rejects(open(location, opts), (err) => {
            assert.ok(err instanceof UsageError, `${JSON.stringify(opts)}: ${err.stack}`);
            assert.equal(err.code, code, JSON.stringify(opts));
            return true;
          });
        }
        const ok = await open(await backend.create(), { network: 'mainnet', undoDepth: 0 });
        assert.deepEqual([ok.network, ok.undoDepth, ok.readOnly], ['main', 0, false]);
      });

      it('read-only: refuses an empty location and every write', async () => {
        const location = await backend.create();
        await assert.rejects(open(location, { ...MAIN, readOnly: true }), (err) => err instanceof StoreError && err.code === 'ERR_NO_INDEX');
        const w = await open(location, MAIN);
        await syncBlocks(w, mainnetChain().blocks, 0, 5);
        const r = await open(location, { ...MAIN, readOnly: true });
        assert.equal((await r.getTip()).height, 5);
        const deltas = await buildDeltas(mainnetChain().blocks.slice(6, 7), r, 6);
        await assert.rejects(r.apply(deltas), (err) => err.code === 'ERR_READ_ONLY');
        await assert.rejects(r.revert(2), (err) => err.code === 'ERR_READ_ONLY');
      });
    });

    describe('the first 439 mainnet blocks', () => {
      let full;
      let fullLocation;
      const ref = () => referenceIndex(mainnetChain().raws);
      const scriptRef = () => referenceIndex(mainnetChain().raws, 438, { view: 'script' });

      before(async () => {
        ({ location: fullLocation, store: full } = await fresh(MAIN));
        // uneven batches: one block, a few, many
        await syncBlocks(full, mainnetChain().blocks, 0, 438, [1, 9, 60, 2, 150]);
      });

      it('matches an independent bitcore-lib index: every summary, history and UTXO set', async () => {
        const r = ref();
        const tip = await full.getTip();
        assert.deepEqual(tip, { height: 438, hash: r.blockHashes[438], nextTxNum: r.txids.length });
        await assertMatchesReference(full, r);
      });

      it('the script view: each P2PK output under its own script hash, none under its key\'s P2PKH script hash', async () => {
        const r = scriptRef();
        await assertMatchesReference(full, r, { view: 'script' });
        // every address of these blocks is a P2PK key's: in the script view its P2PKH script hash has nothing
        const keys = [...ref().summaries.keys()].filter((sh) => !r.summaries.has(sh)).map((h) => Buffer.from(h, 'hex'));
        assert.ok(keys.length > 400);
        assert.deepEqual(await full.getSummaries(keys, { view: 'script' }), keys.map(() => null));
        assert.deepEqual(await full.getHistory(HAL, { view: 'script' }), { entries: [], next: null });
        assert.deepEqual(await full.getUtxos(HAL, { view: 'script' }), { utxos: [], next: null });
        // Hal's P2PK output, under its own script hash in either view
        const halP2pk = Buffer.from(r.outputs.find((o) => o.txid === TX170 && o.vout === 0).sh, 'hex');
        for (const view of ['script', 'address']) {
          assert.deepEqual((await full.getSummary(halP2pk, { view })).balance, 10 * COIN);
          assert.deepEqual((await full.getHistory(halP2pk, { view })).entries.map(plain), [{ txNum: 171, txid: TX170, height: 170, funded: true, spent: false }]);
        }
        await assert.rejects(full.getSummary(HAL, { view: 'exact' }), (err) => err instanceof UsageError && err.code === 'ERR_BAD_VIEW');
        await assert.rejects(full.getHistory(HAL, { view: 'exact' }), (err) => err instanceof UsageError && err.code === 'ERR_BAD_VIEW');
        await assert.rejects(full.getUtxos(HAL, { view: 'exact' }), (err) => err instanceof UsageError && err.code === 'ERR_BAD_VIEW');
      });

      it('the height-170 payment: 10 BTC to Hal in f4184fc5…, in both addresses', async () => {
        const hal = await full.getSummary(HAL);
        assert.deepEqual(hal, {
          balance: 10 * COIN, received: 10 * COIN, sent: 0, txCount: 1, fundedCount: 1, spentCount: 0,
          utxoCount: 1, firstHeight: 170, lastHeight: 170,
        });
        const h = await full.getHistory(HAL);
        assert.deepEqual(h.entries.map(plain), [{ txNum: 171, txid: TX170, height: 170, funded: true, spent: false }]);
        const sat = (await full.getHistory(SATOSHI9)).entries.map(plain);
        assert.deepEqual(sat.slice(0, 2), [
          { txNum: 9, txid: '0437cd7f8525ceed2324359c2d0ba26006d92d856a9c20fa0241106ee5a597c9', height: 9, funded: true, spent: false },
          { txNum: 171, txid: TX170, height: 170, funded: true, spent: true },
        ]);
        assert.deepEqual((await full.getUtxos(HAL)).utxos.map(plainUtxo), [{ txid: TX170, vout: 0, value: 10 * COIN, height: 170, txNum: 171 }]);
      });

      it('the height-9 coinbase address at height 170: funded 50, spent 50, 40 back as change', async () => {
        const { store } = await fresh(MAIN);
        await syncBlocks(store, mainnetChain().blocks, 0, 170, [100, 71]);
        assert.deepEqual(await store.getSummary(SATOSHI9), {
          balance: 40 * COIN, received: 90 * COIN, sent: 50 * COIN, txCount: 2, fundedCount: 2, spentCount: 1,
          utxoCount: 1, firstHeight: 9, lastHeight: 170,
        });
        assert.deepEqual((await store.getUtxos(SATOSHI9)).utxos.map(plainUtxo), [{ txid: TX170, vout: 1, value: 40 * COIN, height: 170, txNum: 171 }]);
      });

      it('files nothing for the genesis coinbase, but gives it TxNum 0', async () => {
        assert.equal(await full.getSummary(GENESIS_ADDR), null);
        assert.deepEqual(await full.getHistory(GENESIS_ADDR), { entries: [], next: null });
        assert.deepEqual(await full.getUtxos(GENESIS_ADDR), { utxos: [], next: null });
        const loc = await full.getTx(fromDisplayHex(GENESIS_TX));
        assert.deepEqual({ ...loc, txid: toDisplayHex(loc.txid) }, {
          txNum: 0, txid: GENESIS_TX, height: 0, blockHash: '000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f', position: 0, offset: 81, length: 204,
        });
        assert.deepEqual(await full.getPrevouts(Buffer.concat([fromDisplayHex(GENESIS_TX), Buffer.alloc(4)])), [null]);
      });

      it('locates transactions and maps txid <-> TxNum both ways', async () => {
        const loc = await full.getTx(fromDisplayHex(TX170));
        assert.deepEqual({ ...loc, txid: toDisplayHex(loc.txid) }, { txNum: 171, txid: TX170, height: 170, blockHash: BLOCK170, position: 1, offset: 215, length: 275 });
        const r = ref();
        const raws = mainnetChain().raws;
        for (let txNum = 0; txNum < r.txids.length; txNum++) {
          assert.equal(toDisplayHex(await full.getTxid(txNum)), r.txids[txNum]);
          const t = await full.getTx(fromDisplayHex(r.txids[txNum]));
          assert.equal(t.txNum, txNum);
          assert.equal(t.height, r.heightOf[txNum]);
          // its bytes where the index says they lie in its block (no witness in these blocks)
          assert.equal(toDisplayHex(sha256d(raws[t.height].subarray(t.offset, t.offset + t.length))), r.txids[txNum]);
        }
        assert.equal(await full.getTxid(r.txids.length), null);
        assert.equal(await full.getBlockHash(170), BLOCK170);
        assert.equal(await full.getBlockHash(439), null);
        assert.deepEqual(await full.getBlock(170), {
          height: 170, hash: BLOCK170, time: 1231731025, firstTxNum: 170, txCount: 2,
          header: raws[170].subarray(0, 80), size: raws[170].length, weight: 4 * raws[170].length, locator: null,
        });
        assert.equal(await full.getBlock(439), null);
        // block 170's header: time 1231731025, one coinbase then the payment
        const b170 = await full.getBlock(170);
        assert.deepEqual({ hash: b170.hash, time: b170.time, txCount: b170.txCount },
          { hash: BLOCK170, time: 1231731025, txCount: 2 });
        assert.equal(b170.firstTxNum, r.heightOf.indexOf(170));
        assert.equal(await full.getBlock(439), null);
      });

      it('blocks by hash, headers and txids of any range, as the chain has them', async () => {
        const r = ref();
        const raws = mainnetChain().raws;
        const headers = await full.getHeaders(0, 500);
        assert.equal(headers.length, 80 * 439);
        for (let h = 0; h < 439; h++) assert.deepEqual(headers.subarray(80 * h, 80 * h + 80), raws[h].subarray(0, 80), `header ${h}`);
        assert.deepEqual(await full.getHeaders(437, 1), raws[437].subarray(0, 80));
        assert.deepEqual(await full.getHeaders(439, 5), Buffer.alloc(0));
        for (const h of [0, 170, 438]) {
          const b = await full.getBlockByHash(r.blockHashes[h]);
          assert.equal(b.height, h);
          assert.deepEqual(b, await full.getBlock(h));
          assert.deepEqual(await full.getBlockByHash(r.blockHashes[h].toUpperCase()), b);
          const txids = await full.getTxids(b.firstTxNum, b.txCount);
          assert.deepEqual(chunks(txids).map(toDisplayHex), r.txids.slice(b.firstTxNum, b.firstTxNum + b.txCount));
        }
        assert.equal(await full.getBlockByHash('00'.repeat(32)), null);
        assert.deepEqual(chunks(await full.getTxids(440, 100)).map(toDisplayHex), r.txids.slice(440));
        for (const bad of [['x'.repeat(64)], [BLOCK170.slice(2)], [42]]) {
          await assert.rejects(full.getBlockByHash(...bad), (err) => err instanceof UsageError && err.code === 'ERR_BAD_BLOCK_HASH');
        }
        for (const bad of [[-1, 2], [0, -1], [1.5, 1], ['0', 1]]) {
          await assert.rejects(full.getHeaders(...bad), (err) => err instanceof UsageError && err.code === 'ERR_BAD_RANGE');
          await assert.rejects(full.getTxids(...bad), (err) => err instanceof UsageError && err.code === 'ERR_BAD_RANGE');
        }
      });

      it('says who spent each output, and which script hashes each recent block touched', async () => {
        const r = ref();
        // every spent output of the reference, by its transaction
        const spentBy = new Map();
        for (const o of r.outputs) {
          if (o.spentAt === null) continue;
          if (!spentBy.has(o.txid)) spentBy.set(o.txid, []);
          spentBy.get(o.txid).push(o);
        }
        for (let txNum = 0; txNum < r.txids.length; txNum++) {
          const got = await full.getSpenders(fromDisplayHex(r.txids[txNum]));
          const want = (spentBy.get(r.txids[txNum]) || []).sort((a, b) => a.vout - b.vout);
          assert.deepEqual(got.map((x) => [x.vout, x.height, toDisplayHex(x.txid), r.txids[x.txNum], x.vin]),
            want.map((o) => [o.vout, o.spentAt, o.spentTxid, o.spentTxid, o.spentVin]), `spenders of ${r.txids[txNum]}`);
        }
        assert.equal(await full.getSpenders(Buffer.alloc(32)), null);
        // each block's touched script hashes: its outputs' and those of the outputs it spent; in
        // the script view by their own script hash, in the address view by both (a P2PK output's
        // own script hash answers it in both views)
        const own = scriptRef().outputs;
        for (const h of [9, 170, 300, 438]) {
          const at = (o) => o.height === h || o.spentAt === h;
          const script = new Set(own.filter(at).map((o) => o.sh));
          const address = new Set([...r.outputs.filter(at).map((o) => o.sh), ...script]);
          assert.deepEqual(chunks(await full.getTouched(h)).map((b) => b.toString('hex')).sort(), [...address].sort(), `block ${h}`);
          assert.deepEqual(chunks(await full.getTouched(h, { view: 'script' })).map((b) => b.toString('hex')).sort(), [...script].sort(), `block ${h}, script view`);
        }
        assert.ok((await full.getTouched(170, { view: 'script' })).length >= 3 * 32, 'the coinbase, the payee and the payer');
        assert.equal(await full.getTouched(439), null);
        await assert.rejects(full.getTouched(170, { view: 'p2pk' }), (err) => err instanceof UsageError && err.code === 'ERR_BAD_VIEW');
      });

      it('answers prevouts: unspent ones, null for spent and unknown', async () => {
        const op = (txid, vout) => {
          const b = Buffer.alloc(36);
          fromDisplayHex(txid).copy(b);
          b.writeUInt32LE(vout, 32);
          return b;
        };
        const got = await full.getPrevouts(Buffer.concat([op(TX170, 0), op(TX170, 1), op(TX170, 2), op('11'.repeat(32), 0)]));
        assert.equal(got.length, 4);
        const halP2pk = scriptRef().outputs.find((o) => o.txid === TX170 && o.vout === 0).sh;
        assert.deepEqual({ ...got[0], scripthash: got[0].scripthash.toString('hex'), p2pk: got[0].p2pk.toString('hex') },
          { value: 10 * COIN, scripthash: HAL.toString('hex'), p2pk: halP2pk, height: 170, txNum: 171 });
        assert.deepEqual(got.slice(1), [null, null, null]);
      });

      it('merges the histories of several addresses: a tx touching two appears once', async () => {
        const shs = [HAL, SATOSHI9, GENESIS_ADDR];
        const all = await full.getHistories(shs, { limit: 1000 });
        const r = ref();
        const expected = mergedReference(r, shs, {});
        assert.deepEqual(all.entries.map(plainMerged), expected);
        assert.equal(all.next, null);
        const pay = all.entries.find((e) => toDisplayHex(e.txid) === TX170);
        assert.deepEqual(pay.scripthashes.map((b) => b.toString('hex')), [HAL.toString('hex'), SATOSHI9.toString('hex')]);
        assert.equal(all.entries.filter((e) => toDisplayHex(e.txid) === TX170).length, 1);
      });

      it('reverts to 300 exactly, and applying again gives the same index', async () => {
        const before = await full.digest();
        const { store: at300 } = await fresh(MAIN);
        await syncBlocks(at300, mainnetChain().blocks, 0, 300, [301]);
        const { store: work } = await fresh(MAIN);
        await syncBlocks(work, mainnetChain().blocks, 0, 438, [200, 239]);
        assert.equal(await work.digest(), before);
        await work.revert(300);
        assert.deepEqual(await work.getTip(), await at300.getTip());
        assert.equal(await work.digest(), await at300.digest());
        assert.equal((await work.verify()).ok, true);
        await syncBlocks(work, mainnetChain().blocks, 301, 438, [13]);
        assert.equal(await work.digest(), before);
      });

      it('refuses a revert deeper than the undo kept, saying what to do; nothing changes', async () => {
        const { store } = await fresh({ network: 'main', undoDepth: 10 });
        await syncBlocks(store, mainnetChain().blocks, 0, 438, [100]);
        const before = await store.digest();
        await assert.rejects(store.revert(400), (err) => {
          assert.ok(err instanceof StoreError);
          assert.equal(err.code, 'ERR_UNDO_MISSING');
          assert.match(err.message, /undo-depth/);
          assert.match(err.message, /re-sync/i);
          return true;
        });
        assert.equal(await store.digest(), before);
        await store.revert(430);
        assert.equal((await store.getTip()).height, 430);
        assert.equal((await store.verify()).ok, true);
      });

      it('given the chain\'s height, a catch-up far below it may keep no undo; caught up, its undo is the same', async () => {
        // undoDepth 10: at tip 300 of a chain of 438 the blocks' undo can only serve a reorg
        // deeper than 10 below the chain, which the sync refuses anyway
        const chain = { chainHeight: 438 };
        const { store } = await fresh({ network: 'main', undoDepth: 10 });
        await syncBlocks(store, mainnetChain().blocks, 0, 300, [100, 1], chain);
        if (backend.kind === 'mongo') {
          // its writer needs every block's undo document to finish an interrupted apply
          assert.notEqual(await store.getTouched(300), null);
        } else {
          assert.equal(await store.getTouched(300), null);
          const before = await store.digest();
          await assert.rejects(store.revert(295), (err) => err instanceof StoreError && err.code === 'ERR_UNDO_MISSING' &&
            /within 10 of the best chain known/.test(err.message));
          assert.equal(await store.digest(), before);
        }
        await syncBlocks(store, mainnetChain().blocks, 301, 438, [100, 7], chain);
        const { store: plain } = await fresh({ network: 'main', undoDepth: 10 });
        await syncBlocks(plain, mainnetChain().blocks, 0, 438, [100]);
        assert.equal(await store.digest(), await plain.digest());
        await store.revert(428);
        assert.equal((await store.verify()).ok, true);
      });

      it('refuses blocks that do not extend the tip; nothing changes', async () => {
        const { store } = await fresh(MAIN);
        await syncBlocks(store, mainnetChain().blocks, 0, 100);
        const before = await store.digest();
        const tip = await store.getTip();
        const good = await buildDeltas(mainnetChain().blocks.slice(101, 103), store, tip.nextTxNum);
        const cases = [
          [{ ...good[0], height: 102 }],
          [{ ...good[0], cols: { ...good[0].cols, prev: '00'.repeat(32) } }],
          [{ ...good[0], firstTxNum: tip.nextTxNum + 1 }],
          [good[0], { ...good[1], cols: { ...good[1].cols, prev: good[0].cols.prev } }],
          (await buildDeltas(mainnetChain().blocks.slice(100, 101), store, tip.nextTxNum - 1)),
        ];
        for (const deltas of cases) {
          await assert.rejects(store.apply(deltas), (err) => err instanceof StoreError && err.code === 'ERR_NOT_EXTENDING');
          assert.equal(await store.digest(), before);
        }
        await store.apply(good);
        assert.equal((await store.getTip()).height, 102);
      });

      it('two writers racing for one tip: one commits, the other is refused with nothing written', async () => {
        const { store } = await fresh(MAIN);
        await syncBlocks(store, mainnetChain().blocks, 0, 50);
        const tip = await store.getTip();
        const deltas = await buildDeltas(mainnetChain().blocks.slice(51, 60), store, tip.nextTxNum);
        const results = await Promise.allSettled([store.apply(deltas), store.apply(deltas)]);
        const refused = results.filter((r) => r.status === 'rejected');
        assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
        assert.equal(refused.length, 1);
        assert.ok(refused[0].reason instanceof StoreError);
        assert.ok(['ERR_CONCURRENT_WRITE', 'ERR_NOT_EXTENDING'].includes(refused[0].reason.code), refused[0].reason.code);
        assert.equal((await store.getTip()).height, 59);
        assert.equal((await store.verify()).ok, true);
      });

      it('engineStats(): the engine\'s own cheap readings, named by the store', async () => {
        const e = await full.engineStats();
        assert.equal(e.store, backend.kind);
        if (backend.kind === 'lmdb') {
          assert.ok(e.usedBytes > 0 && e.usedBytes <= e.mapBytes, JSON.stringify(e));
        } else {
          assert.equal(e.mapBytes, undefined);
        }
      });

      it('stats(): one typed shape, its counts those of the reference', async () => {
        const r = ref();
        const st = await full.stats();
        assert.equal(st.store, backend.kind);
        assert.deepEqual(st.tip, await full.getTip());
        let bytes = 0;
        for (const [name, t] of Object.entries(st.tables)) {
          assert.ok(Number.isInteger(t.rows) && t.rows >= 0 && Number.isInteger(t.bytes) && t.bytes >= 0, name);
          assert.deepEqual(Object.keys(t).sort(), ['bytes', 'rows'], name);
          bytes += t.bytes;
        }
        assert.equal(st.bytes, bytes);
        assert.ok(st.bytes > 0 && st.diskBytes > 0);
        // the address accounts, and each P2PK script's own
        const all = [...r.summaries.values(), ...[...scriptRef().summaries].filter(([sh]) => !r.summaries.has(sh)).map(([, x]) => x)];
        assert.equal(st.historyEntries, all.reduce((n, x) => n + x.txCount, 0));
        assert.equal(st.utxos, all.reduce((n, x) => n + x.utxoCount, 0));
        assert.equal(typeof st.engine, 'object');
      });

      it('digest(): every logical record, undo included unless left out', async () => {
        // the same blocks with less undo kept: equal without undo, different with it
        const { store: shallow } = await fresh({ ...MAIN, undoDepth: 5 });
        await syncBlocks(shallow, mainnetChain().blocks, 0, 438, [200, 239]);
        assert.equal(await shallow.digest({ undo: false }), await full.digest({ undo: false }));
        assert.notEqual(await shallow.digest(), await full.digest());
        assert.equal(await full.digest(), await full.digest({ undo: true }));
        // one more block changes both
        const before = await shallow.digest({ undo: false });
        await shallow.revert(437);
        assert.notEqual(await shallow.digest({ undo: false }), before);
      });

      it('the forwarding store (lib/cluster/forward.js) answers every read as the store does, errors included', async () => {
        const child = fork(path.join(__dirname, 'forward-child.js'), { serialization: 'advanced', stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
        serveStore({ on: (ev, fn) => child.on(ev, fn), send: (m) => child.send(m), isConnected: () => child.connected }, full);
        let nextId = 1;
        const viaWorker = (method, args) => new Promise((resolve) => {
          const id = nextId++;
          const onMessage = (m) => {
            if (!m || m.type !== 'test-result' || m.id !== id) return;
            child.off('message', onMessage);
            resolve(m);
          };
          child.on('message', onMessage);
          child.send({ type: 'test-call', id, method, args });
        });
        const outpoints = Buffer.concat([fromDisplayHex(TX170), Buffer.from([1, 0, 0, 0]), Buffer.alloc(36)]);
        const calls = {
          getTip: [[]], getBlock: [[170], [-1]], getBlockHash: [[170], [9999]], getPrevouts: [[outpoints]],
          getSummary: [[HAL], [GENESIS_ADDR], [HAL, { view: 'script' }], [HAL, { view: 'bogus' }]], getSummaries: [[[HAL, SATOSHI9, HAL]], [[HAL, SATOSHI9], { view: 'script' }]],
          getHistory: [[SATOSHI9, { limit: 2, order: 'desc' }], [HAL, { cursor: 'not-a-cursor' }]],
          getHistories: [[[HAL, SATOSHI9], { limit: 3 }], ['not an array']],
          getUtxos: [[SATOSHI9, { limit: 1 }], [Buffer.alloc(31)]], getTx: [[fromDisplayHex(TX170)]], getTxid: [[171]],
          getMempoolHead: [[]], getMempool: [[], [{ raws: true }]], getMempoolRaw: [[1, fromDisplayHex(TX170)], [-1, fromDisplayHex(TX170)]], getMempoolChanges: [[0], [-1]], getSourceInfo: [[]], stats: [[]], verify: [[{ maxProblems: 3 }]], digest: [[], [{ undo: false }]],
          getBlockByHash: [[BLOCK170], ['zz']], getHeaders: [[168, 3]], getTxids: [[170, 2], [-1, 2]],
          getSpenders: [[fromDisplayHex(TX170)]], getTouched: [[438], [9], [170, { view: 'script' }]], getBlockBytes: [[170], [-1]], engineStats: [[]],
          getWallet: [['02' + '11'.repeat(32)], [42]], getWalletAddresses: [['0'.repeat(24), { limit: 2 }], ['nope']], getWalletsOf: [[[HAL]], ['x']],
        };
        try {
          assert.deepEqual(Object.keys(calls).sort(), [...READ_METHODS].sort(), 'every read of the contract is tried');
          for (const [method, argSets] of Object.entries(calls)) {
            for (const args of argSets) {
              const direct = await full[method](...args).then((result) => ({ result }), (err) => ({ error: err }));
              const got = await viaWorker(method, args);
              const what = `${method}(${JSON.stringify(args).slice(0, 60)})`;
              if (direct.error) {
                assert.ok(got.error, `${what} fails through the forwarding store too`);
                assert.deepEqual([got.error.name, got.error.code], [direct.error.constructor.name, direct.error.code], what);
              } else {
                assert.equal(got.error, undefined, `${what}: ${got.error && got.error.message}`);
                assert.deepEqual(bufferless(got.result), bufferless(direct.result), what);
              }
            }
          }
        } finally {
          child.disconnect();
        }
      });

      it('the mempool snapshot: a change at a time while the tip stands, refused once it moved, kept changes and the whole, never in digest or verify', async () => {
        const { location, store } = await fresh(MAIN);
        await syncBlocks(store, mainnetChain().blocks, 0, 170);
        assert.equal(await store.getMempoolHead(), null);
        assert.equal(await store.getMempool(), null);
        assert.equal(await store.getMempoolChanges(0), null);
        const digest = await store.digest();
        const tip = await store.getTip();
        const tx = (n, values) => ({
          txid: Buffer.alloc(32, n), time: 1231731025 + n, fee: n, vsize: 100 + n, raw: Buffer.alloc(60 + n, n),
          inputs: [{ txid: Buffer.alloc(32, 9), vout: n, value: 50e8, scripthash: SATOSHI9, unconfirmed: false }],
          outputs: values.map((value, k) => ({ value, scripthash: k === 2 ? null : [HAL, SATOSHI9][k] })),
        });
        const tipOf = (hash) => fromDisplayHex(hash);
        const change = (seq, prev, tipHash, removed, upserts, more = {}) => encodeChange({
          seq, prev, tip: tipOf(tipHash), count: 0, vsize: 0, fee: 0, evicted: 0, reset: false,
          // [tx, its stored place]
          removed: removed.map(([n]) => Buffer.alloc(32, n)), removedRanks: removed.map(([, rank]) => rank),
          upserts: upserts.map(([rank, t]) => ({ rank, part: encodeMempoolTx(t), raw: t.raw })), ...more,
        });
        const whole = async () => decodeWhole(await store.getMempool());
        const txids = (w) => w.rows.map((r) => [r.rank, decodeMempoolTx(r.part).txid[0]]);
        assert.equal(await store.putMempool(change(1, 0, tip.hash, [], [[1, tx(1, [10e8, 40e8, 0])], [2, tx(2, [5])]], { count: 2, vsize: 203, fee: 3 })), true);
        assert.deepEqual(await store.getMempoolHead(), { seq: 1, tip: tip.hash, count: 2, vsize: 203, fee: 3, evicted: 0, from: 1 });
        let w = await whole();
        assert.deepEqual([w.seq, toDisplayHex(w.tip), txids(w)], [1, tip.hash, [[1, 1], [2, 2]]]);
        assert.deepEqual(decodeMempoolTx(w.rows[0].part).outputs.map((o) => o.value), [10e8, 40e8, 0]);
        // 2 leaves, 3 enters before 1 (a lower place), 1 changes in place
        const c2 = change(2, 1, tip.hash, [[2, 2]], [[0, tx(3, [7])], [1, tx(1, [11e8, 39e8, 0])]], { count: 2, evicted: 4 });
        if (backend.kind !== 'mongo') {
          // a key-value store keys rows by place: a change that names a place holding another
          // transaction (or none) is of another snapshot, refused whole
          for (const wrong of [[[2, 1]], [[2, 9]]]) {
            await assert.rejects(store.putMempool(change(2, 1, tip.hash, wrong, [[0, tx(3, [7])]])), (err) => err.code === 'ERR_MEMPOOL_SEQ');
          }
          assert.deepEqual(txids(await whole()), [[1, 1], [2, 2]]);
        }
        assert.equal(await store.putMempool(c2), true);
        w = await whole();
        assert.deepEqual(txids(w), [[0, 3], [1, 1]]);
        assert.deepEqual(decodeMempoolTx(w.rows[1].part).outputs.map((o) => o.value), [11e8, 39e8, 0]);
        assert.deepEqual(await store.getMempoolChanges(1), [c2]);
        assert.deepEqual(await store.getMempoolChanges(2), []);
        assert.equal(await store.getMempoolChanges(0), null, 'before the first change kept');
        assert.equal((await store.getMempoolHead()).evicted, 4);
        // 1 moves to a later place: it leaves its old one and enters at the new
        const c2b = change(3, 2, tip.hash, [[1, 1]], [[6, tx(1, [11e8, 39e8, 0])]], { count: 2, evicted: 4 });
        assert.equal(await store.putMempool(c2b), true);
        assert.deepEqual(txids(await whole()), [[0, 3], [6, 1]]);
        assert.deepEqual(await store.getMempoolChanges(1), [c2, c2b]);
        // the transactions' bytes: beside the parts, read by place and txid
        const rawAt = async (rank, n) => {
          const raw = await store.getMempoolRaw(rank, Buffer.alloc(32, n));
          return raw && raw.toString('hex');
        };
        assert.equal(await rawAt(6, 1), tx(1, [0]).raw.toString('hex'));
        assert.equal(await rawAt(0, 3), tx(3, [0]).raw.toString('hex'));
        assert.equal(await rawAt(6, 3), null, 'a place that holds another transaction');
        assert.equal(await rawAt(7, 1), null, 'a place that holds none');
        // a key-value store keeps the bytes of what left while it keeps the change that says
        // so (a reader's view as old as that still reads them); MongoDB keeps a document's
        assert.equal(await rawAt(2, 2), backend.kind === 'mongo' ? null : tx(2, [0]).raw.toString('hex'));
        assert.equal(await rawAt(1, 1), backend.kind === 'mongo' ? null : tx(1, [0]).raw.toString('hex'));
        const withRaws = decodeWhole(await store.getMempool({ raws: true }));
        assert.deepEqual(withRaws.rows.map((r) => [r.rank, Buffer.from(r.raw).toString('hex')]), [[0, tx(3, [0]).raw.toString('hex')], [6, tx(1, [0]).raw.toString('hex')]]);
        assert.deepEqual(withRaws.rows.map((r) => Buffer.from(r.part)), (await whole()).rows.map((r) => Buffer.from(r.part)));
        assert.equal((await whole()).rows[0].raw, null, 'a whole read leaves the bytes out');
        await assert.rejects(store.getMempoolRaw(-1, Buffer.alloc(32)), (err) => err.code === 'ERR_BAD_PLACE');
        await assert.rejects(store.getMempoolRaw(1, Buffer.alloc(31)), (err) => err.code === 'ERR_BAD_TXID');
        // a change that does not apply to the stored seq is an error, not a silent mix
        await assert.rejects(store.putMempool(change(5, 4, tip.hash, [], [])), (err) => err.code === 'ERR_MEMPOOL_SEQ');
        await assert.rejects(store.putMempool(change(3, 3, tip.hash, [], [])), (err) => err.code === 'ERR_MEMPOOL_SEQ');
        await assert.rejects(store.putMempool(Buffer.from('00', 'hex').toString()), (err) => err.code === 'ERR_BAD_CHANGE');
        assert.equal(await store.digest(), digest, 'the mempool is not chain data');
        assert.equal((await store.verify()).ok, true);
        // a change resolved against another tip is refused, whatever its seq
        assert.equal(await store.putMempool(change(4, 3, BLOCK170.replace(/^0/, '1'), [], [])), false);
        await syncBlocks(store, mainnetChain().blocks, 171, 172);
        assert.equal(await store.putMempool(change(4, 3, tip.hash, [], [])), false);
        assert.equal((await store.getMempoolHead()).seq, 3, 'the stale snapshot stays until replaced; readers compare its tip');
        // a reset replaces everything
        const newTip = (await store.getTip()).hash;
        assert.equal(await store.putMempool(change(4, 0, newTip, [], [[5, tx(5, [1])]], { reset: true, count: 1 })), true);
        w = await whole();
        assert.deepEqual([w.seq, toDisplayHex(w.tip), txids(w)], [4, newTip, [[5, 5]]]);
        assert.equal(await store.getMempoolChanges(3), null, 'no reader catches up across a reset');
        const reader = await open(location, { ...MAIN, readOnly: true });
        assert.equal((await reader.getMempoolHead()).seq, 4);
        assert.deepEqual(await reader.getMempool(), await store.getMempool());
        await assert.rejects(reader.putMempool(change(5, 4, newTip, [], [])), (err) => err.code === 'ERR_READ_ONLY');
      });

      if (backend.kind !== 'mongo') {
        it('a mempool transaction\'s bytes outlive its part by the changes kept, and go with the change that pruned, or a stub', async () => {
          const { KEEP_CHANGES, KEEP_CHANGE_BYTES } = require('../../lib/stores/mempool-rows');
          const { store } = await fresh(MAIN);
          await syncBlocks(store, mainnetChain().blocks, 0, 170);
          const tip = fromDisplayHex((await store.getTip()).hash);
          const tx = (n, rawBytes = 60) => ({
            txid: Buffer.alloc(32, n), time: n, fee: n, vsize: 100, raw: Buffer.alloc(rawBytes, n),
            inputs: [{ txid: Buffer.alloc(32, 200), vout: n, value: 1000, scripthash: HAL, unconfirmed: false }], outputs: [{ value: 1000 - n, scripthash: HAL }],
          });
          const change = (seq, removed, upserts) => encodeChange({
            seq, prev: seq - 1, tip, count: 0, vsize: 0, fee: 0, evicted: 0, reset: false,
            removed: removed.map(([n]) => Buffer.alloc(32, n)), removedRanks: removed.map(([, rank]) => rank),
            upserts: upserts.map(([rank, t]) => ({ rank, part: encodeMempoolTx(t), raw: t.raw })),
          });
          const has = async (rank, n) => (await store.getMempoolRaw(rank, Buffer.alloc(32, n))) !== null;
          assert.equal(await store.putMempool(change(1, [], [[1, tx(1)], [2, tx(2)], [3, tx(3)]])), true);
          // 1 leaves; 2 moves from place 2 to 4
          assert.equal(await store.putMempool(change(2, [[1, 1], [2, 2]], [[4, tx(2)]])), true);
          let seq = 2;
          while (seq < 1 + KEEP_CHANGES) assert.equal(await store.putMempool(change(++seq, [], [])), true);
          assert.deepEqual([await has(1, 1), await has(2, 2), await has(4, 2), await has(3, 3)], [true, true, true, true], 'change 2 is still kept');
          assert.equal(await store.putMempool(change(++seq, [], [])), true);
          assert.equal(await store.getMempoolChanges(1), null, 'change 2 is pruned');
          assert.deepEqual([await has(1, 1), await has(2, 2), await has(4, 2), await has(3, 3)], [false, false, true, true]);
          // a follower started again gives places after the highest it finds: one a transaction
          // left may come again, even to that transaction, whose bytes the pruning then keeps
          assert.equal(await store.putMempool(change(++seq, [[3, 3]], [])), true);
          assert.equal(await store.putMempool(change(++seq, [], [[3, tx(3)]])), true);
          const back = seq;
          while (seq < back + KEEP_CHANGES) assert.equal(await store.putMempool(change(++seq, [], [])), true);
          assert.equal(await store.getMempoolChanges(back - 2), null, 'the change that removed it is pruned');
          assert.equal(await has(3, 3), true);
          // a change kept as a stub names no one who left: their bytes go with it at once
          const big = Math.ceil(KEEP_CHANGE_BYTES / 1e6) + 1;
          const upserts = Array.from({ length: big }, (_, k) => [10 + k, tx(10 + k, 1e6)]);
          assert.equal(await store.putMempool(change(++seq, [[3, 3]], upserts)), true);
          assert.equal(await store.getMempoolChanges(seq - 1), null, 'a stub');
          assert.deepEqual([await has(3, 3), await has(10, 10), await has(4, 2)], [false, true, true]);
          assert.equal(decodeWhole(await store.getMempool({ raws: true })).rows.length, 1 + big);
        });

        it('a mempool snapshot of format 4 (rows keyed by txid): read for its seq only, replaced with its rows by the next change', async () => {
          const { encodeMempoolHead } = require('../../lib/codec/mempool');
          const layout = require('../../lib/stores/layout');
          const { store } = await fresh(MAIN);
          await syncBlocks(store, mainnetChain().blocks, 0, 170);
          const tip = await store.getTip();
          const part = encodeMempoolTx({
            txid: Buffer.alloc(32, 1), time: 1, fee: 1, vsize: 100, raw: Buffer.alloc(60, 1),
            inputs: [{ txid: Buffer.alloc(32, 9), vout: 0, value: 1000, scripthash: HAL, unconfirmed: false }], outputs: [{ value: 999, scripthash: HAL }],
          });
          // as a release of format 4 left it: head version 3, `M 02 txid` rows, a change of version 1
          const head = encodeMempoolHead({ seq: 9, tip: fromDisplayHex(tip.hash), count: 1, vsize: 100, fee: 1, evicted: 0, from: 9 });
          head[0] = 3;
          const rowKey = Buffer.concat([Buffer.from([layout.P.mempool, 2]), Buffer.alloc(32, 1)]);
          const changeKey = Buffer.from([layout.P.mempool, 3, 0, 0, 0, 0, 0, 0, 0, 9]);
          const tipRaw = await store.kv.get(layout.TIP_KEY);
          const keys = [layout.MEMPOOL_HEAD_KEY, rowKey, changeKey];
          const values = [head, Buffer.concat([Buffer.from([1, 1]), part]), Buffer.from([1, 9, 8])];
          assert.equal(await store.kv.write({ keys, values }, { key: layout.TIP_KEY, value: tipRaw }), true);
          assert.deepEqual(await store.getMempoolHead(), { seq: 9, tip: tip.hash, count: 1, vsize: 100, fee: 1, evicted: 0, from: 10, legacy: true });
          assert.equal(await store.getMempool(), null, 'its rows are not read');
          assert.equal(await store.getMempoolChanges(8), null);
          // the follower's first change: a reset at the next seq
          const c = encodeChange({
            seq: 10, prev: 9, tip: fromDisplayHex(tip.hash), count: 1, vsize: 100, fee: 1, evicted: 0, reset: true,
            removed: [], removedRanks: [], upserts: [{ rank: 1, part, raw: Buffer.alloc(60, 1) }],
          });
          assert.equal(await store.putMempool(c), true);
          assert.deepEqual(decodeWhole(await store.getMempool()).rows.map((r) => [r.rank, Buffer.from(r.part).equals(part)]), [[1, true]]);
          assert.deepEqual(await store.kv.getMany([rowKey, changeKey]), [undefined, undefined], 'the rows of format 4 went with it');
          assert.equal((await store.getMempoolHead()).legacy, undefined);
        });
      }

      it('wallets (bitcore v8): created once per key, addresses in the order added, never in digest or verify', async () => {
        const { location, store } = await fresh(MAIN);
        await syncBlocks(store, mainnetChain().blocks, 0, 170);
        const digest = await store.digest();
        const pubKey = '03' + 'ab'.repeat(32);
        const fields = { pubKey, name: 'w1', path: "m/44'/0'/0'", chain: 'BTC', network: 'mainnet' };
        assert.equal(await store.getWallet(pubKey), null);
        const made = await store.createWallet(fields);
        assert.equal(made.created, true);
        assert.match(made.wallet.id, /^[0-9a-f]{24}$/);
        assert.deepEqual({ ...made.wallet, id: 'x' }, { id: 'x', ...fields, singleAddress: null, addresses: 0 });
        const again = await store.createWallet({ ...fields, name: 'other' });
        assert.deepEqual(again, { wallet: made.wallet, created: false }, 'a second create answers the first wallet, unchanged');
        await assert.rejects(store.createWallet({ ...fields, pubKey: 'k'.repeat(255) }), (err) => err.code === 'ERR_WALLET_FIELD');
        await assert.rejects(store.createWallet({ pubKey: '02aa', chain: 'BTC', network: 'mainnet' }), (err) => err.code === 'ERR_WALLET_FIELD');
        const a = (address, sh) => ({ address, scripthash: sh });
        const OTHER = Buffer.alloc(32, 7);
        assert.deepEqual(await store.addWalletAddresses(pubKey, [a('hal', HAL), a('sat', SATOSHI9), a('hal again', HAL)]),
          { wallet: { ...made.wallet, addresses: 2 }, added: 2 });
        assert.equal((await store.addWalletAddresses(pubKey, [a('sat', SATOSHI9), a('other', OTHER)])).added, 1, 'only the new one is added');
        assert.equal(await store.addWalletAddresses('02' + '00'.repeat(32), [a('hal', HAL)]), null, 'no such wallet');
        await assert.rejects(store.addWalletAddresses(pubKey, [{ address: 'x', scripthash: Buffer.alloc(31) }]), (err) => err.code === 'ERR_WALLET_ADDRESS');
        const id = made.wallet.id;
        const all = await store.getWalletAddresses(id);
        assert.deepEqual(all, { addresses: [a('hal', HAL), a('sat', SATOSHI9), a('other', OTHER)], next: null });
        assert.deepEqual(await store.getWalletAddresses(id, { limit: 2 }), { addresses: [a('hal', HAL), a('sat', SATOSHI9)], next: 2 });
        assert.deepEqual(await store.getWalletAddresses(id, { from: 2, limit: 2 }), { addresses: [a('other', OTHER)], next: null });
        assert.deepEqual(await store.getWalletAddresses('0'.repeat(24)), { addresses: [], next: null });
        await assert.rejects(store.getWalletAddresses('nope'), (err) => err.code === 'ERR_WALLET_ID');
        // a second wallet sharing an address: both are found from it
        const second = await store.createWallet({ ...fields, pubKey: '02' + 'cd'.repeat(32), name: 'w2' });
        await store.addWalletAddresses(second.wallet.pubKey, [a('sat', SATOSHI9)]);
        const holders = await store.getWalletsOf([SATOSHI9, HAL, GENESIS_ADDR]);
        assert.deepEqual(holders[0].map((w) => w.pubKey).sort(), [pubKey, second.wallet.pubKey].sort());
        assert.deepEqual(holders[1], [{ id, pubKey }]);
        assert.deepEqual(holders[2], []);
        assert.equal((await store.getWallet(pubKey)).addresses, 3);
        assert.equal(await store.digest(), digest, 'wallets are not chain data');
        assert.equal((await store.verify()).ok, true);
        // a reader sees them; a read-only key-value store cannot write them (MongoDB's can: the
        // server orders its clients' writes, and a wallet write must not open the chain's writer)
        const reader = await open(location, { ...MAIN, readOnly: true });
        assert.equal((await reader.getWallet(pubKey)).addresses, 3);
        const byReader = reader.createWallet({ ...fields, pubKey: '02' + 'ee'.repeat(32) });
        if (backend.kind === 'mongo') assert.equal((await byReader).created, true);
        else await assert.rejects(byReader, (err) => err.code === 'ERR_READ_ONLY');
        // a revert does not touch them
        await store.revert(100);
        assert.deepEqual((await store.getWalletAddresses(id)).addresses.length, 3);
      });

      it('keeps each block\'s place in the blocks dir (its locator), not chain data: out of the digest, dropped on revert', async () => {
        const { raws, blocks } = mainnetChain();
        // where blk-first-439.dat holds each block: after its own 8-byte record header
        const located = [];
        for (let h = 0, at = 0; h < raws.length; at += 8 + raws[h].length, h++) {
          located.push({ ...blocks[h], locator: { file: 7, offset: at + 8, length: raws[h].length } });
        }
        const { location, store } = await fresh(MAIN);
        await syncBlocks(store, located, 0, 438, [1, 60, 150]);
        for (const h of [0, 170, 438]) {
          const want = located[h].locator;
          assert.deepEqual((await store.getBlock(h)).locator, want, `block ${h}`);
          assert.deepEqual((await store.getBlockByHash((await store.getBlockHash(h)))).locator, want, `block ${h} by hash`);
        }
        // where one blocks dir holds the chain is not the chain: the same digest as without locators
        assert.equal(await store.digest(), await full.digest());
        assert.equal((await store.verify()).ok, true);
        const reader = await open(location, { ...MAIN, readOnly: true });
        assert.deepEqual((await reader.getBlock(300)).locator, located[300].locator);
        // reverted blocks take their locators with them; applied again from a node, they have none
        await store.revert(299);
        assert.equal(await store.getBlock(300), null);
        await syncBlocks(store, blocks, 300, 438, [139]);
        assert.equal((await store.getBlock(300)).locator, null);
        assert.deepEqual((await store.getBlock(299)).locator, located[299].locator);
        assert.equal(await store.digest(), await full.digest());
      });

      it('records where the sync reads its blocks, beside the chain (not in its digest)', async () => {
        const { location, store } = await fresh(MAIN);
        await syncBlocks(store, mainnetChain().blocks, 0, 2);
        assert.equal(await store.getSourceInfo(), null);
        const d = await store.digest();
        await store.putSourceInfo({ blocksDir: '/data/bitcoin/blocks' });
        await store.putSourceInfo({ blocksDir: '/srv/blocks', network: 'main' });
        assert.deepEqual(await store.getSourceInfo(), { blocksDir: '/srv/blocks', network: 'main' });
        assert.equal(await store.digest(), d);
        const reader = await open(location, { ...MAIN, readOnly: true });
        assert.deepEqual(await reader.getSourceInfo(), { blocksDir: '/srv/blocks', network: 'main' });
        await assert.rejects(reader.putSourceInfo({}), (err) => err.code === 'ERR_READ_ONLY');
      });

      it('--txstore: keeps every block\'s bytes exactly, drops them on revert, and is chosen once', async () => {
        const { raws, blocks } = mainnetChain();
        assert.equal(await full.getBlockBytes(170), null, 'an index without --txstore keeps no bytes');
        assert.equal(full.keepsTransactions, false);
        const { location, store } = await fresh({ ...MAIN, txstore: true });
        assert.equal(store.keepsTransactions, true);
        await syncBlocks(store, blocks, 0, 438, [7, 120, 312]);
        for (let h = 0; h < 439; h++) assert.deepEqual(await store.getBlockBytes(h), raws[h], `block ${h}`);
        assert.equal(await store.getBlockBytes(439), null);
        assert.equal(await store.getBlockBytes(-1), null);
        // everything else is the index without the bytes; the bytes are in its digest
        assert.equal(await store.getSummary(HAL).then((x) => x.balance), 10 * COIN);
        assert.notEqual(await store.digest(), await full.digest());
        assert.equal((await store.verify()).ok, true);
        await store.revert(300);
        assert.equal(await store.getBlockBytes(301), null);
        assert.deepEqual(await store.getBlockBytes(300), raws[300]);
        const { store: at300 } = await fresh({ ...MAIN, txstore: true });
        await syncBlocks(at300, blocks, 0, 300, [301]);
        assert.equal(await store.digest(), await at300.digest());
        // a block handed over without its bytes cannot go into an index that keeps them
        const tip = await store.getTip();
        const [bare] = await buildDeltas([{ ...blocks[301], raw: undefined }], store, tip.nextTxNum);
        await assert.rejects(store.apply([bare]), (err) => err instanceof StoreError && err.code === 'ERR_CORRUPT');
        assert.equal((await store.getTip()).height, 300, 'nothing written');
        await store.close();
        opened.splice(opened.indexOf(store), 1);
        // chosen when the index is created: asking otherwise later is refused; not asking takes it
        await assert.rejects(open(location, { ...MAIN, txstore: false }), (err) => err instanceof StoreError && err.code === 'ERR_TXSTORE');
        await assert.rejects(open(fullLocation, { ...MAIN, txstore: true }), (err) => err instanceof StoreError && err.code === 'ERR_TXSTORE');
        const again = await open(location, MAIN);
        assert.equal(again.keepsTransactions, true);
        assert.deepEqual(await again.getBlockBytes(300), raws[300]);
        const reader = await open(location, { ...MAIN, readOnly: true });
        assert.deepEqual(await reader.getBlockBytes(9), raws[9]);
        await assert.rejects(fresh({ ...MAIN, txstore: 'yes' }), (err) => err instanceof UsageError && err.code === 'ERR_USAGE');
      });

      it('keeps everything across close and reopen', async () => {
        const d = await full.digest();
        await full.close();
        opened.splice(opened.indexOf(full), 1);
        full = await open(fullLocation, MAIN);
        assert.equal(await full.digest(), d);
        assert.equal((await full.getTip()).height, 438);
        assert.equal((await full.getSummary(HAL)).balance, 10 * COIN);
      });

      it('verify: ok on a correct index, a problem on a tampered summary', async () => {
        const v = await full.verify();
        assert.equal(v.ok, true, v.problems.join('\n'));
        assert.deepEqual(v.problems, []);
        const { location, store } = await fresh(MAIN);
        await syncBlocks(store, mainnetChain().blocks, 0, 200);
        await store.close();
        await backend.tamperSummary(location, SATOSHI9);
        const again = await open(location, MAIN);
        const bad = await again.verify();
        assert.equal(bad.ok, false);
        assert.ok(bad.problems.some((p) => p.includes(toDisplayHex(SATOSHI9))), bad.problems.join('\n'));
      });

      it('verify: a P2PK script whose account is gone is a problem of the account counting it; its script view is refused, not guessed', async () => {
        const { location, store } = await fresh(MAIN);
        await syncBlocks(store, mainnetChain().blocks, 0, 200);
        await store.close();
        // Hal's P2PK output: its own script's account
        await backend.dropAccount(location, Buffer.from(scriptRef().outputs.find((o) => o.txid === TX170 && o.vout === 0).sh, 'hex'));
        const again = await open(location, MAIN);
        const bad = await again.verify();
        assert.equal(bad.ok, false);
        assert.ok(bad.problems.some((p) => p.includes(`account ${toDisplayHex(HAL)}`) && /counts the P2PK script/.test(p)), bad.problems.join('\n'));
        await assert.rejects(again.getSummary(HAL, { view: 'script' }), (err) => err instanceof StoreError && err.code === 'ERR_CORRUPT');
        await assert.rejects(again.getHistory(HAL, { view: 'script' }), (err) => err instanceof StoreError && err.code === 'ERR_CORRUPT');
        assert.equal((await again.getSummary(HAL)).balance, 10 * COIN, 'the address view does not need it');
      });

      it('a value that does not decode: CodecError from the read that hits it and from verify', async () => {
        const { location, store } = await fresh(MAIN);
        await syncBlocks(store, mainnetChain().blocks, 0, 200);
        await store.close();
        await backend.corruptSummary(location, SATOSHI9);
        const s = await open(location, MAIN);
        const isCodec = (err) => err instanceof CodecError && typeof err.code === 'string' && err.code.startsWith('ERR_');
        await assert.rejects(s.getSummary(SATOSHI9), isCodec);
        await assert.rejects(s.getHistory(SATOSHI9), isCodec);
        await assert.rejects(s.getSummaries([HAL, SATOSHI9]), isCodec);
        await assert.rejects(s.getHistories([HAL, SATOSHI9]), isCodec);
        await assert.rejects(s.verify(), isCodec);
        assert.equal((await s.getSummary(HAL)).balance, 10 * COIN);
      });
    });

    describe('a generated chain: segwit and taproot, address reuse, spends within a block', () => {
      const chain = () => generatedChain(GENERATED);
      // a height of the default 60-block chain, scaled to this one
      const H = (h) => Math.round((h * (chain().blocks.length - 1)) / 59);
      let store;
      let r;
      let hot; // the script hash with the longest history (sealed pages, UTXOs in rows)

      before(async () => {
        r = referenceIndex(chain().raws);
        hot = Buffer.from([...r.summaries.entries()].sort((a, b) => b[1].txCount - a[1].txCount)[0][0], 'hex');
        ({ store } = await fresh(REGTEST));
        await syncBlocks(store, chain().blocks, 0, chain().blocks.length - 1, [1, 7, 20, 3]);
      });

      it('matches the bitcore-lib index, and verify passes', async () => {
        assert.ok(r.summaries.get(hot.toString('hex')).txCount > 2 * 64, 'two sealed history pages and a tail');
        assert.ok(r.summaries.get(hot.toString('hex')).utxoCount > 16);
        await assertMatchesReference(store, r);
        const v = await store.verify();
        assert.equal(v.ok, true, v.problems.join('\n'));
      });

      it('is the same index whatever the batches, reverts and re-applies', async () => {
        const blocks = chain().blocks;
        const top = blocks.length - 1;
        const target = await store.digest();
        const { store: one } = await fresh(REGTEST);
        await syncBlocks(one, blocks, 0, top, [top + 1]);
        assert.equal(await one.digest(), target);
        for (const [to, sizes] of [[top - 1, [1]], [top - H(17), [5, 11]], [3, [60]], [top - H(40), [2]]]) {
          await one.revert(to);
          const { store: ref2 } = await fresh(REGTEST);
          await syncBlocks(ref2, blocks, 0, to, [to + 1]);
          assert.equal(await one.digest(), await ref2.digest(), `revert to ${to}`);
          await syncBlocks(one, blocks, to + 1, top, sizes);
          assert.equal(await one.digest(), target, `re-applied from ${to}`);
        }
      });

      it('pages history with cursors in both orders and height bounds: no gaps, no repeats', async () => {
        const full = r.history.get(hot.toString('hex'));
        for (const order of ['asc', 'desc']) {
          for (const bounds of [{}, { fromHeight: H(10), toHeight: H(40) }, { fromHeight: H(33) }, { toHeight: H(5) }, { fromHeight: H(40) + 1, toHeight: H(40) }]) {
            let want = full.filter((e) => (bounds.fromHeight === undefined || e.height >= bounds.fromHeight)
              && (bounds.toHeight === undefined || e.height <= bounds.toHeight));
            if (order === 'desc') want = [...want].reverse();
            for (const limit of [1, 7, 64, 1000]) {
              if (limit === 1 && want.length > 100) continue;
              const got = [];
              let cursor;
              let pages = 0;
              do {
                const page = await store.getHistory(hot, { ...bounds, order, limit, cursor });
                assert.ok(page.entries.length <= limit);
                got.push(...page.entries.map(plain));
                cursor = page.next;
                pages++;
              } while (cursor);
              assert.deepEqual(got.map((e) => e.txNum), want.map((e) => e.txNum), `${order} ${JSON.stringify(bounds)} limit ${limit}`);
              assert.deepEqual(got, want.map(plainRef));
              assert.equal(pages, Math.max(1, Math.ceil(want.length / limit)));
            }
          }
        }
      });

      it('merges several histories in chain order with one cursor', async () => {
        // the hot script hash, and every script hash of a tx that touches it and three others
        const tx = r.history.get(hot.toString('hex')).map((e) => e.txNum);
        const touching = (txNum) => [...r.history.entries()].filter(([, list]) => list.some((e) => e.txNum === txNum)).map(([sh]) => sh);
        let shs = null;
        for (const t of tx) {
          const s = touching(t);
          if (s.length >= 3) {
            shs = s;
            break;
          }
        }
        assert.ok(shs, 'a tx touching the hot script hash and others');
        shs = [...new Set([...shs.filter((s) => s !== hot.toString('hex')), hot.toString('hex')])].map((h) => Buffer.from(h, 'hex'));
        for (const order of ['asc', 'desc']) {
          for (const bounds of [{}, { fromHeight: H(20), toHeight: H(45) }]) {
            const want = mergedReference(r, shs, { ...bounds, order });
            const all = await store.getHistories(shs, { ...bounds, order, limit: 100000 });
            assert.deepEqual(all.entries.map(plainMerged), want);
            assert.ok(want.some((e) => e.scripthashes.length >= 2));
            const got = [];
            let cursor;
            do {
              const page = await store.getHistories(shs, { ...bounds, order, limit: 9, cursor });
              got.push(...page.entries.map(plainMerged));
              cursor = page.next;
            } while (cursor);
            assert.deepEqual(got, want);
          }
        }
        // a script hash given twice counts once; unknown ones add nothing
        const twice = await store.getHistories([shs[0], shs[0], Buffer.alloc(32, 7)], { limit: 100000 });
        assert.deepEqual(twice.entries.map(plainMerged), mergedReference(r, [shs[0]], {}));
      });

      it('pages UTXOs, inline and in rows', async () => {
        const small = [...r.utxos.entries()].find(([, list]) => list.length > 3 && list.length <= 16);
        for (const [sh, list] of [[hot.toString('hex'), r.utxos.get(hot.toString('hex'))], small]) {
          const want = list.map((o) => ({ txid: o.txid, vout: o.vout, value: o.value, height: o.height, txNum: o.txNum }));
          for (const limit of [1, 3, 1000]) {
            const got = [];
            let cursor;
            do {
              const page = await store.getUtxos(Buffer.from(sh, 'hex'), { limit, cursor });
              got.push(...page.utxos.map(plainUtxo));
              cursor = page.next;
            } while (cursor);
            assert.deepEqual(got, want);
          }
        }
      });

      it('rejects bad cursors, limits and orders as usage errors', async () => {
        for (const opts of [{ cursor: 'nonsense!' }, { cursor: 'AQAAAAAA' + 'x' }, { limit: 0 }, { limit: 1.5 }, { order: 'up' }, { fromHeight: -1 }]) {
          await assert.rejects(store.getHistory(hot, opts), (err) => err instanceof UsageError, JSON.stringify(opts));
        }
        const page = await store.getUtxos(hot, { limit: 2 });
        await assert.rejects(store.getHistory(hot, { cursor: page.next }), (err) => err instanceof UsageError && err.code === 'ERR_BAD_CURSOR');
        await assert.rejects(store.getSummary(Buffer.alloc(20)), (err) => err instanceof UsageError);
      });
    });

    describe('P2PK and P2PKH outputs of one key: the address view and the script view', () => {
      const chain = () => p2pkChain();
      const top = () => chain().blocks.length - 1;
      // a P2PK script's own hash answers its own outputs in both views; the address view adds
      // them to its key's P2PKH script hash, the script view does not
      const refs = (to) => {
        const script = referenceIndex(chain().raws, to, { view: 'script' });
        const a = referenceIndex(chain().raws, to);
        const own = (m, sm) => new Map([...m, ...[...sm].filter(([sh]) => !a.summaries.has(sh))]);
        return { script, address: { summaries: own(a.summaries, script.summaries), history: own(a.history, script.history), utxos: own(a.utxos, script.utxos) } };
      };
      let store;

      before(async () => {
        ({ store } = await fresh(REGTEST));
        await syncBlocks(store, chain().blocks, 0, top(), [1, 2, 3]);
      });

      it('both views match the bitcore-lib references, paged in both orders; verify passes', async () => {
        const r = refs(top());
        const differs = [...r.address.summaries.keys()].filter((sh) => JSON.stringify(r.address.summaries.get(sh)) !== JSON.stringify(r.script.summaries.get(sh) || null));
        assert.ok(differs.length >= 3, 'keys whose P2PKH script hash answers differently in the two views');
        assert.ok([...r.script.summaries.values()].some((x) => x.txCount > 64 && x.utxoCount === 0), 'a P2PK script with sealed pages');
        for (const view of ['address', 'script']) {
          await assertMatchesReference(store, r[view], { view });
          await assertPaged(store, r[view], view, [...r.address.summaries.keys()]);
        }
        // the P2PKH script hash of a key paid only as P2PK: nothing in the script view
        const onlyP2pk = [...r.address.summaries.keys()].filter((sh) => !r.script.summaries.has(sh));
        assert.ok(onlyP2pk.length >= 1);
        for (const sh of onlyP2pk) assert.equal(await store.getSummary(Buffer.from(sh, 'hex'), { view: 'script' }), null);
        const v = await store.verify();
        assert.equal(v.ok, true, v.problems.join('\n'));
        assert.ok(v.checked.p2pkParts >= 3);
      });

      it('merges script-view histories: a P2PKH script hash without its P2PK outputs', async () => {
        const r = refs(top());
        const shs = differsFrom(r).map((h) => Buffer.from(h, 'hex'));
        for (const view of ['address', 'script']) {
          for (const order of ['asc', 'desc']) {
            const want = mergedReference(r[view], shs, { order });
            const got = [];
            let cursor;
            do {
              const page = await store.getHistories(shs, { order, limit: 5, cursor, view });
              got.push(...page.entries.map(plainMerged));
              cursor = page.next;
            } while (cursor);
            assert.deepEqual(got, want, `${view} ${order}`);
          }
        }
      });

      it('reverts to every height and applies again exactly: digest equal to a fresh sync, both views right', async () => {
        const target = await store.digest();
        for (let to = top() - 1; to >= 0; to--) {
          await store.revert(to);
          const { store: fresh1 } = await fresh(REGTEST);
          await syncBlocks(fresh1, chain().blocks, 0, to, [to + 1]);
          assert.equal(await store.digest(), await fresh1.digest(), `revert to ${to}`);
          const r = refs(to);
          for (const view of ['address', 'script']) await assertMatchesReference(store, r[view], { view });
          assert.equal((await store.verify()).ok, true, `verify after the revert to ${to}`);
        }
        await syncBlocks(store, chain().blocks, 1, top(), [2, 5]);
        assert.equal(await store.digest(), target);
      });
    });

    describe('BIP30: a coinbase reusing an earlier txid', () => {
      // X is reused after its output was spent, Y while its output is unspent (mainnet 91842/91880)
      const spec = [
        [{ txid: 'G', inputs: [], outputs: [['genesis', 50]] }],
        [{ txid: 'X', inputs: [], outputs: [['A', 50]] }],
        [{ txid: 'Y', inputs: [], outputs: [['B', 50]] }, { txid: 'T1', inputs: [['X', 0]], outputs: [['C', 30], ['A', 20]] }],
        [{ txid: 'X', inputs: [], outputs: [['A', 50]] }],
        [{ txid: 'Z', inputs: [], outputs: [['D', 50], [null, 0]] }],
        [{ txid: 'Y', inputs: [], outputs: [['B', 50]] }],
        [{ txid: 'W', inputs: [], outputs: [['D', 50]] }, { txid: 'T2', inputs: [['Y', 0]], outputs: [['C', 50]] }],
      ];
      const { blocks, id } = handMadeChain(spec);

      it('follows Bitcoin Core: the new tx takes the txid, the old unspent outputs leave the UTXO set', async () => {
        const { store } = await fresh(REGTEST);
        await syncBlocks(store, blocks, 0, 6, [1]);
        assert.equal((await store.getTx(id('X'))).height, 3);
        assert.equal((await store.getTx(id('Y'))).height, 5);
        assert.deepEqual((await store.getTxid(2)), id('Y'));
        assert.deepEqual(await store.getSummary(id('B')), {
          balance: 0, received: 100, sent: 100, txCount: 3, fundedCount: 2, spentCount: 2, utxoCount: 0, firstHeight: 2, lastHeight: 6,
        });
        assert.deepEqual((await store.getHistory(id('B'))).entries.map((e) => [e.height, e.funded, e.spent]),
          [[2, true, false], [5, true, true], [6, false, true]]);
        assert.deepEqual(await store.getSummary(id('A')), {
          balance: 70, received: 120, sent: 50, txCount: 3, fundedCount: 3, spentCount: 1, utxoCount: 2, firstHeight: 1, lastHeight: 3,
        });
        assert.equal((await store.getSummary(id('C'))).balance, 80);
        assert.equal(await store.getSummary(id('genesis')), null);
        const v = await store.verify();
        assert.equal(v.ok, true, v.problems.join('\n'));
      });

      it('reverts past the reuse exactly, in one batch or many', async () => {
        const { store: many } = await fresh(REGTEST);
        await syncBlocks(many, blocks, 0, 6, [1]);
        const { store: one } = await fresh(REGTEST);
        await syncBlocks(one, blocks, 0, 6, [7]);
        assert.equal(await one.digest(), await many.digest());
        for (const to of [5, 4, 2, 0]) {
          await many.revert(to);
          const { store: ref } = await fresh(REGTEST);
          await syncBlocks(ref, blocks, 0, to, [1]);
          assert.equal(await many.digest(), await ref.digest(), `revert to ${to}`);
          assert.equal((await many.verify()).ok, true);
        }
        await syncBlocks(many, blocks, 1, 6, [6]);
        assert.equal(await many.digest(), await one.digest());
      });
    });

    describe('crashes and concurrent readers', () => {
      const CHAIN = WRITER;

      it('a kill during commits leaves a block boundary: verify passes, digest equals a fresh sync', async function () {
        this.timeout(180000);
        const chain = generatedChain(CHAIN);
        const location = await backend.create();
        const random = prng(101);
        for (let round = 0; round < 3; round++) {
          // with --txstore, so an interrupted commit is checked for the blocks' bytes too
          const child = startChild(backend, location, { ...REGTEST, txstore: true }, CHAIN, 100 + round);
          await child.lines(3 + round * 2); // a few commits in, then a kill at a drawn moment
          await sleep(Math.floor(random() * 150));
          child.proc.kill('SIGKILL');
          await child.exited;
          const s = await open(location, REGTEST);
          const tip = await s.getTip();
          assert.ok(tip, 'some batch was committed');
          assert.deepEqual(await s.getBlockBytes(tip.height), chain.raws[tip.height]);
          assert.equal(tip.hash, chain.hashes[tip.height]);
          const v = await s.verify();
          assert.equal(v.ok, true, v.problems.join('\n'));
          const { store: ref } = await fresh({ ...REGTEST, txstore: true });
          await syncBlocks(ref, chain.blocks, 0, tip.height, [tip.height + 1]);
          assert.equal(await s.digest(), await ref.digest(), `round ${round} at height ${tip.height}`);
          await closeAll();
        }
      });

      it('reads during commits in the writer\'s process see only committed tips', async function () {
        this.timeout(180000);
        const chain = generatedChain(CHAIN);
        const location = await backend.create();
        const w = await open(location, REGTEST);
        await syncBlocks(w, chain.blocks, 0, 1);
        const checkReader = async (reader, until) => {
          let reads = 0;
          while (!until(reads)) {
            const v = await reader.verify({ maxProblems: 5 });
            assert.equal(v.ok, true, v.problems.join('\n'));
            const tip = await reader.getTip();
            assert.equal(tip.hash, chain.hashes[tip.height]);
            assert.equal(await reader.getBlockHash(tip.height), tip.hash);
            reads++;
          }
          return reads;
        };
        // in this process: reads interleaved with applies and reverts
        let done = false;
        const writing = (async () => {
          await syncBlocks(w, chain.blocks, 2, 25, [3]);
          await w.revert(12);
          await syncBlocks(w, chain.blocks, 13, 30, [4]);
          done = true;
        })();
        const reads = await checkReader(w, () => done);
        await writing;
        assert.ok(reads > 0);
      });

      it('readers in other processes beside a writer see only the tips it committed', async function () {
        if (!backend.readersInOtherProcesses) this.skip();
        this.timeout(180000);
        const chain = generatedChain(CHAIN);
        const location = await backend.create();
        const w = await open(location, REGTEST);
        await syncBlocks(w, chain.blocks, 0, 1);
        await w.close();
        opened.splice(opened.indexOf(w), 1);
        const child = startChild(backend, location, REGTEST, CHAIN, 7);
        await child.lines(1);
        const reader = await open(location, { ...REGTEST, readOnly: true });
        const seen = [];
        // at least three full reads whatever the machine's load, and 2.5 s of them when it is quick
        const t0 = Date.now();
        for (let reads = 0; reads < 3 || Date.now() - t0 < 2500; reads++) {
          const v = await reader.verify({ maxProblems: 5 });
          assert.equal(v.ok, true, v.problems.join('\n'));
          const tip = await reader.getTip();
          assert.equal(tip.hash, chain.hashes[tip.height]);
          assert.equal(await reader.getBlockHash(tip.height), tip.hash);
          seen.push(`${tip.height} ${tip.hash}`);
        }
        // the writer prints each tip after committing it: once it has printed one more line,
        // every tip committed before the last read is printed
        await child.lines(child.count() + 1);
        child.proc.kill('SIGKILL');
        await child.exited;
        const committed = new Set([`1 ${chain.hashes[1]}`, ...child.output()]);
        for (const t of seen) assert.ok(committed.has(t), `the reader saw ${t}, which the writer never committed`);
      });
    });
  });
}

/** A Buffer of 32-byte items, as a list. */
function chunks(buf) {
  return Array.from({ length: buf.length / 32 }, (_, i) => buf.subarray(32 * i, 32 * i + 32));
}

/** A value with its Buffers and Uint8Arrays as hex strings, for comparing what crossed a process boundary. */
function bufferless(v) {
  if (v instanceof Uint8Array) return Buffer.from(v).toString('hex');
  if (Array.isArray(v)) return v.map(bufferless);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, bufferless(x)]));
  return v;
}

/**
 * Compares every script hash of the reference with the store: summary, history, UTXOs (in the
 * view the reference was built for).
 */
async function assertMatchesReference(store, r, { view = 'address' } = {}) {
  const shs = [...r.summaries.keys()];
  const bufs = shs.map((h) => Buffer.from(h, 'hex'));
  const sums = await store.getSummaries(bufs, { view });
  for (let i = 0; i < shs.length; i++) {
    assert.deepEqual(sums[i], r.summaries.get(shs[i]), `summary of ${shs[i]}`);
    const h = await store.getHistory(bufs[i], { limit: 100000, view });
    assert.deepEqual(h.entries.map(plain), r.history.get(shs[i]).map(plainRef), `history of ${shs[i]}`);
    assert.equal(h.next, null);
    const u = await store.getUtxos(bufs[i], { limit: 100000, view });
    const want = (r.utxos.get(shs[i]) || []).map((o) => ({ txid: o.txid, vout: o.vout, value: o.value, height: o.height, txNum: o.txNum }));
    assert.deepEqual(u.utxos.map(plainUtxo), want, `utxos of ${shs[i]}`);
  }
}

/**
 * Pages each script hash's history (both orders, height bounds) and UTXOs with small limits in
 * one view, against the reference of that view.
 */
async function assertPaged(store, r, view, shs) {
  for (const sh of shs) {
    const buf = Buffer.from(sh, 'hex');
    const full = (r.history.get(sh) || []).map(plainRef);
    const heights = full.map((e) => e.height);
    const mid = heights.length ? heights[Math.floor(heights.length / 2)] : 0;
    for (const order of ['asc', 'desc']) {
      for (const bounds of [{}, { fromHeight: mid }, { toHeight: mid }]) {
        let want = full.filter((e) => (bounds.fromHeight === undefined || e.height >= bounds.fromHeight) && (bounds.toHeight === undefined || e.height <= bounds.toHeight));
        if (order === 'desc') want = [...want].reverse();
        const got = [];
        let cursor;
        do {
          const page = await store.getHistory(buf, { ...bounds, order, limit: 7, cursor, view });
          got.push(...page.entries.map(plain));
          cursor = page.next;
        } while (cursor);
        assert.deepEqual(got, want, `${view} history of ${sh}, ${order} ${JSON.stringify(bounds)}`);
      }
    }
    const wantUtxos = (r.utxos.get(sh) || []).map((o) => ({ txid: o.txid, vout: o.vout, value: o.value, height: o.height, txNum: o.txNum }));
    const got = [];
    let cursor;
    do {
      const page = await store.getUtxos(buf, { limit: 5, cursor, view });
      got.push(...page.utxos.map(plainUtxo));
      cursor = page.next;
    } while (cursor);
    assert.deepEqual(got, wantUtxos, `${view} UTXOs of ${sh}`);
  }
}

/** The script hashes whose summary the two views of `refs` tell apart. */
function differsFrom(r) {
  return [...r.address.summaries.keys()].filter((sh) => JSON.stringify(r.address.summaries.get(sh)) !== JSON.stringify(r.script.summaries.get(sh) || null));
}

/** The reference's merged history of several script hashes. */
function mergedReference(r, shs, { fromHeight, toHeight, order = 'asc' }) {
  const byTx = new Map();
  shs.forEach((sh) => {
    for (const e of r.history.get(sh.toString('hex')) || []) {
      if (fromHeight !== undefined && e.height < fromHeight) continue;
      if (toHeight !== undefined && e.height > toHeight) continue;
      if (!byTx.has(e.txNum)) byTx.set(e.txNum, { ...plainRef(e), scripthashes: [] });
      const m = byTx.get(e.txNum);
      m.funded = m.funded || e.funded;
      m.spent = m.spent || e.spent;
      m.scripthashes.push(sh.toString('hex'));
    }
  });
  const list = [...byTx.values()].sort((a, b) => a.txNum - b.txNum);
  return order === 'desc' ? list.reverse() : list;
}

function plain(e) {
  return { txNum: e.txNum, txid: toDisplayHex(e.txid), height: e.height, funded: e.funded, spent: e.spent };
}

function plainRef(e) {
  return { txNum: e.txNum, txid: e.txid, height: e.height, funded: e.funded, spent: e.spent };
}

function plainMerged(e) {
  return { ...plain(e), scripthashes: e.scripthashes.map((b) => b.toString('hex')) };
}

function plainUtxo(u) {
  return { txid: toDisplayHex(u.txid), vout: u.vout, value: u.value, height: u.height, txNum: u.txNum };
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A writer in a child process (test/stores/child.js) on the same location, its choices drawn
 * from `seed`; it prints each tip it commits.
 * @returns {{proc: import('child_process').ChildProcess, lines: (n: number) => Promise<void>, count: () => number,
 *   output: () => string[], exited: Promise<void>}}
 */
function startChild(backend, location, opts, chain, seed) {
  const proc = spawn(process.execPath, [path.join(__dirname, 'child.js'), backend.openerModule, location,
    JSON.stringify(opts), JSON.stringify(chain), 'write', String(seed)], { stdio: ['pipe', 'pipe', 'pipe'] });
  const printed = [];
  let partial = '';
  let stderr = '';
  const waiters = [];
  proc.stdout.setEncoding('utf8');
  proc.stdout.on('data', (d) => {
    const parts = (partial + d).split('\n');
    partial = parts.pop();
    printed.push(...parts);
    for (const w of waiters.splice(0)) {
      if (printed.length >= w.n) w.resolve();
      else waiters.push(w);
    }
  });
  proc.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((resolve) => proc.on('exit', resolve));
  const lines = (n) => new Promise((resolve, reject) => {
    if (printed.length >= n) return resolve();
    waiters.push({ n, resolve });
    proc.on('exit', (code, signal) => reject(new Error(`child exited (${code ?? signal}) after ${printed.length} commits: ${stderr}`)));
  });
  return { proc, lines, count: () => printed.length, output: () => [...printed], exited };
}

module.exports = { storeConformance };
