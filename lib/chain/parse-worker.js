'use strict';

// Runs inside a worker thread: raw block bytes in, BlockColumns out (transferred, not copied).
const { parentPort } = require('node:worker_threads');
const { parseColumns, transferList } = require('./columns');

parentPort.on('message', ({ id, bytes, verifyMerkle }) => {
  try {
    const cols = parseColumns(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { verifyMerkle });
    parentPort.postMessage({ id, cols }, transferList(cols));
  } catch (err) {
    parentPort.postMessage({ id, error: { name: err.name, code: err.code, message: err.message, details: err.details } });
  }
});
