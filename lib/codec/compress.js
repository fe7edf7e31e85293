'use strict';

const lz4 = require('lz4-napi');
const { FLAG_LZ4 } = require('./format');

/**
 * When a value is stored LZ4-compressed: only kinds where LZ4 measurably wins, only above a
 * size threshold (below it the compressed form is rarely smaller and the call costs more than
 * it saves), and only when the compressed value really is smaller. bench/codec.js sweeps the
 * thresholds on a generated chain; docs/FORMAT.md records the sweep.
 *
 * Per kind, bytes; Infinity = never compressed. History pages, accounts and txids rows stay
 * raw: varint postings and hashes do not compress (LZ4 saved nothing on any of them).
 */
const DEFAULT_THRESHOLDS = Object.freeze({
  undo: 256,
  outputs: Infinity,
  // --txstore's block bodies: scripts, repeated keys and zero-padded fields compress
  body: 256,
});

let thresholds = { ...DEFAULT_THRESHOLDS };
let enabled = process.env.ADDRINDEX_LZ4 !== '0';

/**
 * Sets the compression policy of this process (the sync and its benchmark: ADDRINDEX_LZ4=0 in
 * the environment turns it off for a side-by-side run). Decoding never depends on it: every
 * value says in its format byte whether it is compressed.
 * @param {{enabled?: boolean, thresholds?: Object<string, number>}} opts
 */
function configure(opts) {
  if (opts.enabled !== undefined) enabled = Boolean(opts.enabled);
  if (opts.thresholds) thresholds = { ...DEFAULT_THRESHOLDS, ...opts.thresholds };
}

/**
 * The stored form of a just-encoded value: itself, or its body LZ4-compressed behind the same
 * format byte with the LZ4 flag, when the policy allows it and that is smaller.
 * @param {import('./io').Writer} w the writer `value` was just ended in
 * @param {Buffer} value a view from w.end()
 * @param {string} kind a key of the thresholds
 * @returns {Buffer}
 */
function pack(w, value, kind) {
  if (!enabled || !(value.length >= thresholds[kind])) return value;
  const body = lz4.compressSync(value.subarray(1));
  if (body.length + 1 >= value.length) return value;
  w.begin();
  w.u8(value[0] | FLAG_LZ4);
  w.bytes(body);
  return w.end();
}

module.exports = { DEFAULT_THRESHOLDS, configure, pack };
