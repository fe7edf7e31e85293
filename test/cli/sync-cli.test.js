'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { open } = require('lmdb');
const { MAINNET_439 } = require('../helpers/fixtures');
const { mainnetReference } = require('../helpers/reference');
const { makeChain, digestOf } = require('../helpers/chains');
const { runCli, runJson } = require('../helpers/cli');
const { tempDir } = require('../helpers/tmp');
const { sha256, toDisplayHex } = require('../../lib/chain/hash');
const { decodeAddress } = require('../../lib/chain/address');

const PAYEE = '1Q2TWHE3GMdB6BZKafqwxXtWAWgFt5Jvm3';
const PAYER = '12cbQLTFMXRnSzktFkuoG3eHoMeFtpTu3S';
const GENESIS_ADDRESS = '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa';
const TX170 = 'f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16';

/**
 * What the independent reference index (bitcore-lib, test/helpers/reference.js) says about
 * some addresses, in the shape `addrindex query --json` prints.
 * @param {string[]} addresses
 */
function reference(addresses) {
  const ref = mainnetReference();
  return Object.fromEntries(addresses.map((a) => {
    const { summary, history, utxos } = ref.at(a);
    const s = summary || { balance: 0, received: 0, sent: 0, txCount: 0 };
    return [a, {
      balance: s.balance, received: s.received, sent: s.sent, txCount: s.txCount,
      history: history.map(({ txid, height }) => ({ txid, height })),
      utxos: utxos.map(({ txid, vout, value, height }) => ({ txid, vout, value, height })),
    }];
  }));
}

/** A failed run: one `addrindex: … [CODE]` line on stderr, a non-zero exit. */
function assertError(res, code) {
  assert.notEqual(res.code, 0, `expected a failure, got: ${res.stdout}`);
  assert.match(res.stderr, new RegExp(`^addrindex: [^\\n]+ \\[${code}\\]\\n$`), res.stderr);
}

describe('addrindex sync / status / verify / query on the first 439 mainnet blocks (CLI)', function () {
  this.timeout(60000);
  let blocksDir;
  let datadir;
  let ref;

  before(async () => {
    blocksDir = tempDir('mainnet');
    fs.copyFileSync(MAINNET_439, path.join(blocksDir, 'blk00000.dat'));
    datadir = path.join(tempDir('mainnet-index'), 'index');
    const r = await runCli(['sync', '--blocks-dir', blocksDir, '--datadir', datadir, '--network', 'main', '--batch-blocks', '50']);
    assert.equal(r.code, 0, r.stderr);
    // not a terminal: plain lines, the last one the summary
    assert.match(r.stderr, /synced 439 blocks, 446 txs .* tip height 438 0000000025c6b644f8add734be7e666fa4afa43ca0204d623a0c0b1fd2104c7a\n$/);
    assert.ok(!r.stderr.includes('\r'));
    ref = reference([PAYEE, PAYER, GENESIS_ADDRESS]);
  });

  it('status: network main, tip 438, 446 txs, tables and disk size', async () => {
    const s = await runJson(['status', '--datadir', datadir]);
    assert.equal(s.network, 'main');
    assert.deepEqual(s.tip, { height: 438, hash: '0000000025c6b644f8add734be7e666fa4afa43ca0204d623a0c0b1fd2104c7a' });
    assert.equal(s.txs, 446);
    assert.ok(s.diskBytes > 0);
    assert.ok(Object.keys(s.tables).length > 0);
    const text = await runCli(['status', '--datadir', datadir]);
    assert.equal(text.code, 0);
    assert.match(text.stdout, /^network +main$/m);
    assert.match(text.stdout, /^tip +438 0000000025c6b644/m);
  });

  it('the height-170 payment: 10 BTC to 1Q2T…, in the payee\'s history, balance and unspent outputs', async () => {
    const q = await runJson(['query', PAYEE, '--datadir', datadir]);
    const r = ref[PAYEE];
    assert.deepEqual(r.history, [{ txid: TX170, height: 170 }]);
    assert.equal(r.balance, 10e8);
    assert.equal(q.address, PAYEE);
    assert.equal(q.scripthash, toDisplayHex(sha256(decodeAddress(PAYEE, 'main').script)));
    assert.deepEqual(
      { balance: q.balance, received: q.received, sent: q.sent, txCount: q.txCount, history: q.history, utxos: q.utxos },
      r);
    assert.equal(q.next, null);
  });

  it('the payer (the height-9 coinbase\'s key) sent in f4184fc5… and got 40 BTC back', async () => {
    const q = await runJson(['query', PAYER, '--datadir', datadir, '--limit', '1000']);
    const r = ref[PAYER];
    // from the chain: the coinbase of height 9 funds it, tx 170 spends that and pays 40 back
    assert.deepEqual(r.history.slice(0, 2).map((h) => h.height), [9, 170]);
    assert.equal(r.history[1].txid, TX170);
    assert.ok(r.utxos.some((u) => u.txid === TX170 && u.vout === 1 && u.value === 40e8) ||
      r.history.some((h) => h.height > 170), 'the 40 BTC change is unspent or spent later');
    assert.deepEqual(
      { balance: q.balance, received: q.received, sent: q.sent, txCount: q.txCount, history: q.history, utxos: q.utxos },
      r);
    assert.ok(q.history.some((h) => h.txid === TX170));
  });

  it('history pages (--limit/--cursor) concatenate to the whole history in chain order', async () => {
    const all = ref[PAYER].history;
    assert.ok(all.length >= 3);
    const got = [];
    let cursor = null;
    for (let i = 0; i < 20; i++) {
      const args = ['query', PAYER, '--datadir', datadir, '--limit', '2'];
      if (cursor) args.push('--cursor', cursor);
      const q = await runJson(args);
      assert.ok(q.history.length <= 2);
      got.push(...q.history);
      cursor = q.next;
      if (!cursor) break;
    }
    assert.deepEqual(got, all);
  });

  it('genesis: the unspendable genesis coinbase is not indexed (as in Bitcoin Core\'s UTXO set)', async () => {
    assert.deepEqual(ref[GENESIS_ADDRESS].history, []);
    const q = await runJson(['query', GENESIS_ADDRESS, '--datadir', datadir]);
    assert.deepEqual([q.balance, q.received, q.sent, q.txCount, q.history, q.utxos], [0, 0, 0, 0, [], []]);
    const help = await runCli(['query', '--help']);
    assert.match(help.stdout, /genesis coinbase output is not indexed/);
  });

  it('a script hash query answers like the address query', async () => {
    const byAddress = await runJson(['query', PAYEE, '--datadir', datadir]);
    const byHash = await runJson(['query', byAddress.scripthash, '--datadir', datadir]);
    assert.equal(byHash.address, null);
    assert.deepEqual({ ...byHash, address: PAYEE }, byAddress);
  });

  it('--view script: the P2PK output under its own script hash, not under the payee\'s P2PKH address', async () => {
    const own = toDisplayHex(sha256(Buffer.from(`41${'04ae1a62fe09c5f51b13905f07f06b99a2f7159b2225f374cd378d71302fa28414e7aab37397f554a7df5f142c21c1b7303b8a0626f1baded5c72a704f7e6cd84c'}ac`, 'hex')));
    const byAddress = await runJson(['query', PAYEE, '--datadir', datadir, '--view', 'script']);
    assert.deepEqual([byAddress.balance, byAddress.txCount, byAddress.history, byAddress.utxos], [0, 0, [], []]);
    for (const view of ['script', 'address']) {
      const byOwn = await runJson(['query', own, '--datadir', datadir, '--view', view]);
      assert.deepEqual([byOwn.balance, byOwn.history], [10e8, [{ txid: TX170, height: 170 }]], view);
    }
    const bad = await runCli(['query', PAYEE, '--datadir', datadir, '--view', 'exact']);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /view is "address" or "script", got exact/);
  });

  it('verify passes', async () => {
    const r = await runCli(['verify', '--datadir', datadir]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\nok\n$/);
  });

  it('a second sync finds nothing to do and changes nothing', async () => {
    const before = await digestOf(datadir, 'main');
    const r = await runCli(['sync', '--blocks-dir', blocksDir, '--datadir', datadir]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /synced 0 blocks/);
    assert.equal(await digestOf(datadir, 'main'), before);
  });

  describe('bad input and bad state: one clear error line, non-zero exit, nothing written', () => {
    it('a missing blocks dir', async () => {
      const dd = path.join(tempDir('nodir'), 'index');
      const r = await runCli(['sync', '--blocks-dir', path.join(blocksDir, 'nope'), '--datadir', dd, '--network', 'main']);
      assertError(r, 'ERR_NO_BLOCKS_DIR');
      assert.ok(!fs.existsSync(dd), 'no datadir was created');
    });

    it('mainnet blocks synced with --network testnet', async () => {
      const dd = path.join(tempDir('wrongnet'), 'index');
      const r = await runCli(['sync', '--blocks-dir', blocksDir, '--datadir', dd, '--network', 'testnet']);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /^addrindex: .*(main|testnet).* \[ERR_[A-Z_]+\]\n$/);
      assert.ok(!fs.existsSync(dd), 'no datadir was created');
    });

    it('a datadir written by another network', async () => {
      const before = await digestOf(datadir, 'main');
      const regtest = await makeChain({ seed: 'other-net', blocks: 5, txsPerBlock: 2 });
      const sync = await runCli(['sync', '--blocks-dir', regtest.dir, '--datadir', datadir, '--network', 'regtest']);
      assertError(sync, 'ERR_WRONG_NETWORK');
      assert.match(sync.stderr, /main/);
      for (const cmd of [['status'], ['verify'], ['query', PAYEE]]) {
        const r = await runCli([...cmd, '--datadir', datadir, '--network', 'testnet']);
        assertError(r, 'ERR_WRONG_NETWORK');
      }
      assert.equal(await digestOf(datadir, 'main'), before);
    });

    it('an address of another network', async () => {
      const before = await digestOf(datadir, 'main');
      const r = await runCli(['query', 'mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn', '--datadir', datadir]);
      assertError(r, 'ERR_ADDRESS_NETWORK');
      assert.match(r.stderr, /testnet/);
      const junk = await runCli(['query', 'not-an-address', '--datadir', datadir]);
      assertError(junk, 'ERR_ADDRESS_FORMAT');
      assert.equal(await digestOf(datadir, 'main'), before);
    });

    it('a datadir that does not exist', async () => {
      const dd = path.join(tempDir('none'), 'index');
      for (const cmd of [['status'], ['verify'], ['query', PAYEE]]) {
        const r = await runCli([...cmd, '--datadir', dd]);
        assertError(r, 'ERR_NO_INDEX');
      }
      assert.ok(!fs.existsSync(dd));
    });

    it('usage errors: a missing option, a bad number', async () => {
      assertError(await runCli(['sync', '--datadir', datadir]), 'ERR_USAGE');
      assertError(await runCli(['sync', '--blocks-dir', blocksDir, '--datadir', datadir, '--batch-blocks', 'x']), 'ERR_USAGE');
      assertError(await runCli(['query', '--datadir', datadir]), 'ERR_USAGE');
    });

    it('a summary that disagrees with its history: verify exits non-zero naming the mismatch', async () => {
      const copy = path.join(tempDir('mismatch'), 'index');
      fs.cpSync(datadir, copy, { recursive: true });
      const { scripthash } = decodeAddress(PAYEE, 'main');
      // a well-formed account value whose received sum is 1 satoshi too high
      rewriteAccount(copy, scripthash, (a) => { a.received += 1; });
      const v = await runCli(['verify', '--datadir', copy]);
      assert.notEqual(v.code, 0);
      assert.match(v.stdout, /^problem: /m);
      assert.match(v.stderr, /^addrindex: verify found \d+ problem\(s\), the first: [^\n]+ \[ERR_VERIFY_FAILED\]\n$/);
      // the problem names the account by its script hash
      assert.ok(v.stderr.includes(toDisplayHex(scripthash)), v.stderr);
    });

    it('a corrupt stored value: query and verify fail clearly', async () => {
      // a copy of the index, so the other tests keep a sound one
      const copy = path.join(tempDir('corrupt'), 'index');
      fs.cpSync(datadir, copy, { recursive: true });
      const { scripthash } = decodeAddress(PAYEE, 'main');
      corruptAccount(copy, scripthash);
      const q = await runCli(['query', PAYEE, '--datadir', copy, '--json']);
      assert.notEqual(q.code, 0);
      assert.match(q.stderr, /^addrindex: [^\n]+ \[ERR_[A-Z_]+\]\n$/);
      const v = await runCli(['verify', '--datadir', copy]);
      assert.notEqual(v.code, 0);
      assert.match(v.stderr, /^addrindex: [^\n]+ \[ERR_[A-Z_]+\]\n$/);
    });
  });
});

/**
 * Flips bytes in the middle of one address's account value, through the LMDB API (so the
 * file stays a valid LMDB environment and only that value is wrong).
 */
function corruptAccount(datadir, scripthash) {
  const { accountKey } = require('../../lib/stores/layout');
  const key = accountKey(scripthash, 0);
  // the LMDB store keeps one environment in the datadir, one unnamed database
  const db = open({ path: datadir, encoding: 'binary', keyEncoding: 'binary' });
  try {
    const value = db.getBinary(key);
    assert.ok(value && value.length > 2, 'the account row exists');
    const bad = Buffer.from(value);
    for (let i = 1; i < bad.length; i++) bad[i] ^= 0xa5;
    db.putSync(key, bad);
  } finally {
    db.close();
  }
}

/**
 * Decodes one address's account value, lets `change` edit it, and writes it back well formed.
 */
function rewriteAccount(datadir, scripthash, change) {
  const { accountKey } = require('../../lib/stores/layout');
  const { Account, decodeAccount, encodeAccount } = require('../../lib/codec/records');
  const { Writer } = require('../../lib/codec/io');
  const key = accountKey(scripthash, 0);
  const db = open({ path: datadir, encoding: 'binary', keyEncoding: 'binary' });
  try {
    const a = new Account();
    decodeAccount(db.getBinary(key), a);
    change(a);
    db.putSync(key, Buffer.from(encodeAccount(new Writer(), a)));
  } finally {
    db.close();
  }
}
