'use strict';

/**
 * What a route handler returns: a status, a content type and the body already serialized
 * to bytes, so the server writes it with an exact Content-Length in one go.
 * @typedef {{status: number, type: string, body: Buffer}} Reply
 */

const JSON_TYPE = 'application/json; charset=utf-8';

/** @param {unknown} value @param {number} [status] @returns {Reply} */
function json(value, status = 200) {
  return { status, type: JSON_TYPE, body: Buffer.from(JSON.stringify(value)) };
}

/** @param {string|number} value @param {number} [status] @returns {Reply} */
function text(value, status = 200) {
  return { status, type: 'text/plain; charset=utf-8', body: Buffer.from(String(value)) };
}

/** Raw bytes (a transaction's or a block's). @param {Buffer} body @returns {Reply} */
function binary(body) {
  return { status: 200, type: 'application/octet-stream', body };
}

/** A body serialized once (a static document). @param {Buffer} body @returns {Reply} */
function rawJson(body) {
  return { status: 200, type: JSON_TYPE, body };
}

module.exports = { json, text, binary, rawJson };
