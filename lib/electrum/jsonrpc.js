'use strict';

const { RPC, RpcError } = require('./errors');

/**
 * JSON-RPC 2.0 messages of the Electrum protocol: one request or one batch array per line.
 * Pure functions: a line in, calls out; results in, response text out.
 */

/**
 * One request of a line. `error` is set when the object is not a valid request: it is
 * answered with that error (and `id` when one could be read) instead of being dispatched.
 * @typedef {object} Call
 * @property {string|number|null} id
 * @property {boolean} notification   the object has no "id": nothing is answered
 * @property {string} method
 * @property {Array|object} params    [] when absent
 * @property {RpcError} [error]
 */

/**
 * @param {Buffer|string} line one line without its newline
 * @param {number} maxBatch
 * @returns {{batch: boolean, calls: Call[]}}
 * @throws {RpcError} PARSE_ERROR for text that is not JSON, INVALID_REQUEST for a line that
 *   is neither an object nor a non-empty array of at most maxBatch items
 */
function parseLine(line, maxBatch) {
  let msg;
  try {
    msg = JSON.parse(typeof line === 'string' ? line : line.toString('utf8'));
  } catch (err) {
    throw new RpcError(RPC.PARSE_ERROR, 'parse error: the line is not valid JSON');
  }
  if (Array.isArray(msg)) {
    if (msg.length === 0) throw new RpcError(RPC.INVALID_REQUEST, 'invalid request: the batch is empty');
    if (msg.length > maxBatch) {
      throw new RpcError(RPC.INVALID_REQUEST, `invalid request: a batch of ${msg.length} requests; at most ${maxBatch} are answered`);
    }
    return { batch: true, calls: msg.map(toCall) };
  }
  if (msg === null || typeof msg !== 'object') {
    throw new RpcError(RPC.INVALID_REQUEST, 'invalid request: a message is a JSON object or an array of them');
  }
  return { batch: false, calls: [toCall(msg)] };
}

/** @returns {Call} */
function toCall(obj) {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
    return invalid(null, false, 'invalid request: a request is a JSON object');
  }
  const hasId = Object.prototype.hasOwnProperty.call(obj, 'id');
  const id = hasId ? obj.id : null;
  if (hasId && id !== null && typeof id !== 'string' && typeof id !== 'number') {
    return invalid(null, false, 'invalid request: "id" must be a string, a number or null');
  }
  if (obj.jsonrpc !== undefined && obj.jsonrpc !== '2.0') {
    return invalid(id, !hasId, 'invalid request: "jsonrpc" must be "2.0" when present');
  }
  if (typeof obj.method !== 'string' || obj.method.length === 0) {
    return invalid(id, !hasId, 'invalid request: "method" must be a non-empty string');
  }
  const params = obj.params === undefined ? [] : obj.params;
  if (params === null || typeof params !== 'object') {
    const call = invalid(id, !hasId, 'invalid params: "params" must be an array or an object');
    call.error.rpcCode = RPC.INVALID_PARAMS;
    call.method = obj.method;
    return call;
  }
  return { id, notification: !hasId, method: obj.method, params };
}

function invalid(id, notification, message) {
  return { id, notification, method: '', params: [], error: new RpcError(RPC.INVALID_REQUEST, message) };
}

/**
 * A result already serialized (large answers written by lib/electrum/encode.js).
 */
class RawJson {
  /** @param {string} text valid JSON */
  constructor(text) {
    this.text = text;
  }
}

/**
 * @param {string|number|null} id
 * @param {unknown} result a value for JSON.stringify, or a RawJson
 * @returns {string}
 */
function resultText(id, result) {
  const body = result instanceof RawJson ? result.text : result === undefined ? 'null' : JSON.stringify(result);
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${body}}`;
}

/**
 * @param {string|number|null} id
 * @param {{rpcCode: number, message: string}} err
 * @returns {string}
 */
function errorText(id, err) {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":${JSON.stringify({ code: err.rpcCode, message: err.message })}}`;
}

/**
 * @param {string} method
 * @param {unknown[]} params
 * @returns {string}
 */
function notificationText(method, params) {
  return `{"jsonrpc":"2.0","method":${JSON.stringify(method)},"params":${JSON.stringify(params)}}`;
}

module.exports = { parseLine, resultText, errorText, notificationText, RawJson };
