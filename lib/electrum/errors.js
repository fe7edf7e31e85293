'use strict';

const { AddrIndexError } = require('../errors');

/**
 * JSON-RPC error codes as ElectrumX (aiorpcx) and electrs answer them: the JSON-RPC 2.0
 * codes for what is wrong with the message itself, and the Electrum application codes for
 * what is wrong with a well-formed request (a bad script hash, a height out of range, a
 * history longer than the server answers) or with the node behind the server.
 */
const RPC = Object.freeze({
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** ElectrumX's BAD_REQUEST: the request is well formed but cannot be answered as asked */
  BAD_REQUEST: 1,
  /** ElectrumX's DAEMON_ERROR: the node behind the server failed or refused */
  DAEMON_ERROR: 2,
});

/** The stable string codes (AddrIndexError.code) of each numeric code, for logs and tests. */
const NAMES = Object.freeze({
  [RPC.PARSE_ERROR]: 'ERR_RPC_PARSE',
  [RPC.INVALID_REQUEST]: 'ERR_RPC_INVALID_REQUEST',
  [RPC.METHOD_NOT_FOUND]: 'ERR_RPC_METHOD_NOT_FOUND',
  [RPC.INVALID_PARAMS]: 'ERR_RPC_INVALID_PARAMS',
  [RPC.INTERNAL_ERROR]: 'ERR_RPC_INTERNAL',
  [RPC.BAD_REQUEST]: 'ERR_RPC_BAD_REQUEST',
  [RPC.DAEMON_ERROR]: 'ERR_RPC_DAEMON',
});

/**
 * An error answered to the client as a JSON-RPC error object.
 */
class RpcError extends AddrIndexError {
  /**
   * @param {number} rpcCode one of RPC
   * @param {string} message for the client; never a stack or a server path
   * @param {{disconnect?: boolean}} [opts] disconnect: close the connection after answering
   */
  constructor(rpcCode, message, opts = {}) {
    super(NAMES[rpcCode] || 'ERR_RPC', message);
    this.rpcCode = rpcCode;
    this.disconnect = Boolean(opts.disconnect);
  }
}

const badRequest = (message, opts) => new RpcError(RPC.BAD_REQUEST, message, opts);
const invalidParams = (message) => new RpcError(RPC.INVALID_PARAMS, message);

/**
 * A history (or unspent list) over the server's bound: ElectrumX answers "history too large"
 * with BAD_REQUEST at protocol 1.4, and so does this server.
 * @param {'history'|'unspent outputs'} what
 * @param {number} max
 */
function tooLarge(what, max) {
  return badRequest(what === 'history'
    ? `history too large: more than ${max} transactions (this server's --electrum-max-history)`
    : `too many unspent outputs: more than ${max} (this server's --electrum-max-history)`);
}

/**
 * A failure of the node behind the server (README.md: the node object), as ElectrumX answers
 * it: a transaction the node refused is BAD_REQUEST with the node's reason; anything else
 * (unreachable, timed out) is DAEMON_ERROR.
 * @param {unknown} err
 * @returns {RpcError}
 */
function nodeError(err) {
  if (err instanceof RpcError) return err;
  const message = err && err.message ? err.message : String(err);
  if (err && err.code === 'ERR_NODE_REJECTED') return badRequest(`the transaction was rejected by network rules.\n\n${message}`);
  return new RpcError(RPC.DAEMON_ERROR, `daemon error: ${message}`);
}

module.exports = { RPC, RpcError, badRequest, invalidParams, tooLarge, nodeError };
