'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const bitcore = require('bitcore-lib');
const { NodeClient } = require('../../lib/node/client');
const { resolveEndpoint } = require('../../lib/node/endpoint');
const { NodeSource } = require('../../lib/sources/node');
const { SyncService } = require('../../lib/sync/service');
const { BlkWriter } = require('../../tools/generator');
const { useBtcd } = require('../helpers/btcd');
const { freePort } = require('../helpers/ports');
const { nodeWallet, buildScriptChain } = require('../helpers/node-chain');
const { kindOf, KINDS } = require('../helpers/wallet');
const { openIndex, freshDigest, digestOf, tipOf, waitFor } = require('../helpers/chains');
const { runCli, runJson, startCli } = require('../helpers/cli');
const { tempDir: tmpDir } = require('../helpers/tmp');

const { wallet, minerA, minerB } = nodeWallet();

/**
 * The independent path: the node's blocks, fetched by the btcd helper's own RPC code and
 * checked with bitcore-lib (hash and parent link), written into a blk file and synced with
 * the blocks-dir source.
 * @returns {Promise<{dir: string, digest: string, raws: Buffer[]}>}
 */
async function referenceOf(node) {
  const raws = await node.rawBlocks(0);
  raws.forEach((raw, h) => {
    const block = bitcore.Block.fromBuffer(raw);
    if (h > 0) assert.equal(bitcore.util.buffer.reverse(block.header.prevHash).toString('hex'), bitcore.Block.fromBuffer(raws[h - 1]).hash);
  });
  const dir = tmpDir('node-ref');
  const w = new BlkWriter({ dir, network: 'regtest' });
  for (const raw of raws) w.write(raw);
  await w.close();
  const { digest } = await freshDigest(dir);
  return { dir, digest, raws };
}

/** The expected one-line failure of the CLI. */
function assertFails(res, code) {
  assert.notEqual(res.code, 0, `expected a failure, got: ${res.stdout}`);
  assert.match(res.stderr, new RegExp(`^addrindex: [^\\n]+ \\[${code}\\]\\n$`, 'm'), res.stderr);
}

function nodeSource(node, opts = {}) {
  const client = NodeClient.fromEndpoint(resolveEndpoint({ rpcUrl: node.url, network: 'regtest', env: {} }), {
    retryMs: 30000, maxDelayMs: 200, ...opts.client,
  });
  return new NodeSource({ client, network: 'regtest', ...opts.source });
}

describe('sync from a node (btcd over JSON-RPC)', function () {
  this.timeout(120000);
  const btcd = useBtcd([{ miningAddress: minerA }, { miningAddress: minerB }]);
  let a;
  let b;
  let chain; // what buildScriptChain made
  let ref; // the blocks-dir reference

  before(async function () {
    this.timeout(120000);
    [a, b] = btcd.nodes;
    chain = await buildScriptChain(a, wallet, 'miner-a');
    ref = await referenceOf(a);
  });

  it('a chain with every output kind, synced over RPC, is the same index as its blocks read from a blk file', async () => {
    // the chain really holds every kind, as outputs and (but OP_RETURN) spent
    const kinds = new Set();
    for (const raw of ref.raws) for (const tx of bitcore.Block.fromBuffer(raw).transactions) for (const o of tx.outputs) kinds.add(kindOf(o.script));
    for (const k of KINDS) assert.ok(kinds.has(k), `an output of kind ${k}`);

    const datadir = path.join(tmpDir('node-sync'), 'index');
    const res = await runCli(['sync', '--rpc-url', a.url, '--network', 'regtest', '--datadir', datadir, '--threads', '1', '--batch-blocks', '50']);
    assert.equal(res.code, 0, res.stderr);
    assert.ok(!res.stderr.includes(a.pass), 'the password is never printed');
    assert.equal(await digestOf(datadir), ref.digest);
    // the index records where its blocks came from, the password masked
    const ro = await openIndex(datadir, { readOnly: true });
    try {
      assert.deepEqual(await ro.getSourceInfo(), { node: `http://${a.user}:***@127.0.0.1:${a.rpcPort}/` });
    } finally {
      await ro.close();
    }

    // what the wallet knows it did: P2PK outputs count toward the key's P2PKH address
    const p2pkh = await runJson(['query', chain.addresses.p2pkh, '--datadir', datadir]);
    assert.deepEqual([p2pkh.received, p2pkh.sent, p2pkh.balance, p2pkh.txCount], [2e8 + chain.amounts.spendAllToA, 2e8, chain.amounts.spendAllToA, 2]);
    assert.deepEqual(p2pkh.history.map((h) => h.txid), [chain.txs.fund, chain.txs.spendAll]);
    const p2tr = await runJson(['query', chain.addresses.p2tr, '--datadir', datadir]);
    assert.deepEqual([p2tr.balance, p2tr.txCount], [0, 2]);
    const tb = await runJson(['query', chain.addresses.b, '--datadir', datadir]);
    assert.deepEqual([tb.balance, tb.utxos.length], [chain.amounts.spendAllToB, 1]);
  });

  it('a blocks dir holding part of the chain plus the node (cookie file, --rpc-host), and $ADDRINDEX_RPC_URL alone: the same index', async () => {
    const partial = tmpDir('node-partial');
    const w = new BlkWriter({ dir: partial, network: 'regtest' });
    for (const raw of ref.raws.slice(0, 300)) w.write(raw);
    await w.close();
    const cookie = path.join(tmpDir('cookie'), '.cookie');
    fs.writeFileSync(cookie, `${a.user}:${a.pass}\n`);
    const combined = path.join(tmpDir('node-combined'), 'index');
    const res = await runCli(['sync', '--blocks-dir', partial, '--rpc-cookie', cookie, '--rpc-host', `127.0.0.1:${a.rpcPort}`,
      '--network', 'regtest', '--datadir', combined, '--threads', '1']);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(await digestOf(combined), ref.digest);

    const fromEnv = path.join(tmpDir('node-env'), 'index');
    const r2 = await runCli(['sync', '--network', 'regtest', '--datadir', fromEnv, '--threads', '1'], { env: { ADDRINDEX_RPC_URL: a.url } });
    assert.equal(r2.code, 0, r2.stderr);
    assert.equal(await digestOf(fromEnv), ref.digest);
  });

  it('wrong credentials, another network, no node: one clear line, a non-zero exit, no datadir left behind', async () => {
    const dir = tmpDir('node-errors');
    const auth = await runCli(['sync', '--rpc-url', a.url.replace(`:${a.pass}@`, ':not-the-password@'), '--network', 'regtest',
      '--datadir', path.join(dir, 'auth')]);
    assertFails(auth, 'ERR_NODE_AUTH');
    assert.match(auth.stderr, /refused the credentials \(HTTP 401\)/);
    assert.ok(!auth.stderr.includes('not-the-password'));

    const net = await runCli(['sync', '--rpc-url', a.url, '--network', 'testnet', '--datadir', path.join(dir, 'net')]);
    assertFails(net, 'ERR_NODE_NETWORK');
    assert.match(net.stderr, /is a regtest node .* not testnet: pass --network regtest/);

    const gone = await runCli(['sync', '--rpc-url', `http://u:gone-secret@127.0.0.1:${await freePort()}`, '--network', 'regtest',
      '--rpc-retry-s', '1', '--datadir', path.join(dir, 'gone')]);
    assertFails(gone, 'ERR_NODE_UNAVAILABLE');
    assert.match(gone.stderr, /retrying for up to 1 s/);
    assert.ok(!gone.stderr.includes('gone-secret'));

    assert.deepEqual(fs.readdirSync(dir), [], 'nothing written');
  });

  it('the node killed mid-sync and restarted: the sync waits, resumes, and ends at the same index', async () => {
    const tipHeight = ref.raws.length - 1;
    const store = await openIndex(path.join(tmpDir('node-kill'), 'index'));
    // small requests, little fetched ahead and small commits: most of the chain is still to be fetched at the kill
    const source = nodeSource(a, { source: { requestBytes: 4000, inflight: 1, aheadBytes: 8000 } });
    const ac = new AbortController();
    let killedAt = -1;
    let restored = null;
    const service = new SyncService({
      source, store, network: 'regtest', threads: 1, batch: { maxBlocks: 4 }, pollMs: 50,
      onProgress: (p) => {
        if (p.phase === 'batch' && p.height >= 100 && killedAt < 0) {
          killedAt = p.height;
          restored = (async () => {
            await a.kill();
            await new Promise((r) => setTimeout(r, 300));
            await a.start(); // btcd starts from genesis: give it its chain back
            await a.submitBlocks(ref.raws.slice(1));
          })();
        }
        if (p.phase === 'caught-up' && p.height === tipHeight && restored) restored.then(() => ac.abort());
      },
    });
    try {
      const r = await service.run({ follow: true, signal: ac.signal });
      await restored;
      assert.ok(killedAt >= 100 && killedAt < tipHeight - 100, `killed at ${killedAt}`);
      assert.equal(r.tip.height, tipHeight);
      assert.ok(source.stats().rpc.retries >= 1, 'the sync waited for the node');
      assert.equal(await store.digest(), ref.digest);
    } finally {
      await source.close();
      await store.close();
    }
  });

  it('the node gone for longer than the retry time: ERR_NODE_UNAVAILABLE, the blocks fetched before it indexed; a later run resumes', async () => {
    const datadir = path.join(tmpDir('node-gone'), 'index');
    let store = await openIndex(datadir);
    let source = nodeSource(a, { client: { retryMs: 500 }, source: { requestBytes: 4000, inflight: 1, aheadBytes: 8000 } });
    let killed = null;
    const service = new SyncService({
      source, store, network: 'regtest', threads: 1, batch: { maxBlocks: 4 },
      onProgress: (p) => {
        if (p.phase === 'batch' && p.height >= 100 && !killed) killed = a.kill();
      },
    });
    try {
      await assert.rejects(service.run(), (err) => err.code === 'ERR_NODE_UNAVAILABLE' && /did not answer/.test(err.message));
      await killed;
      const tip = await store.getTip();
      assert.ok(tip.height >= 100 && tip.height < ref.raws.length - 1, `stopped at ${tip.height}`);
    } finally {
      await source.close();
      await store.close();
    }
    await a.start();
    await a.submitBlocks(ref.raws.slice(1));
    const res = await runCli(['sync', '--rpc-url', a.url, '--network', 'regtest', '--datadir', datadir, '--threads', '1']);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(await digestOf(datadir), ref.digest);
  });

  it('--follow: a new block\'s payment shows up; a reorg made on a second node is reverted and replaced', async () => {
    const datadir = path.join(tmpDir('node-follow'), 'index');
    const child = startCli(['sync', '--rpc-url', a.url, '--network', 'regtest', '--datadir', datadir,
      '--follow', '--poll-ms', '100', '--threads', '1']);
    const at = (hash) => async () => {
      const tip = await tipOf(datadir);
      return tip && tip.hash === hash ? tip : null;
    };
    const coinbaseAt = async (height) => wallet.coinbaseCoin(Buffer.from(await a.call('getblock', await a.call('getblockhash', height), 0), 'hex'), 'miner-a');
    try {
      await waitFor(at(ref.raws.length && (await a.tip()).hash), 30000, 'the initial sync');

      // a payment, mined: it shows in the index (content, not time)
      const pay = wallet.pay([await coinbaseAt(3)], [{ kind: 'p2wpkh', label: 'follow', satoshis: 7000000 }, { kind: 'p2pkh', label: 'miner-a' }]);
      await a.sendTx(pay.hex);
      const [mined] = await a.generate(1);
      const t1 = await waitFor(at(mined), 30000, 'the new block');
      const seen = await runJson(['query', wallet.output('p2wpkh', 'follow').address, '--datadir', datadir]);
      assert.deepEqual(seen.history, [{ txid: pay.txid, height: t1.height }]);
      assert.equal(seen.balance, 7000000);

      // B gets A's chain, then both mine: A one block with a payment, B two without it
      await b.submitBlocks(await a.rawBlocks(1));
      const fork = (await a.tip()).height;
      const orphan = wallet.pay([await coinbaseAt(4)], [{ kind: 'p2tr', label: 'orphan', satoshis: 5000000 }, { kind: 'p2pkh', label: 'miner-a' }]);
      await a.sendTx(orphan.hex);
      const [onA] = await a.generate(1);
      await waitFor(at(onA), 30000, 'the block on A');
      const before = await runJson(['query', wallet.output('p2tr', 'orphan').address, '--datadir', datadir]);
      assert.equal(before.txCount, 1);

      const onB = await b.generate(2);
      await a.submitBlocks(await b.rawBlocks(fork + 1));
      assert.equal((await a.tip()).hash, onB[1], 'A follows the longer branch');
      assert.ok((await a.call('getrawmempool')).includes(orphan.txid), 'the orphaned payment is back in A\'s mempool');
      await waitFor(at(onB[1]), 30000, 'the reorg');
      const after = await runJson(['query', wallet.output('p2tr', 'orphan').address, '--datadir', datadir]);
      assert.deepEqual([after.txCount, after.balance, after.history], [0, 0, []]);

      child.kill('SIGTERM');
      const res = await child.done;
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stderr, new RegExp(`reorg: reverted 1 block\\(s\\) from height ${fork + 1} to the fork point ${fork}`));
      const winning = await referenceOf(a);
      assert.equal(await digestOf(datadir), winning.digest);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
