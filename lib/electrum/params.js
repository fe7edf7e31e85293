'use strict';

const { badRequest, invalidParams } = require('./errors');

/**
 * Parameters of a method call: positional (an array) or named (an object, with the names the
 * protocol documents), checked against the method's signature and then value by value.
 * A call with the wrong number or names of arguments is INVALID_PARAMS (-32602); a value of
 * the wrong kind is BAD_REQUEST (1) with ElectrumX's wording, as wallets see it there.
 */

const HEX64 = /^[0-9a-fA-F]{64}$/;
const HEX = /^(?:[0-9a-fA-F]{2})+$/;
const DECIMAL = /^(0|[1-9][0-9]{0,15})$/;

function show(v) {
  let s;
  try {
    s = typeof v === 'string' ? v : JSON.stringify(v);
  } catch (err) {
    s = String(v);
  }
  if (s === undefined) s = String(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

/** Value checks by type name: each returns the parsed value or throws BAD_REQUEST. */
const TYPES = {
  /** @returns {Buffer} 32 bytes, internal order (the hex is the reversed sha256) */
  scripthash(v) {
    if (typeof v !== 'string' || !HEX64.test(v)) throw badRequest(`${show(v)} is not a valid script hash`);
    return Buffer.from(v, 'hex').reverse();
  },
  /** @returns {Buffer} 32 bytes, internal order */
  txid(v) {
    if (typeof v !== 'string' || !HEX64.test(v)) throw badRequest(`${show(v)} should be a transaction hash`);
    return Buffer.from(v, 'hex').reverse();
  },
  /** A JSON integer, or a decimal string of one as ElectrumX also takes. */
  uint(v) {
    let n = null;
    if (typeof v === 'number' && Number.isSafeInteger(v)) n = v;
    else if (typeof v === 'string' && DECIMAL.test(v)) n = Number(v);
    if (n === null || n < 0 || n > Number.MAX_SAFE_INTEGER) throw badRequest(`${show(v)} should be a non-negative integer`);
    return n;
  },
  /** true or false (0 and 1 too: ElectrumX compares with Python's True/False). */
  bool(v) {
    if (v === true || v === 1) return true;
    if (v === false || v === 0) return false;
    throw badRequest(`${show(v)} should be a boolean value`);
  },
  /** @returns {Buffer} */
  hex(v) {
    if (typeof v !== 'string' || !HEX.test(v)) throw badRequest(`${show(v)} should be a hex string`);
    return Buffer.from(v, 'hex');
  },
  /** Anything JSON: the handler looks at it (server.version's arguments). */
  any(v) {
    return v;
  },
};

/**
 * @typedef {object} ParamSpec
 * @property {string} name          the protocol's name for it (named calls use it)
 * @property {keyof TYPES} type
 * @property {*} [default]          present: the parameter is optional
 */

/**
 * Binds a call's params to a signature.
 * @param {string} method for messages
 * @param {ParamSpec[]} spec
 * @param {Array|object} params
 * @param {boolean} [ignoreExtra=false] tolerate arguments beyond the signature (server.version
 *   must, by the protocol; headers.subscribe gets a `raw` flag from pre-1.4 clients)
 * @returns {unknown[]} the values in signature order
 */
function bindParams(method, spec, params, ignoreExtra = false) {
  const out = new Array(spec.length);
  if (Array.isArray(params)) {
    if (params.length > spec.length && !ignoreExtra) {
      throw invalidParams(`invalid params: ${method} takes ${arity(spec)}, got ${params.length}`);
    }
    for (let i = 0; i < spec.length; i++) out[i] = bindOne(method, spec[i], params[i], i < params.length);
    return out;
  }
  const names = Object.keys(params);
  if (!ignoreExtra) {
    const unknown = names.filter((n) => !spec.some((p) => p.name === n));
    if (unknown.length) {
      throw invalidParams(`invalid params: ${method} has no parameter ${unknown.map((n) => `"${show(n)}"`).join(', ')}` +
        ` (its parameters: ${spec.length ? spec.map((p) => p.name).join(', ') : 'none'})`);
    }
  }
  for (let i = 0; i < spec.length; i++) {
    const name = spec[i].name;
    out[i] = bindOne(method, spec[i], params[name], Object.prototype.hasOwnProperty.call(params, name));
  }
  return out;
}

function bindOne(method, p, value, given) {
  const optional = Object.prototype.hasOwnProperty.call(p, 'default');
  if (!given || value === undefined || (optional && value === null)) {
    if (!optional) throw invalidParams(`invalid params: ${method} needs the argument "${p.name}"`);
    return p.default;
  }
  return TYPES[p.type](value);
}

function arity(spec) {
  const required = spec.filter((p) => !Object.prototype.hasOwnProperty.call(p, 'default')).length;
  const n = (k) => `${k} argument${k === 1 ? '' : 's'}`;
  return required === spec.length ? n(required) : `${required} to ${n(spec.length)}`;
}

module.exports = { bindParams, TYPES };
