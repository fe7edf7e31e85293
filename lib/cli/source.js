'use strict';

const { UsageError } = require('../errors');
const { intOption } = require('./datadir');
const { ENV_URL, DEFAULT_RPC_PORTS } = require('../node/endpoint');

/**
 * Where a command's blocks come from, as its options name it: a blocks dir, a node over
 * JSON-RPC, or both (the dir serves what it holds of the node's best chain, the node the rest).
 */

/** The options naming a block source (parseArgs spec). */
const sourceOptions = {
  'blocks-dir': { type: 'string' },
  'rpc-url': { type: 'string' },
  'rpc-cookie': { type: 'string' },
  'rpc-host': { type: 'string' },
  'rpc-retry-s': { type: 'string' },
};

/** The node's options, as `sync` and `serve` take them. */
const nodeUsage = `  --rpc-url URL        a node's JSON-RPC: http://USER:PASS@HOST:PORT (Bitcoin Core, btcd); also read
                       from $${ENV_URL}, which keeps the password out of \`ps\`
  --rpc-cookie FILE    log in with Bitcoin Core's cookie file (e.g. ~/.bitcoin/.cookie) instead
  --rpc-host HOST[:PORT] with --rpc-cookie: where the node listens (default 127.0.0.1 and Core's
                       port for the network: ${Object.entries(DEFAULT_RPC_PORTS).map(([n, p]) => `${n} ${p}`).join(', ')})
  --rpc-retry-s N      how long an unreachable, restarting or busy node is retried (with backoff)
                       before the command stops with ERR_NODE_UNAVAILABLE (default 60)
`;

const sourceUsage = `  --blocks-dir DIR     the node's blocks directory (holds blk*.dat), e.g. ~/.bitcoin/blocks
${nodeUsage}`;

/**
 * The block source the options name (lib/sources/open.js), with the flags' own usage errors.
 * @param {object} values parsed options
 * @param {import('../chain/networks').Network} network
 * @param {object} [opts]
 * @param {string} [opts.command='sync'] for messages
 * @param {NodeJS.ProcessEnv} [opts.env=process.env]
 * @param {AbortSignal} [opts.signal] stops RPC retries
 * @param {(line: string) => void} [opts.log] told when the node stops answering (retries; at most one line per 10 s)
 * @param {(code: string) => void} [opts.onNodeError] told of every failed call of the node that is retried
 * @returns {{scan: Function, tip: Function, hashAt: Function, blocks: Function, close: Function}}
 */
function openSource(values, network, { command = 'sync', env = process.env, signal, log, onNodeError } = {}) {
  const { resolveEndpoint } = require('../node/endpoint');
  const named = { rpcUrl: values['rpc-url'], rpcCookie: values['rpc-cookie'], rpcHost: values['rpc-host'] };
  if (!resolveEndpoint({ ...named, network, env })) {
    if (values['rpc-retry-s'] !== undefined) throw new UsageError('ERR_USAGE', `--rpc-retry-s goes with a node (--rpc-url or --rpc-cookie)`);
    if (!values['blocks-dir']) {
      throw new UsageError('ERR_USAGE',
        `${command} needs a block source: --blocks-dir DIR, or a node (--rpc-url URL, --rpc-cookie FILE or $${ENV_URL}) (see "addrindex ${command} --help")`);
    }
  }
  const retry = intOption(values, 'rpc-retry-s', 0);
  const { openSource: open } = require('../sources/open');
  return open({
    ...named, network, env, signal, log, onNodeError, blocksDir: values['blocks-dir'], retryMs: retry === undefined ? undefined : retry * 1000,
  });
}

module.exports = { sourceOptions, sourceUsage, nodeUsage, openSource };
