'use strict';

/**
 * bitcore-node 3.1.3's own contract tests (regtest/node.js, "Node Functionality"), ported to
 * run against addrindex's BitcoindService over btcd regtest. Run in a process of its own with
 * the host's bitcore-lib 0.13 (test/bitcore/regtest-node.test.js starts it):
 *
 *   ADDRINDEX_TEST_BITCORE_HOST=.cache/bitcore mocha --no-config test/bitcore/host/regtest-node.js
 *
 * The expectations are the original's, value for value (chai's `should` spelled with
 * node:assert). What changed is what runs beside the service: the original spawned a regtest
 * bitcoind whose address index the service asked; here btcd is the node (`rpcUrl`: the
 * service's sendTransaction goes to it, its blocks are read from it), and `addrindex sync
 * --follow` keeps the index and its mempool snapshot (the mempool follower) in another
 * process. So:
 *
 *  - btcd has no wallet: `client.sendToAddress` is a transaction from the miner's coinbases,
 *    built and signed with bitcore-lib as the original builds its own (node-miner.js), sent
 *    with the node's sendrawtransaction;
 *  - the index follows the node instead of being the node: after mining, a test waits until
 *    the service's tip has reached the block (the original read the patched node at once);
 *    sendTransaction itself answers once the index's mempool shows the transaction
 *    (lib/bitcore/broadcast.js), as the patched node's index did;
 *  - btcd has no invalidateblock: the orphaned transaction's block is orphaned by a longer
 *    branch mined on a second btcd and handed to the first (`submitblock`); btcd puts the
 *    orphaned block's transactions back in its mempool, the follower into the snapshot, and
 *    the service finds the transaction there, unconfirmed (height -1). The original found it in
 *    its node's transaction index with the orphaned block; addrindex keeps only the best
 *    chain, so an orphaned transaction in no mempool would be unknown (-5).
 */

const assert = require('node:assert/strict');
const path = require('node:path');
const { createRequire } = require('node:module');
const { tempDir } = require('../../helpers/tmp');
const { startCli } = require('../../helpers/cli');
const { waitFor } = require('../../helpers/chains');
const { useBtcd } = require('../../helpers/btcd');
const { openStore } = require('../../../lib/stores');
const { NodeMiner } = require('../node-miner');

const HOST = process.env.ADDRINDEX_TEST_BITCORE_HOST;
if (!HOST) throw new Error('ADDRINDEX_TEST_BITCORE_HOST must name the bitcore-node host dir (scripts/install-bitcore.sh)');
const hostRequire = createRequire(path.join(HOST, 'noop.js'));
const bitcore = hostRequire('bitcore-lib');
const index = hostRequire('bitcore-node/lib');
const BitcoreNode = hostRequire('bitcore-node/lib/node');
const BitcoinService = require('../../../lib/bitcore');

const log = index.log;
log.debug = function () {};
log.info = function () {};

const Transaction = bitcore.Transaction;
const testWIF = 'cSdkPxkAjA4HDr5VHgsebAPDEh9Gyub4HK8UJr2DFGGqKKy4K5sG';
const minerKey = bitcore.PrivateKey('11'.repeat(32), 'regtest');
const otherMinerKey = bitcore.PrivateKey('12'.repeat(32), 'regtest');
let testKey;
let node;
let miner;
let follower;
let datadir;

let outputForIsSpentTest1; // eslint-disable-line no-unused-vars
let unspentOutputSpentTxId; // eslint-disable-line no-unused-vars

/** Until the service's tip is at `height`. */
function waitTip(height) {
  return waitFor(() => node.services.bitcoind.height >= height, 30000, `the service's tip at ${height}`);
}

/** Until `addrindex sync` has created the index. */
function waitIndex() {
  return waitFor(async () => {
    try {
      await (await openStore({ store: 'lmdb', datadir, network: 'regtest', readOnly: true })).close();
      return true;
    } catch (err) {
      if (err.code === 'ERR_NO_INDEX') return false;
      throw err;
    }
  }, 30000, 'the index');
}

describe('Node Functionality', function () {
  let regtest;
  // (defined before useBtcd's hooks: the service and the follower stop before the nodes do)
  after(async function () {
    this.timeout(20000);
    if (node) await new Promise((resolve, reject) => node.stop((err) => (err ? reject(err) : resolve())));
    if (follower) {
      follower.kill('SIGTERM');
      await follower.done;
    }
  });
  const btcd = useBtcd([
    { miningAddress: minerKey.toAddress('regtest').toString() },
    { miningAddress: otherMinerKey.toAddress('regtest').toString() },
  ]);
  let client; // the node the original's `client` asked: btcd over its JSON-RPC

  before(async function () {
    this.timeout(120000);
    testKey = bitcore.PrivateKey(testWIF);
    [client] = btcd.nodes;
    miner = new NodeMiner({ node: client, bitcore, key: minerKey });
    datadir = path.join(tempDir('regtest-index'), 'index');
    follower = startCli(['sync', '--follow', '--rpc-url', client.url, '--datadir', datadir, '--network', 'regtest',
      '--poll-ms', '50', '--mempool-poll-ms', '50', '--threads', '0', '--quiet']);

    const configuration = {
      network: 'regtest',
      services: [
        {
          name: 'bitcoind',
          module: BitcoinService,
          config: { datadir, rpcUrl: client.url, tipPollMs: 50 },
        },
      ],
    };
    await waitIndex();
    node = new BitcoreNode(configuration);
    regtest = bitcore.Networks.get('regtest');
    assert.ok(regtest);
    node.on('error', (err) => log.error(err));
    await new Promise((resolve, reject) => node.start((err) => (err ? reject(err) : resolve())));

    await new Promise((resolve, reject) => {
      const syncedHandler = function () {
        if (node.services.bitcoind.height === 150) {
          node.services.bitcoind.removeListener('synced', syncedHandler);
          resolve();
        }
      };
      node.services.bitcoind.on('synced', syncedHandler);
      client.generate(150).catch(reject);
    });
  });


  describe('Bus Functionality', function () {
    it('subscribes and unsubscribes to an event on the bus', function (done) {
      const bus = node.openBus();
      let blockExpected;
      let blockReceived;
      bus.subscribe('bitcoind/hashblock');
      bus.on('bitcoind/hashblock', function (data) {
        bus.unsubscribe('bitcoind/hashblock');
        if (blockExpected) {
          assert.equal(data, blockExpected);
          done();
        } else {
          blockReceived = data;
        }
      });
      client.generate(1).then((result) => {
        const response = { result };
        if (blockReceived) {
          assert.equal(blockReceived, response.result[0]);
          done();
        } else {
          blockExpected = response.result[0];
        }
      }, done);
    });
  });

  describe('Address Functionality', function () {
    let address;
    let unspentOutput;
    before(function (done) {
      this.timeout(10000);
      address = testKey.toAddress(regtest).toString();
      const startHeight = node.services.bitcoind.height;
      node.services.bitcoind.on('tip', function (height) {
        if (height === startHeight + 3) {
          done();
        }
      });
      // sendToAddress, then generate(3): the payment is mined into the first of the three
      miner.sendToAddress(testKey.toAddress(regtest).toString(), 10)
        .then((tx) => client.sendTx(tx.serialize()))
        .then(() => client.generate(3))
        .catch(done);
    });
    it('should be able to get the balance of the test address', function (done) {
      node.getAddressBalance(address, false, function (err, data) {
        if (err) {
          throw err;
        }
        assert.equal(data.balance, 10 * 1e8);
        done();
      });
    });
    it('can get unspent outputs for address', function (done) {
      node.getAddressUnspentOutputs(address, false, function (err, results) {
        if (err) {
          throw err;
        }
        assert.equal(results.length, 1);
        unspentOutput = outputForIsSpentTest1 = results[0];
        done();
      });
    });
    it('correctly give the history for the address', function (done) {
      const options = {
        from: 0,
        to: 10,
        queryMempool: false,
      };
      node.getAddressHistory(address, options, function (err, results) {
        if (err) {
          throw err;
        }
        const items = results.items;
        assert.equal(items.length, 1);
        const info = items[0];
        assert.ok(info.addresses[address]);
        assert.equal(info.addresses[address].outputIndexes.length, 1);
        assert.ok(info.addresses[address].outputIndexes[0] >= 0 && info.addresses[address].outputIndexes[0] <= 1);
        assert.deepEqual(info.addresses[address].inputIndexes, []);
        assert.equal(info.satoshis, 10 * 1e8);
        assert.equal(info.confirmations, 3);
        assert.equal(typeof info.tx.blockTimestamp, 'number');
        assert.ok(info.tx.feeSatoshis >= 950 && info.tx.feeSatoshis <= 4000);
        done();
      });
    });
    it('correctly give the summary for the address', function (done) {
      const options = {
        queryMempool: false,
      };
      node.getAddressSummary(address, options, function (err, results) {
        if (err) {
          throw err;
        }
        assert.equal(results.totalReceived, 1000000000);
        assert.equal(results.totalSpent, 0);
        assert.equal(results.balance, 1000000000);
        assert.equal(results.unconfirmedBalance, undefined);
        assert.equal(results.appearances, 1);
        assert.equal(results.unconfirmedAppearances, undefined);
        assert.equal(results.txids.length, 1);
        done();
      });
    });
    describe('History', function () {
      this.timeout(20000);

      let testKey2;
      let address2;
      let testKey3;
      let address3;
      let testKey4;
      let address4;
      let testKey5;
      let address5;
      let testKey6;
      let address6;
      let tx2Amount;
      let tx2Hash;

      before(function (done) {
        // Finished once all blocks have been mined
        const startHeight = node.services.bitcoind.height;
        node.services.bitcoind.on('tip', function (height) {
          if (height === startHeight + 5) {
            done();
          }
        });

        testKey2 = bitcore.PrivateKey.fromWIF('cNfF4jXiLHQnFRsxaJyr2YSGcmtNYvxQYSakNhuDGxpkSzAwn95x');
        address2 = testKey2.toAddress(regtest).toString();

        testKey3 = bitcore.PrivateKey.fromWIF('cVTYQbaFNetiZcvxzXcVMin89uMLC43pEBMy2etgZHbPPxH5obYt');
        address3 = testKey3.toAddress(regtest).toString();

        testKey4 = bitcore.PrivateKey.fromWIF('cPNQmfE31H2oCUFqaHpfSqjDibkt7XoT2vydLJLDHNTvcddCesGw');
        address4 = testKey4.toAddress(regtest).toString();

        testKey5 = bitcore.PrivateKey.fromWIF('cVrzm9gCmnzwEVMGeCxY6xLVPdG3XWW97kwkFH3H3v722nb99QBF');
        address5 = testKey5.toAddress(regtest).toString();

        testKey6 = bitcore.PrivateKey.fromWIF('cPfMesNR2gsQEK69a6xe7qE44CZEZavgMUak5hQ74XDgsRmmGBYF');
        address6 = testKey6.toAddress(regtest).toString();

        const tx = new Transaction();
        tx.from(unspentOutput);
        tx.to(address, 1 * 1e8);
        tx.to(address, 2 * 1e8);
        tx.to(address, 0.5 * 1e8);
        tx.to(address, 3 * 1e8);
        tx.fee(10000);
        tx.change(address);
        tx.sign(testKey);

        unspentOutputSpentTxId = tx.id;

        // node.sendTransaction, then generate(1); the index follows the node, so the next
        // read waits until the service's tip has the block
        const sendAndMine = async (t) => {
          await new Promise((resolve, reject) => node.sendTransaction(t.serialize(), (err) => (err ? reject(err) : resolve())));
          const [hash] = await client.generate(1);
          await waitTip((await client.call('getblockheader', hash, true)).height);
        };

        (async () => {
          await sendAndMine(tx);
          const results = await new Promise((resolve, reject) => node.getAddressUnspentOutputs(address, false, (err, r) => (err ? reject(err) : resolve(r))));
          assert.equal(results.length, 5);

          const tx2 = new Transaction();
          tx2Amount = results[0].satoshis - 10000;
          tx2.from(results[0]);
          tx2.to(address2, tx2Amount);
          tx2.change(address);
          tx2.sign(testKey);
          tx2Hash = tx2.hash;
          await sendAndMine(tx2);

          const tx3 = new Transaction();
          tx3.from(results[1]);
          tx3.to(address3, results[1].satoshis - 10000);
          tx3.change(address);
          tx3.sign(testKey);
          await sendAndMine(tx3);

          const tx4 = new Transaction();
          tx4.from(results[2]);
          tx4.to(address4, results[2].satoshis - 10000);
          tx4.change(address);
          tx4.sign(testKey);
          await sendAndMine(tx4);

          const tx5 = new Transaction();
          tx5.from(results[3]);
          tx5.from(results[4]);
          tx5.to(address5, results[3].satoshis - 10000);
          tx5.to(address6, results[4].satoshis - 10000);
          tx5.change(address);
          tx5.sign(testKey);
          await sendAndMine(tx5);
        })().catch(done);
      });

      it('five addresses', function (done) {
        const addresses = [address2, address3, address4, address5, address6];
        const options = {};
        node.getAddressHistory(addresses, options, function (err, results) {
          if (err) {
            throw err;
          }
          assert.equal(results.totalCount, 4);
          const history = results.items;
          assert.equal(history.length, 4);
          assert.equal(history[0].tx.height, 159);
          assert.equal(history[0].confirmations, 1);
          assert.equal(history[1].tx.height, 158);
          assert.ok(history[1].addresses[address4]);
          assert.equal(history[2].tx.height, 157);
          assert.ok(history[2].addresses[address3]);
          assert.equal(history[3].tx.height, 156);
          assert.ok(history[3].addresses[address2]);
          assert.equal(history[3].satoshis, tx2Amount);
          assert.equal(history[3].tx.hash, tx2Hash);
          assert.equal(history[3].confirmations, 4);
          done();
        });
      });

      it('five addresses (limited by height)', function (done) {
        const addresses = [address2, address3, address4, address5, address6];
        const options = {
          start: 158,
          end: 157,
        };
        node.getAddressHistory(addresses, options, function (err, results) {
          if (err) {
            throw err;
          }
          assert.equal(results.totalCount, 2);
          const history = results.items;
          assert.equal(history.length, 2);
          assert.equal(history[0].tx.height, 158);
          assert.equal(history[0].confirmations, 2);
          assert.equal(history[1].tx.height, 157);
          assert.ok(history[1].addresses[address3]);
          done();
        });
      });

      it('five addresses (limited by height 155 to 154)', function (done) {
        const addresses = [address2, address3, address4, address5, address6];
        const options = {
          start: 157,
          end: 156,
        };
        node.getAddressHistory(addresses, options, function (err, results) {
          if (err) {
            throw err;
          }
          assert.equal(results.totalCount, 2);
          const history = results.items;
          assert.equal(history.length, 2);
          assert.equal(history[0].tx.height, 157);
          assert.equal(history[1].tx.height, 156);
          done();
        });
      });

      it('five addresses (paginated by index)', function (done) {
        const addresses = [address2, address3, address4, address5, address6];
        const options = {
          from: 0,
          to: 3,
        };
        node.getAddressHistory(addresses, options, function (err, results) {
          if (err) {
            throw err;
          }
          assert.equal(results.totalCount, 4);
          const history = results.items;
          assert.equal(history.length, 3);
          assert.equal(history[0].tx.height, 159);
          assert.equal(history[0].confirmations, 1);
          assert.equal(history[1].tx.height, 158);
          assert.ok(history[1].addresses[address4]);
          done();
        });
      });

      it('one address with sending and receiving', function (done) {
        const addresses = [address];
        const options = {};
        node.getAddressHistory(addresses, options, function (err, results) {
          if (err) {
            throw err;
          }
          assert.equal(results.totalCount, 6);
          const history = results.items;
          assert.equal(history.length, 6);
          assert.equal(history[0].tx.height, 159);
          assert.deepEqual(history[0].addresses[address].inputIndexes, [0, 1]);
          assert.deepEqual(history[0].addresses[address].outputIndexes, [2]);
          assert.equal(history[0].confirmations, 1);
          assert.equal(history[1].tx.height, 158);
          assert.equal(history[2].tx.height, 157);
          assert.equal(history[3].tx.height, 156);
          assert.equal(history[4].tx.height, 155);
          assert.equal(history[4].satoshis, -10000);
          assert.deepEqual(history[4].addresses[address].outputIndexes, [0, 1, 2, 3, 4]);
          assert.deepEqual(history[4].addresses[address].inputIndexes, [0]);
          assert.equal(history[5].tx.height, 152);
          assert.equal(history[5].satoshis, 10 * 1e8);
          done();
        });
      });

      it('summary for an address (sending and receiving)', function (done) {
        node.getAddressSummary(address, {}, function (err, results) {
          if (err) {
            throw err;
          }
          assert.equal(results.totalReceived, 2000000000);
          assert.equal(results.totalSpent, 1999990000);
          assert.equal(results.balance, 10000);
          assert.equal(results.unconfirmedBalance, 0);
          assert.equal(results.appearances, 6);
          assert.equal(results.unconfirmedAppearances, 0);
          assert.equal(results.txids.length, 6);
          done();
        });
      });

      it('total transaction count (sending and receiving)', function (done) {
        const addresses = [address];
        const options = {};
        node.getAddressHistory(addresses, options, function (err, results) {
          if (err) {
            throw err;
          }
          assert.equal(results.totalCount, 6);
          done();
        });
      });

      describe('Pagination', function () {
        const page = (from, to, check) => function (done) {
          node.getAddressHistory(address, { from, to }, function (err, results) {
            if (err) {
              throw err;
            }
            const history = results.items;
            assert.equal(history.length, 1);
            check(history);
            done();
          });
        };
        it('from 0 to 1', page(0, 1, (history) => assert.equal(history[0].tx.height, 159)));
        it('from 1 to 2', page(1, 2, (history) => assert.equal(history[0].tx.height, 158)));
        it('from 2 to 3', page(2, 3, (history) => assert.equal(history[0].tx.height, 157)));
        it('from 3 to 4', page(3, 4, (history) => assert.equal(history[0].tx.height, 156)));
        it('from 4 to 5', page(4, 5, (history) => {
          assert.equal(history[0].tx.height, 155);
          assert.equal(history[0].satoshis, -10000);
          assert.deepEqual(history[0].addresses[address].outputIndexes, [0, 1, 2, 3, 4]);
          assert.deepEqual(history[0].addresses[address].inputIndexes, [0]);
        }));
        it('from 5 to 6', page(5, 6, (history) => {
          assert.equal(history[0].tx.height, 152);
          assert.equal(history[0].satoshis, 10 * 1e8);
        }));
      });
    });

    describe('Mempool Index', function () {
      let unspentOutput;
      before(function (done) {
        node.getAddressUnspentOutputs(address, false, function (err, results) {
          if (err) {
            throw err;
          }
          assert.equal(results.length, 1);
          unspentOutput = results[0];
          done();
        });
      });

      it('will update the mempool index after new tx', function (done) {
        const memAddress = bitcore.PrivateKey().toAddress(node.network).toString();
        const tx = new Transaction();
        tx.from(unspentOutput);
        tx.to(memAddress, unspentOutput.satoshis - 1000);
        tx.fee(1000);
        tx.sign(testKey);

        node.services.bitcoind.sendTransaction(tx.serialize(), function (err, hash) {
          node.getAddressTxids(memAddress, {}, function (err, txids) {
            if (err) {
              return done(err);
            }
            assert.equal(txids.length, 1);
            assert.equal(txids[0], hash);
            done();
          });
        });
      });
    });
  });

  describe('Orphaned Transactions', function () {
    this.timeout(60000);
    let orphanedTransaction;

    before(async function () {
      // sendToAddress, generate(1)
      await client.sendTx((await miner.sendToAddress(testKey.toAddress(regtest).toString(), 10)).serialize());
      await client.generate(1);
      const count = (await client.tip()).height;
      const invalidatedBlockHash = await client.call('getblockhash', count);
      orphanedTransaction = (await client.call('getblock', invalidatedBlockHash, 1)).tx[1];
      assert.ok(orphanedTransaction);
      // invalidateblock, as btcd can: a second node mines a longer branch from the block
      // before, which the first takes (submitblock); the orphaned block's transactions go
      // back to its mempool, and the follower writes them into the index's snapshot
      const other = btcd.nodes[1];
      await other.submitBlocks(await client.rawBlocks(1, count - 1));
      const branch = await other.generate(2);
      await client.submitBlocks(await other.rawBlocks(count));
      assert.equal((await client.tip()).hash, branch[1]);
      assert.ok((await client.call('getrawmempool')).includes(orphanedTransaction));
      // (the service's own store: the snapshot the follower wrote for the new branch's tip)
      const store = node.services.bitcoind.store;
      await waitFor(async () => { const h = await store.getMempoolHead(); return h && h.tip === branch[1]; }, 30000, 'the snapshot of the new branch');
    });

    it('will not show confirmation count for orphaned transaction', function (done) {
      // This test verifies that in the situation that the transaction is not in the mempool and
      // is included in an orphaned block transaction index that the confirmation count will be unconfirmed.
      node.getDetailedTransaction(orphanedTransaction, function (err, data) {
        if (err) {
          return done(err);
        }
        assert.ok(data);
        assert.notEqual(data.height, undefined);
        assert.equal(data.height, -1);
        done();
      });
    });
  });
});
