'use strict';

// Runs inside a worker thread: fetches raw blocks by hash with batched `getblock HASH 0`,
// `inflight` requests at once, up to `aheadBytes` of blocks the main thread has not taken yet,
// and transfers them (one ArrayBuffer per answer). The main thread's event loop may be busy
// for seconds (a commit); fetching goes on meanwhile, as file reads do for a blocks dir.
//
// Messages in:  {type: 'stream', id, hashes: Uint8Array (32 bytes each), opts}
//               {type: 'ack', id, bytes}      the main thread took that many bytes
//               {type: 'cancel', id}          stop the stream
//               {type: 'abort'}               stop everything (the run was aborted)
// Messages out: {type: 'blocks', id, start, buffer, sizes, stats}  blocks start.. in order
//               {type: 'retry', error, attempt, delayMs, what, stats}  a failed request, to be retried
//               {type: 'missing', id, index, error, stats}          the node gave an error for block `index`
//               {type: 'error', id, error, stats}                   the stream failed
//               {type: 'end', id, stats}

const { parentPort, workerData } = require('node:worker_threads');
const { RpcClient } = require('./rpc');
const { NodeClient } = require('./client');
const { readCookie } = require('./endpoint');
const { toDisplayHex } = require('../chain/hash');
const { NodeError } = require('../errors');

const controller = new AbortController();
const cfg = workerData;
let creds = cfg.cookieFile ? null : { user: cfg.user, pass: cfg.pass };
const rpc = new RpcClient({
  url: cfg.url,
  display: cfg.display,
  credentials: (reload) => {
    if (cfg.cookieFile && (reload || !creds)) creds = readCookie(cfg.cookieFile);
    return creds;
  },
  reloadable: Boolean(cfg.cookieFile),
  timeoutMs: cfg.timeoutMs,
  retryMs: cfg.retryMs,
  maxDelayMs: cfg.maxDelayMs,
  jsonrpc: cfg.jsonrpc,
  maxSockets: cfg.maxSockets,
  signal: controller.signal,
  // the main thread's client counts and reports these (metrics, the retry line)
  onRetry: ({ error, attempt, delayMs, what }) => post({ type: 'retry', error: serialize(error), attempt, delayMs, what }),
});
const client = new NodeClient(rpc);
const streams = new Map();

parentPort.on('message', (msg) => {
  if (msg.type === 'stream') {
    const s = { id: msg.id, unacked: 0, cancelled: false, wake: null };
    streams.set(msg.id, s);
    run(s, Buffer.from(msg.hashes.buffer, msg.hashes.byteOffset, msg.hashes.byteLength), msg.opts)
      .catch((err) => post({ type: 'error', id: s.id, error: serialize(err) }))
      .finally(() => streams.delete(s.id));
  } else if (msg.type === 'ack') {
    const s = streams.get(msg.id);
    if (s) {
      s.unacked -= msg.bytes;
      wake(s);
    }
  } else if (msg.type === 'cancel') {
    const s = streams.get(msg.id);
    if (s) {
      s.cancelled = true;
      wake(s);
    }
  } else if (msg.type === 'abort') {
    controller.abort();
    for (const s of streams.values()) wake(s);
  }
});

function wake(s) {
  if (s.wake) {
    const w = s.wake;
    s.wake = null;
    w();
  }
}

function post(msg, transfer) {
  parentPort.postMessage({ ...msg, stats: rpc.stats }, transfer);
}

async function run(s, hashes, opts) {
  const count = hashes.length / 32;
  const pending = [];
  let next = 0;
  let perRequest = Math.min(4, opts.maxBlocksPerRequest);
  const issue = () => {
    const n = Math.min(perRequest, count - next);
    const start = next;
    next += n;
    const list = [];
    for (let k = start; k < start + n; k++) list.push(toDisplayHex(hashes.subarray(32 * k, 32 * k + 32)));
    const p = client.getRawBlocks(list).then((items) => ({ start, items }));
    p.catch(() => {}); // observed when its turn comes
    pending.push(p);
  };
  const room = () => !s.cancelled && !controller.signal.aborted && next < count && pending.length < opts.inflight && s.unacked < opts.aheadBytes;
  while (room()) issue();
  while (pending.length && !s.cancelled) {
    const { start, items } = await pending.shift();
    const bad = items.findIndex((it) => it.error);
    const good = bad < 0 ? items : items.slice(0, bad);
    if (good.length) {
      // one buffer of its own per answer: small Buffers may sit in Node's shared pool,
      // which must never be transferred
      const sizes = good.map((it) => it.raw.length);
      const total = sizes.reduce((a, b) => a + b, 0);
      const buffer = new ArrayBuffer(total);
      const view = new Uint8Array(buffer);
      let at = 0;
      for (const it of good) {
        view.set(it.raw, at);
        at += it.raw.length;
      }
      s.unacked += total;
      post({ type: 'blocks', id: s.id, start, buffer, sizes }, [buffer]);
      // Sets the next request's size: about requestBytes by this answer's blocks, growing at
      // most twofold per answer (sizes can jump, and a request is sized before its blocks
      // are seen), shrinking at once.
      const fit = Math.floor(opts.requestBytes / Math.max(1, total / good.length));
      perRequest = Math.max(1, Math.min(opts.maxBlocksPerRequest, fit, 2 * perRequest));
    }
    if (bad >= 0) {
      post({ type: 'missing', id: s.id, index: start + bad, error: serialize(items[bad].error) });
      return;
    }
    while (!room() && !s.cancelled && !controller.signal.aborted && next < count && pending.length === 0) {
      await new Promise((resolve) => { s.wake = resolve; }); // the main thread is behind: wait for its acks
    }
    while (room()) issue();
  }
  if (s.cancelled) return;
  if (next < count) throw new NodeError('ERR_ABORTED', `stopped fetching blocks from the node at ${cfg.display}`);
  post({ type: 'end', id: s.id });
}

function serialize(err) {
  return { name: err.name, code: err.code, message: err.message, details: err.details };
}
