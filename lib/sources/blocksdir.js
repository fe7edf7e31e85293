'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { SourceError, ParseError } = require('../errors');
const { getNetwork } = require('../chain/networks');
const { parseHeader } = require('../chain/header');
const { parseBlock } = require('../chain/block');
const { HeaderIndex } = require('./header-index');
const { readXorKey } = require('./xor');
const { scanHeaders } = require('./blkfile');
const { BlkHandles } = require('./handles');

const BLK_NAME = /^blk(\d{5,})\.dat$/;

/**
 * Blocks from a Bitcoin Core blocks directory (blk00000.dat, blk00001.dat, …).
 *
 * `scan()` reads only record headers — 88 bytes per block, the bodies are skipped — into a
 * HeaderIndex, and picks the best chain from the network's genesis by cumulative work.
 * Blocks stored out of height order (headers-first download), stale branches, duplicates
 * and orphans are all handled by the index; only the index is held in memory.
 *
 * Scans are incremental: each file remembers where its last whole record ended, so a later
 * scan reads only new records (in a file still being written, or in new files).
 *
 * `blocks()` then reads block bodies along the best chain with large sequential reads: it
 * groups consecutive heights lying close together in one file into one read of up to
 * `readAhead` bytes, and reads the next group while the caller works on the current one.
 */
class BlocksDirSource {
  /**
   * @param {object} opts
   * @param {string} opts.dir blocks directory (the one holding blk*.dat, e.g. ~/.bitcoin/blocks)
   * @param {string|import('../chain/networks').Network} [opts.network='main']
   * @param {number} [opts.readAhead=8 MiB] largest single read `blocks()` makes
   * @param {number} [opts.maxOpenFiles=8]  blk file handles kept open between reads
   */
  constructor({ dir, network = 'main', readAhead = 8 << 20, maxOpenFiles = 8 }) {
    if (!dir) throw new SourceError('ERR_NO_BLOCKS_DIR', 'no blocks directory given');
    this.dir = dir;
    this.network = getNetwork(network);
    this.readAhead = readAhead;
    this.index = new HeaderIndex(this.network.genesis);
    /** @type {Map<number, {name: string, next: number}>} blk number → file name and where its next record starts */
    this.files = new Map();
    this.handles = new BlkHandles(dir, maxOpenFiles);
    this.key = undefined;
    this.recordsRead = 0;
    this.scans = 0;
    this._scanning = null;
    this.closed = false;
  }

  /**
   * Reads the headers of every whole record not read before and updates the best chain.
   * Concurrent calls share one scan.
   * @returns {Promise<{added: number, tip: {height: number, hash: string}, changed: boolean}>}
   *   added: records read by this scan; changed: whether the best chain moved
   */
  scan() {
    if (this.closed) return Promise.reject(closedError());
    if (!this._scanning) this._scanning = this._scan().finally(() => { this._scanning = null; });
    return this._scanning;
  }

  async _scan() {
    const names = await this._listBlkFiles();
    if (this.key === undefined || this.recordsRead === 0) this.key = await readXorKey(this.dir);
    const before = this.recordsRead;
    const lastNum = names[names.length - 1].num;
    for (const { num, name } of names) {
      let state = this.files.get(num);
      if (!state) {
        state = { name, next: 0 };
        this.files.set(num, state);
      }
      const file = path.join(this.dir, name);
      let size;
      try {
        size = (await fs.promises.stat(file)).size;
      } catch (err) {
        if (err.code === 'ENOENT') continue; // pruned between readdir and stat
        throw new SourceError('ERR_NO_FILE', `cannot stat ${file}: ${err.message}`, { file });
      }
      if (size <= state.next) continue;
      const last = num === lastNum;
      const take = (r) => {
        this.index.add(r.hash, r.prev, r.bits, num, r.offset, r.size);
        this.recordsRead++;
        state.next = r.offset + r.size; // kept current, so a failed scan resumes after what it read
      };
      // The final record before a file's end of data may be one Core is still writing into
      // preallocated space (or was writing when it crashed): framing and header in place, the
      // body partly zeros. It is held back and taken only once its transactions hash to its
      // merkle root, or once a later record follows it. A finished file ending exactly at its
      // last record (Core truncates files it has finished) needs no such check.
      let held = null;
      const res = await this._withFile(num, (blk) => scanHeaders(blk, {
        start: state.next,
        fileSize: size,
        network: this.network,
        last,
        onRecord: (offset, blockSize, header) => {
          const h = parseHeader(header);
          if (held) take(held);
          // copied: the header is a view into a window the scan reuses
          held = { hash: h.hashBytes, prev: Buffer.from(h.prevBytes), bits: h.bits, offset, size: blockSize };
        },
      })).catch((err) => { throw this._hint(err); });
      if (held) {
        const trusted = !last && res.stop === 'eof';
        if (!trusted && !(await this._isWhole(num, held))) continue; // state.next stays at the unfinished record
        take(held);
      }
      state.next = res.next;
    }
    this.scans++;
    const changed = this.index.settle();
    if (this.index.tipHeight < 0) {
      const n = this.index.count;
      throw new SourceError('ERR_NO_GENESIS',
        `${this.dir}: the ${this.network.name} genesis block ${this.network.genesis} is not among the ${n} blocks in ${names.length} blk file(s)` +
        (n ? ': wrong --network, or not a complete blocks directory' : ': the files hold no whole block yet'),
        { dir: this.dir, blocks: n });
    }
    return { added: this.recordsRead - before, tip: this.tip(), changed };
  }

  /** Whether the record's block parses and its transactions match its merkle root. */
  async _isWhole(num, r) {
    const raw = await this._withFile(num, (blk) => blk.read(r.offset, r.size));
    try {
      parseBlock(raw);
      return true;
    } catch (err) {
      if (err instanceof ParseError) return false;
      throw err;
    }
  }

  async _listBlkFiles() {
    let entries;
    try {
      const st = await fs.promises.stat(this.dir);
      if (!st.isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
      entries = await fs.promises.readdir(this.dir);
    } catch (err) {
      const why = err.code === 'ENOENT' ? 'no such directory' : err.code === 'ENOTDIR' ? 'not a directory' : err.message;
      throw new SourceError('ERR_NO_BLOCKS_DIR', `blocks directory ${this.dir}: ${why}`, { dir: this.dir });
    }
    const names = [];
    for (const name of entries) {
      const m = BLK_NAME.exec(name);
      if (m) names.push({ num: Number(m[1]), name });
    }
    if (names.length === 0) {
      throw new SourceError('ERR_NO_BLOCK_FILES',
        `${this.dir} holds no blk*.dat files: point at Bitcoin Core's blocks directory (e.g. ~/.bitcoin/blocks)`, { dir: this.dir });
    }
    names.sort((a, b) => a.num - b.num);
    return names;
  }

  _hint(err) {
    if (err.code === 'ERR_BAD_MAGIC' && err.details && err.details.offset === 0 && !this.key) {
      err.message += '; if the files come from Bitcoin Core 28 or later, copy its xor.dat (the obfuscation key) along with them';
    }
    return err;
  }

  /**
   * Runs `fn` with an open handle on blk file `num`.
   * @template T
   * @param {number} num
   * @param {(blk: import('./blkfile').BlkFile) => Promise<T>} fn
   * @returns {Promise<T>}
   */
  async _withFile(num, fn) {
    return this.handles.use(num, this.files.get(num).name, this.key, fn);
  }

  /** @returns {{height: number, hash: string}|null} the best chain's tip (null before a scan) */
  tip() {
    const h = this.index.tipHeight;
    return h < 0 ? null : { height: h, hash: this.index.hashOf(this.index.chain[h]) };
  }

  /**
   * @param {number} height
   * @returns {string|null} hash (display hex) of the best chain's block at `height`
   */
  hashAt(height) {
    const seq = this.index.chain[height];
    return Number.isInteger(height) && seq !== undefined ? this.index.hashOf(seq) : null;
  }

  /**
   * @param {string} hash display hex
   * @returns {number|null} its height when the block is on the best chain, else null
   */
  heightOf(hash) {
    const seq = this.index.seqOf(hash);
    if (seq < 0) return null;
    const h = this.index.height[seq];
    return h >= 0 && this.index.chain[h] === seq ? h : null;
  }

  /**
   * Where a block seen by the last scan lies (best chain or not), as a BlockReader takes it.
   * @param {string} hash display hex
   * @returns {import('./blockreader').BlockLocator|null}
   */
  locate(hash) {
    const seq = this.index.seqOf(hash);
    if (seq < 0) return null;
    return { file: this.index.file[seq], offset: this.index.offset[seq], length: this.index.size[seq] };
  }

  /**
   * The cumulative proof of work from genesis up to and including a block linked to genesis.
   * @param {string} hash display hex
   * @returns {bigint|null} null for a block not seen or not (yet) linked
   */
  chainWork(hash) {
    const seq = this.index.seqOf(hash);
    return seq < 0 || this.index.height[seq] < 0 ? null : this.index.workOf(seq);
  }

  /**
   * Counts, for logs and tests.
   * @returns {{files: number, blocks: number, connected: number, orphans: number, recordsRead: number, scans: number, obfuscated: boolean}}
   *   blocks: distinct headers indexed; orphans: those not (yet) linked to genesis
   */
  stats() {
    return {
      files: this.files.size,
      blocks: this.index.count,
      connected: this.index.connected,
      orphans: this.index.count - this.index.connected,
      recordsRead: this.recordsRead,
      scans: this.scans,
      obfuscated: Boolean(this.key),
    };
  }

  /**
   * Raw blocks along the best chain as of the last scan, in height order. Each `raw` is
   * a view into a read buffer that is never reused, so it stays valid while referenced.
   * `locator` says where the block's bytes lie (blk file number, offset of the block itself
   * after its 8-byte record header, length): what a BlockReader needs to read it again.
   * @param {number} [fromHeight=0]
   * @param {number} [toHeight=tip height]
   * @returns {AsyncGenerator<{height: number, hash: string, prev: string, raw: Buffer, locator: import('./blockreader').BlockLocator}>}
   */
  async *blocks(fromHeight = 0, toHeight = this.index.tipHeight) {
    if (this.closed) throw closedError();
    const tipHeight = this.index.tipHeight;
    if (tipHeight < 0) throw new SourceError('ERR_NOT_SCANNED', 'blocks() before a successful scan()');
    if (!Number.isInteger(fromHeight) || !Number.isInteger(toHeight) || fromHeight < 0 || toHeight > tipHeight) {
      throw new SourceError('ERR_RANGE', `blocks(${fromHeight}, ${toHeight}): heights must be integers within 0..${tipHeight}`);
    }
    if (fromHeight > toHeight) return;
    const seqs = this.index.chain.slice(fromHeight, toHeight + 1);
    let win = this._planWindow(seqs, 0);
    let pending = this._readWindow(win);
    while (win) {
      const next = win.to < seqs.length ? this._planWindow(seqs, win.to) : null;
      const nextRead = next ? this._readWindow(next) : null;
      if (nextRead) nextRead.catch(() => {}); // observed when its turn comes
      const buf = await pending;
      for (let k = win.from; k < win.to; k++) {
        const seq = seqs[k];
        const at = this.index.offset[seq] - win.start;
        const raw = buf.subarray(at, at + this.index.size[seq]);
        const header = parseHeader(raw);
        if (!this.index.hashEquals(seq, header.hashBytes)) {
          throw new SourceError('ERR_BLOCK_CHANGED',
            `${this.files.get(win.file).name} offset ${this.index.offset[seq]} no longer holds block ${this.index.hashOf(seq)} (the file was rewritten: rescan from scratch)`,
            { file: win.file, offset: this.index.offset[seq] });
        }
        yield {
          height: fromHeight + k, hash: header.hash, prev: header.prev, raw,
          locator: { file: win.file, offset: this.index.offset[seq], length: this.index.size[seq] },
        };
      }
      win = next;
      pending = nextRead;
    }
  }

  /**
   * The next read: block `from` and the following heights in the same file, as long as the
   * byte span covering them stays within readAhead.
   */
  _planWindow(seqs, from) {
    const ix = this.index;
    const first = seqs[from];
    const file = ix.file[first];
    let start = ix.offset[first];
    let end = start + ix.size[first];
    let to = from + 1;
    for (; to < seqs.length; to++) {
      const s = seqs[to];
      if (ix.file[s] !== file) break;
      const ns = Math.min(start, ix.offset[s]);
      const ne = Math.max(end, ix.offset[s] + ix.size[s]);
      if (ne - ns > this.readAhead) break;
      start = ns;
      end = ne;
    }
    return { file, start, end, from, to };
  }

  _readWindow(win) {
    return this._withFile(win.file, (blk) => blk.read(win.start, win.end - win.start));
  }

  /** Closes open file handles. The source cannot be used afterwards. */
  async close() {
    this.closed = true;
    await this.handles.closeAll();
  }
}

function closedError() {
  return new SourceError('ERR_SOURCE_CLOSED', 'the blocks-dir source is closed');
}

module.exports = { BlocksDirSource };
