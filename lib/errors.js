'use strict';

/**
 * Every error addrindex throws on purpose is an AddrIndexError with a stable `code`,
 * so callers (CLI, API, tests) branch on the code and never on message text.
 */
class AddrIndexError extends Error {
  /**
   * @param {string} code stable machine-readable code, e.g. 'ERR_TRUNCATED'
   * @param {string} message what went wrong, for a person
   * @param {object} [details] extra context (offsets, heights, file names)
   */
  constructor(code, message, details) {
    super(message);
    this.name = this.constructor.name;
    this.code = code;
    if (details !== undefined) this.details = details;
  }
}

/** Bytes that are not a valid block, transaction or blocks-file record. */
class ParseError extends AddrIndexError {}

/** An address or script hash string that cannot be used on this network. */
class AddressError extends AddrIndexError {}

/** A block source (blocks directory, raw file, node) that cannot deliver blocks. */
class SourceError extends AddrIndexError {}

/**
 * A Bitcoin node that cannot be used: unreachable (ERR_NODE_UNAVAILABLE), refusing the
 * credentials (ERR_NODE_AUTH), on another network (ERR_NODE_NETWORK), answering what is not
 * JSON-RPC (ERR_NODE_PROTOCOL).
 */
class NodeError extends AddrIndexError {}

/**
 * A JSON-RPC error the node answered (code ERR_NODE_RPC): `rpcCode` is the node's own error
 * code (e.g. -5 for an unknown block or transaction, -32601 for an unknown method).
 */
class RpcError extends NodeError {
  /**
   * @param {string} code 'ERR_NODE_RPC'
   * @param {string} message
   * @param {{method: string, rpcCode: number, rpcMessage: string}} details
   */
  constructor(code, message, details) {
    super(code, message, details);
    this.method = details && details.method;
    this.rpcCode = details && details.rpcCode;
  }

  /**
   * @param {string} method
   * @param {{code: number, message: string}} error as the node sent it
   */
  static from(method, error) {
    const code = error && typeof error === 'object' ? error.code : undefined;
    const message = error && typeof error === 'object' ? String(error.message) : String(error);
    return new RpcError('ERR_NODE_RPC', `the node answered ${method} with error ${code}: ${message}`,
      { method, rpcCode: code, rpcMessage: message });
  }
}

/** Command-line or option misuse. */
class UsageError extends AddrIndexError {}

/** A store that cannot be opened, read or written as asked (wrong network, corrupt value, …). */
class StoreError extends AddrIndexError {}

/** A stored value whose bytes do not decode (unknown format byte, truncated, hostile lengths). */
class CodecError extends AddrIndexError {}

/** The sync cannot go on (unknown prevout, reorg deeper than the undo kept, …). */
class SyncError extends AddrIndexError {}

module.exports = {
  AddrIndexError, ParseError, AddressError, SourceError, NodeError, RpcError, UsageError, StoreError, CodecError, SyncError,
};
