'use strict';

/**
 * The real Electrum wallet (Debian's package, 4.3.4 on bookworm; installed by
 * scripts/install-electrum.sh when missing) as a daemon on regtest with a watching-only wallet,
 * pointed at one server with --oneserver, and its JSON-RPC over the daemon's socket.
 */

const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { execFileSync, execFile } = require('node:child_process');
const { ROOT } = require('./cli');
const { tempDir } = require('./tmp');
const { waitFor } = require('./chains');

/** Installs the wallet when it is missing (the first run may take minutes: apt-get). */
function installElectrum() {
  execFileSync(path.join(ROOT, 'scripts', 'install-electrum.sh'), { stdio: 'pipe', timeout: 590000 });
}

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
 * A daemon with a watching-only wallet of `addresses`, loaded, talking to the Electrum server
 * at 127.0.0.1:port (plain TCP) only.
 * @param {number} port
 * @param {string[]} addresses regtest addresses
 * @returns {Promise<{rpc: (method: string, params?: object) => Promise<any>, synced: (height: number) => Promise<void>, stop: () => Promise<void>}>}
 */
async function startWalletDaemon(port, addresses) {
  const home = tempDir('electrum-home');
  const env = { ...process.env, HOME: home };
  const dir = path.join(home, 'electrum');
  await electrum(['--regtest', '-D', dir, '--offline', 'restore', addresses.join(' ')], env);
  const out = await electrum(['daemon', '-d', '--regtest', '-D', dir, '--oneserver', '--server', `127.0.0.1:${port}:t`,
    '--rpcuser', 'addrindex', '--rpcpassword', 'test'], env);
  const pid = Number((out.match(/PID (\d+)/) || [])[1]) || null;
  const socketPath = path.join(dir, 'regtest', 'daemon_rpc_socket');
  const rpc = (method, params = {}) => new Promise((resolve, reject) => {
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
  return {
    rpc,
    /** The wallet has caught up with the server at `height` and fetched its histories. */
    synced: (height) => waitFor(async () => {
      const info = await rpc('getinfo');
      return info.connected && info.blockchain_height === height && info.server_height === height && (await rpc('is_synchronized'));
    }, 60000, `the wallet to reach height ${height} and synchronize`),
    stop: async () => {
      await rpc('stop').catch(() => {});
      if (!pid) return;
      await waitFor(() => { try { process.kill(pid, 0); return false; } catch (e) { return true; } }, 20000, 'the daemon to stop')
        .catch(() => process.kill(pid, 'SIGKILL'));
    },
  };
}

module.exports = { installElectrum, startWalletDaemon, sats };
