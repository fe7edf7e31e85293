'use strict';

const fs = require('node:fs');
const { UsageError, NodeError } = require('../errors');
const { getNetwork } = require('../chain/networks');

/** Bitcoin Core's default RPC port per network (btcd's differ: give them in the URL). */
const DEFAULT_RPC_PORTS = Object.freeze({ main: 8332, testnet: 18332, testnet4: 48332, signet: 38332, regtest: 18443 });

/** The environment variable read when no --rpc-url is given, so a password need not sit in `ps`. */
const ENV_URL = 'ADDRINDEX_RPC_URL';

/**
 * @typedef {object} Endpoint
 * @property {string} url         http://HOST:PORT/PATH, without credentials
 * @property {string} display     the URL with the user and a masked password, for messages
 * @property {string|null} cookieFile
 * @property {boolean} reloadable   the credentials come from a cookie file, rewritten at every node start
 * @property {(reload?: boolean) => {user: string, pass: string}} credentials  read anew with
 *   `reload` (a cookie file changes at every node restart)
 */

/**
 * Where the node is and how to log in, from the command line's choices: `--rpc-url
 * http://USER:PASS@HOST:PORT` (or the same in $ADDRINDEX_RPC_URL), or `--rpc-cookie FILE`
 * (Bitcoin Core's `.cookie`, `__cookie__:HEX`) with `--rpc-host HOST[:PORT]` or a URL without
 * credentials. A missing port is the network's Core default.
 *
 * @param {object} opts
 * @param {string} [opts.rpcUrl]
 * @param {string} [opts.rpcCookie]
 * @param {string} [opts.rpcHost]
 * @param {string|import('../chain/networks').Network} [opts.network='main']
 * @param {NodeJS.ProcessEnv} [opts.env=process.env]
 * @returns {Endpoint|null} null when no node is named at all
 */
function resolveEndpoint({ rpcUrl, rpcCookie, rpcHost, network = 'main', env = process.env }) {
  const net = getNetwork(network);
  if (rpcUrl !== undefined && rpcHost !== undefined) {
    throw new UsageError('ERR_USAGE',
      '--rpc-url and --rpc-host both name the node: give one (--rpc-url may come from $ADDRINDEX_RPC_URL or a config file)');
  }
  let raw = rpcUrl;
  if (raw === undefined && rpcHost === undefined && env[ENV_URL]) raw = env[ENV_URL];
  if (raw === undefined && rpcHost !== undefined) raw = `http://${rpcHost}`;
  if (raw === undefined && rpcCookie !== undefined) raw = 'http://127.0.0.1';
  if (raw === undefined) return null;

  const from = rpcUrl !== undefined ? '--rpc-url' : rpcHost !== undefined ? '--rpc-host' : raw === env[ENV_URL] ? `$${ENV_URL}` : '--rpc-url';
  let u;
  try {
    u = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`);
  } catch {
    throw new UsageError('ERR_USAGE', `${from} "${redact(raw)}" is not a URL: expected http://USER:PASS@HOST:PORT`);
  }
  if (u.protocol !== 'http:') {
    throw new UsageError('ERR_USAGE', `${from} must be an http:// URL (the node's JSON-RPC port), got ${u.protocol}//`);
  }
  if (!u.port) u.port = String(DEFAULT_RPC_PORTS[net.name]);
  const user = decodeURIComponent(u.username);
  const pass = decodeURIComponent(u.password);
  if ((user || pass) && rpcCookie !== undefined) {
    throw new UsageError('ERR_USAGE', `${from} carries credentials and --rpc-cookie gives others: give one`);
  }
  if (!user && !pass && rpcCookie === undefined) {
    throw new UsageError('ERR_USAGE',
      `${from} ${u.host} has no credentials: use http://USER:PASS@${u.host} or --rpc-cookie FILE (Bitcoin Core's .cookie)`);
  }
  u.username = '';
  u.password = '';
  const url = u.toString();

  if (rpcCookie === undefined) {
    const shown = new URL(url);
    shown.username = encodeURIComponent(user);
    if (pass) shown.password = '***';
    const creds = { user, pass };
    return { url, display: shown.toString(), cookieFile: null, reloadable: false, credentials: () => creds };
  }
  let cached = null;
  return {
    url,
    display: `${url} (cookie ${rpcCookie})`,
    cookieFile: rpcCookie,
    reloadable: true,
    credentials(reload = false) {
      if (!cached || reload) cached = readCookie(rpcCookie);
      return cached;
    },
  };
}

/**
 * Reads a cookie file: one line `USER:PASS` (Core writes `__cookie__:` and 64 hex digits).
 * A missing file is a node that is not running (Core deletes it on shutdown and writes a new
 * one on start): ERR_NODE_UNAVAILABLE, which callers retry.
 * @param {string} file
 * @returns {{user: string, pass: string}}
 */
function readCookie(file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if (err.code === 'ENOENT') {
      throw new NodeError('ERR_NODE_UNAVAILABLE', `the cookie file ${file} does not exist: is the node running (it writes the file when it starts)?`,
        { cookieFile: file, retryable: true });
    }
    throw new NodeError('ERR_NODE_AUTH', `cannot read the cookie file ${file}: ${err.message}`, { cookieFile: file });
  }
  const line = text.split(/\r?\n/)[0];
  const at = line.indexOf(':');
  if (at <= 0 || at === line.length - 1) {
    throw new NodeError('ERR_NODE_AUTH', `the cookie file ${file} does not hold USER:PASS on its first line`, { cookieFile: file });
  }
  return { user: line.slice(0, at), pass: line.slice(at + 1) };
}

/**
 * A URL fit to print: the password (if any) replaced by `***`. Works on the text, so a URL
 * the parser refuses is masked too.
 * @param {string} url
 * @returns {string}
 */
function redact(url) {
  const s = String(url);
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(s);
  const start = scheme ? scheme[0].length : 0;
  const slash = s.indexOf('/', start);
  const authorityEnd = slash < 0 ? s.length : slash;
  const at = s.lastIndexOf('@', authorityEnd - 1); // a password may hold '@'; the host cannot
  if (at < start) return s;
  const colon = s.indexOf(':', start);
  if (colon < 0 || colon > at) return s;
  return `${s.slice(0, colon)}:***${s.slice(at)}`;
}

module.exports = { resolveEndpoint, readCookie, redact, DEFAULT_RPC_PORTS, ENV_URL };
