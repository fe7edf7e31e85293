'use strict';

/**
 * Every bound the Electrum server enforces, in one place (README.md quotes them).
 */
const LIMITS = Object.freeze({
  /**
   * Bytes of one request line (a single request or a batch). A raw transaction of the
   * largest standard weight is 400 KB, 800 KB as hex: one broadcast fits. ElectrumX's
   * default for the same bound (max_recv) is 1,000,000 bytes. A longer line is answered with
   * an error and the connection is closed: the rest of it is never read into memory.
   */
  maxLineBytes: 1 << 20,
  /**
   * Bytes queued for a client that it has not read yet. Before each answer or notification
   * the backlog is compared with this; a client above it has stopped reading and is
   * disconnected, so it never holds more than this plus one message.
   */
  maxSendBytes: 8 << 20,
  /** Requests in one batch array. */
  maxBatch: 1000,
  /**
   * Lines (and their bytes) read ahead of the one being answered; above either the socket is
   * paused, so a client that sends faster than it is answered is held at the kernel's buffers.
   */
  maxPendingLines: 1000,
  maxPendingBytes: 4 << 20,
  /** Protocol errors (unparsable lines, invalid request objects) before the connection is closed. */
  maxProtocolErrors: 20,
  /** Script hash subscriptions one connection may hold. */
  maxSubscriptions: 100000,
  /** blockchain.block.headers answers at most this many (one difficulty period, as every server). */
  maxHeaders: 2016,
  /**
   * History entries (and unspent outputs) answered for one script hash; above it the
   * request gets an error instead of a huge answer. Fulcrum's default max_history.
   */
  maxHistory: 125000,
  /** How often each worker reads the index tip to notice new blocks. */
  pollMs: 1000,
  /**
   * A connection that sends nothing for this long is closed (ElectrumX's session timeout;
   * wallets send server.ping well within it).
   */
  idleMs: 600000,
});

module.exports = { LIMITS };
