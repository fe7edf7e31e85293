'use strict';

const { AddrIndexError } = require('../errors');

/**
 * The errors bitcore-node's bitcoind service passes on: the node's JSON-RPC errors, with
 * Bitcoin Core's numeric codes, as instances of bitcore-node's own RPCError. insight-api
 * answers 404 for -5 (not found, bad address) and -8 (bad parameter) where it expects them,
 * 400 for any other coded error and 503 for an error without a code, so codes are kept
 * exactly where the node gave them and failures of the index itself carry none.
 */

/** Bitcoin Core's RPC error codes the service answers with. */
const RPC = Object.freeze({
  MISC_ERROR: -1,
  INVALID_ADDRESS_OR_KEY: -5,
  INVALID_PARAMETER: -8,
  DATABASE_ERROR: -20,
  IN_WARMUP: -28,
});

/** An RPC error when the host offers no RPCError class (a service built outside a Node). */
class RpcError extends AddrIndexError {
  constructor(code, message) {
    super(code, message);
    this.name = 'RPCError';
  }
}

/**
 * An error as the bitcoind service returns a node's RPC error.
 * @param {object|null} node the bitcore-node Node (its `errors.RPCError`)
 * @param {number} code
 * @param {string} message
 * @returns {Error & {code: number}}
 */
function rpcError(node, code, message) {
  const Host = node && node.errors && typeof node.errors.RPCError === 'function' ? node.errors.RPCError : null;
  if (!Host) return new RpcError(code, message);
  const err = new Host(message);
  err.code = code;
  return err;
}

/**
 * A failure of the index or its block files (not the caller's fault), as an error without a
 * `code`: insight-api answers 503 for those. The original error stays as `cause`.
 * @param {Error} err
 * @returns {Error}
 */
function serviceFailure(err) {
  if (!(err instanceof AddrIndexError) || err instanceof RpcError) return err;
  const out = new Error(`${err.message} [${err.code}]`, { cause: err });
  out.name = 'AddrIndexFailure';
  return out;
}

module.exports = { RPC, RpcError, rpcError, serviceFailure };
