'use strict';

const { prng } = require('../helpers/prng');

// Builders for blocks directories in tests: real mainnet blocks, framed, split, shuffled,
// padded, obfuscated and forked by hand, so the reader is checked against known answers.

const fs = require('node:fs');
const path = require('node:path');
const { parseBlock } = require('../../lib/chain/block');
const { sha256d, toDisplayHex } = require('../../lib/chain/hash');
const { merkleRoot } = require('../../lib/chain/merkle');
const { NETWORKS } = require('../../lib/chain/networks');
const { mainnet439Blocks } = require('../helpers/fixtures');

const BLOCKS = mainnet439Blocks();
const HASHES = BLOCKS.map((b) => toDisplayHex(sha256d(b.subarray(0, 80))));

/** Magic+size framing of one block. */
function frame(raw, network = NETWORKS.main) {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(network.magic, 0);
  head.writeUInt32LE(raw.length, 4);
  return Buffer.concat([head, raw]);
}

/** @param {Buffer} raw @returns {string} display hash */
function hashOf(raw) {
  return toDisplayHex(sha256d(raw.subarray(0, 80)));
}

/**
 * A competing block made from a real one: its coinbase pays `tweak` satoshis less (so its
 * txid and the merkle root change; the root is recomputed) and its prev is `prevHash`.
 * @param {Buffer} raw a real block
 * @param {string} prevHash display hex
 * @param {number} tweak
 */
function forge(raw, prevHash, tweak = 1) {
  const block = parseBlock(raw);
  const out = Buffer.from(raw);
  const cb = block.txs[0];
  const script = cb.outputs[0].script;
  if (script.length >= 0xfd || cb.hasWitness) throw new Error('forge: unexpected coinbase shape');
  const valuePos = script.byteOffset - raw.byteOffset - 1 - 8;
  out.writeUInt32LE(out.readUInt32LE(valuePos) - tweak, valuePos);
  const cbStart = cb.offset;
  const ids = block.txs.map((tx, i) => (i === 0 ? sha256d(out.subarray(cbStart, cbStart + cb.size)) : tx.txid));
  merkleRoot(ids).copy(out, 36);
  Buffer.from(prevHash, 'hex').reverse().copy(out, 4);
  return out;
}

/** blk file name for number n */
function blkName(n) {
  return `blk${String(n).padStart(5, '0')}.dat`;
}

/**
 * Writes `files` (arrays of raw blocks) as blk00000.dat, blk00001.dat, … in `dir`.
 * @param {string} dir
 * @param {Buffer[][]} files
 * @param {object} [opts]
 * @param {number} [opts.padding=0] zero bytes after each file's records
 * @param {Buffer} [opts.xorKey] obfuscate the records (and write xor.dat)
 * @param {boolean} [opts.xorPadding=false] obfuscate the padding too (else it stays zero on disk)
 * @returns {Buffer[]} the bytes written per file
 */
function writeDir(dir, files, opts = {}) {
  const written = files.map((blocks, n) => {
    const data = Buffer.concat(blocks.map((b) => frame(b)));
    const pad = Buffer.alloc(opts.padding || 0);
    if (opts.xorKey) {
      xorAt(data, opts.xorKey, 0);
      if (opts.xorPadding) xorAt(pad, opts.xorKey, data.length);
    }
    const bytes = Buffer.concat([data, pad]);
    fs.writeFileSync(path.join(dir, blkName(n)), bytes);
    return bytes;
  });
  if (opts.xorKey) fs.writeFileSync(path.join(dir, 'xor.dat'), opts.xorKey);
  return written;
}

/** Byte-by-byte XOR (deliberately the naive form, to check lib/sources/xor.js). */
function xorAt(buf, key, fileOffset) {
  for (let i = 0; i < buf.length; i++) buf[i] ^= key[(fileOffset + i) % 8];
  return buf;
}


/** Fisher-Yates with a seeded PRNG; returns a new array. */
function shuffle(items, seed) {
  const r = prng(seed);
  const a = items.slice();
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

/** Splits `items` into n nearly equal consecutive parts. */
function split(items, n) {
  const out = [];
  const per = Math.ceil(items.length / n);
  for (let i = 0; i < items.length; i += per) out.push(items.slice(i, i + per));
  return out;
}

/** Everything a source yields, as [{height, hash, prev, raw}]. */
async function collect(source, from, to) {
  const out = [];
  for await (const b of source.blocks(from, to)) out.push(b);
  return out;
}

/** Asserts a promise rejects with a given error class and code; returns the error. */
async function rejectsWith(promise, Cls, code) {
  try {
    await promise;
  } catch (err) {
    if (!(err instanceof Cls) || err.code !== code) {
      throw new Error(`expected ${Cls.name} ${code}, got ${err && err.name} ${err && err.code}: ${err && err.message}`);
    }
    return err;
  }
  throw new Error(`expected ${Cls.name} ${code}, but it resolved`);
}

module.exports = {
  BLOCKS, HASHES, frame, hashOf, forge, blkName, writeDir, xorAt, rng: prng, shuffle, split, collect, rejectsWith,
};
