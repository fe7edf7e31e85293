'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { execFileSync, execFile } = require('node:child_process');
const { makeChain, addBranch, waitFor } = require('../helpers/chains');
const { runCli } = require('../helpers/cli');
const { tempDir } = require('../helpers/tmp');
const { BlocksDirSource } = require('../../lib/sources/blocksdir');
const { parseBlock } = require('../../lib/chain/block');
const { describeOutput } = require('../../lib/chain/describe');
const { decodeAddress } = require('../../lib/chain/address');
const { NETWORKS } = require('../../lib/chain/networks');
const { toDisplayHex } = require('../../lib/chain/hash');
const { startElectrum } = require('./helpers');

const ROOT = path.join(__dirname, '..', '..');

/** "395.78715825" → 39578715825 (satoshis, exactly). */
function sats(btc) {
  const [whole, frac = ''] = String(btc).split('.');
  return Number(whole) * 1e8 + Number(frac.padEnd(8, '0'));
}

function electrum(args, env) {
  return new Promise((resolve, reject) => {
    execFile('electrum', args, { env, timeout: 60000 }, (err, stdout, stderr) => (err ? reject(new Error(`electrum ${args.join(' ')}: ${err.message}\n${stderr}`)) : resolve(stdout)));
  });
}

/**
 * The real Electrum wallet (Debian's package, 4.3.4 on bookworm; installed by
 * scripts/install-electrum.sh when missing) as a daemon on regtest, pointed at the server
 * with --oneserver: a watching-only wallet of addresses of a generated regtest chain must
 * show the index's balances, histories and unspent outputs, verified by the wallet itself
 * (headers chained from genesis, merkle proofs of every transaction), and follow new blocks.
 * The generator writes real regtest blocks (genesis, links, merkle roots, regtest proof of
 * work), so no node is needed for this; the wallet checks no proof of work on regtest anyway.
 */
describe('electrum: the Electrum wallet daemon (watching-only) against the server, on regtest', function () {
  this.timeout(180000);
  const seed = 'electrum-wallet';
  let chain;
  let datadir;
  let srv;
  let home;
  let env;
  let daemonPid = null;
  let addresses;
  let rpc;

  before(async function () {
    this.timeout(600000); // the first run may install the wallet with apt-get
    execFileSync(path.join(ROOT, 'scripts', 'install-electrum.sh'), { stdio: 'pipe', timeout: 590000 });
    chain = await makeChain({ seed, blocks: 30 });
    datadir = tempDir('electrum-wallet-index');
    assert.equal((await runCli(['sync', '--blocks-dir', chain.dir, '--datadir', datadir, '--network', 'regtest', '--threads', '0', '--quiet'])).code, 0);
    // no blocks dir given: the one the sync recorded in the index (the wallet fetches every transaction)
    srv = await startElectrum(datadir, { network: 'regtest', limits: { pollMs: 50 } });

    // four addresses of each kind the chain pays (P2PK has no address of its own), busiest first
    const uses = new Map();
    const source = new BlocksDirSource({ dir: chain.dir, network: 'regtest' });
    await source.scan();
    for await (const b of source.blocks(1)) {
      for (const tx of parseBlock(b.raw).txs) {
        for (const o of tx.outputs) {
          const d = describeOutput(o.script, NETWORKS.regtest);
          if (!d.address || d.type === 'p2pk') continue;
          const u = uses.get(d.address) || { type: d.type, n: 0 };
          u.n++;
          uses.set(d.address, u);
        }
      }
    }
    await source.close();
    addresses = [];
    for (const type of ['p2pkh', 'p2sh', 'p2wpkh', 'p2wsh', 'p2tr']) {
      const of = [...uses].filter(([, u]) => u.type === type).sort((x, y) => y[1].n - x[1].n || (x[0] < y[0] ? -1 : 1));
      addresses.push(...of.slice(0, 4).map(([a]) => a));
    }
    assert.equal(addresses.length, 20);

    home = tempDir('electrum-home');
    env = { ...process.env, HOME: home };
    const dir = path.join(home, 'electrum');
    await electrum(['--regtest', '-D', dir, '--offline', 'restore', addresses.join(' ')], env);
    const out = await electrum(['daemon', '-d', '--regtest', '-D', dir, '--oneserver', '--server', `127.0.0.1:${srv.port}:t`,
      '--rpcuser', 'addrindex', '--rpcpassword', 'test'], env);
    daemonPid = Number((out.match(/PID (\d+)/) || [])[1]) || null;
    const socketPath = path.join(dir, 'regtest', 'daemon_rpc_socket');
    rpc = (method, params = {}) => new Promise((resolve, reject) => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
      const req = http.request({ socketPath, path: '/', method: 'POST', auth: 'addrindex:test',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        let s = '';
        res.on('data', (d) => { s += d; });
        res.on('end', () => {
          const msg = JSON.parse(s);
          if (msg.error) reject(new Error(`${method}: ${JSON.stringify(msg.error)}`));
          else resolve(msg.result);
        });
      });
      req.on('error', reject);
      req.end(body);
    });
    await waitFor(() => fs.existsSync(socketPath), 30000, 'the Electrum daemon\'s RPC socket');
    await rpc('load_wallet');
  });

  after(async () => {
    if (rpc) await rpc('stop').catch(() => {});
    if (daemonPid) {
      await waitFor(() => { try { process.kill(daemonPid, 0); return false; } catch (e) { return true; } }, 20000, 'the daemon to stop')
        .catch(() => process.kill(daemonPid, 'SIGKILL'));
    }
    if (srv) await srv.close();
  });

  /** The wallet has caught up with the index at `height`. */
  async function synced(height) {
    await waitFor(async () => {
      const info = await rpc('getinfo');
      return info.connected && info.blockchain_height === height && info.server_height === height && (await rpc('is_synchronized'));
    }, 60000, `the wallet to reach height ${height} and synchronize`);
  }

  /** What the index holds for the wallet's addresses. */
  async function indexView() {
    let total = 0;
    const histories = new Map();
    const utxos = [];
    for (const a of addresses) {
      const sh = decodeAddress(a, 'regtest').scripthash;
      const s = await srv.store.getSummary(sh);
      total += s ? s.balance : 0;
      histories.set(a, (await srv.store.getHistory(sh, { limit: 100000 })).entries.map((e) => ({ tx_hash: toDisplayHex(e.txid), height: e.height })));
      for (const u of (await srv.store.getUtxos(sh, { limit: 100000 })).utxos) {
        utxos.push(`${a} ${toDisplayHex(u.txid)}:${u.vout} ${u.value} @${u.height}`);
      }
    }
    return { total, histories, utxos: utxos.sort() };
  }

  async function compare() {
    const want = await indexView();
    const balance = await rpc('getbalance');
    assert.equal(sats(balance.confirmed) + sats(balance.unmatured || 0) + sats(balance.unconfirmed || 0), want.total);
    for (const a of addresses) assert.deepEqual(await rpc('getaddresshistory', { address: a }), want.histories.get(a), a);
    const unspent = (await rpc('listunspent')).map((u) => `${u.address} ${u.prevout_hash}:${u.prevout_n} ${sats(u.value)} @${u.height}`).sort();
    assert.deepEqual(unspent, want.utxos);
    assert.ok(want.utxos.length > 20 && want.total > 0);
    return want;
  }

  it('getbalance, getaddresshistory and listunspent equal the index\'s, as the wallet verified them', async () => {
    await synced(30);
    await compare();
    // the wallet fetched its transactions: each cut alone out of its block in the recorded blocks dir
    const { txReads, txMisses } = srv.reader.blocks.stats;
    assert.ok(txReads > 20 && txMisses === 0, JSON.stringify(srv.reader.blocks.stats));
  });

  it('new blocks reach the wallet through the notifications alone, and it agrees with the index again', async () => {
    const before = await indexView();
    await addBranch({ dir: chain.dir, seed, forkHeight: 30, branchSeed: seed, blocks: 3 }); // three more blocks of the same chain
    assert.equal((await runCli(['sync', '--blocks-dir', chain.dir, '--datadir', datadir, '--network', 'regtest', '--threads', '0', '--quiet'])).code, 0);
    await synced(33);
    const after = await compare();
    assert.notEqual(after.total, before.total, 'the new blocks pay or spend the wallet\'s addresses');
  });
});
