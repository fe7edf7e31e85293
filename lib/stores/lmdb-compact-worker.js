'use strict';

/**
 * The writing half of a compaction (lmdb-compact.js), on a thread of its own: while the caller
 * reads the next rows of the index, this thread appends the last ones to the copy. Each
 * message is a chunk of rows in key order, packed as {u16 key length, u32 value length, key,
 * value} (little-endian), with `first`, the number of its first row. A chunk is appended in
 * one write transaction and goes back to be filled again. `{end: true}` closes the copy,
 * answers with its row count and ends the thread.
 */

const { parentPort, workerData } = require('node:worker_threads');
const { open } = require('lmdb');

const out = open({
  path: workerData.path,
  encoding: 'binary',
  keyEncoding: 'binary',
  pageSize: workerData.pageSize,
  useWritemap: true,
  mapSize: workerData.mapSize,
});

/** a chunk failed: the copy is dropped, and the chunks after it are not written */
let failed = false;

parentPort.on('message', async (m) => {
  if (m.end) {
    // the thread ends itself once the copy is closed: terminated while inside LMDB, a worker
    // takes the process down with it
    try {
      const entries = failed ? -1 : out.getStats().entryCount;
      await out.close();
      parentPort.postMessage({ closed: true, entries });
    } catch (err) {
      parentPort.postMessage({ error: { message: err.message, code: err.code } });
    } finally {
      parentPort.close();
    }
    return;
  }
  if (failed) return;
  try {
    const b = Buffer.from(m.chunk.buffer, m.chunk.byteOffset, m.chunk.byteLength);
    out.transactionSync(() => {
      for (let i = 0, at = 0; i < m.rows; i++) {
        const keyEnd = at + 6 + b.readUInt16LE(at);
        const valueEnd = keyEnd + b.readUInt32LE(at + 2);
        // an append refused: the key is not above the copy's last (never, from one range)
        if (!out.putSync(b.subarray(at + 6, keyEnd), b.subarray(keyEnd, valueEnd), { append: true })) {
          throw new Error(`row ${m.first + i} of the copy is not above the one before it`);
        }
        at = valueEnd;
      }
    });
    parentPort.postMessage({ chunk: m.chunk }, [m.chunk.buffer]);
  } catch (err) {
    failed = true;
    parentPort.postMessage({ error: { message: err.message, code: err.code } });
  }
});
