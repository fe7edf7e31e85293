'use strict';

const { UsageError } = require('../errors');

/**
 * The block source a deployment names: a Bitcoin Core blocks dir, a node over JSON-RPC, or
 * both (the dir serves what it holds of the node's best chain, the node the rest). What
 * `addrindex sync` builds from its flags (lib/cli/source.js) and an embedder from its config.
 * Nothing is read yet: the caller scans it.
 * @param {object} opts
 * @param {import('../chain/networks').Network} opts.network
 * @param {string} [opts.blocksDir]
 * @param {string} [opts.rpcUrl]   http://USER:PASS@HOST:PORT
 * @param {string} [opts.rpcCookie] Bitcoin Core's cookie file, instead of a password in the URL
 * @param {string} [opts.rpcHost]  with rpcCookie: HOST[:PORT] (default 127.0.0.1 and the network's port)
 * @param {number} [opts.retryMs]  how long an unreachable node is retried (default 60 s)
 * @param {NodeJS.ProcessEnv} [opts.env] where ADDRINDEX_RPC_URL is read ({} for none)
 * @param {AbortSignal} [opts.signal] stops the node's retries
 * @param {(line: string) => void} [opts.log] told when the node stops answering (at most one line per 10 s)
 * @param {(code: string) => void} [opts.onNodeError] told of every failed call that is retried
 * @returns {import('./blocksdir').BlocksDirSource|import('./node').NodeSource|import('./combined').CombinedSource}
 *   UsageError ERR_NO_SOURCE when neither a blocks dir nor a node is named
 */
function openSource({ network, blocksDir, rpcUrl, rpcCookie, rpcHost, retryMs, env = process.env, signal, log, onNodeError }) {
  const { resolveEndpoint } = require('../node/endpoint');
  const endpoint = resolveEndpoint({ rpcUrl, rpcCookie, rpcHost, network, env });
  if (!endpoint) {
    if (!blocksDir) throw new UsageError('ERR_NO_SOURCE', 'a block source needs a blocks dir or a node (an RPC URL or cookie)');
    const { BlocksDirSource } = require('./blocksdir');
    return new BlocksDirSource({ dir: blocksDir, network });
  }
  const { NodeClient } = require('../node/client');
  let lastLog = 0;
  const client = NodeClient.fromEndpoint(endpoint, {
    retryMs,
    signal,
    onRetry: ({ error, what }) => {
      if (onNodeError) onNodeError(error.code || error.name);
      // one line per outage, not one per request in flight
      if (!log || Date.now() - lastLog < 10000) return;
      lastLog = Date.now();
      log(`the node at ${endpoint.display} does not answer ${what}: ${error.message}; retrying for up to ${retryMs === undefined ? 60 : retryMs / 1000} s`);
    },
  });
  if (blocksDir) {
    const { CombinedSource } = require('./combined');
    return new CombinedSource({ dir: blocksDir, client, network });
  }
  const { NodeSource } = require('./node');
  return new NodeSource({ client, network });
}

module.exports = { openSource };
