'use strict';

const { UsageError } = require('../errors');

const usage = `usage: addrindex bitcore --config bitcore-node.json

Runs a bitcore-node 3 node from its bitcore-node.json with addrindex as its "bitcoind"
service, so insight-api and the other services of an insight deployment run unchanged on an
addrindex index instead of bitpay's patched bitcoind (docs/BITCORE.md). Services are loaded
from the config's directory and its node_modules, as bitcore-node loads them. SIGINT or
SIGTERM stops every service and exits 0.

  --config FILE   the bitcore-node.json ("network", "port", "services", "servicesConfig");
                  servicesConfig.bitcoind takes addrindex's options: "datadir" (the index),
                  "blocksDir" (the Bitcoin Core blocks dir it is synced from), "store",
                  "mongodbUrl", "network", "tipPollMs"
`;

const options = {
  config: { type: 'string' },
};

async function run(positionals, values, io) {
  if (positionals.length) throw new UsageError('ERR_USAGE', `bitcore takes no positional arguments\n${usage}`);
  if (!values.config) throw new UsageError('ERR_USAGE', `bitcore needs --config\n${usage}`);
  const { loadConfig, startNode, stopNode } = require('../bitcore/launch');
  const loaded = loadConfig(values.config);
  const say = (msg) => io.stderr.write(`addrindex bitcore: ${msg}\n`);

  let stopRequested;
  const stopped = new Promise((resolve) => { stopRequested = resolve; });
  let signals = 0;
  const onSignal = (sig) => {
    signals++;
    if (signals === 1) {
      say(`${sig}: stopping the services`);
      stopRequested();
    } else {
      process.exit(130);
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const { node, url } = await startNode(loaded);
    const bitcoind = node.services.bitcoind;
    io.stdout.write(`addrindex bitcore: ${loaded.config.services.join(', ')} on ${node.getNetworkName()}, ` +
      `index tip ${bitcoind.height}${url ? `; listening on ${url}` : ''}\n`);
    await stopped;
    await stopNode(node);
    say('stopped');
    return 0;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

module.exports = { usage, options, run };
