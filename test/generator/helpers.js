'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { parseHeader } = require('../../lib/chain/header');

/**
 * Every whole record of a blocks dir, in file order, read without lib/sources or the
 * generator's writer: de-obfuscates with xor.dat, stops a file at zero padding (zeros on
 * disk) or at a record cut off by the file's end.
 * @returns {{file: string, offset: number, raw: Buffer, hash: string, prev: string}[]}
 */
function readDirRecords(dir, magic) {
  const keyFile = path.join(dir, 'xor.dat');
  const key = fs.existsSync(keyFile) ? fs.readFileSync(keyFile) : null;
  const names = fs.readdirSync(dir).filter((n) => /^blk\d{5}\.dat$/.test(n)).sort();
  const out = [];
  for (const name of names) {
    const disk = fs.readFileSync(path.join(dir, name));
    const buf = Buffer.from(disk);
    if (key) for (let i = 0; i < buf.length; i++) buf[i] ^= key[i % 8];
    let pos = 0;
    while (pos + 8 <= buf.length) {
      if (disk.subarray(pos, pos + 8).every((b) => b === 0)) break; // preallocated zeros
      if (buf.readUInt32BE(pos) !== magic) throw new Error(`${name}: bad magic at ${pos}`);
      const size = buf.readUInt32LE(pos + 4);
      if (pos + 8 + size > buf.length) break; // cut off
      const raw = buf.subarray(pos + 8, pos + 8 + size);
      const h = parseHeader(raw);
      out.push({ file: name, offset: pos + 8, raw, hash: h.hash, prev: h.prev });
      pos += 8 + size;
    }
  }
  return out;
}

/**
 * The best chain of a list of records: linked by prev from `genesis`, most blocks (all
 * generated blocks carry equal work), ties to the tip that comes first.
 * @returns {string[]} hashes by height
 */
function longestChain(records, genesis) {
  const byHash = new Map();
  records.forEach((r, seq) => { if (!byHash.has(r.hash)) byHash.set(r.hash, { ...r, seq }); });
  const height = new Map([[genesis, 0]]);
  if (!byHash.has(genesis)) return [];
  const depth = (hash) => {
    const path_ = [];
    let h = hash;
    while (!height.has(h)) {
      const r = byHash.get(h);
      if (!r) {
        for (const p of path_) height.set(p, -1);
        return -1;
      }
      path_.push(h);
      h = r.prev;
    }
    let d = height.get(h);
    for (let i = path_.length - 1; i >= 0; i--) height.set(path_[i], d < 0 ? -1 : ++d);
    return height.get(hash);
  };
  let best = null;
  for (const r of byHash.values()) {
    const d = depth(r.hash);
    if (d >= 0 && (!best || d > best.d || (d === best.d && r.seq < best.seq))) best = { hash: r.hash, d, seq: r.seq };
  }
  const chain = new Array(best.d + 1);
  for (let h = best.hash, i = best.d; i >= 0; i--) {
    chain[i] = h;
    h = byHash.get(h).prev;
  }
  return chain;
}

module.exports = { readDirRecords, longestChain };
