'use strict';

/**
 * bitcore-node 3.1.3's own contract tests (regtest/node.js, "Node Functionality"), ported to
 * run against addrindex's BitcoindService. Run in a process of its own with the host's
 * bitcore-lib 0.13 (test/bitcore/regtest-node.test.js starts it):
 *
 *   ADDRINDEX_TEST_BITCORE_HOST=.cache/bitcore mocha --no-config test/bitcore/host/regtest-node.js
 *
 * The expectations are the original's, value for value (chai's `should` spelled with
 * node:assert). What changed is how the chain is made: the original started a regtest bitcoind,
 * mined with `generate` and paid with its wallet and `sendTransaction`; here a RegtestMiner
 * writes the same blocks and transactions (built and signed with bitcore-lib as the original
 * builds them) into a blocks dir that `addrindex sync --follow` indexes, and a transaction
 * "sent" is mined into the next block. The index follows the blocks dir instead of moving with
 * `generate`, so after mining, a test waits until the service's tip has reached the block
 * (the original waited for `tip` events in its `before` hooks the same way).
 *
 * Cases that wait for the mempool and the node connection (pending here): the summary with
 * its unconfirmed figures, the mempool index, and orphaned transactions (invalidateblock).
 */

const assert = require('node:assert/strict');
const path = require('node:path');
const { createRequire } = require('node:module');
const { tempDir } = require('../../helpers/tmp');
const { startCli } = require('../../helpers/cli');
const { tipOf, waitFor } = require('../../helpers/chains');
const { RegtestMiner } = require('../regtest-miner');

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
let testKey;
let node;
let miner;
let follower;

let outputForIsSpentTest1; // eslint-disable-line no-unused-vars
let unspentOutputSpentTxId; // eslint-disable-line no-unused-vars

/** Until the service's tip is at `height`. */
function waitTip(height) {
  return waitFor(() => node.services.bitcoind.height >= height, 20000, `the service's tip at ${height}`);
}

describe('Node Functionality', function () {
  let regtest;

  before(async function () {
    this.timeout(60000);
    testKey = bitcore.PrivateKey(testWIF);
    const blocksDir = tempDir('regtest-blocks');
    const datadir = path.join(tempDir('regtest-index'), 'index');
    miner = new RegtestMiner({ dir: blocksDir, bitcore, key: bitcore.PrivateKey('11'.repeat(32), 'regtest') });
    follower = startCli(['sync', '--follow', '--blocks-dir', blocksDir, '--datadir', datadir, '--network', 'regtest',
      '--poll-ms', '50', '--threads', '0', '--quiet']);
    await waitFor(() => tipOf(datadir), 20000, 'the index of the genesis block');

    const configuration = {
      network: 'regtest',
      services: [
        {
          name: 'bitcoind',
          module: BitcoinService,
          config: { datadir, blocksDir, tipPollMs: 50 },
        },
      ],
    };
    node = new BitcoreNode(configuration);
    regtest = bitcore.Networks.get('regtest');
    assert.ok(regtest);
    node.on('error', (err) => log.error(err));
    await new Promise((resolve, reject) => node.start((err) => (err ? reject(err) : resolve())));

    await new Promise((resolve) => {
      const syncedHandler = function () {
        if (node.services.bitcoind.height === 150) {
          node.services.bitcoind.removeListener('synced', syncedHandler);
          resolve();
        }
      };
      node.services.bitcoind.on('synced', syncedHandler);
      miner.generate(150);
    });
  });

  after(async function () {
    this.timeout(20000);
    if (node) await new Promise((resolve, reject) => node.stop((err) => (err ? reject(err) : resolve())));
    if (follower) {
      follower.kill('SIGTERM');
      await follower.done;
    }
    if (miner) await miner.close();
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
      const response = { result: miner.generate(1) };
      if (blockReceived) {
        assert.equal(blockReceived, response.result[0]);
        done();
      } else {
        blockExpected = response.result[0];
      }
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
      miner.mine([miner.sendToAddress(testKey.toAddress(regtest).toString(), 10)]);
      miner.generate(2);
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

        // sendTransaction + generate(1): the transaction mined into the next block
        const sendAndMine = async (t) => {
          miner.mine([t]);
          await waitTip(miner.height);
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

      // waits for the mempool: with `{}` the original expects unconfirmedBalance and
      // unconfirmedAppearances of 0, figures this service leaves out until a mempool source exists
      it.skip('summary for an address (sending and receiving) [waits for the mempool]', function (done) {
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
      // waits for the mempool and the node: the original sends a transaction with
      // node.services.bitcoind.sendTransaction and finds it with getAddressTxids unconfirmed
      it.skip('will update the mempool index after new tx [waits for the mempool and the node]', function () {});
    });
  });

  describe('Orphaned Transactions', function () {
    // waits for the node: the original invalidates the tip with the node's invalidateblock and
    // expects the transaction of the orphaned block to be found unconfirmed (height -1)
    it.skip('will not show confirmation count for orphaned transaction [waits for the node and the mempool]', function () {});
  });
});
