'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { execFile } = require('node:child_process');
const { tempDir } = require('./tmp');
const { startCli } = require('./cli');
const { freePort } = require('./mongo-server');

const ROOT = path.join(__dirname, '..', '..');
const INSTALL_SCRIPT = path.join(ROOT, 'scripts', 'install-bitcore.sh');

/** How long the first install (about 350 packages from npm) may take. */
const INSTALL_TIMEOUT_MS = 5 * 60 * 1000;

let installed = null;

/**
 * The bitcore-node host (bitcore-node 3.1.3, insight-api 0.4.3, bitcore-lib 0.13.19) that
 * scripts/install-bitcore.sh installs into .cache/bitcore once, with scripts off, apart from
 * the project's own node_modules. Code that needs bitcore-lib 0.13 runs in a child process.
 * @returns {Promise<string>} the host dir (its node_modules holds the packages)
 */
function bitcoreHost() {
  if (!installed) {
    installed = new Promise((resolve, reject) => {
      if (!fs.existsSync(path.join(ROOT, '.cache', 'bitcore', 'pins.sha256'))) {
        console.log('    (installing bitcore-node 3.1.3 and insight-api 0.4.3 into .cache/bitcore, once)');
      }
      execFile('bash', [INSTALL_SCRIPT], { timeout: INSTALL_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
        if (err) {
          reject(new Error(`scripts/install-bitcore.sh failed (${err.code ?? err.signal}): ${String(stderr).trim().split('\n').slice(-5).join('\n')}`));
          return;
        }
        resolve(String(stdout).trim().split('\n').pop());
      });
    });
  }
  return installed;
}

/**
 * A bitcore-node project directory as `bitcore-node create` makes one: a bitcore-node.json
 * and node_modules (here a link to the host's).
 * @param {object} config the bitcore-node.json
 * @returns {Promise<{dir: string, configPath: string}>}
 */
async function bitcoreProject(config) {
  const host = await bitcoreHost();
  const dir = tempDir('bitcore-project');
  fs.symlinkSync(path.join(host, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  const configPath = path.join(dir, 'bitcore-node.json');
  fs.writeFileSync(configPath, `${JSON.stringify(config, null, 2)}\n`);
  return { dir, configPath };
}

/**
 * `addrindex bitcore --config` over a new project with the given services config, on a free
 * port; resolves once it listens.
 * @param {object} opts
 * @param {object} opts.bitcoind servicesConfig.bitcoind
 * @param {string} [opts.network='livenet']
 * @param {string[]} [opts.services]
 * @param {object} [opts.servicesConfig] the other services' config
 * @returns {Promise<{url: string, cli: import('./cli').Cli, configPath: string, stop: () => Promise<object>}>}
 */
async function startBitcore({ bitcoind, network = 'livenet', services = ['bitcoind', 'web', 'insight-api'], servicesConfig = {} }) {
  const port = await freePort();
  const { configPath } = await bitcoreProject({
    network, port, services,
    servicesConfig: { 'insight-api': { disableRateLimiter: true }, ...servicesConfig, bitcoind },
  });
  const cli = startCli(['bitcore', '--config', configPath]);
  const m = await cli.waitFor(/listening on (http:\/\/\S+)/, 60000);
  return {
    url: m[1],
    cli,
    configPath,
    stop: async () => {
      if (cli.exitCode === null && cli.signalCode === null) cli.kill('SIGTERM');
      return cli.done;
    },
  };
}

module.exports = { bitcoreHost, bitcoreProject, startBitcore };
