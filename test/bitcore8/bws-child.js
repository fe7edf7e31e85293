'use strict';

/**
 * bitcore-wallet-service 8.25.47 (its ExpressApp, storage on MongoDB's wire: the tests'
 * FerretDB) with its v8 explorer at addrindex, driven by bitcore-wallet-client 8.25.47. Run by
 * test/bitcore8/bws.test.js in the host .cache/bws (NODE_PATH), which gives it its options in
 * $BWS_TEST: {url, mongo, dbname, socketKey}. Prints one JSON line per step; after printing
 * {"fund": address} it waits for a line on stdin (the test pays the address meanwhile).
 */

const o = JSON.parse(process.env.BWS_TEST);
const config = require('bitcore-wallet-service/ts_build/config');
// the service's "testnet" is the explorer's regtest when regtestEnabled (its v8network())
config.blockchainExplorerOpts.btc.testnet = { url: o.url, regtestEnabled: true };
config.blockchainExplorerOpts.socketApiKey = o.socketKey;
const { ExpressApp } = require('bitcore-wallet-service/ts_build/lib/expressapp');
const Client = require('bitcore-wallet-client').default;

const print = (step, res) => process.stdout.write(`${JSON.stringify({ step, res })}\n`);
const p = (fn) => new Promise((resolve, reject) => fn((err, res) => (err ? reject(err) : resolve(res))));

async function main() {
  const app = new ExpressApp();
  await p((cb) => app.start({ ...config, storageOpts: { mongoDb: { uri: o.mongo, dbname: o.dbname } }, messageBrokerOpts: undefined }, cb));
  const server = app.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.on('listening', resolve));
  print('started', true);
  const client = new Client({ baseUrl: `http://127.0.0.1:${server.address().port}/bws/api`, verbose: false });
  const key = new Client.Key({ seedType: 'new' });
  client.fromObj(key.createCredentials(null, { coin: 'btc', network: 'testnet', account: 0, n: 1 }));
  await p((cb) => client.createWallet('addrindex', 'me', 1, 1, { network: 'testnet', coin: 'btc' }, cb));
  await p((cb) => client.openWallet({}, cb));
  const status = await p((cb) => client.getStatus({}, cb));
  print('wallet', status.wallet.status);
  const address = (await p((cb) => client.createAddress({}, cb))).address;
  print('fund', address);
  await new Promise((resolve) => process.stdin.once('data', resolve));
  const balance = await p((cb) => client.getBalance({}, cb));
  print('balance', { total: balance.totalAmount, confirmed: balance.totalConfirmedAmount, available: balance.availableAmount });
  await p((cb) => client.startScan({}, cb));
  print('scan', 'started');
  const history = await p((cb) => client.getTxHistory({}, cb));
  print('history', history.map((t) => ({ txid: t.txid, action: t.action, amount: t.amount, confirmations: t.confirmations })));
  const utxos = await p((cb) => client.getUtxos({}, cb));
  print('utxos', utxos.map((u) => ({ txid: u.txid, vout: u.vout, satoshis: u.satoshis, confirmations: u.confirmations })));
  process.exit(0);
}

main().catch((err) => {
  print('error', String((err && err.stack) || err));
  process.exit(1);
});
