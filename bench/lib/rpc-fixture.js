#!/usr/bin/env node
'use strict';

/**
 * A bench fixture, not a test double: an HTTP JSON-RPC server that answers the calls a block
 * source makes the way bitcoind does, from a blocks dir (the generated chains of
 * bench/gen-chain.js), so a sync over RPC can be measured on a chain no real node here holds.
 *
 *   node bench/lib/rpc-fixture.js --blocks DIR --port N [--user U --pass P] [--network regtest]
 *
 *   node bench/lib/rpc-fixture.js --blocks DIR --mempool-above H …
 *
 *   node bench/lib/rpc-fixture.js --blocks DIR --tip-height H …
 *
 * Prints `ready http://U:P@127.0.0.1:N` when it serves; on SIGTERM prints one JSON line with
 * its CPU time, request counts and calls by method, then exits. The first call of a method it
 * does not answer is said on stderr (`rpc-fixture: no method NAME`).
 *
 * With `--tip-height H` the node's best chain ends at H: the blocks above are not its own (a
 * longer generated chain seen as its prefix, as bench/lib/prefix.js syncs it). With
 * `--served FILE` each block it sends (getblock) is a line `EPOCH_MS HEIGHT` in FILE, written
 * when its answer is made: how far a client has fetched, for clients that do not say how far
 * they have indexed.
 *
 * With `--mempool-above H` the blocks above height H are not the node's yet: its best chain
 * ends at H and the spending transactions of those blocks, in block order, are the pool its
 * mempool is taken from (a mempool the generator made: young spends of the chain and of each
 * other, as a real one). Lines on stdin move the node, each answered `ok TIP COUNT` on stdout:
 *   `mempool N`  the mempool is the pool's first N transactions, but those of blocks at or
 *                below the tip, and those Core would refuse for a missing input (a spend of
 *                the coinbase of a block above the tip, and its descendants)
 *   `tip H`      the best chain ends at H: those blocks' transactions leave the mempool, as
 *                Core drops what a block confirms
 * `getrawmempool` (not verbose) lists the mempool in no particular order (by the txid's last
 * hex digits, standing in for Core's); `getrawtransaction TXID 0` gives a mempool
 * transaction's hex, else Core's -5 (no txindex).
 *
 * Like bitcoind: HTTP/1.1 keep-alive, Basic auth (401 otherwise), JSON-RPC 1.0 and 2.0, batches
 * (an array in, an array out, the reply streamed one answer after another as they are made, so a
 * batch of a whole chain's blocks is never one string), `getblock HASH 0` reads the block's bytes
 * from its blk file and hex-encodes them (Core 23+ does not deserialize for verbosity 0), errors
 * with Core's codes (-5 unknown block, -8 height out of range, -32601 unknown method). Answered:
 * getbestblockhash, getblockcount, getblockhash, getblock (verbosity 0), getblockheader (bool),
 * getchaintips, getrawmempool (not verbose), getrawtransaction (not verbose); and what the
 * Electrum servers ask of a node before and while they sync (ElectrumX 2, Fulcrum 2), answered
 * as a Bitcoin Core 31 on regtest with txindex would: getnetworkinfo (version 310000,
 * subversion `/Satoshi:31.0.0/`), getblockchaininfo, getindexinfo (txindex, txospenderindex),
 * getmempoolinfo, estimatesmartfee (no estimate, as Core says without data), getzmqnotifications
 * (none), uptime, help.
 */

const fs = require('node:fs');
const http = require('node:http');
const readline = require('node:readline');
const { parseArgs } = require('node:util');
const { BlocksDirSource } = require('../../lib/sources/blocksdir');
const { parseHeader } = require('../../lib/chain/header');
const { parseBlock } = require('../../lib/chain/block');
const { toDisplayHex } = require('../../lib/chain/hash');

const { values: args } = parseArgs({
  options: {
    blocks: { type: 'string' },
    port: { type: 'string', default: '0' },
    user: { type: 'string', default: 'bench' },
    pass: { type: 'string', default: 'bench' },
    network: { type: 'string', default: 'regtest' },
    'mempool-above': { type: 'string' },
    'tip-height': { type: 'string' },
    served: { type: 'string' },
  },
});

class RpcFailure extends Error {
  constructor(code, message) {
    super(message);
    this.rpcCode = code;
  }
}

async function main() {
  const source = new BlocksDirSource({ dir: args.blocks, network: args.network });
  await source.scan();
  const counts = { requests: 0, calls: 0, bytesOut: 0, methods: {} };
  // --tip-height: the best chain ends there (a longer chain's prefix)
  const chainEnd = args['tip-height'] === undefined ? source.tip().height : Math.min(Number(args['tip-height']), source.tip().height);
  if (!(chainEnd >= 0)) throw new Error(`--tip-height takes a height, got ${args['tip-height']}`);
  const mempool = args['mempool-above'] === undefined ? null : await mempoolPool(source, Number(args['mempool-above']), chainEnd);
  const tip = () => {
    const height = mempool ? mempool.tipHeight : chainEnd;
    return { height, hash: source.hashAt(height) };
  };
  const started = Date.now();
  const headers = new Map(); // height → parsed header (getblockchaininfo's median time past)
  const header = async (height) => {
    if (!headers.has(height)) {
      for await (const b of source.blocks(height, height)) headers.set(height, parseHeader(b.raw));
    }
    return headers.get(height);
  };

  // written at once (one short line a block): all of it is in the file when SIGTERM's line is printed
  const served = args.served ? fs.openSync(args.served, 'w') : null;
  const readBlock = async (hash) => {
    const height = typeof hash === 'string' ? source.heightOf(hash) : null;
    if (height === null || height > tip().height) throw new RpcFailure(-5, 'Block not found');
    for await (const b of source.blocks(height, height)) return { height, raw: b.raw };
    throw new RpcFailure(-5, 'Block not found');
  };

  const methods = {
    getbestblockhash: async () => JSON.stringify(tip().hash),
    getblockcount: async () => String(tip().height),
    getblockhash: async ([height]) => {
      const hash = Number.isInteger(height) && height <= tip().height ? source.hashAt(height) : null;
      if (!hash) throw new RpcFailure(-8, 'Block height out of range');
      return JSON.stringify(hash);
    },
    getblock: async ([hash, verbosity = 1]) => {
      if (verbosity !== 0 && verbosity !== false) throw new RpcFailure(-8, 'this fixture serves verbosity 0 only');
      const { height, raw } = await readBlock(hash);
      if (served !== null) fs.writeSync(served, `${Date.now()} ${height}\n`);
      return `"${raw.toString('hex')}"`;
    },
    getblockheader: async ([hash, verbose = true]) => {
      const { height, raw } = await readBlock(hash);
      if (!verbose) return `"${raw.toString('hex', 0, 80)}"`;
      const h = parseHeader(raw);
      const top = tip().height;
      return JSON.stringify({
        hash: h.hash, confirmations: top - height + 1, height, version: h.version, merkleroot: Buffer.from(h.merkleRoot).reverse().toString('hex'),
        time: h.time, nonce: h.nonce, bits: h.bits.toString(16).padStart(8, '0'),
        ...(height > 0 ? { previousblockhash: h.prev } : {}), ...(height < top ? { nextblockhash: source.hashAt(height + 1) } : {}),
      });
    },
    getchaintips: async () => JSON.stringify([{ height: tip().height, hash: tip().hash, branchlen: 0, status: 'active' }]),
    getrawmempool: async ([verbose = false]) => {
      if (verbose) throw new RpcFailure(-8, 'this fixture answers getrawmempool false only');
      return mempool ? mempool.listJson() : '[]';
    },
    // what the Electrum servers ask before and while they sync (ElectrumX 2 wants Core >= 31 and
    // its txindex and txospenderindex; Fulcrum 2 takes /Satoshi: as Bitcoin Core, segwit)
    getnetworkinfo: async () => JSON.stringify({
      version: 310000, subversion: '/Satoshi:31.0.0/', protocolversion: 70016, localservices: '0000000000000c09',
      localservicesnames: ['NETWORK', 'WITNESS', 'NETWORK_LIMITED', 'P2P_V2'], localrelay: true, timeoffset: 0,
      networkactive: true, connections: 0, connections_in: 0, connections_out: 0, networks: [],
      relayfee: 0.00001, incrementalfee: 0.00001, localaddresses: [], warnings: [],
    }),
    getblockchaininfo: async () => {
      const t = tip();
      const times = [];
      for (let h = Math.max(0, t.height - 10); h <= t.height; h++) times.push((await header(h)).time);
      const last = await header(t.height);
      return JSON.stringify({
        chain: args.network === 'main' ? 'main' : args.network === 'testnet' ? 'test' : args.network,
        blocks: t.height, headers: t.height, bestblockhash: t.hash, bits: last.bits.toString(16).padStart(8, '0'),
        difficulty: difficulty(last.bits), time: last.time, mediantime: times.sort((a, b) => a - b)[times.length >> 1],
        verificationprogress: 1, initialblockdownload: false,
        chainwork: source.chainWork(t.hash).toString(16).padStart(64, '0'), size_on_disk: 0, pruned: false, warnings: [],
      });
    },
    getindexinfo: async () => {
      const at = { synced: true, best_block_height: tip().height };
      return JSON.stringify({ txindex: at, txospenderindex: at });
    },
    getmempoolinfo: async () => {
      const txs = mempool ? mempool.current() : [];
      const bytes = txs.reduce((n, t) => n + t.raw.length, 0);
      return JSON.stringify({
        loaded: true, size: txs.length, bytes, usage: bytes, total_fee: 0, maxmempool: 300000000, mempoolminfee: 0.00001,
        minrelaytxfee: 0.00001, incrementalrelayfee: 0.00001, unbroadcastcount: 0, fullrbf: true,
      });
    },
    estimatesmartfee: async ([blocks = 1]) => JSON.stringify({ errors: ['Insufficient data or no feerate found'], blocks }),
    getzmqnotifications: async () => '[]',
    uptime: async () => String(Math.floor((Date.now() - started) / 1000)),
    help: async ([command]) => JSON.stringify(command ? `${command} ...\n(a bench fixture: no help text)` : '== Blockchain ==\ngetbestblockhash\ngetblock "blockhash" ( verbosity )\n'),
    getrawtransaction: async ([txid, verbose = 0]) => {
      if (verbose !== 0 && verbose !== false) throw new RpcFailure(-8, 'this fixture answers getrawtransaction TXID 0 only');
      const tx = mempool && mempool.get(txid);
      if (!tx) throw new RpcFailure(-5, 'No such mempool or blockchain transaction. Use gettransaction for wallet transactions.');
      return `"${tx.raw.toString('hex')}"`;
    },
  };

  /** One request object → its reply as JSON text (result JSON spliced in, as bitcoind writes it). */
  const answer = async (req) => {
    counts.calls++;
    const id = JSON.stringify(req && req.id !== undefined ? req.id : null);
    const v2 = req && req.jsonrpc === '2.0';
    const head = v2 ? '{"jsonrpc":"2.0",' : '{';
    const name = req && typeof req.method === 'string' ? req.method : '';
    const fn = Object.hasOwn(methods, name) ? methods[name] : null;
    if (!Object.hasOwn(counts.methods, name) && !fn) process.stderr.write(`rpc-fixture: no method ${JSON.stringify(name)}\n`);
    counts.methods[name] = (counts.methods[name] || 0) + 1;
    try {
      if (!fn) throw new RpcFailure(-32601, 'Method not found');
      const result = await fn(Array.isArray(req.params) ? req.params : []);
      return { ok: true, text: `${head}"result":${result}${v2 ? '' : ',"error":null'},"id":${id}}` };
    } catch (err) {
      if (!(err instanceof RpcFailure)) throw err;
      const error = JSON.stringify({ code: err.rpcCode, message: err.message });
      return { ok: false, code: err.rpcCode, text: `${head}${v2 ? '' : '"result":null,'}"error":${error},"id":${id}}` };
    }
  };

  const expected = `Basic ${Buffer.from(`${args.user}:${args.pass}`).toString('base64')}`;
  const server = http.createServer((req, res) => {
    counts.requests++;
    if (req.headers.authorization !== expected) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="jsonrpc"' });
      res.end();
      return;
    }
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      let body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString());
      } catch {
        res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end('{"result":null,"error":{"code":-32700,"message":"Parse error"},"id":null}\n');
        return;
      }
      if (Array.isArray(body)) {
        // bitcoind answers a batch in order, one at a time; the reply goes out as it is made
        // (chunked), so a batch of many blocks is never held whole: one answer at a time, each
        // written once the connection has taken the one before
        res.writeHead(200, { 'Content-Type': 'application/json' });
        try {
          for (let k = 0; k < body.length; k++) {
            const text = `${k ? ',' : '['}${(await answer(body[k])).text}`;
            counts.bytesOut += Buffer.byteLength(text);
            if (!res.write(text)) await drained(res);
          }
          const end = `${body.length ? '' : '['}]\n`;
          counts.bytesOut += end.length;
          res.end(end);
        } catch (err) {
          // the client went away mid-batch, or a block could not be read: the reply is cut short
          if (!res.destroyed) process.stderr.write(`rpc-fixture: batch reply failed: ${err.message}\n`);
          res.destroy();
        }
        return;
      }
      const r = await answer(body);
      // JSON-RPC 1.x errors come with HTTP 500 (404 for an unknown method), as bitcoind sends them
      const status = !r.ok && body.jsonrpc !== '2.0' ? (r.code === -32601 ? 404 : 500) : 200;
      const text = `${r.text}\n`;
      counts.bytesOut += Buffer.byteLength(text);
      res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
      res.end(text);
    });
  });
  server.keepAliveTimeout = 30000;
  await new Promise((resolve) => server.listen(Number(args.port), '127.0.0.1', resolve));
  const { port } = server.address();
  process.stdout.write(`ready http://${args.user}:${args.pass}@127.0.0.1:${port}\n`);
  if (mempool) {
    readline.createInterface({ input: process.stdin }).on('line', (line) => {
      const [cmd, arg] = line.trim().split(/\s+/);
      if (cmd === 'mempool') mempool.size = Number(arg);
      else if (cmd === 'tip') mempool.tipHeight = Math.min(Number(arg), chainEnd);
      else return;
      mempool.changed();
      process.stdout.write(`ok ${mempool.tipHeight} ${mempool.current().length}\n`);
    });
  }
  process.on('SIGTERM', () => {
    const cpu = process.cpuUsage();
    process.stdout.write(`${JSON.stringify({ cpuMs: (cpu.user + cpu.system) / 1000, ...counts })}\n`);
    server.close();
    server.closeAllConnections();
    source.close().finally(() => process.exit(0));
  });
}

/**
 * The transactions of the blocks above `above`, which the node has not seen in a block yet:
 * the pool its mempool is drawn from.
 */
async function mempoolPool(source, above, top) {
  const txs = [];
  /** the coinbases of those blocks, by display txid: their heights */
  const coinbases = new Map();
  for await (const b of source.blocks(above + 1, top)) {
    const block = parseBlock(b.raw, { verifyMerkle: false });
    coinbases.set(block.txs[0].hash, b.height);
    for (const tx of block.txs.slice(1)) {
      const id = tx.hash;
      // the list's order (the txid's last 16 hex digits) as two numbers, compared once each
      const hi = parseInt(id.slice(48, 56), 16);
      const lo = parseInt(id.slice(56), 16);
      txs.push({ id, hi, lo, height: b.height, raw: Buffer.from(tx.raw), parents: tx.inputs.map((i) => toDisplayHex(i.txid)) });
    }
  }
  const byId = new Map(txs.map((t) => [t.id, t]));
  let list = null;
  let inPool = null;
  const pool = {
    tipHeight: above,
    size: 0,
    changed() {
      list = null;
      inPool = null;
    },
    /**
     * the mempool: of the pool's first `size` transactions, those the best chain does not hold,
     * but one that spends the coinbase of a block the node does not have yet, and its
     * descendants: Core refuses those (missing inputs), so its mempool never lists them
     */
    current() {
      if (!list) {
        const refused = new Set();
        list = txs.slice(0, pool.size).filter((t) => {
          if (t.height <= pool.tipHeight) return false;
          // block order: a parent comes before its children
          if (t.parents.some((p) => coinbases.get(p) > pool.tipHeight || refused.has(p))) {
            refused.add(t.id);
            return false;
          }
          return true;
        });
        inPool = new Set(list.map((t) => t.id));
        // by numbers, not by the digits' strings: that sort took the fixture ~300 ms of every
        // poll whose list changed at 150,000 (73 ms by numbers), where Core sorts its mempool
        // by ancestor count and score, numbers too
        list = [...list].sort((x, y) => x.hi - y.hi || x.lo - y.lo);
      }
      return list;
    },
    listJson() {
      return JSON.stringify(pool.current().map((t) => t.id));
    },
    get(id) {
      pool.current();
      return inPool.has(id) ? byId.get(id) : null;
    },
  };
  return pool;
}

/** Core's difficulty of a header's compact target: the highest target (0x1d00ffff) over its own. */
function difficulty(bits) {
  const target = (bits & 0xffffff) * 256 ** ((bits >>> 24) - 3);
  return (0xffff * 256 ** (0x1d - 3)) / target;
}

/** Resolves when `res` can take more, or rejects when its connection closes first. */
function drained(res) {
  return new Promise((resolve, reject) => {
    const done = (err) => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      if (err) reject(err);
      else resolve();
    };
    const onDrain = () => done();
    const onClose = () => done(new Error('the client closed the connection'));
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
