'use strict';

const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const bitcore = require('bitcore-lib');
const format = require('../../lib/api/format');
const validate = require('../../lib/api/validate');
const { toHttpError, ApiError } = require('../../lib/api/errors');
const { AddressError, StoreError, CodecError, SourceError } = require('../../lib/errors');
const { getNetwork } = require('../../lib/chain/networks');

const main = getNetwork('main');
const HAL = '1Q2TWHE3GMdB6BZKafqwxXtWAWgFt5Jvm3';
const TX170 = 'f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16';
const BLOCK170 = { height: 170, hash: '00000000d1145790a8694403d4063f323d499e655c83426834d4ce2f8dd4a2ee', time: 1231731025 };

/** internal-order bytes of a display-order hex hash */
const internal = (hex) => Buffer.from(hex, 'hex').reverse();

// What the index holds for Hal's address after block 170 (hand-built, as a store returns it).
const halSummary = {
  balance: 1000000000, received: 1000000000, sent: 0, txCount: 1, fundedCount: 1, spentCount: 0,
  utxoCount: 1, firstHeight: 170, lastHeight: 170,
};

describe('api format: pure mappers', () => {
  it('native summary shows the Electrum script hash and counters; never-seen is zeros with null heights', () => {
    const t = validate.address(HAL, main);
    // independent reference: sha256 of the P2PKH script bitcore-lib builds, bytes reversed
    const script = bitcore.Script.buildPublicKeyHashOut(new bitcore.Address(HAL)).toBuffer();
    const electrum = Buffer.from(crypto.createHash('sha256').update(script).digest()).reverse().toString('hex');
    assert.deepEqual(format.nativeSummary(t, halSummary), {
      address: HAL, scripthash: electrum, ...halSummary,
    });
    assert.deepEqual(format.nativeSummary(t, null), {
      address: HAL, scripthash: electrum, balance: 0, received: 0, sent: 0, txCount: 0, fundedCount: 0,
      spentCount: 0, utxoCount: 0, firstHeight: null, lastHeight: null,
    });
  });

  it('native history, multi-address and UTXO entries show txids in display order', () => {
    const entry = { txNum: 171, txid: internal(TX170), height: 170, funded: true, spent: false };
    assert.deepEqual(format.nativeEntry(entry), { txid: TX170, height: 170, funded: true, spent: false });
    const a = Buffer.alloc(32, 1);
    const b = Buffer.alloc(32, 2);
    const names = new format.TargetNames();
    assert.equal(names.add(a, 'addrA'), true);
    assert.equal(names.add(b, 'addrB'), true);
    assert.equal(names.add(Buffer.from(a), 'again'), false); // same content: one target
    assert.deepEqual(format.nativeMultiEntry({ ...entry, spent: true, scripthashes: [b, a] }, names, 'addresses'),
      { txid: TX170, height: 170, funded: true, spent: true, addresses: ['addrB', 'addrA'] });
    // a store that copies (or one behind IPC) hands back equal Buffers, not the same ones
    assert.deepEqual(format.nativeMultiEntry({ ...entry, scripthashes: [Buffer.from(b)] }, names, 'addresses').addresses, ['addrB']);
    assert.deepEqual(format.nativeUtxo({ txid: internal(TX170), vout: 0, value: 1e9, height: 170, txNum: 171 }),
      { txid: TX170, vout: 0, value: 1e9, height: 170 });
  });

  it('the merged-history page serializer equals JSON.stringify of the object mappers', () => {
    const { toDisplayHex } = require('../../lib/chain/hash');
    const hashes = Array.from({ length: 4 }, (_, i) => crypto.createHash('sha256').update(`sh${i}`).digest());
    const names = new format.TargetNames();
    hashes.forEach((h, i) => names.add(h, i % 2 ? `bc1qname${i}` : toDisplayHex(h)));
    const entries = Array.from({ length: 50 }, (_, i) => ({
      txNum: 1000 + i, txid: crypto.createHash('sha256').update(`tx${i}`).digest(),
      height: [0, 9, 10, 99, 100, 500 + (i >> 2), 999999, 1000000, 4294967295][i % 9],
      funded: i % 3 !== 0, spent: i % 2 === 0,
      scripthashes: hashes.slice(i % 4, 1 + (i % 4) + (i % 2)).map((h) => (i % 3 ? h : Buffer.from(h))),
    }));
    for (const [next, tip] of [['AQAAAAPo', { height: 512, hash: 'ab'.repeat(32) }], [null, null]]) {
      for (const field of ['addresses', 'scripthashes']) {
        const want = JSON.stringify({ entries: entries.map((e) => format.nativeMultiEntry(e, names, field)), next, tip });
        assert.equal(format.nativeMultiPageJSON(entries, names, field, next, tip).toString(), want);
      }
    }
    assert.equal(format.nativeMultiPageJSON([], names, 'addresses', null, null).toString(), '{"entries":[],"next":null,"tip":null}');
    for (const e of entries) assert.equal(format.hex32(e.txid), toDisplayHex(e.txid));
  });

  it('native tx location: confirmations counted from the tip', () => {
    const loc = { txNum: 171, txid: internal(TX170), height: 170, blockHash: BLOCK170.hash, position: 1 };
    assert.deepEqual(format.nativeTx(loc, BLOCK170, { height: 438 }), {
      txid: TX170, height: 170, blockHash: BLOCK170.hash, position: 1, time: BLOCK170.time, confirmations: 269,
    });
  });

  it('Esplora address stats: chain_stats names and sums, mempool_stats zero, key echoes the request', () => {
    const summary = { ...halSummary, balance: 4e9, received: 9e9, sent: 5e9, txCount: 3, fundedCount: 2, spentCount: 1, utxoCount: 1 };
    assert.deepEqual(format.esploraAddress('address', HAL, summary), {
      address: HAL,
      chain_stats: { funded_txo_count: 2, funded_txo_sum: 9e9, spent_txo_count: 1, spent_txo_sum: 5e9, tx_count: 3 },
      mempool_stats: { funded_txo_count: 0, funded_txo_sum: 0, spent_txo_count: 0, spent_txo_sum: 0, tx_count: 0 },
    });
    const never = format.esploraAddress('scripthash', 'ab'.repeat(32), null);
    assert.deepEqual(Object.keys(never), ['scripthash', 'chain_stats', 'mempool_stats']);
    assert.deepEqual(never.chain_stats, never.mempool_stats);
    // the zero objects are fresh each time: a caller mutating one cannot poison the next answer
    never.chain_stats.tx_count = 99;
    assert.equal(format.esploraAddress('address', HAL, null).chain_stats.tx_count, 0);
  });

  it('Esplora utxo carries status {confirmed, block_height, block_hash, block_time} in electrs field order', () => {
    const u = format.esploraUtxo({ txid: internal(TX170), vout: 0, value: 1e9, height: 170, txNum: 171 }, BLOCK170);
    assert.deepEqual(u, {
      txid: TX170, vout: 0,
      status: { confirmed: true, block_height: 170, block_hash: BLOCK170.hash, block_time: 1231731025 },
      value: 1e9,
    });
    assert.deepEqual(Object.keys(u), ['txid', 'vout', 'status', 'value']);
  });

  it('insight address: its field names (txApperances), BTC numbers beside satoshis, optional txid list', () => {
    const summary = { ...halSummary, balance: 1, received: 2099999997690000, sent: 2099999997689999, txCount: 7 };
    const out = format.insightAddr(HAL, summary, [TX170]);
    assert.deepEqual(out, {
      addrStr: HAL,
      balance: 1e-8, balanceSat: 1,
      totalReceived: 20999999.9769, totalReceivedSat: 2099999997690000,
      totalSent: 20999999.97689999, totalSentSat: 2099999997689999,
      unconfirmedBalance: 0, unconfirmedBalanceSat: 0, unconfirmedTxApperances: 0,
      txApperances: 7,
      transactions: [TX170],
    });
    assert.equal(JSON.stringify(out.totalSent), '20999999.97689999');
    assert.equal('transactions' in format.insightAddr(HAL, summary, undefined), false);
    assert.equal(format.insightAddr(HAL, null, []).txApperances, 0);
  });

  it('BTC amounts are the nearest double to the exact 8-decimal value (what bitcore Unit gives)', () => {
    for (const sats of [0, 1, 10, 12345678, 5e9, 2099999997690000, 123456789012345]) {
      assert.equal(format.btc(sats), bitcore.Unit.fromSatoshis(sats).toBTC(), `sats ${sats}`);
      assert.equal(format.btc(sats), Number((sats / 1e8).toFixed(8)));
    }
  });

  it('insight utxo: satoshis and amount, the address script, confirmations from the tip', () => {
    const script = bitcore.Script.buildPublicKeyHashOut(new bitcore.Address(HAL)).toHex();
    assert.deepEqual(format.insightUtxo({ txid: internal(TX170), vout: 0, value: 1e9, height: 170, txNum: 171 }, HAL, script, 438), {
      address: HAL, txid: TX170, vout: 0, scriptPubKey: script, amount: 10, satoshis: 1e9, height: 170, confirmations: 269,
    });
  });
});

describe('api validate and errors', () => {
  it('integers: plain decimal strings or safe integers within bounds', () => {
    assert.equal(validate.integer(undefined, 'x', { def: 7 }), 7);
    assert.equal(validate.integer(null, 'x', { def: 7 }), 7);
    assert.equal(validate.integer('0', 'x'), 0);
    assert.equal(validate.integer('1000', 'x', { max: 1000 }), 1000);
    assert.equal(validate.integer(12, 'x'), 12);
    for (const bad of ['1e3', ' 1', '01', '-1', '1.5', 'abc', '0x10', 1.5, -1, true, [], {}]) {
      assert.throws(() => validate.integer(bad, 'limit'), (e) => e.status === 400 && e.code === 'ERR_BAD_PARAM', String(bad));
    }
    assert.throws(() => validate.integer('1001', 'limit', { max: 1000 }), /from 0 to 1000/);
    assert.throws(() => validate.integer('0', 'limit', { min: 1 }), /from 1 to/);
  });

  it('history options: limit default 50 and max, order, height bounds, cursor shape', () => {
    const q = (obj) => (n) => obj[n];
    assert.deepEqual(validate.historyOptions(q({}), 1000), { limit: 50, order: 'asc' });
    assert.deepEqual(validate.historyOptions(q({ limit: '1000', order: 'desc', fromHeight: '5', toHeight: '9', cursor: 'AbC_-9' }), 1000),
      { limit: 1000, cursor: 'AbC_-9', order: 'desc', fromHeight: 5, toHeight: 9 });
    assert.throws(() => validate.historyOptions(q({ limit: '1001' }), 1000), /limit/);
    assert.throws(() => validate.historyOptions(q({ limit: '0' }), 1000), /limit/);
    assert.throws(() => validate.historyOptions(q({ order: 'newest' }), 1000), /order/);
    assert.throws(() => validate.historyOptions(q({ fromHeight: '10', toHeight: '9' }), 1000), /fromHeight \(10\) is above toHeight \(9\)/);
    assert.throws(() => validate.historyOptions(q({ cursor: 'x'.repeat(513) }), 1000), (e) => e.code === 'ERR_BAD_CURSOR');
    assert.throws(() => validate.historyOptions(q({ cursor: 'a b' }), 1000), (e) => e.code === 'ERR_BAD_CURSOR');
    assert.throws(() => validate.historyOptions(q({ cursor: 5 }), 1000), (e) => e.code === 'ERR_BAD_CURSOR');
  });

  it('addresses are checked against the index network, with the typed reason', () => {
    assert.equal(validate.address(HAL, main).address, HAL);
    assert.equal(validate.address('BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4', main).address, 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4');
    assert.throws(() => validate.address(HAL, getNetwork('testnet')), (e) => e instanceof AddressError && e.code === 'ERR_ADDRESS_NETWORK');
    assert.throws(() => validate.address('1Q2TWHE3GMdB6BZKafqwxXtWAWgFt5Jvm4', main), (e) => e.code === 'ERR_ADDRESS_CHECKSUM');
    assert.throws(() => validate.address('ab'.repeat(32), main), (e) => e.code === 'ERR_ADDRESS_FORMAT' && /script hash/.test(e.message));
    assert.throws(() => validate.address('1'.repeat(200), main), (e) => e.code === 'ERR_ADDRESS_FORMAT');
    assert.throws(() => validate.address('', main), (e) => e.code === 'ERR_ADDRESS_FORMAT');
  });

  it('script hashes: Electrum form is reversed, Esplora form is natural byte order', () => {
    const script = bitcore.Script.buildPublicKeyHashOut(new bitcore.Address(HAL)).toBuffer();
    const sha = crypto.createHash('sha256').update(script).digest();
    const electrumHex = Buffer.from(sha).reverse().toString('hex');
    assert.deepEqual(validate.electrumScripthash(electrumHex).scripthash, sha);
    assert.deepEqual(validate.esploraScripthash(sha.toString('hex')), sha);
    assert.deepEqual(validate.address(HAL, main).scripthash, sha);
    assert.throws(() => validate.electrumScripthash('zz'.repeat(32)), (e) => e.code === 'ERR_SCRIPTHASH_FORMAT');
    assert.throws(() => validate.esploraScripthash('ab'), (e) => e.code === 'ERR_SCRIPTHASH_FORMAT');
    assert.deepEqual(validate.txid(TX170), internal(TX170));
    assert.throws(() => validate.txid(TX170.slice(1)), (e) => e.code === 'ERR_TXID_FORMAT');
  });

  it('address lists: non-empty, bounded, and a bad item names its position', () => {
    const parse = (s) => validate.address(s, main);
    assert.equal(validate.targetList([HAL, HAL], 'addresses', parse).length, 2);
    assert.throws(() => validate.targetList([], 'addresses', parse), (e) => e.code === 'ERR_BAD_BODY');
    assert.throws(() => validate.targetList('x', 'addresses', parse), (e) => e.code === 'ERR_BAD_BODY');
    assert.throws(() => validate.targetList(new Array(validate.LIMITS.maxAddresses + 1).fill(HAL), 'addresses', parse),
      (e) => e.code === 'ERR_TOO_MANY_ADDRESSES');
    assert.throws(() => validate.targetList([HAL, 'nope'], 'addresses', parse),
      (e) => e.code === 'ERR_ADDRESS_FORMAT' && e.message.startsWith('addresses[1]: '));
    assert.throws(() => validate.targetList([HAL, 42], 'addresses', parse), (e) => e.message.startsWith('addresses[1]: '));
  });

  it('errors map to statuses; unexpected ones reveal nothing', () => {
    assert.deepEqual(toHttpError(new ApiError(404, 'ERR_X', 'gone')), { status: 404, code: 'ERR_X', message: 'gone', internal: false });
    assert.equal(toHttpError(new AddressError('ERR_ADDRESS_CHECKSUM', 'bad checksum')).status, 400);
    assert.equal(toHttpError(new StoreError('ERR_BAD_CURSOR', 'cursor bytes')).status, 400);
    const secret = toHttpError(new CodecError('ERR_TRUNCATED', '/var/lib/index/data.mdb at 0x1234'));
    assert.equal(secret.status, 500);
    assert.equal(secret.internal, true);
    assert.doesNotMatch(secret.message, /var|0x1234/);
    const moved = toHttpError(new SourceError('ERR_BLOCK_UNAVAILABLE', '/home/u/.bitcoin/blocks/blk00042.dat: no such file', { hash: 'ab'.repeat(32) }));
    assert.equal(moved.status, 503);
    assert.equal(moved.code, 'ERR_BLOCK_UNAVAILABLE');
    assert.doesNotMatch(moved.message, /bitcoin|blk/);
    assert.match(moved.message, /abab/);
    const bug = toHttpError(new TypeError('x is undefined'));
    assert.deepEqual([bug.status, bug.code, bug.internal], [500, 'ERR_INTERNAL', true]);
  });
});

describe('Memo (the formatters\' address memo)', () => {
  const { Memo } = require('../../lib/api/memo');
  it('computes once per key, remembers null, and drops the oldest entry beyond its bound', () => {
    const m = new Memo(2);
    let calls = 0;
    const f = (v) => () => { calls++; return v; };
    assert.equal(m.get('a', f(null)), null);
    assert.equal(m.get('a', f('x')), null);
    assert.equal(m.get('b', f('B')), 'B');
    assert.equal(m.get('c', f('C')), 'C');
    assert.equal(calls, 3);
    assert.deepEqual([...m.map.keys()], ['b', 'c']);
    assert.equal(m.get('a', f('A')), 'A');
    assert.equal(calls, 4);
  });
});
