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

/** Command-line or option misuse. */
class UsageError extends AddrIndexError {}

/** A store that cannot be opened, read or written as asked (wrong network, corrupt value, …). */
class StoreError extends AddrIndexError {}

/** A stored value whose bytes do not decode (unknown format byte, truncated, hostile lengths). */
class CodecError extends AddrIndexError {}

/** The sync cannot go on (unknown prevout, reorg deeper than the undo kept, …). */
class SyncError extends AddrIndexError {}

module.exports = { AddrIndexError, ParseError, AddressError, SourceError, UsageError, StoreError, CodecError, SyncError };
