'use strict';

/**
 * Rows in key order: the order every commit of the row cache writes them in (a B-tree
 * insert in key order walks the same pages one after another), on whichever thread commits.
 */

/**
 * Entries in key order: bucketed by their first two key bytes (a counting sort), then each
 * bucket sorted by the next four packed with the entry's place in the bucket, compared in
 * full only where those six bytes tie. Keys here are hashes or big-endian numbers after a
 * table byte, so six bytes almost always decide.
 * @param {Buffer[]} chunks where the keys are: entry e's key is chunks[floor(keyAt[e] / chunkSize)] at keyAt[e] % chunkSize
 * @param {number} chunkSize
 * @param {ArrayLike<number>} keyAt
 * @param {ArrayLike<number>} keyLen
 * @param {ArrayLike<number>} list the entries to order
 * @returns {Int32Array}
 */
function sortRows(chunks, chunkSize, keyAt, keyLen, list) {
  const n = list.length;
  const byte = (e, i) => (i < keyLen[e] ? chunks[Math.floor(keyAt[e] / chunkSize)][(keyAt[e] % chunkSize) + i] : -1);
  const keyOf = (e) => {
    const o = keyAt[e] % chunkSize;
    return chunks[Math.floor(keyAt[e] / chunkSize)].subarray(o, o + keyLen[e]);
  };
  const whole = (x, y) => Buffer.compare(keyOf(x), keyOf(y));
  const head = new Uint16Array(n);
  const counts = new Int32Array(65537);
  for (let i = 0; i < n; i++) {
    const e = list[i];
    // a key of one byte sorts before every longer key with that byte
    const h = (byte(e, 0) << 8) | Math.max(0, byte(e, 1));
    head[i] = h;
    counts[h + 1]++;
  }
  for (let b = 1; b <= 65536; b++) counts[b] += counts[b - 1];
  const bucketed = new Int32Array(n);
  const fill = counts.slice(0, 65536);
  for (let i = 0; i < n; i++) bucketed[fill[head[i]]++] = list[i];
  const out = new Int32Array(n);
  const SLOT = 0x200000;
  let packed = new Float64Array(1024);
  for (let b = 0; b < 65536; b++) {
    const from = counts[b];
    const to = counts[b + 1];
    const m = to - from;
    if (m === 0) continue;
    if (m === 1) {
      out[from] = bucketed[from];
      continue;
    }
    if (m >= SLOT) {
      out.set(Array.from(bucketed.subarray(from, to)).sort(whole), from);
      continue;
    }
    if (packed.length < m) packed = new Float64Array(2 * m);
    const p = packed.subarray(0, m);
    for (let i = 0; i < m; i++) {
      const e = bucketed[from + i];
      const b2 = Math.max(0, byte(e, 2));
      const b3 = Math.max(0, byte(e, 3));
      const b4 = Math.max(0, byte(e, 4));
      const b5 = Math.max(0, byte(e, 5));
      p[i] = (b2 * 0x1000000 + b3 * 0x10000 + b4 * 0x100 + b5) * SLOT + i;
    }
    p.sort();
    for (let i = 0; i < m; i++) out[from + i] = bucketed[from + (p[i] % SLOT)];
    // six bytes tie (or a key shorter than six): settle those runs by the whole key
    for (let i = 1; i < m; i++) {
      const top = Math.floor(p[i - 1] / SLOT);
      if (Math.floor(p[i] / SLOT) !== top) continue;
      let k = i;
      while (k + 1 < m && Math.floor(p[k + 1] / SLOT) === top) k++;
      out.set(Array.from(out.subarray(from + i - 1, from + k + 1)).sort(whole), from + i - 1);
      i = k;
    }
  }
  return out;
}

/**
 * Rows a row cache generation shares with a committer thread (rowcache.js, share()), in key
 * order. Each row is handed out as copies: lmdb-js takes no buffer over shared memory.
 * @param {import('./rowcache').SharedRows} shared
 * @returns {{count: number, each: (fn: (key: Buffer, value: Buffer|null) => void) => void}}
 */
function sharedInOrder(shared) {
  const { chunkSize, keyAt, keyLen, valAt, valLen } = shared;
  const chunks = shared.chunks.map((sab) => Buffer.from(sab));
  const count = keyAt.length;
  const order = sortRows(chunks, chunkSize, keyAt, keyLen, Int32Array.from({ length: count }, (_, i) => i));
  const copy = (at, len) => {
    const o = at % chunkSize;
    return Buffer.from(chunks[Math.floor(at / chunkSize)].subarray(o, o + len));
  };
  return {
    count,
    each(fn) {
      for (let k = 0; k < count; k++) {
        const i = order[k];
        fn(copy(keyAt[i], keyLen[i]), valLen[i] < 0 ? null : copy(valAt[i], valLen[i]));
      }
    },
  };
}

module.exports = { sortRows, sharedInOrder };
