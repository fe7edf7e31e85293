'use strict';

/**
 * A worker process for the conformance suite's forwarding-store test: it holds a
 * ForwardedStore over its IPC channel (as a `serve` worker does) and runs the calls its parent
 * sends, answering each with the result or the error's class, code and message.
 */

const { ForwardedStore } = require('../../lib/cluster/forward');

const store = new ForwardedStore(process);
process.on('message', async (m) => {
  if (!m || m.type !== 'test-call') return;
  try {
    const result = await store[m.method](...m.args.map(revive));
    process.send({ type: 'test-result', id: m.id, result });
  } catch (err) {
    process.send({ type: 'test-result', id: m.id, error: { name: err.constructor.name, code: err.code, message: err.message } });
  }
});
process.on('disconnect', () => process.exit(0));

/** Buffers arrive as Uint8Arrays through the structured clone. */
function revive(v) {
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  if (Array.isArray(v)) return v.map(revive);
  return v;
}
