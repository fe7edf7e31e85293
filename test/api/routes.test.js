'use strict';

const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const http = require('node:http');
const bitcore = require('bitcore-lib');
const { syncedFixture, syncedGenerated, startServer, request, referenceIndex, HAL, SATOSHI, TX170, NO_UNCONFIRMED } = require('./helpers');
const { LIMITS } = require('../../lib/api/validate');

const TIP = { height: 438, hash: '0000000025c6b644f8add734be7e666fa4afa43ca0204d623a0c0b1fd2104c7a' };
// valid mainnet addresses that never appear in the first 439 blocks
const UNUSED = '1BoatSLRHtKNngkdXEeobR76b53LETtpyT';
const UNUSED_SEGWIT = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';

/** Script hashes of an address, computed with bitcore-lib: [Electrum (reversed), Esplora (natural)]. */
function scripthashes(address) {
  const script = bitcore.Script.buildPublicKeyHashOut(new bitcore.Address(address)).toBuffer();
  const sha = crypto.createHash('sha256').update(script).digest();
  return { electrum: Buffer.from(sha).reverse().toString('hex'), esplora: sha.toString('hex'), script: script.toString('hex') };
}

describe('api routes over a synced index (real HTTP)', function () {
  let fixture;
  let srv;
  let ref;
  const get = (p, opts) => request(srv.url + p, opts);
  const post = (p, body, opts = {}) => request(srv.url + p, { method: 'POST', body, ...opts });

  before(async () => {
    fixture = await syncedFixture();
    srv = await startServer(fixture.datadir);
    ref = referenceIndex();
  });
  after(async () => {
    if (srv) await srv.close();
    if (fixture) await fixture.cleanup();
  });

  describe('native /api/v1', () => {
    it('status: version, network, store, tip with time, sync lag unknown and said so', async () => {
      const r = await get('/api/v1/status');
      assert.equal(r.status, 200);
      assert.equal(r.json.network, 'main');
      assert.equal(r.json.store, 'lmdb');
      assert.equal(r.json.version, require('../../package.json').version);
      assert.deepEqual(r.json.tip, { ...TIP, time: ref.blocks[438].header.time });
      assert.equal(r.json.sync.lag, null);
      assert.equal(r.json.sync.sourceTip, null);
      assert.match(r.json.sync.reason, /unknown/);
      assert.equal(r.json.limits.pageMax, 1000);
    });

    it('address summary equals the bitcore-lib reference (P2PK outputs count toward the P2PKH address)', async () => {
      for (const a of [HAL, SATOSHI, ...ref.busiest(6)]) {
        const r = await get(`/api/v1/address/${a}`);
        assert.equal(r.status, 200, a);
        const { tip, address, scripthash, unconfirmed, ...summary } = r.json;
        assert.deepEqual(unconfirmed, NO_UNCONFIRMED, 'no mempool snapshot: nothing unconfirmed');
        assert.deepEqual(summary, ref.at(a).summary, a);
        assert.equal(address, a);
        assert.equal(scripthash, scripthashes(a).electrum);
        assert.deepEqual(tip, TIP);
      }
    });

    it('an address the index never saw: 200 with zeros and null heights', async () => {
      for (const a of [UNUSED, UNUSED_SEGWIT, UNUSED_SEGWIT.toUpperCase()]) {
        const r = await get(`/api/v1/address/${a}`);
        assert.equal(r.status, 200);
        assert.equal(r.json.address, a.toLowerCase() === UNUSED_SEGWIT ? UNUSED_SEGWIT : a);
        assert.equal(r.json.balance, 0);
        assert.equal(r.json.txCount, 0);
        assert.equal(r.json.firstHeight, null);
      }
    });

    it('history pages through with the opaque cursor, in both directions, equal to the reference', async () => {
      const want = ref.at(SATOSHI).history;
      for (const order of ['asc', 'desc']) {
        const got = [];
        let cursor = null;
        let pages = 0;
        do {
          const r = await get(`/api/v1/address/${SATOSHI}/history?limit=2&order=${order}${cursor ? `&cursor=${cursor}` : ''}`);
          assert.equal(r.status, 200);
          assert.ok(r.json.entries.length <= 2);
          got.push(...r.json.entries);
          cursor = r.json.next;
          pages++;
        } while (cursor);
        assert.deepEqual(got, order === 'asc' ? want : [...want].reverse());
        assert.equal(pages, Math.ceil(want.length / 2));
      }
      const all = await get(`/api/v1/address/${SATOSHI}/history`);
      assert.deepEqual(all.json.entries, want);
      assert.equal(all.json.next, null);
      assert.equal(all.json.scripthash, scripthashes(SATOSHI).electrum);
    });

    it('history height bounds are inclusive', async () => {
      const want = ref.at(SATOSHI).history.filter((e) => e.height >= 170 && e.height <= 182);
      const r = await get(`/api/v1/address/${SATOSHI}/history?fromHeight=170&toHeight=182`);
      assert.deepEqual(r.json.entries, want);
      assert.ok(want.length >= 2);
    });

    it('history limit: default 50, at most 1000, at least 1; bad cursors and orders are 400', async () => {
      for (const [q, code] of [['limit=1001', 'ERR_BAD_PARAM'], ['limit=0', 'ERR_BAD_PARAM'], ['limit=abc', 'ERR_BAD_PARAM'],
        ['order=up', 'ERR_BAD_PARAM'], ['fromHeight=9&toHeight=3', 'ERR_BAD_PARAM'], ['cursor=AQAAAAC', 'ERR_BAD_CURSOR'],
        ['cursor=nonsense!', 'ERR_BAD_CURSOR'], [`cursor=${'A'.repeat(600)}`, 'ERR_BAD_CURSOR']]) {
        const r = await get(`/api/v1/address/${SATOSHI}/history?${q}`);
        assert.equal(r.status, 400, q);
        assert.equal(r.json.error.code, code, q);
      }
      // a UTXO cursor is not a history cursor
      const u = await get(`/api/v1/address/${SATOSHI}/utxos?limit=1`);
      const h = await get(`/api/v1/address/${SATOSHI}/history?cursor=${u.json.next || 'AgAAAAAAAAAAAA'}`);
      assert.equal(h.status, 400);
      assert.equal(h.json.error.code, 'ERR_BAD_CURSOR');
    });

    it('UTXOs are paged and equal the reference', async () => {
      for (const a of ref.busiest(10)) {
        const got = [];
        let cursor = null;
        do {
          const r = await get(`/api/v1/address/${a}/utxos?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
          assert.equal(r.status, 200);
          got.push(...r.json.utxos);
          cursor = r.json.next;
        } while (cursor);
        assert.deepEqual(got, ref.at(a).utxos, a);
      }
    });

    it('the script-hash twins answer exactly what the address routes answer', async () => {
      const { electrum } = scripthashes(SATOSHI);
      for (const suffix of ['', '/history?limit=3', '/utxos']) {
        const [byAddr, byHash] = await Promise.all([get(`/api/v1/address/${SATOSHI}${suffix}`), get(`/api/v1/scripthash/${electrum}${suffix}`)]);
        assert.equal(byHash.status, 200);
        assert.deepEqual({ ...byHash.json, address: SATOSHI }, byAddr.json);
        assert.equal(byHash.json.address, null);
      }
      // the Esplora (natural) byte order is another script hash: nothing there
      const other = await get(`/api/v1/scripthash/${scripthashes(SATOSHI).esplora}`);
      assert.equal(other.json.txCount, 0);
    });

    it('multi-address history: merged in chain order, a shared tx once naming both, one cursor', async () => {
      const addrs = [HAL, SATOSHI, ...ref.busiest(8).slice(1)];
      const byTxid = new Map();
      for (const a of addrs) {
        for (const e of ref.at(a).history) {
          if (!byTxid.has(e.txid)) byTxid.set(e.txid, { ...e, addresses: [] });
          const m = byTxid.get(e.txid);
          m.funded = m.funded || e.funded;
          m.spent = m.spent || e.spent;
          m.addresses.push(a);
        }
      }
      const pos = new Map(ref.txs.map((t, i) => [t.txid, i]));
      const want = [...byTxid.values()].sort((x, y) => pos.get(x.txid) - pos.get(y.txid));
      const norm = (entries) => entries.map((e) => ({ ...e, addresses: [...e.addresses].sort() }));

      const all = await post('/api/v1/addresses/history', { addresses: [...addrs, HAL], limit: 1000 });
      assert.equal(all.status, 200);
      assert.deepEqual(norm(all.json.entries), norm(want));
      assert.equal(all.json.next, null);
      const t170 = all.json.entries.find((e) => e.txid === TX170);
      assert.deepEqual([...t170.addresses].sort(), [HAL, SATOSHI].sort());

      for (const order of ['asc', 'desc']) {
        const got = [];
        let cursor;
        do {
          const r = await post('/api/v1/addresses/history', { addresses: addrs, limit: 3, order, ...(cursor ? { cursor } : {}) });
          assert.equal(r.status, 200);
          got.push(...r.json.entries);
          cursor = r.json.next;
        } while (cursor);
        assert.deepEqual(norm(got), norm(order === 'asc' ? want : [...want].reverse()));
      }
    });

    it('multi-address summaries: one per requested item, in request order', async () => {
      const addrs = [SATOSHI, UNUSED, HAL, SATOSHI];
      const r = await post('/api/v1/addresses/summary', { addresses: addrs });
      assert.equal(r.status, 200);
      assert.deepEqual(r.json.summaries.map((s) => s.address), addrs);
      assert.deepEqual(r.json.summaries[2].balance, ref.at(HAL).summary.balance);
      assert.equal(r.json.summaries[1].txCount, 0);
      assert.deepEqual(r.json.tip, TIP);
      const hashes = await post('/api/v1/scripthashes/summary', { scripthashes: [scripthashes(HAL).electrum] });
      assert.equal(hashes.json.summaries[0].balance, 1e9);
      const hist = await post('/api/v1/scripthashes/history', { scripthashes: [scripthashes(HAL).electrum] });
      assert.deepEqual(hist.json.entries, [{ txid: TX170, height: 170, funded: true, spent: false, scripthashes: [scripthashes(HAL).electrum] }]);
    });

    it('multi-address bodies are checked: list, size, items, unknown fields, JSON', async () => {
      const cases = [
        [{ addresses: [] }, 'ERR_BAD_BODY'],
        [{ addresses: 'x' }, 'ERR_BAD_BODY'],
        [{ address: [HAL] }, 'ERR_BAD_BODY'],
        [{ addresses: [HAL], limt: 5 }, 'ERR_BAD_BODY'],
        [{ addresses: [HAL], limit: LIMITS.multiPageMax + 1 }, 'ERR_BAD_PARAM'],
        [{ addresses: [HAL, 'mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn'] }, 'ERR_ADDRESS_NETWORK'],
        [{ addresses: new Array(LIMITS.maxAddresses + 1).fill(HAL) }, 'ERR_TOO_MANY_ADDRESSES'],
        ['[1,2]', 'ERR_BAD_BODY'],
        ['{"addresses": [', 'ERR_BAD_JSON'],
      ];
      for (const [body, code] of cases) {
        const r = await post('/api/v1/addresses/history', body);
        assert.equal(r.status, 400, JSON.stringify(body).slice(0, 80));
        assert.equal(r.json.error.code, code, JSON.stringify(body).slice(0, 80));
      }
      const wrong = await post('/api/v1/addresses/summary', { addresses: [HAL, 'mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn'] });
      assert.match(wrong.json.error.message, /^addresses\[1\]: .*testnet.*not a main one/);
    });

    it('curl -d without a JSON content type still reads a JSON body', async () => {
      const r = await post('/api/v1/addresses/summary', JSON.stringify({ addresses: [HAL] }), { headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      assert.equal(r.status, 200);
      assert.equal(r.json.summaries[0].balance, 1e9);
    });

    it('tx lookup: height, block hash, position; unknown txid 404; malformed 400', async () => {
      const r = await get(`/api/v1/tx/${TX170}`);
      assert.equal(r.status, 200);
      const t = ref.txs.find((x) => x.txid === TX170);
      assert.deepEqual(r.json, {
        txid: TX170, height: 170, blockHash: t.blockHash, position: 1, time: t.time, confirmations: 269, tip: TIP,
      });
      const coinbase = ref.txs[0];
      assert.equal((await get(`/api/v1/tx/${coinbase.txid}`)).json.position, 0);
      const missing = await get(`/api/v1/tx/${'00'.repeat(32)}`);
      assert.equal(missing.status, 404);
      assert.equal(missing.json.error.code, 'ERR_TX_NOT_FOUND');
      assert.equal((await get('/api/v1/tx/xyz')).json.error.code, 'ERR_TXID_FORMAT');
    });
  });

  describe('Esplora-compatible /api', () => {
    it('address: chain_stats with electrs semantics, zero mempool_stats, the address as sent', async () => {
      const s = ref.at(SATOSHI).summary;
      const r = await get(`/api/address/${SATOSHI}`);
      assert.equal(r.status, 200);
      assert.deepEqual(r.json, {
        address: SATOSHI,
        chain_stats: { funded_txo_count: s.fundedCount, funded_txo_sum: s.received, spent_txo_count: s.spentCount, spent_txo_sum: s.sent, tx_count: s.txCount },
        mempool_stats: { funded_txo_count: 0, funded_txo_sum: 0, spent_txo_count: 0, spent_txo_sum: 0, tx_count: 0 },
      });
      const upper = await get(`/api/address/${UNUSED_SEGWIT.toUpperCase()}`);
      assert.equal(upper.json.address, UNUSED_SEGWIT.toUpperCase());
    });

    it('scripthash twin takes the natural-order sha256 and echoes it', async () => {
      const { esplora } = scripthashes(SATOSHI);
      const r = await get(`/api/scripthash/${esplora}`);
      const a = await get(`/api/address/${SATOSHI}`);
      assert.deepEqual(r.json, { scripthash: esplora, chain_stats: a.json.chain_stats, mempool_stats: a.json.mempool_stats });
      const utxo = await get(`/api/scripthash/${esplora}/utxo`);
      assert.deepEqual(utxo.json, (await get(`/api/address/${SATOSHI}/utxo`)).json);
    });

    it('utxo: txid, vout, status{confirmed, block_height, block_hash, block_time}, value', async () => {
      const r = await get(`/api/address/${HAL}/utxo`);
      const t = ref.txs.find((x) => x.txid === TX170);
      assert.deepEqual(r.json, [{
        txid: TX170, vout: 0,
        status: { confirmed: true, block_height: 170, block_hash: t.blockHash, block_time: t.time },
        value: 1e9,
      }]);
      assert.deepEqual(await get(`/api/address/${UNUSED}/utxo`).then((x) => x.json), []);
    });

    it('txs/chain: newest first, 25 a page, paged by last_seen_txid like electrs', async () => {
      const busiest = ref.busiest(1)[0];
      const want = [...ref.at(busiest).history].reverse();
      const first = await get(`/api/address/${busiest}/txs/chain`);
      assert.equal(first.status, 200);
      assert.deepEqual(first.json.map((t) => t.txid), want.slice(0, 25).map((e) => e.txid));
      for (const t of first.json) {
        const r = ref.txs.find((x) => x.txid === t.txid);
        assert.deepEqual(t.status, { confirmed: true, block_height: r.height, block_hash: r.blockHash, block_time: r.time });
      }
      // page by page with a small history: Satoshi's 6 txs, asking after each one
      const sat = [...ref.at(SATOSHI).history].reverse().map((e) => e.txid);
      for (let i = 0; i < sat.length; i++) {
        const r = await get(`/api/address/${SATOSHI}/txs/chain/${sat[i]}`);
        assert.deepEqual(r.json.map((t) => t.txid), sat.slice(i + 1, i + 26));
      }
      // not in this history: empty; unparsable: the first page (both as electrs)
      assert.deepEqual((await get(`/api/address/${SATOSHI}/txs/chain/${ref.txs[5].txid}`)).json, []);
      assert.deepEqual((await get(`/api/address/${SATOSHI}/txs/chain/${'00'.repeat(32)}`)).json, []);
      assert.deepEqual((await get(`/api/address/${SATOSHI}/txs/chain/zzz`)).json.map((t) => t.txid), sat.slice(0, 25));
    });

    it('txs/mempool is empty (no mempool in the index); input is validated first', async () => {
      assert.deepEqual((await get(`/api/address/${HAL}/txs/mempool`)).json, []);
      assert.deepEqual((await get(`/api/scripthash/${scripthashes(HAL).esplora}/txs/mempool`)).json, []);
      assert.equal((await get('/api/address/nope/txs')).status, 400);
      assert.equal((await get('/api/address/nope/txs/mempool')).status, 400);
    });

    it('tx status, tip height and hash, block-height', async () => {
      const t = ref.txs.find((x) => x.txid === TX170);
      assert.deepEqual((await get(`/api/tx/${TX170}/status`)).json,
        { confirmed: true, block_height: 170, block_hash: t.blockHash, block_time: t.time });
      assert.deepEqual((await get(`/api/tx/${'11'.repeat(32)}/status`)).json, { confirmed: false });
      const h = await get('/api/blocks/tip/height');
      assert.equal(h.text, '438');
      assert.match(h.headers.get('content-type'), /^text\/plain/);
      assert.equal((await get('/api/blocks/tip/hash')).text, TIP.hash);
      assert.equal((await get('/api/block-height/170')).text, t.blockHash);
      const past = await get('/api/block-height/439');
      assert.equal(past.status, 404);
      assert.equal(past.json.error.code, 'ERR_BLOCK_NOT_FOUND');
      assert.equal((await get('/api/block-height/-1')).status, 400);
    });
  });

  describe('insight-compatible /insight-api', () => {
    it('addr: insight field names (txApperances), BTC and satoshis, txids newest first', async () => {
      const s = ref.at(SATOSHI).summary;
      const r = await get(`/insight-api/addr/${SATOSHI}`);
      assert.equal(r.status, 200);
      assert.deepEqual(r.json, {
        addrStr: SATOSHI,
        balance: s.balance / 1e8, balanceSat: s.balance,
        totalReceived: s.received / 1e8, totalReceivedSat: s.received,
        totalSent: s.sent / 1e8, totalSentSat: s.sent,
        unconfirmedBalance: 0, unconfirmedBalanceSat: 0, unconfirmedTxApperances: 0,
        txApperances: s.txCount,
        transactions: ref.at(SATOSHI).history.map((e) => e.txid).reverse(),
      });
      assert.equal('transactions' in (await get(`/insight-api/addr/${SATOSHI}?noTxList=1`)).json, false);
      const ranged = await get(`/insight-api/addr/${SATOSHI}?from=1&to=3`);
      assert.deepEqual(ranged.json.transactions, r.json.transactions.slice(1, 3));
      assert.equal((await get(`/insight-api/addr/${SATOSHI}?from=3&to=3`)).status, 400);
      assert.deepEqual((await get(`/insight-api/addr/${UNUSED}`)).json.transactions, []);
    });

    it('balance, totalReceived, totalSent, unconfirmedBalance: bare satoshi numbers', async () => {
      const s = ref.at(SATOSHI).summary;
      for (const [sub, v] of [['balance', s.balance], ['totalReceived', s.received], ['totalSent', s.sent], ['unconfirmedBalance', 0]]) {
        const r = await get(`/insight-api/addr/${SATOSHI}/${sub}`);
        assert.equal(r.status, 200);
        assert.equal(r.text, String(v));
      }
      assert.equal((await get(`/insight-api/addr/${UNUSED}/balance`)).text, '0');
    });

    it('utxo and multi-address utxo (GET comma list, POST JSON or form), duplicates dropped', async () => {
      const { script } = scripthashes(HAL);
      const one = await get(`/insight-api/addr/${HAL}/utxo`);
      assert.deepEqual(one.json, [{
        address: HAL, txid: TX170, vout: 0, scriptPubKey: script, amount: 10, satoshis: 1e9, height: 170, confirmations: 269,
      }]);
      const expect = [...ref.at(HAL).utxos.map((u) => [HAL, u]), ...ref.at(SATOSHI).utxos.map((u) => [SATOSHI, u])]
        .map(([a, u]) => ({ address: a, txid: u.txid, vout: u.vout, satoshis: u.value }));
      const pick = (list) => list.map((u) => ({ address: u.address, txid: u.txid, vout: u.vout, satoshis: u.satoshis }));
      const multi = await get(`/insight-api/addrs/${HAL},${SATOSHI},${HAL}/utxo`);
      assert.deepEqual(pick(multi.json), expect);
      const viaJson = await post('/insight-api/addrs/utxo', { addrs: `${HAL},${SATOSHI}` });
      assert.deepEqual(viaJson.json, multi.json);
      const viaForm = await post('/insight-api/addrs/utxo', `addrs=${HAL},${SATOSHI}`, { headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      assert.deepEqual(viaForm.json, multi.json);
      const bad = await get(`/insight-api/addrs/${HAL},bogus/utxo`);
      assert.equal(bad.status, 400);
      assert.match(bad.json.error.message, /^address 2 of 2: /);
    });
  });

  describe('errors and limits', () => {
    it('a wrong-network, mistyped or foreign address is 400 with the reason', async () => {
      const cases = [
        ['mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn', 'ERR_ADDRESS_NETWORK', /testnet/],
        ['tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx', 'ERR_ADDRESS_NETWORK', /testnet/],
        ['1Q2TWHE3GMdB6BZKafqwxXtWAWgFt5Jvm4', 'ERR_ADDRESS_CHECKSUM', /checksum/],
        ['bc1zw508d6qejxtdg4y5r3zarvaryvg6kdaj', 'ERR_ADDRESS_VARIANT', /bech32m/],
        ['hello', 'ERR_ADDRESS_FORMAT', /is not a main address/],
      ];
      for (const [a, code, re] of cases) {
        for (const p of [`/api/v1/address/${a}`, `/api/address/${a}`, `/insight-api/addr/${a}`]) {
          const r = await get(p);
          assert.equal(r.status, 400, `${p}`);
          assert.equal(r.json.error.code, code, `${p}`);
          assert.match(r.json.error.message, re, `${p}`);
        }
      }
    });

    it('unknown routes 404, wrong methods 405 with Allow, HEAD answers headers only', async () => {
      const nf = await get('/api/v1/nothing');
      assert.equal(nf.status, 404);
      assert.equal(nf.json.error.code, 'ERR_NOT_FOUND');
      assert.equal((await get('/api/v1/status/')).status, 404);
      const m = await request(`${srv.url}/api/v1/status`, { method: 'DELETE' });
      assert.equal(m.status, 405);
      assert.equal(m.headers.get('allow'), 'GET, HEAD');
      assert.equal(m.json.error.code, 'ERR_METHOD_NOT_ALLOWED');
      const g = await get('/api/v1/addresses/history');
      assert.equal(g.status, 405);
      assert.equal(g.headers.get('allow'), 'POST');
      const head = await request(`${srv.url}/api/v1/address/${HAL}`, { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal(head.text, '');
      assert.ok(Number(head.headers.get('content-length')) > 0);
      assert.equal((await get('/api/v1/address/%E0%A4%A')).json.error.code, 'ERR_BAD_PATH');
    });

    it('a body over the limit is 413, whether declared or streamed', async () => {
      const big = JSON.stringify({ addresses: new Array(40000).fill(HAL) });
      assert.ok(big.length > LIMITS.bodyBytes);
      const r = await post('/api/v1/addresses/history', big);
      assert.equal(r.status, 413);
      assert.equal(r.json.error.code, 'ERR_BODY_TOO_LARGE');
      // chunked, no Content-Length: the limit is counted as bytes arrive
      const status = await new Promise((resolve, reject) => {
        const req = http.request(`${srv.url}/api/v1/addresses/history`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
          res.resume();
          resolve(res.statusCode);
        });
        req.on('error', reject);
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        let sent = 0;
        const more = () => {
          while (sent < LIMITS.bodyBytes + chunk.length * 2) {
            sent += chunk.length;
            if (!req.write(chunk)) return req.once('drain', more);
          }
          req.end();
        };
        more();
      });
      assert.equal(status, 413);
    });

    it('what node refuses before routing (huge headers, not HTTP) is JSON too', async () => {
      const raw = (text) => new Promise((resolve, reject) => {
        const { port } = new URL(srv.url);
        const sock = require('node:net').connect(Number(port), '127.0.0.1', () => sock.end(text));
        let got = '';
        sock.on('data', (d) => { got += d; });
        sock.on('close', () => resolve(got));
        sock.on('error', reject);
      });
      const big = await raw(`GET /api/v1/address/${'1'.repeat(20000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
      assert.match(big, /^HTTP\/1\.1 431 /);
      assert.equal(JSON.parse(big.split('\r\n\r\n')[1]).error.code, 'ERR_HEADERS_TOO_LARGE');
      const junk = await raw('NONSENSE\r\n\r\n');
      assert.match(junk, /^HTTP\/1\.1 400 /);
      assert.equal(JSON.parse(junk.split('\r\n\r\n')[1]).error.code, 'ERR_BAD_REQUEST');
    });

    it('no stack traces: a store failure is a bare 500, logged on the server', async () => {
      const getSummary = srv.store.getSummary;
      srv.store.getSummary = async () => { throw new Error(`at /secret/path/data.mdb:123 ${'x'.repeat(10)}`); };
      try {
        const r = await get(`/api/v1/address/${HAL}`);
        assert.equal(r.status, 500);
        assert.deepEqual(r.json, { error: { code: 'ERR_INTERNAL', message: 'internal error (logged by the server)' } });
        assert.doesNotMatch(r.text, /secret|\.js:|at /);
        assert.ok(srv.logs.some((l) => l.includes('/secret/path')));
      } finally {
        srv.store.getSummary = getSummary;
      }
    });

    it('a request slower than the timeout gets 503 ERR_TIMEOUT', async () => {
      const slow = await startServer(fixture.datadir, { timeoutMs: 100 });
      const getSummary = slow.store.getSummary.bind(slow.store);
      slow.store.getSummary = async (sh) => { await new Promise((r) => setTimeout(r, 300)); return getSummary(sh); };
      try {
        const r = await request(`${slow.url}/api/v1/address/${HAL}`);
        assert.equal(r.status, 503);
        assert.equal(r.json.error.code, 'ERR_TIMEOUT');
      } finally {
        await slow.close();
      }
    });

    it('a read that keeps seeing new tips gives up with 503 instead of a torn answer', async () => {
      const getTip = srv.store.getTip.bind(srv.store);
      let n = 0;
      srv.store.getTip = async () => ({ ...(await getTip()), height: n++ });
      try {
        const r = await get(`/api/v1/address/${HAL}`);
        assert.equal(r.status, 503);
        assert.equal(r.json.error.code, 'ERR_INDEX_MOVING');
        assert.equal(n, 8); // four attempts, a tip read before and after each
      } finally {
        srv.store.getTip = getTip;
      }
    });

    it('the root names the APIs; the OpenAPI document is served', async () => {
      const r = await get('/');
      assert.deepEqual(r.json.apis, { native: '/api/v1', esplora: '/api/', insight: '/insight-api/' });
      const doc = await get('/api/v1/openapi.json');
      assert.equal(doc.json.openapi, '3.1.0');
    });
  });
});

describe('api routes over a generated chain with long histories', function () {
  this.timeout(60000);
  let gen;
  let srv;
  let busiest;
  const get = (p) => request(srv.url + p);

  before(async () => {
    // address reuse follows a Zipf law: a few addresses collect many transactions, several
    // in one block, which is what paging by last_seen_txid has to step over
    gen = await syncedGenerated({ network: 'regtest', seed: 'long-histories', blocks: 40, txsPerBlock: 60, coinbaseMaturity: 1 });
    srv = await startServer(gen.datadir, { network: 'regtest' });
    const { json } = await request(`${srv.url}/api/v1/addresses/summary`, { method: 'POST', body: { addresses: gen.addresses.slice(0, 5000) } });
    busiest = json.summaries.reduce((a, b) => (b.txCount > a.txCount ? b : a));
  });
  after(async () => {
    if (srv) await srv.close();
    if (gen) await gen.cleanup();
  });

  it('Esplora txs/chain pages 25 at a time by last_seen_txid through the whole history, newest first', async () => {
    assert.ok(busiest.txCount > 60, `busiest address has ${busiest.txCount} txs`);
    const native = (await get(`/api/v1/address/${busiest.address}/history?order=desc&limit=1000`)).json.entries;
    assert.equal(native.length, busiest.txCount);
    const heights = native.map((e) => e.height);
    assert.ok(heights.some((h, i) => heights.indexOf(h) !== i), 'several txs share a block');
    const paged = [];
    let page = (await get(`/api/address/${busiest.address}/txs/chain`)).json;
    while (page.length) {
      assert.ok(page.length <= 25);
      paged.push(...page);
      page = (await get(`/api/address/${busiest.address}/txs/chain/${page[page.length - 1].txid}`)).json;
    }
    assert.deepEqual(paged.map((t) => t.txid), native.map((e) => e.txid));
    assert.deepEqual(paged.map((t) => t.status.block_height), heights);
    const blocks = new Map();
    for (const t of paged) {
      if (!blocks.has(t.status.block_height)) blocks.set(t.status.block_height, (await get(`/api/block-height/${t.status.block_height}`)).text);
      assert.equal(t.status.block_hash, blocks.get(t.status.block_height));
    }
  });

  it('insight txid windows and native pages agree on a long history', async () => {
    const all = (await get(`/api/v1/address/${busiest.address}/history?order=desc&limit=1000`)).json.entries.map((e) => e.txid);
    const win = (await get(`/insight-api/addr/${busiest.address}?from=10&to=40`)).json;
    assert.deepEqual(win.transactions, all.slice(10, 40));
    assert.equal(win.txApperances, all.length);
    const multi = await request(`${srv.url}/api/v1/addresses/history`, { method: 'POST', body: { addresses: [busiest.address], order: 'desc', limit: 1000 } });
    assert.deepEqual(multi.json.entries.map((e) => e.txid), all);
  });
});
