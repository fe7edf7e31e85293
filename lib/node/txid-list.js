'use strict';

/**
 * Lists of txids in a node's reply (`getrawmempool false`: every transaction of a mempool of
 * 150,000, poll after poll) left where they are in the reply's bytes: the follower compares
 * each one's 64 hex digits with those it holds (lib/mempool/txid-index.js) and makes a string
 * only of a txid it does not hold, so a poll leaves no garbage in proportion to the mempool.
 * Pure: bytes in, offsets out.
 */

/** The txids of one array of the reply: 64 characters each, at `offsets` in `body`. */
class TxidList {
  /**
   * @param {Buffer} body the reply
   * @param {Uint32Array} offsets each txid's first digit
   */
  constructor(body, offsets) {
    this.body = body;
    this.offsets = offsets;
    this.length = offsets.length;
  }

  /**
   * The k-th txid's display hex (lower case), checked.
   * @param {number} k
   * @returns {string|null} null when its 64 characters are not all hex digits
   */
  id(k) {
    const at = this.offsets[k];
    const s = this.body.latin1Slice(at, at + 64);
    return HEX64.test(s) ? s.toLowerCase() : null;
  }

  /** @returns {Array<string|null>} every id() (a test's or a small mempool's view) */
  ids() {
    return Array.from({ length: this.length }, (_, k) => this.id(k));
  }
}

const HEX64 = /^[0-9a-fA-F]{64}$/;

const QUOTE = 0x22;
const COMMA = 0x2c;
const OPEN = 0x5b;
const CLOSE = 0x5d;
const BACKSLASH = 0x5c;

/** @param {number} b */
function isSpace(b) {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

/**
 * JSON.parse for a reply holding arrays of txids: each non-empty array whose elements are all
 * strings of 64 characters without an escape comes as a TxidList (its digits are checked when
 * a txid is read: TxidList#id, or matched against held ones), the rest as JSON.parse gives
 * it. An array holding anything else (a string of another length, a number) is left to
 * JSON.parse whole, so a reply that is not a list of txids is seen as one.
 * @param {Buffer} body
 * @returns {any}
 */
function parseWithTxidLists(body) {
  const parts = [];
  const lists = [];
  let copied = 0;
  const n = body.length;
  for (let pos = body.indexOf(OPEN); pos >= 0 && pos < n; pos = body.indexOf(OPEN, pos + 1)) {
    // an array's opening bracket, or one inside a string: then what follows is no run of
    // quoted 64-character strings (after a string's closing quote comes JSON's syntax)
    const run = txidRun(body, pos);
    if (!run) continue;
    parts.push(body.toString('utf8', copied, pos), `"\\u0000${lists.length}"`);
    lists.push(run.list);
    copied = run.end;
    pos = run.end - 1;
  }
  if (!lists.length) return JSON.parse(body.toString('utf8'));
  parts.push(body.toString('utf8', copied));
  return JSON.parse(parts.join(''), (key, value) => (
    typeof value === 'string' && value.charCodeAt(0) === 0 && value.length > 1 ? lists[Number(value.slice(1))] : value));
}

/**
 * The txids of the array opening at `open`, if that is what it holds, and where it ends.
 * @param {Buffer} body
 * @param {number} open the '[' offset
 * @returns {{list: TxidList, end: number}|null} end: the offset after ']'
 */
function txidRun(body, open) {
  const n = body.length;
  let at = open + 1;
  while (at < n && isSpace(body[at])) at++;
  if (body[at] !== QUOTE) return null;
  // an upper bound on the elements: each takes at least 67 bytes ("64",)
  const offsets = new Uint32Array(Math.ceil((n - open) / 67));
  // an escape would make the characters another string than they read: none in the run
  const escape = body.indexOf(BACKSLASH, open);
  let count = 0;
  for (;;) {
    // 64 characters between two quotes, none a quote
    if (body[at] !== QUOTE || at + 65 >= n || body.indexOf(QUOTE, at + 1) !== at + 65) return null;
    if (escape !== -1 && escape < at + 65) return null;
    offsets[count++] = at + 1;
    at += 66;
    while (at < n && isSpace(body[at])) at++;
    if (body[at] === CLOSE) return { list: new TxidList(body, offsets.subarray(0, count)), end: at + 1 };
    if (body[at] !== COMMA) return null;
    at++;
    while (at < n && isSpace(body[at])) at++;
  }
}

module.exports = { TxidList, parseWithTxidLists };
