'use strict';

const fs = require('node:fs');
const { SourceError } = require('../errors');
const { NETWORKS } = require('../chain/networks');
const { HEADER_SIZE } = require('../chain/header');
const { xorInPlace, isZero, wasZeroOnDisk } = require('./xor');

/**
 * Bitcoin Core's blocks-file framing: each record is the 4 network magic bytes, the block
 * size as a little-endian uint32, then the block. Files may end in zeros (Core preallocates
 * in 16 MiB steps), and with Core 28+ every byte is XORed with the dir's xor.dat key.
 */

const RECORD_HEADER_SIZE = 8;
// Bitcoin Core's MAX_BLOCK_SERIALIZED_SIZE: no valid block is larger.
const MAX_BLOCK_SIZE = 4000000;
// An 80-byte header and a transaction count: anything shorter cannot be a block.
const MIN_BLOCK_SIZE = HEADER_SIZE + 1;
const RECORD_PEEK = RECORD_HEADER_SIZE + HEADER_SIZE;

// Header scans read this much at a time where records sit back to back, and only a page where
// a big block was just skipped, so scanning small early blocks is a few reads per file and
// scanning full modern blocks does not read their bodies.
const SCAN_WINDOW = 1 << 20;
const SCAN_PEEK = 4096;

/** The network whose magic is `magic` (big-endian uint32 of the 4 bytes), or null. */
function networkByMagic(magic) {
  for (const net of Object.values(NETWORKS)) if (net.magic === magic) return net;
  return null;
}

function hex32(v) {
  return v.toString(16).padStart(8, '0');
}

/**
 * The error for a record that does not start with `network`'s magic.
 * @param {string} file
 * @param {number} offset
 * @param {number} magic what was found
 * @param {import('../chain/networks').Network} network what was expected
 */
function badMagic(file, offset, magic, network) {
  const other = networkByMagic(magic);
  if (other) {
    return new SourceError('ERR_WRONG_NETWORK',
      `${file} is a ${other.name} blocks file (magic ${hex32(magic)} at offset ${offset}), not ${network.name}: pass --network ${other.name}`,
      { file, offset, network: other.name });
  }
  return new SourceError('ERR_BAD_MAGIC',
    `${file}: bad record magic ${hex32(magic)} at offset ${offset} (expected ${hex32(network.magic)} for ${network.name}): the file is corrupt or not a blocks file`,
    { file, offset });
}

/** Throws unless `size` can be a block. */
function checkSize(file, offset, size) {
  if (size < MIN_BLOCK_SIZE || size > MAX_BLOCK_SIZE) {
    throw new SourceError('ERR_BAD_RECORD_SIZE',
      `${file}: record at offset ${offset} claims a ${size}-byte block; a block is ${MIN_BLOCK_SIZE} to ${MAX_BLOCK_SIZE} bytes`,
      { file, offset, size });
  }
}

/** A blk file opened for positioned reads, de-obfuscating what it reads. */
class BlkFile {
  /**
   * @param {string} file path
   * @param {Buffer|null} [key] xor.dat key
   * @returns {Promise<BlkFile>}
   */
  static async open(file, key = null) {
    let fh;
    try {
      fh = await fs.promises.open(file, 'r');
      if ((await fh.stat()).isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    } catch (err) {
      if (fh) await fh.close();
      throw openError(file, err);
    }
    return new BlkFile(file, fh, key);
  }

  constructor(file, fh, key) {
    this.file = file;
    this.fh = fh;
    this.key = key;
  }

  /** @returns {Promise<number>} the file's current size */
  async size() {
    return (await this.fh.stat()).size;
  }

  /**
   * Reads up to `len` bytes at `pos` into `buf` (from index 0), de-obfuscated.
   * @returns {Promise<number>} bytes read (less than len only at the end of the file)
   */
  async readInto(buf, pos, len) {
    let got = 0;
    while (got < len) {
      const bytesRead = await preadAt(this.fh.fd, buf, got, len - got, pos + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    xorInPlace(buf.subarray(0, got), this.key, pos);
    return got;
  }

  /** Reads exactly `len` bytes at `pos` into a new Buffer; throws if the file is shorter. */
  async read(pos, len) {
    const buf = Buffer.allocUnsafe(len);
    const got = await this.readInto(buf, pos, len);
    if (got < len) {
      throw new SourceError('ERR_TRUNCATED_RECORD',
        `${this.file}: wanted ${len} bytes at offset ${pos}, the file ends after ${got}`, { file: this.file, offset: pos });
    }
    return buf;
  }

  async close() {
    const fh = this.fh;
    this.fh = null;
    if (fh) await fh.close();
  }
}

/**
 * One positioned read through the callback API on the handle's descriptor: for the small
 * reads a served transaction makes (a header, a transaction) it costs about half of
 * FileHandle#read's promise machinery (measured by bench/api.js's /api/tx figures).
 */
function preadAt(fd, buf, off, len, pos) {
  return new Promise((resolve, reject) => {
    fs.read(fd, buf, off, len, pos, (err, n) => (err ? reject(err) : resolve(n)));
  });
}

function openError(file, err) {
  if (err.code === 'ENOENT') return new SourceError('ERR_NO_FILE', `${file}: no such file`, { file });
  if (err.code === 'EISDIR') return new SourceError('ERR_NO_FILE', `${file} is a directory, not a block file`, { file });
  return new SourceError('ERR_NO_FILE', `cannot open ${file}: ${err.message}`, { file });
}

/**
 * Reads the record headers of one blk file from `start` without reading block bodies:
 * for each whole record, calls onRecord(blockOffset, size, header) with the block's 80-byte
 * header (a view valid only during the call).
 *
 * Stops, without error, at the end of the file, at zero padding, at a record whose header
 * is still all zeros (being written), and — when `last` — at a record cut off by the end of
 * the file. A record cut off in a file that is not the last is corruption.
 *
 * @param {BlkFile} blk
 * @param {object} opts
 * @param {number} opts.start     offset of the first record to read
 * @param {number} opts.fileSize
 * @param {import('../chain/networks').Network} opts.network
 * @param {boolean} opts.last     whether the file may still be growing
 * @param {(blockOffset: number, size: number, header: Buffer) => void} opts.onRecord
 * @returns {Promise<{next: number, stop: 'eof'|'padding'|'partial'}>} next: where to resume
 */
async function scanHeaders(blk, { start, fileSize, network, last, onRecord }) {
  const win = Buffer.allocUnsafe(SCAN_WINDOW);
  let winStart = 0;
  let winLen = 0;
  let pos = start;
  let contiguous = true;
  for (;;) {
    if (pos + RECORD_HEADER_SIZE > fileSize) {
      if (pos === fileSize) return { next: pos, stop: 'eof' };
      if (!last) await throwIfCut(blk, pos, fileSize, network);
      return { next: pos, stop: 'partial' };
    }
    const want = Math.min(RECORD_PEEK, fileSize - pos);
    if (pos < winStart || pos + want > winStart + winLen) {
      const len = Math.min(contiguous ? SCAN_WINDOW : SCAN_PEEK, fileSize - pos);
      winLen = await blk.readInto(win, pos, len);
      winStart = pos;
      if (winLen < want) return { next: pos, stop: 'partial' }; // shrank under us
    }
    const at = pos - winStart;
    const magic = win.readUInt32BE(at);
    if (magic !== network.magic) {
      if (magic === 0 || wasZeroOnDisk(win, at, 4, blk.key, winStart)) return { next: pos, stop: 'padding' };
      throw badMagic(blk.file, pos, magic, network);
    }
    const size = win.readUInt32LE(at + 4);
    checkSize(blk.file, pos, size);
    if (pos + RECORD_HEADER_SIZE + size > fileSize) {
      if (!last) throw cutRecord(blk.file, pos, size, fileSize);
      return { next: pos, stop: 'partial' };
    }
    const h = at + RECORD_HEADER_SIZE;
    if (isZero(win, h, HEADER_SIZE) || wasZeroOnDisk(win, h, HEADER_SIZE, blk.key, winStart)) {
      return { next: pos, stop: 'partial' };
    }
    onRecord(pos + RECORD_HEADER_SIZE, size, win.subarray(h, h + HEADER_SIZE));
    pos += RECORD_HEADER_SIZE + size;
    contiguous = pos <= winStart + winLen;
  }
}

async function throwIfCut(blk, pos, fileSize, network) {
  // A few stray bytes after the last record of a finished file: zeros are padding, a magic
  // is a cut record, anything else is not a record at all.
  const tail = await blk.read(pos, fileSize - pos);
  if (isZero(tail) || wasZeroOnDisk(tail, 0, tail.length, blk.key, pos)) return;
  const m = Buffer.alloc(4);
  tail.copy(m, 0, 0, Math.min(4, tail.length));
  if (m.readUInt32BE(0) !== network.magic && tail.length >= 4) throw badMagic(blk.file, pos, m.readUInt32BE(0), network);
  throw cutRecord(blk.file, pos, null, fileSize);
}

function cutRecord(file, offset, size, fileSize) {
  const what = size === null ? 'a record header' : `a ${size}-byte block`;
  return new SourceError('ERR_TRUNCATED_RECORD',
    `${file}: record at offset ${offset} is cut off: ${what} does not fit in the ${fileSize - offset} bytes left in the file`,
    { file, offset, size });
}

/**
 * Streams the whole blocks of one blk file in file order, reading large chunks. Each `raw`
 * is a view into a chunk that is never reused, so callers may keep it. Stops at the end of
 * the file or at zero padding; a cut-off record is an error (the file is read as finished).
 *
 * @param {BlkFile} blk
 * @param {object} opts
 * @param {import('../chain/networks').Network} opts.network
 * @param {number} [opts.start=0]
 * @param {number} [opts.chunkSize=8 MiB]
 * @returns {AsyncGenerator<{raw: Buffer, offset: number}>} offset: where the block starts in the file
 */
async function* readRecords(blk, { network, start = 0, chunkSize = 8 << 20 }) {
  const fileSize = await blk.size();
  let chunk = Buffer.alloc(0);
  let chunkStart = start;
  let pos = start;
  for (;;) {
    if (pos === fileSize) return;
    let at = pos - chunkStart;
    if (at + RECORD_HEADER_SIZE > chunk.length) {
      chunk = await readChunk(blk, pos, Math.min(chunkSize, fileSize - pos));
      chunkStart = pos;
      at = 0;
      if (chunk.length < RECORD_HEADER_SIZE) {
        await throwIfCut(blk, pos, fileSize, network);
        return;
      }
    }
    const magic = chunk.readUInt32BE(at);
    if (magic !== network.magic) {
      if (magic === 0 || wasZeroOnDisk(chunk, at, 4, blk.key, chunkStart)) return;
      throw badMagic(blk.file, pos, magic, network);
    }
    const size = chunk.readUInt32LE(at + 4);
    checkSize(blk.file, pos, size);
    const end = pos + RECORD_HEADER_SIZE + size;
    if (end > fileSize) throw cutRecord(blk.file, pos, size, fileSize);
    if (end > chunkStart + chunk.length) {
      chunk = await readChunk(blk, pos, Math.min(Math.max(chunkSize, RECORD_HEADER_SIZE + size), fileSize - pos));
      chunkStart = pos;
      at = 0;
    }
    yield { raw: chunk.subarray(at + RECORD_HEADER_SIZE, at + RECORD_HEADER_SIZE + size), offset: pos + RECORD_HEADER_SIZE };
    pos = end;
  }
}

async function readChunk(blk, pos, len) {
  const buf = Buffer.allocUnsafe(len);
  const got = await blk.readInto(buf, pos, len);
  return got < len ? buf.subarray(0, got) : buf;
}

module.exports = {
  BlkFile, scanHeaders, readRecords, networkByMagic, badMagic, checkSize,
  RECORD_HEADER_SIZE, MAX_BLOCK_SIZE, MIN_BLOCK_SIZE,
};
