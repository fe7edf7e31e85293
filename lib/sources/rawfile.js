'use strict';

const path = require('node:path');
const { SourceError } = require('../errors');
const { getNetwork } = require('../chain/networks');
const { HEADER_SIZE } = require('../chain/header');
const { readXorKey } = require('./xor');
const { BlkFile, readRecords, networkByMagic, badMagic, MAX_BLOCK_SIZE } = require('./blkfile');

/**
 * Blocks from one file, in file order: either a raw block (the block exactly as serialized,
 * 80-byte header first) or a blocks file in Bitcoin Core's magic+size framing.
 *
 * The kind is told by the first 4 bytes: this network's magic means a blocks file; another
 * known network's magic is an error that names that network; anything else is read as one
 * raw block (which the parser then checks). A blocks file is streamed in chunks, never read
 * whole.
 *
 * If the file sits next to a Bitcoin Core 28+ `xor.dat`, its key is used when the file
 * does not read as plain data (pass `xorKey` to choose explicitly, null for none).
 *
 * @param {string} file
 * @param {object} [opts]
 * @param {string|import('../chain/networks').Network} [opts.network='main']
 * @param {Buffer|null} [opts.xorKey] obfuscation key; default: the sibling xor.dat, if any
 * @returns {AsyncGenerator<{raw: Buffer, offset: number}>} offset: where the block starts in the file
 */
async function* openFile(file, opts = {}) {
  const network = getNetwork(opts.network || 'main');
  let blk = await BlkFile.open(file, null);
  try {
    const size = await blk.size();
    if (size < 4) throw notABlock(file, `it holds only ${size} bytes`);
    const plain = (await blk.read(0, 4)).readUInt32BE(0);
    let magic = plain;
    if (!networkByMagic(plain)) {
      const key = opts.xorKey !== undefined ? opts.xorKey : await readXorKey(path.dirname(file)).catch(() => null);
      if (key) {
        const unmasked = plain ^ key.readUInt32BE(0);
        if (networkByMagic(unmasked >>> 0)) {
          magic = unmasked >>> 0;
          blk.key = key;
        }
      }
    }
    if (magic === network.magic) {
      yield* readRecords(blk, { network });
      return;
    }
    if (networkByMagic(magic)) throw badMagic(file, 0, magic, network);
    if (size < HEADER_SIZE + 1) throw notABlock(file, `it holds only ${size} bytes, less than a block header`);
    if (size > MAX_BLOCK_SIZE) {
      throw notABlock(file, `it does not start with a blocks-file magic and, at ${size} bytes, is larger than any block (${MAX_BLOCK_SIZE})`);
    }
    const raw = await blk.read(0, size);
    yield { raw, offset: 0 };
  } finally {
    await blk.close();
    blk = null;
  }
}

function notABlock(file, why) {
  return new SourceError('ERR_NOT_A_BLOCK_FILE', `${file} is neither a raw block nor a blocks file: ${why}`, { file });
}

module.exports = { openFile };
