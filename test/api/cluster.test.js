'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { syncedFixture, request, referenceIndex, HAL, SATOSHI, NO_UNCONFIRMED } = require('./helpers');
const { startCli: cli } = require('../helpers/cli');
const { MAINNET_439 } = require('../helpers/fixtures');

/** Byte offsets of the fixture's block records (magic + size + block). */
function recordEnds() {
  const buf = fs.readFileSync(MAINNET_439);
  const ends = [];
  for (let pos = 0; pos < buf.length;) {
    pos += 8 + buf.readUInt32LE(pos + 4);
    ends.push(pos);
  }
  return { buf, ends };
}

describe('api cluster: addrindex serve with two workers', function () {
  this.timeout(60000);
  let fixture;
  let serve;
  let url;
  const ref = () => referenceIndex();

  before(async () => {
    // the index starts at height 149; a sync process brings it to 438 during the test
    fixture = await syncedFixture(150);
    serve = cli(['serve', '--datadir', fixture.datadir, '--workers', '2', '--port', '0', '--grace-ms', '5000']);
    [, url] = await serve.waitFor(/listening on (http:\/\/\S+)/);
  });
  after(async () => {
    if (serve && serve.exitCode === null) {
      serve.kill('SIGKILL');
      await serve.exited;
    }
    if (fixture) await fixture.cleanup();
  });

  it('every answer is consistent with a committed tip while a sync process appends blocks', async () => {
    const sync = cli(['sync', '--blocks-dir', fixture.blocksDir, '--datadir', fixture.datadir, '--follow',
      '--poll-ms', '20', '--batch-blocks', '7', '--threads', '0', '--quiet']);
    const { buf, ends } = recordEnds();
    const blk = path.join(fixture.blocksDir, 'blk00000.dat');
    let written = 150;
    let appending = true;
    // the node "downloads" blocks: the blocks file grows 12 blocks at a time
    const appender = (async () => {
      while (written < ends.length) {
        const next = Math.min(ends.length, written + 12);
        fs.appendFileSync(blk, buf.subarray(ends[written - 1], ends[next - 1]));
        written = next;
        await new Promise((r) => setTimeout(r, 40));
      }
      appending = false;
    })();

    const addrs = [SATOSHI, HAL, ...ref().busiest(6)];
    const problems = [];
    const tips = new Set();
    let answers = 0;
    const summaryAt = new Map(); // address -> Set of JSON summaries the reference has at some height
    const anySummary = (a) => {
      if (!summaryAt.has(a)) {
        const set = new Set();
        for (let h = 0; h <= 438; h++) {
          const s = ref().at(a, h).summary;
          set.add(JSON.stringify(s ? {
            funded_txo_count: s.fundedCount, funded_txo_sum: s.received, spent_txo_count: s.spentCount, spent_txo_sum: s.sent, tx_count: s.txCount,
          } : { funded_txo_count: 0, funded_txo_sum: 0, spent_txo_count: 0, spent_txo_sum: 0, tx_count: 0 }));
        }
        summaryAt.set(a, set);
      }
      return summaryAt.get(a);
    };

    const client = async (k) => {
      for (let i = 0; appending || i < 5; i++) {
        const a = addrs[(i + k) % addrs.length];
        const which = (i + k) % 4;
        let r;
        if (which === 0) {
          r = await request(`${url}/api/v1/address/${a}`);
          if (r.status === 200) {
            const { tip, address, scripthash, unconfirmed, ...summary } = r.json;
            tips.add(tip.height);
            const want = ref().at(a, tip.height).summary;
            const z = { balance: 0, received: 0, sent: 0, txCount: 0, fundedCount: 0, spentCount: 0, utxoCount: 0, firstHeight: null, lastHeight: null };
            try { assert.deepEqual(summary, want || z); assert.deepEqual(unconfirmed, NO_UNCONFIRMED); } catch (e) { problems.push(`summary ${a} at ${tip.height}: ${e.message}`); }
            if (summary.lastHeight !== null && summary.lastHeight > tip.height) problems.push(`lastHeight ${summary.lastHeight} above tip ${tip.height}`);
          }
        } else if (which === 1) {
          r = await request(`${url}/api/v1/address/${a}/history?order=desc&limit=20`);
          if (r.status === 200) {
            tips.add(r.json.tip.height);
            const want = [...ref().at(a, r.json.tip.height).history].reverse().slice(0, 20);
            try { assert.deepEqual(r.json.entries, want); } catch (e) { problems.push(`history ${a} at ${r.json.tip.height}: ${e.message}`); }
          }
        } else if (which === 2) {
          r = await request(`${url}/api/v1/addresses/history`, { method: 'POST', body: { addresses: addrs, limit: 1000 } });
          if (r.status === 200) {
            const h = r.json.tip.height;
            tips.add(h);
            const merged = new Set(addrs.flatMap((x) => ref().at(x, h).history.map((e) => e.txid)));
            if (r.json.entries.length !== merged.size || r.json.entries.some((e) => !merged.has(e.txid) || e.height > h)) {
              problems.push(`multi-history at ${h}: ${r.json.entries.length} entries, reference ${merged.size}`);
            }
          }
        } else {
          r = await request(`${url}/api/address/${a}`);
          if (r.status === 200 && !anySummary(a).has(JSON.stringify(r.json.chain_stats))) {
            problems.push(`esplora stats of ${a} match no committed height: ${JSON.stringify(r.json.chain_stats)}`);
          }
        }
        answers++;
        if (r.status !== 200) problems.push(`${r.status} ${r.text.slice(0, 200)}`);
      }
    };
    await Promise.all([appender, client(0), client(1), client(2), client(3)]);
    // let the sync catch up, then stop it the way an operator would
    for (let i = 0; i < 200; i++) {
      const s = await request(`${url}/api/v1/status`);
      if (s.json.tip.height === 438) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    sync.kill('SIGTERM');
    assert.equal((await sync.exited).code, 0, sync.lines.join('\n'));
    const final = await request(`${url}/api/v1/status`);
    assert.equal(final.json.tip.height, 438);
    assert.deepEqual(problems, []);
    assert.ok(tips.size >= 5, `answers saw only ${tips.size} distinct tips: ${[...tips]}`);
    assert.ok(answers > 100, `${answers} answers`);
  });

  it('a killed worker is replaced and the service keeps answering', async () => {
    const before = serve.lines.length;
    const pids = serve.lines.map((l) => l.match(/worker (\d+) listening/)).filter(Boolean).map((m) => Number(m[1]));
    assert.equal(pids.length, 2);
    process.kill(pids[0], 'SIGKILL');
    await serve.waitFor(new RegExp(`worker ${pids[0]} killed by SIGKILL; starting a replacement`), 10000, before);
    const [, fresh] = await serve.waitFor(/worker (\d+) listening/, 10000, before);
    assert.ok(!pids.includes(Number(fresh)));
    const answers = await Promise.all(Array.from({ length: 40 }, () => request(`${url}/api/v1/address/${HAL}`)));
    assert.deepEqual(answers.map((r) => r.status), new Array(40).fill(200));
  });

  it('SIGTERM drains: a request in flight is answered, then the process exits 0', async () => {
    const { port, hostname } = new URL(url);
    const body = JSON.stringify({ addresses: [HAL, SATOSHI] });
    const sock = net.connect(Number(port), hostname);
    await new Promise((resolve) => sock.once('connect', resolve));
    let answer = '';
    sock.on('data', (d) => { answer += d; });
    const closed = new Promise((resolve) => sock.on('close', resolve));
    // headers and half the body now; the rest after the primary got SIGTERM
    sock.write(`POST /api/v1/addresses/history HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`);
    await new Promise((r) => setTimeout(r, 200));
    serve.kill('SIGTERM');
    await serve.waitFor(/SIGTERM: draining/);
    await new Promise((r) => setTimeout(r, 300));
    sock.write(body.slice(10));
    await closed;
    const [head, payload] = answer.split('\r\n\r\n');
    assert.match(head, /^HTTP\/1\.1 200 /);
    assert.match(head, /\r\nconnection: close/i);
    assert.equal(JSON.parse(payload).entries.length, ref().at(SATOSHI).history.length);
    const { code } = await serve.exited;
    assert.equal(code, 0, serve.lines.join('\n'));
    assert.ok(serve.lines.some((l) => /stopped/.test(l)));
    // nothing listens any more
    await assert.rejects(request(`${url}/api/v1/status`));
  });
});
