'use strict';

const assert = require('node:assert/strict');
const path = require('node:path');
const bitcore = require('bitcore-lib');
const { BlkWriter } = require('../../tools/generator');
const { useBtcd } = require('../helpers/btcd');
const { nodeWallet, buildScriptChain } = require('../helpers/node-chain');
const { runCli } = require('../helpers/cli');
const { tempDir } = require('../helpers/tmp');
const { startServer, request } = require('./helpers');

const { wallet, minerA } = nodeWallet();

/**
 * Transactions and blocks of an index built from a node (btcd over JSON-RPC): with
 * `sync --txstore` the index keeps the blocks it fetched and every transaction and block route
 * answers exactly as over an index of the same blocks read from a blk file; without it the
 * blocks lie nowhere the server can read, and the routes say so (503) rather than guess, until
 * `serve` has a node to fetch them from.
 */
describe('api: transactions and blocks of an index synced from btcd over JSON-RPC', function () {
  this.timeout(180000);
  const btcd = useBtcd([{ miningAddress: minerA }]);
  let chain;
  let fromFile;
  let kept;
  let bare;
  /** the transactions of the blocks past the empty ones, and those blocks' hashes */
  const txids = [];
  const hashes = [];

  before(async function () {
    this.timeout(180000);
    const [node] = btcd.nodes;
    chain = await buildScriptChain(node, wallet, 'miner-a');
    // the reference: the node's blocks (checked by bitcore-lib) in a blk file, synced from there
    const raws = await node.rawBlocks(0);
    const blocksDir = tempDir('node-tx-blocks');
    const w = new BlkWriter({ dir: blocksDir, network: 'regtest' });
    for (const raw of raws) w.write(raw);
    await w.close();
    for (const raw of raws.slice(-4)) {
      const block = bitcore.Block.fromBuffer(raw);
      hashes.push(block.hash);
      txids.push(...block.transactions.map((t) => t.hash));
    }
    const dirs = { file: tempDir('node-tx-file'), kept: tempDir('node-tx-kept'), bare: tempDir('node-tx-bare') };
    const syncs = [
      ['sync', '--blocks-dir', blocksDir, '--datadir', dirs.file],
      ['sync', '--rpc-url', node.url, '--txstore', '--datadir', dirs.kept],
      ['sync', '--rpc-url', node.url, '--datadir', dirs.bare],
    ];
    for (const args of syncs) {
      const r = await runCli([...args, '--network', 'regtest', '--threads', '0']);
      assert.equal(r.code, 0, r.stderr);
    }
    [fromFile, kept, bare] = await Promise.all([
      startServer(dirs.file, { network: 'regtest' }),
      startServer(dirs.kept, { network: 'regtest', indexKeepsBlocks: true }),
      startServer(dirs.bare, { network: 'regtest' }),
    ]);
  });
  after(async () => {
    for (const s of [fromFile, kept, bare]) if (s) await s.close();
  });

  it('with --txstore: every transaction and block route answers as over the blk file\'s index, every output kind spent', async () => {
    assert.ok(txids.includes(chain.txs.spendAll) && txids.includes(chain.txs.fund));
    const paths = [
      ...txids.flatMap((t) => [`/api/tx/${t}`, `/api/tx/${t}/hex`, `/api/tx/${t}/outspends`, `/api/tx/${t}/merkle-proof`,
        `/api/v1/tx/${t}?full=1`, `/insight-api/tx/${t}`, `/insight-api/rawtx/${t}`]),
      ...hashes.flatMap((h) => [`/api/block/${h}`, `/api/block/${h}/txs`, `/api/block/${h}/raw`, `/insight-api/block/${h}`]),
      `/api/address/${chain.addresses.p2pkh}/txs`, `/api/address/${chain.addresses.b}/txs`,
      `/insight-api/addrs/${chain.addresses.p2pkh},${chain.addresses.p2sh}/txs`,
    ];
    for (const p of paths) {
      const [want, got] = await Promise.all([request(`${fromFile.url}${p}`), request(`${kept.url}${p}`)]);
      assert.equal(want.status, 200, `${p}: ${want.text.slice(0, 200)}`);
      assert.equal(got.status, 200, `${p}: ${got.text.slice(0, 200)}`);
      assert.equal(got.text, want.text, p);
    }
    // spendAll spent every spendable kind the fund transaction made: its fee is what the wallet left
    const spendAll = (await request(`${kept.url}/api/tx/${chain.txs.spendAll}`)).json;
    const inputs = spendAll.vin.reduce((n, v) => n + v.prevout.value, 0);
    assert.equal(spendAll.fee, inputs - spendAll.vout.reduce((n, o) => n + o.value, 0));
    assert.ok(spendAll.fee > 0);
  });

  it('without --txstore, a blocks dir or a node to ask: 503 ERR_NO_BLOCK_SOURCE naming what to change, never a guess; what needs no block still answers', async () => {
    const t = chain.txs.spendAll;
    for (const p of [`/api/tx/${t}`, `/api/tx/${t}/hex`, `/insight-api/tx/${t}`, `/api/block/${hashes[0]}/raw`]) {
      const r = await request(`${bare.url}${p}`);
      assert.equal(r.status, 503, p);
      assert.equal(r.json.error.code, 'ERR_NO_BLOCK_SOURCE', p);
      for (const cure of ['--blocks-dir', '--rpc-url', 'sync --txstore']) assert.ok(r.json.error.message.includes(cure), `${p}: ${cure}`);
    }
    for (const p of [`/api/tx/${t}/status`, `/api/block/${hashes[0]}`, `/api/block/${hashes[0]}/txids`, `/api/v1/tx/${t}`]) {
      const [want, got] = await Promise.all([request(`${fromFile.url}${p}`), request(`${bare.url}${p}`)]);
      assert.equal(got.status, 200, `${p}: ${got.text.slice(0, 200)}`);
      assert.equal(got.text, want.text, p);
    }
  });
});
