'use strict';

const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { writeChain } = require('../../tools/generator');
const { startCli, runCli } = require('../helpers/cli');
const { tempDir } = require('../helpers/tmp');
const { waitFor } = require('../helpers/chains');
const { openIndex } = require('../../lib/stores');
const { WalletWriter } = require('../../lib/cluster/wallet-writes');

/**
 * Who writes wallets under `serve` (lib/cluster/wallet-writes.js): the primary's LMDB handle,
 * writable beside a running `addrindex sync` of another process. Wallet imports committed while
 * the sync commits its batches (and grows the file) all land, the sync is not refused, and the
 * chain it leaves is the chain a sync without wallets leaves (verify passes, digests equal).
 */
describe('bitcore v8 wallets written beside a running sync (LMDB, two writer processes)', function () {
  this.timeout(180000);

  it('imports land while the sync commits; the chain is untouched', async () => {
    const blocksDir = tempDir('wallet-writes-blocks');
    await writeChain({ dir: blocksDir, seed: 'wallet-writes', txs: 30000, network: 'regtest' });
    const datadir = tempDir('wallet-writes-idx');
    // small cache groups: many commits while the imports run
    const sync = startCli(['sync', '--blocks-dir', blocksDir, '--datadir', datadir, '--network', 'regtest', '--cache-mb', '8']);
    await waitFor(() => fs.existsSync(path.join(datadir, 'data.mdb')), 60000, 'the index');
    const writer = new WalletWriter({ store: 'lmdb', datadir, network: 'regtest' });
    let added = 0;
    let during = 0;
    try {
      const pubKey = `02${'ab'.repeat(32)}`;
      assert.equal((await writer.run('createWallet', [{ pubKey, name: 'w', chain: 'BTC', network: 'regtest' }])).created, true);
      for (let batch = 0; sync.exitCode === null || batch < 3; batch++) {
        // a turn of the event loop between imports, as the primary's come over IPC (LMDB's
        // reads and commits here resolve as microtasks: a bare loop would never see the exit)
        await new Promise((resolve) => { setImmediate(resolve); });
        const entries = Array.from({ length: 100 }, (_, i) => ({
          address: `a${batch}-${i}`, scripthash: crypto.createHash('sha256').update(`${batch}/${i}`).digest(),
        }));
        added += (await writer.run('addWalletAddresses', [pubKey, entries])).added;
        if (sync.exitCode === null) during++;
      }
      assert.equal((await sync.done).code, 0, sync.text());
      assert.ok(during > 0, 'some imports were committed while the sync ran');
      // one LMDB environment per path in a process (LMDB's rule): the writer's goes first
      await writer.close();
      const store = await openIndex({ store: 'lmdb', datadir, readOnly: true });
      try {
        assert.equal((await store.getWallet(pubKey)).addresses, added);
        assert.equal((await store.getWalletAddresses((await store.getWallet(pubKey)).id)).addresses.length, added);
        assert.equal((await store.verify()).ok, true);
        const fresh = tempDir('wallet-writes-fresh');
        assert.equal((await runCli(['sync', '--blocks-dir', blocksDir, '--datadir', fresh, '--network', 'regtest', '--quiet'])).code, 0);
        const other = await openIndex({ store: 'lmdb', datadir: fresh, readOnly: true });
        try {
          assert.equal(await store.digest(), await other.digest(), 'the chain rows are those of a sync without wallets');
        } finally {
          await other.close();
        }
      } finally {
        await store.close();
      }
    } finally {
      await writer.close();
      if (sync.exitCode === null) sync.kill('SIGKILL');
    }
  });
});
