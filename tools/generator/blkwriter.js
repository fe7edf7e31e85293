'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { UsageError } = require('../../lib/errors');
const { getNetwork } = require('../../lib/chain/networks');

const BLK_NAME = /^blk(\d{5,})\.dat$/;
const RECORD_HEADER = 8;

/** @param {number} n @returns {string} blk file name, e.g. blk00012.dat */
function blkName(n) {
  return `blk${String(n).padStart(5, '0')}.dat`;
}

/** XORs buf in place as if it sat at `fileOffset` of a blk file obfuscated with `key`. */
function xorAt(buf, key, fileOffset) {
  for (let i = 0, k = fileOffset & 7; i < buf.length; i++, k = (k + 1) & 7) buf[i] ^= key[k];
}

/**
 * Writes blocks the way Bitcoin Core stores them: blk00000.dat, blk00001.dat, … each a run of
 * records (4 magic bytes, little-endian uint32 size, the block), a new file when the next
 * record would pass `maxFileSize`. With `xorKey` (Core 28+ obfuscation) it writes xor.dat
 * and XORs every record byte at file offset p with key[p % 8].
 *
 * Writes are synchronous and buffered: records gather in one buffer flushed in large
 * sequential writes, so a generator can stream hundreds of MB a minute.
 *
 * Opening a dir that already has blk files continues the last one after its last whole
 * record, the way Core overwrites its preallocated space: zero padding and a record cut off
 * by a crash are truncated first. An existing xor.dat is reused (and must match `xorKey`).
 */
class BlkWriter {
  /**
   * @param {object} opts
   * @param {string} opts.dir
   * @param {string} [opts.network='regtest'] whose magic frames the records
   * @param {number} [opts.maxFileSize=128 MiB] Core's MAX_BLOCKFILE_SIZE
   * @param {Buffer|null} [opts.xorKey=null] 8-byte obfuscation key
   * @param {number} [opts.bufferSize=8 MiB]
   */
  constructor({ dir, network = 'regtest', maxFileSize = 128 << 20, xorKey = null, bufferSize = 8 << 20 }) {
    if (!dir) throw new UsageError('ERR_GENERATOR_PARAM', 'BlkWriter needs a dir');
    if (!(Number.isInteger(maxFileSize) && maxFileSize > RECORD_HEADER)) {
      throw new UsageError('ERR_GENERATOR_PARAM', `maxFileSize must be an integer > ${RECORD_HEADER}`);
    }
    this.dir = dir;
    this.network = getNetwork(network);
    this.magic = Buffer.alloc(4);
    this.magic.writeUInt32BE(this.network.magic, 0);
    this.maxFileSize = maxFileSize;
    this.buf = Buffer.allocUnsafe(bufferSize);
    this.used = 0;
    this.bytesWritten = 0;
    this.records = 0;
    fs.mkdirSync(dir, { recursive: true });
    const files = listBlkFiles(dir);
    this.key = this._setupKey(xorKey, files.length > 0);
    if (files.length) {
      this.fileNum = files[files.length - 1];
      this.fd = fs.openSync(path.join(dir, blkName(this.fileNum)), 'r+');
      this.filePos = this._logicalEnd();
      fs.ftruncateSync(this.fd, this.filePos);
    } else {
      this.fileNum = 0;
      this.fd = fs.openSync(path.join(dir, blkName(0)), 'w');
      this.filePos = 0;
    }
    /** where the buffered bytes start in the current file */
    this.bufStart = this.filePos;
  }

  _setupKey(xorKey, hasFiles) {
    const file = path.join(this.dir, 'xor.dat');
    const existing = fs.existsSync(file) ? fs.readFileSync(file) : null;
    if (xorKey !== null && xorKey !== undefined) {
      const key = Buffer.from(xorKey);
      if (key.length !== 8) throw new UsageError('ERR_GENERATOR_PARAM', 'xorKey must be 8 bytes');
      if (existing && !existing.equals(key)) {
        throw new UsageError('ERR_GENERATOR_PARAM', `${file} holds another key: the dir's files are obfuscated with it`);
      }
      if (!existing && hasFiles) {
        throw new UsageError('ERR_GENERATOR_PARAM', `${this.dir} already has blk files in the clear: cannot add an xor key`);
      }
      if (!existing) fs.writeFileSync(file, key);
      return key.every((b) => b === 0) ? null : key;
    }
    if (existing && existing.length === 8 && existing.some((b) => b !== 0)) return existing;
    return null;
  }

  /** Offset after the last whole record of the open file (the file holds no partial ones after it). */
  _logicalEnd() {
    const size = fs.fstatSync(this.fd).size;
    const head = Buffer.allocUnsafe(RECORD_HEADER);
    let pos = 0;
    while (pos + RECORD_HEADER <= size) {
      fs.readSync(this.fd, head, 0, RECORD_HEADER, pos);
      if (this.key) xorAt(head, this.key, pos);
      if (!head.subarray(0, 4).equals(this.magic)) break;
      const len = head.readUInt32LE(4);
      if (pos + RECORD_HEADER + len > size) break;
      pos += RECORD_HEADER + len;
    }
    return pos;
  }

  /** @returns {string} name of the file being written */
  get fileName() {
    return blkName(this.fileNum);
  }

  /**
   * Appends one block record, starting a new file first when it would pass maxFileSize.
   * @param {Buffer} raw the serialized block
   * @returns {{file: number, offset: number, end: number}} blk file number, the block's
   *   offset in it (after the 8-byte record header) and where the record ends
   */
  write(raw) {
    const len = RECORD_HEADER + raw.length;
    if (this.filePos > 0 && this.filePos + len > this.maxFileSize) this._nextFile();
    this._room(len);
    const at = this.used;
    this.magic.copy(this.buf, at);
    this.buf.writeUInt32LE(raw.length, at + 4);
    raw.copy(this.buf, at + RECORD_HEADER);
    if (this.key) xorAt(this.buf.subarray(at, at + len), this.key, this.filePos);
    this.used += len;
    const offset = this.filePos + RECORD_HEADER;
    this.filePos += len;
    this.records++;
    return { file: this.fileNum, offset, end: this.filePos };
  }

  /**
   * Appends `n` zero bytes to the current file, as Core's preallocation leaves them on disk:
   * raw zeros, not obfuscated.
   * @param {number} n
   */
  pad(n) {
    let left = n;
    while (left > 0) {
      const chunk = Math.min(left, this.buf.length);
      this._room(chunk);
      this.buf.fill(0, this.used, this.used + chunk);
      this.used += chunk;
      this.filePos += chunk;
      left -= chunk;
    }
  }

  _room(n) {
    if (this.used + n <= this.buf.length) return;
    this.flush();
    if (n > this.buf.length) this.buf = Buffer.allocUnsafe(n);
  }

  /** Writes the buffered bytes to the current file. */
  flush() {
    let off = 0;
    while (off < this.used) off += fs.writeSync(this.fd, this.buf, off, this.used - off, this.bufStart + off);
    this.bytesWritten += this.used;
    this.bufStart += this.used;
    this.used = 0;
  }

  _nextFile() {
    this.flush();
    fs.closeSync(this.fd);
    this.fileNum++;
    this.fd = fs.openSync(path.join(this.dir, blkName(this.fileNum)), 'w');
    this.filePos = 0;
    this.bufStart = 0;
  }

  /** Flushes and closes the current file. */
  async close() {
    if (this.fd === null) return;
    this.flush();
    fs.closeSync(this.fd);
    this.fd = null;
  }
}

/** @returns {number[]} numbers of the blk files in `dir`, ascending */
function listBlkFiles(dir) {
  const nums = [];
  for (const name of fs.readdirSync(dir)) {
    const m = BLK_NAME.exec(name);
    if (m) nums.push(Number(m[1]));
  }
  return nums.sort((a, b) => a - b);
}

module.exports = { BlkWriter, blkName, listBlkFiles, xorAt };
