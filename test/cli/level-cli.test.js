'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { MAINNET_439 } = require('../helpers/fixtures');
const { waitFor } = require('../helpers/chains');
const { runCli, runJson, startCli } = require('../helpers/cli');
const { tempDir } = require('../helpers/tmp');
const { openStore } = require('../../lib/stores');

const PAYEE = '1Q2TWHE3GMdB6BZKafqwxXtWAWgFt5Jvm3';
const PAYER = '12cbQLTFMXRnSzktFkuoG3eHoMeFtpTu3S';
const TIP = '0000000025c6b644f8add734be7e666fa4afa43ca0204d623a0c0b1fd2104c7a';

async function digestOf(store, datadir) {
  const s = await openStore({ store, datadir, network: 'main', readOnly: true });
  try {
    return await s.digest();
  } finally {
    await s.close();
  }
}

describe('addrindex sync / status / verify / query --store level (CLI): the same index as LMDB', function () {
  this.timeout(90000);
  let blocksDir;
  const dirs = {};

  before(async () => {
    blocksDir = tempDir('mainnet');
    fs.copyFileSync(MAINNET_439, path.join(blocksDir, 'blk00000.dat'));
    for (const store of ['lmdb', 'level']) {
      dirs[store] = path.join(tempDir(`mainnet-${store}`), 'index');
      const r = await runCli(['sync', '--store', store, '--blocks-dir', blocksDir, '--datadir', dirs[store], '--batch-blocks', '50']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, new RegExp(`synced 439 blocks, 446 txs .* tip height 438 ${TIP}\\n$`));
    }
  });

  it('the same digest: every row byte for byte', async () => {
    const level = await digestOf('level', dirs.level);
    assert.match(level, /^[0-9a-f]{64}$/);
    assert.equal(level, await digestOf('lmdb', dirs.lmdb));
  });

  it('status: the same tip, tx count and rows per table', async () => {
    const [a, b] = await Promise.all(['lmdb', 'level'].map((store) => runJson(['status', '--store', store, '--datadir', dirs[store]])));
    assert.deepEqual(b.tip, { height: 438, hash: TIP });
    assert.equal(b.network, 'main');
    assert.equal(b.txs, 446);
    assert.deepEqual(a.tip, b.tip);
    assert.equal(a.txs, b.txs);
    for (const t of Object.keys(a.tables)) assert.deepEqual(b.tables[t], a.tables[t], t);
    assert.ok(b.diskBytes > 0);
  });

  it('verify passes', async () => {
    const v = await runJson(['verify', '--store', 'level', '--datadir', dirs.level]);
    assert.equal(v.ok, true);
    assert.equal(v.checked.blocks, 439);
  });

  it('query: the same answers, pages and cursors included', async () => {
    for (const [address, limit] of [[PAYEE, '50'], [PAYER, '2'], [PAYER, '1000']]) {
      const [a, b] = await Promise.all(['lmdb', 'level'].map((store) =>
        runJson(['query', address, '--store', store, '--datadir', dirs[store], '--limit', limit])));
      assert.deepEqual(b, a, `${address} --limit ${limit}`);
      if (b.next) {
        const [a2, b2] = await Promise.all(['lmdb', 'level'].map((store) =>
          runJson(['query', address, '--store', store, '--datadir', dirs[store], '--limit', limit, '--cursor', b.next])));
        assert.deepEqual(b2, a2);
        assert.ok(b2.history.length > 0);
      }
    }
    const payee = await runJson(['query', PAYEE, '--store', 'level', '--datadir', dirs.level]);
    assert.equal(payee.balance, 10e8);
    assert.equal(payee.history[0].txid, 'f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16');
  });

  it('while `sync --follow` holds the datadir, status fails with ERR_LOCKED saying LevelDB allows one process', async () => {
    const follow = startCli(['sync', '--store', 'level', '--follow', '--blocks-dir', blocksDir, '--datadir', dirs.level]);
    try {
      // (polling status meanwhile would race the follower for the lock, and one of them loses)
      await waitFor(() => /at the source's tip/.test(follow.output.stderr), 20000, 'the follower to reach the tip');
      const refused = await runCli(['status', '--store', 'level', '--datadir', dirs.level]);
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, /^addrindex: LevelDB datadir .* is open in another process \(pid \d+: addrindex\.js sync --store level --follow .*\): LevelDB allows one process at a time\. .*\[ERR_LOCKED\]\n$/);
    } finally {
      follow.kill('SIGINT');
    }
    const done = await follow.done;
    assert.equal(done.code, 0, done.stderr);
    assert.equal((await runJson(['status', '--store', 'level', '--datadir', dirs.level])).tip.height, 438);
  });
});
