'use strict';

const { AddrIndexError, AddressError, NodeError } = require('../errors');

/**
 * An error the API answers on purpose: it carries the HTTP status it maps to.
 * Routes throw these (or typed errors from lib/chain and the stores); toHttpError() turns
 * whatever was thrown into the `{"error": {"code", "message"}}` body a client sees.
 */
class ApiError extends AddrIndexError {
  /**
   * @param {number} status HTTP status
   * @param {string} code stable machine-readable code
   * @param {string} message for a person; never a stack or a server path
   * @param {object} [details]
   */
  constructor(status, code, message, details) {
    super(code, message, details);
    this.status = status;
  }
}

const badRequest = (code, message, details) => new ApiError(400, code, message, details);
const notFound = (code, message) => new ApiError(404, code, message);

/**
 * Store error codes that a client's input causes (a cursor it made up or mangled): 400.
 * Every other store or codec failure is the server's problem and is answered without its
 * message, which may name files or byte offsets.
 */
const CLIENT_STORE_CODES = new Set(['ERR_BAD_CURSOR', 'ERR_CURSOR', 'ERR_INVALID_CURSOR']);

/**
 * Maps anything a route threw to what the client is told.
 * @param {unknown} err
 * @returns {{status: number, code: string, message: string, internal: boolean}}
 *   internal: an unexpected failure the server should log (the client sees no detail)
 */
function toHttpError(err) {
  if (err instanceof ApiError) return { status: err.status, code: err.code, message: err.message, internal: false };
  if (err instanceof AddressError) return { status: 400, code: err.code, message: err.message, internal: false };
  if (err instanceof AddrIndexError && CLIENT_STORE_CODES.has(err.code)) {
    return { status: 400, code: 'ERR_BAD_CURSOR', message: 'the cursor is not one this index issued (pass "next" from a previous page unchanged)', internal: false };
  }
  if (err instanceof AddrIndexError && err.code === 'ERR_BLOCK_UNAVAILABLE') {
    // the blk file moved or was pruned and no node could stand in: say so, without file paths
    const hash = err.details && err.details.hash;
    return { status: 503, code: 'ERR_BLOCK_UNAVAILABLE', message: `block ${hash} cannot be read now, neither from the blocks dir nor from a node; retry later`, internal: true };
  }
  if (err instanceof NodeError) {
    // the node behind the server failed (down, refusing our credentials, answering nonsense):
    // the client can only retry; the operator reads the log
    return { status: 503, code: 'ERR_NODE_UNAVAILABLE', message: 'the node behind this server cannot be reached now; retry later', internal: true };
  }
  if (err instanceof AddrIndexError && (err.code === 'ERR_STORE_CLOSED' || err.code === 'ERR_CLOSED')) {
    return { status: 503, code: 'ERR_UNAVAILABLE', message: 'the server is shutting down; retry', internal: false };
  }
  return { status: 500, code: 'ERR_INTERNAL', message: 'internal error (logged by the server)', internal: true };
}

module.exports = { ApiError, badRequest, notFound, toHttpError };
