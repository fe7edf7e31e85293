'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { SourceError } = require('../errors');

const KEY_SIZE = 8;

/**
 * Reads Bitcoin Core's blocks-file obfuscation key (Core 28+ writes `xor.dat` into the
 * blocks dir). Returns null when there is no key file or the key is all zeros, which means
 * the files are stored in the clear.
 * @param {string} dir blocks directory
 * @returns {Promise<Buffer|null>} the 8-byte key
 */
async function readXorKey(dir) {
  const file = path.join(dir, 'xor.dat');
  let key;
  try {
    key = await fs.promises.readFile(file);
  } catch (err) {
    if (err.code === 'ENOENT') return null;
    throw new SourceError('ERR_BAD_XOR_KEY', `cannot read ${file}: ${err.message}`, { file });
  }
  if (key.length !== KEY_SIZE) {
    throw new SourceError('ERR_BAD_XOR_KEY', `${file} holds ${key.length} bytes; an obfuscation key is ${KEY_SIZE} bytes`, { file });
  }
  return isZero(key) ? null : key;
}

/**
 * XORs `buf` in place with the key, as the bytes sit at `fileOffset` in their file:
 * byte i gets key[(fileOffset + i) % 8]. Applying it twice restores the input.
 *
 * Works a 32-bit word at a time (two alternating word keys) so de-obfuscating a 128 MiB
 * file costs far less than reading it.
 * @param {Buffer} buf
 * @param {Buffer|null} key 8 bytes, or null for no obfuscation
 * @param {number} fileOffset where buf[0] sits in its file
 * @returns {Buffer} buf
 */
function xorInPlace(buf, key, fileOffset) {
  if (!key) return buf;
  const n = buf.length;
  let i = 0;
  while (i < n && ((buf.byteOffset + i) & 3) !== 0) {
    buf[i] ^= key[(fileOffset + i) % KEY_SIZE];
    i++;
  }
  const words = (n - i) >>> 2;
  if (words > 0) {
    const phase = (fileOffset + i) % KEY_SIZE;
    const rotated = new Uint8Array(KEY_SIZE); // own ArrayBuffer: aligned for the word view
    for (let j = 0; j < KEY_SIZE; j++) rotated[j] = key[(phase + j) % KEY_SIZE];
    const kw = new Uint32Array(rotated.buffer);
    const k0 = kw[0];
    const k1 = kw[1];
    const w = new Uint32Array(buf.buffer, buf.byteOffset + i, words);
    let j = 0;
    for (; j + 1 < words; j += 2) {
      w[j] ^= k0;
      w[j + 1] ^= k1;
    }
    if (j < words) w[j] ^= k0;
    i += words * 4;
  }
  for (; i < n; i++) buf[i] ^= key[(fileOffset + i) % KEY_SIZE];
  return buf;
}

/**
 * True when `len` bytes of `buf` from `start` are all zero.
 * @param {Buffer} buf
 * @param {number} [start=0]
 * @param {number} [len=buf.length-start]
 */
function isZero(buf, start = 0, len = buf.length - start) {
  for (let i = start, end = start + len; i < end; i++) if (buf[i] !== 0) return false;
  return true;
}

/**
 * True when `len` bytes of the de-obfuscated `buf` from `start` were zero on disk (before
 * the XOR), i.e. they equal the key bytes at their file position.
 * @param {Buffer} buf de-obfuscated bytes
 * @param {number} start index in buf
 * @param {number} len
 * @param {Buffer|null} key
 * @param {number} fileOffset where buf[0] sits in its file
 */
function wasZeroOnDisk(buf, start, len, key, fileOffset) {
  if (!key) return isZero(buf, start, len);
  for (let i = start, end = start + len; i < end; i++) {
    if (buf[i] !== key[(fileOffset + i) % KEY_SIZE]) return false;
  }
  return true;
}

module.exports = { readXorKey, xorInPlace, isZero, wasZeroOnDisk, KEY_SIZE };
