'use strict';

const { MongoNetworkError, MongoServerSelectionError, MongoServerError, MongoBulkWriteError } = require('mongodb');
const { StoreError } = require('../../errors');

/**
 * Server error codes that mean "the server (or this member) is going away or not reachable
 * right now", not "the operation is wrong": InterruptedAtShutdown, ShutdownInProgress,
 * HostUnreachable, HostNotFound, NetworkTimeout, SocketException, NotWritablePrimary,
 * PrimarySteppedDown, InterruptedDueToReplStateChange, NotPrimaryNoSecondaryOk,
 * NotPrimaryOrSecondary, ExceededTimeLimit.
 */
const TRANSIENT_CODES = new Set([11600, 91, 6, 7, 89, 9001, 10107, 189, 11602, 13435, 13436, 262]);

/** Node socket error codes: the connection broke or could not be made. */
const SOCKET_CODES = new Set(['EPIPE', 'ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN', 'EAI_AGAIN']);

/** Driver error labels that mark a failure of the connection or an overloaded server, not of the request. */
const TRANSIENT_LABELS = ['ResetPool', 'RetryableWriteError', 'RetryableError', 'SystemOverloadedError'];

/**
 * Whether an error is the connection or the server being away (worth retrying: every write
 * this store sends is idempotent) rather than a fault of the request. The driver wraps a
 * network error inside a bulk write into a MongoBulkWriteError that keeps the original's
 * labels, code and fields but not its class, so those are what is looked at.
 * @param {Error} err
 * @returns {boolean}
 */
function isTransient(err) {
  if (!err || typeof err !== 'object') return false;
  if (err instanceof MongoNetworkError || err instanceof MongoServerSelectionError) return true;
  if (err.name === 'MongoPoolClearedError' || err.name === 'MongoNotConnectedError') return true;
  if (typeof err.hasErrorLabel === 'function' && TRANSIENT_LABELS.some((l) => err.hasErrorLabel(l))) return true;
  if (typeof err.code === 'string' && SOCKET_CODES.has(err.code)) return true;
  if (err instanceof MongoBulkWriteError) {
    const errs = [].concat(err.writeErrors || []);
    if (errs.some((w) => TRANSIENT_CODES.has(w.code))) return true;
    // a wrapped network error: no per-document errors, the network error's own fields
    if (errs.length === 0 && ('beforeHandshake' in err || 'connectionGeneration' in err)) return true;
  }
  if (err instanceof MongoServerError && TRANSIENT_CODES.has(err.code)) return true;
  return err.cause ? isTransient(err.cause) : false;
}

/**
 * A connection string safe to print: no user or password, no options (which may carry
 * secrets such as TLS key passwords).
 * @param {string} url
 */
function redactUrl(url) {
  return String(url).replace(/^(mongodb(?:\+srv)?:\/\/)[^@/]*@/i, '$1').replace(/\?.*$/, '');
}

/**
 * Runs `fn`, retrying with exponential backoff (100 ms doubling up to 2 s) while it fails with
 * transient errors, for at most `timeoutMs` from the first failure; then rejects with
 * StoreError ERR_DB_UNAVAILABLE naming the server (without credentials) and the last error.
 * Non-transient errors are rethrown at once.
 *
 * @template T
 * @param {() => Promise<T>} fn
 * @param {{timeoutMs: number, url: string, what: string, onRetry?: (err: Error, attempt: number) => void}} opts
 * @returns {Promise<T>}
 */
async function withRetry(fn, { timeoutMs, url, what, onRetry }) {
  let started = 0;
  let delay = 100;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!isTransient(err)) throw err;
      const now = Date.now();
      if (started === 0) started = now;
      const left = started + timeoutMs - now;
      if (left <= 0) {
        throw new StoreError('ERR_DB_UNAVAILABLE',
          `MongoDB at ${redactUrl(url)} is unavailable: ${what} failed ${attempt} time(s) over ${((now - started) / 1000).toFixed(1)} s ` +
          `(last error: ${err.message}); the index is consistent at its last tip: run the command again when the server is back`,
          { url: redactUrl(url), attempts: attempt, cause: err.message });
      }
      if (onRetry) onRetry(err, attempt);
      await new Promise((resolve) => setTimeout(resolve, Math.min(delay, left)));
      delay = Math.min(delay * 2, 2000);
    }
  }
}

module.exports = { withRetry, isTransient, redactUrl, TRANSIENT_CODES };
