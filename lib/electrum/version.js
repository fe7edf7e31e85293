'use strict';

/**
 * Protocol version negotiation (server.version). The server speaks 1.4 to 1.4.2: 1.4.1 only
 * changed AuxPoW headers (none on Bitcoin) and 1.4.2 added blockchain.scripthash.unsubscribe,
 * which this server answers at every version. 1.5 was never defined; 1.6 changes answers
 * (headers as arrays, mempool.get_info instead of blockchain.relayfee) and is not spoken.
 */
const PROTOCOL_MIN = Object.freeze([1, 4]);
const PROTOCOL_MAX = Object.freeze([1, 4, 2]);

/**
 * "1.4.2" → [1, 4, 2]; anything else → null.
 * @param {unknown} s
 * @returns {number[]|null}
 */
function parseVersion(s) {
  if (typeof s !== 'string' || !/^\d{1,4}(\.\d{1,4}){1,3}$/.test(s)) return null;
  return s.split('.').map(Number);
}

/** [1, 4] → "1.4" (at least one dot, as the protocol writes versions). */
function versionString(v) {
  return (v.length < 2 ? [...v, 0] : v).join('.');
}

/** Compares version tuples; missing parts count as 0 ("1.4" equals "1.4.0"). */
function compare(a, b) {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] || 0) - (b[i] || 0);
    if (d) return d < 0 ? -1 : 1;
  }
  return 0;
}

/**
 * The version both sides speak: min(client max, server max), if it is at least
 * max(client min, server min). A client that names no version is taken to speak 1.4.
 * @param {unknown} requested a version string, [min, max] strings, or undefined
 * @returns {{version: string}|{error: string}}
 */
function negotiate(requested) {
  let lo;
  let hi;
  if (requested === undefined || requested === null) {
    lo = hi = PROTOCOL_MIN;
  } else if (Array.isArray(requested) && requested.length === 2) {
    lo = parseVersion(requested[0]);
    hi = parseVersion(requested[1]);
  } else {
    lo = hi = parseVersion(requested);
  }
  if (!lo || !hi || compare(lo, hi) > 0) {
    return { error: `unsupported protocol version: ${JSON.stringify(requested)} (this server speaks ${range()})` };
  }
  const version = compare(hi, PROTOCOL_MAX) < 0 ? hi : PROTOCOL_MAX;
  const floor = compare(lo, PROTOCOL_MIN) > 0 ? lo : PROTOCOL_MIN;
  if (compare(version, floor) < 0) {
    return { error: `unsupported protocol version: ${JSON.stringify(requested)} (this server speaks ${range()})` };
  }
  return { version: versionString(version) };
}

function range() {
  return `${versionString(PROTOCOL_MIN)} to ${versionString(PROTOCOL_MAX)}`;
}

module.exports = { PROTOCOL_MIN: versionString(PROTOCOL_MIN), PROTOCOL_MAX: versionString(PROTOCOL_MAX), negotiate, parseVersion };
