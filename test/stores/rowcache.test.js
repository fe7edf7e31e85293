'use strict';

const assert = require('node:assert/strict');
const { RowCache } = require('../../lib/stores/rowcache');
const { sharedInOrder } = require('../../lib/stores/packed-rows');
const { openStore } = require('../../lib/stores');
const { TIP_KEY } = require('../../lib/stores/layout');
const { tempDir } = require('../helpers/tmp');
const { prng } = require('../helpers/prng');

/** A key of `len` bytes after a table byte, from the PRNG; with `shared`, its first bytes fixed. */
function randomKey(rand, table, len, shared) {
  const k = Buffer.alloc(1 + len);
  k[0] = table;
  for (let i = 1; i <= len; i++) k[i] = Math.floor(rand() * 256);
  if (shared) shared.copy(k, 1, 0, Math.min(shared.length, len));
  return k;
}

const hex = (b) => (b === null || b === undefined ? b : Buffer.from(b).toString('hex'));

describe('RowCache: the writer\'s rows between commits', () => {
  it('answers what it was told: written rows over read ones, absent keys as null, unknown ones as undefined', () => {
    const c = new RowCache({ maxBytes: 1 << 20 });
    const a = Buffer.from('sAAAA');
    const b = Buffer.from('sBBBB');
    assert.equal(c.get(a), undefined);
    c.fill(a, Buffer.from('one'));
    c.fill(b, undefined); // the store has no such row
    assert.equal(c.get(a).toString(), 'one');
    assert.equal(c.get(b), null);
    c.fill(a, Buffer.from('stale')); // a row already known is not replaced by a read
    assert.equal(c.get(a).toString(), 'one');
    c.set(a, Buffer.from('two'));
    c.set(b, Buffer.from('new'));
    c.set(a, null);
    assert.equal(c.get(a), null);
    assert.equal(c.dirtyCount, 2);
    const rows = [];
    c.dirtyRows().each((k, v) => rows.push([k.toString(), v && v.toString()]));
    assert.deepEqual(rows, [['sAAAA', null], ['sBBBB', 'new']]);
    // shared with a committer thread, and read there in key order
    const back = [];
    sharedInOrder(c.share()).each((k, v) => back.push([k.toString(), v && v.toString()]));
    assert.deepEqual(back, rows);
  });

  it('hands its dirty rows out in key order, whatever their lengths and shared prefixes (200k rows)', () => {
    const rand = prng(7);
    const c = new RowCache({ maxBytes: 1 << 30 });
    const model = new Map();
    const prefixes = [Buffer.from([1, 2, 3, 4, 5]), Buffer.from([1, 2]), Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff])];
    for (let i = 0; i < 200000; i++) {
      const table = [0x73, 0x78, 0x6f, 0x75][i % 4];
      const len = [2, 4, 5, 12, 17][Math.floor(rand() * 5)];
      const shared = rand() < 0.2 ? prefixes[Math.floor(rand() * prefixes.length)] : null;
      const k = randomKey(rand, table, len, shared);
      const v = rand() < 0.1 ? null : Buffer.from(String(i));
      c.set(k, v);
      model.set(k.toString('latin1'), v);
    }
    const want = [...model.keys()].sort((x, y) => Buffer.compare(Buffer.from(x, 'latin1'), Buffer.from(y, 'latin1')));
    const got = [];
    const batch = c.dirtyRows();
    assert.equal(batch.length, want.length);
    batch.each((k, v) => got.push([k.toString('latin1'), hex(v)]));
    assert.equal(got.length, want.length);
    for (let i = 0; i < want.length; i++) {
      assert.equal(got[i][0], want[i], `row ${i} in key order`);
      assert.equal(got[i][1], hex(model.get(want[i])));
    }
  });

  it('keeps a value as large as an arena chunk in a chunk of its own', () => {
    const c = new RowCache({ maxBytes: 64 << 20 });
    const big = Buffer.alloc(3 << 20, 7);
    big[big.length - 1] = 9;
    c.set(Buffer.from('rBIG'), big);
    c.set(Buffer.from('rsmall'), Buffer.from('x'));
    assert.equal(c.get(Buffer.from('rBIG')).length, big.length);
    assert.equal(c.get(Buffer.from('rBIG'))[big.length - 1], 9);
    assert.equal(c.get(Buffer.from('rsmall')).toString(), 'x');
  });

  it('shares its written rows with another thread: what it holds, in key order there (50k rows)', () => {
    const rand = prng(5);
    const c = new RowCache({ maxBytes: 64 << 20 });
    const model = new Map();
    for (let i = 0; i < 50000; i++) {
      const k = randomKey(rand, [0x73, 0x6f, 0x75][i % 3], [4, 12, 17][i % 3]);
      const v = rand() < 0.1 ? null : Buffer.alloc(Math.floor(rand() * 100), i % 256);
      c.set(k, v);
      model.set(k.toString('latin1'), v);
    }
    const want = [...model.keys()].sort((x, y) => Buffer.compare(Buffer.from(x, 'latin1'), Buffer.from(y, 'latin1')));
    const shared = sharedInOrder(c.share());
    assert.equal(shared.count, want.length);
    let i = 0;
    shared.each((k, v) => {
      assert.equal(k.toString('latin1'), want[i]);
      assert.equal(hex(v), hex(model.get(want[i])));
      i++;
    });
    assert.equal(i, want.length);
  });

  it('lists the dirty rows of a range for the overlay: one account\'s UTXO rows, a table\'s rows, forward and reverse', () => {
    const c = new RowCache({ maxBytes: 1 << 20 });
    const hx = Buffer.alloc(12, 0xab);
    hx[11] = 0xff; // the successor of this hashX is shorter: the group must still be found
    const u = (txNum) => Buffer.concat([Buffer.from([0x75]), hx, Buffer.from([0, 0, 0, 0, txNum, 0])]);
    c.set(u(3), Buffer.from('3'));
    c.set(u(1), null);
    c.set(u(2), Buffer.from('2'));
    const other = Buffer.concat([Buffer.from([0x75]), Buffer.alloc(12, 0xac), Buffer.from([0, 0, 0, 0, 1, 0])]);
    c.set(other, Buffer.from('o'));
    c.set(Buffer.from([0x62, 0, 0, 0, 5]), Buffer.from('b5'));
    c.set(Buffer.from([0x62, 0, 0, 0, 4]), Buffer.from('b4'));
    const gte = Buffer.concat([Buffer.from([0x75]), hx]);
    const lt = Buffer.concat([Buffer.from([0x75]), hx.subarray(0, 10), Buffer.from([0xac])]);
    const keysOf = (list) => list.map((e) => c.keyOf(e).toString('hex'));
    assert.deepEqual(keysOf(c.dirtyInRange(gte, lt, false)), [u(1), u(2), u(3)].map((k) => k.toString('hex')));
    assert.deepEqual(keysOf(c.dirtyInRange(gte, lt, true)), [u(3), u(2), u(1)].map((k) => k.toString('hex')));
    assert.deepEqual(keysOf(c.dirtyInRange(Buffer.from([0x62]), Buffer.from([0x63]), false)), ['6200000004', '6200000005']);
    assert.deepEqual(keysOf(c.dirtyInRange(Buffer.from([0x62, 0, 0, 0, 5]), Buffer.from([0x62, 0, 0, 0, 9]), false)), ['6200000005']);
    assert.equal(c.dirtyInRange(undefined, undefined, false).length, 6);
  });
});

/**
 * The overlay over each real backend: a model (a sorted map) and the store's key-value
 * surface receive the same random writes in groups, and every read of the group must equal
 * the model's, while another reader sees only what was committed.
 */
for (const kind of ['lmdb', 'level']) {
  describe(`CachedKv over ${kind}: reads through a group equal a model of the writes; commits at endBulk`, () => {
    it('random puts, deletes, gets and ranges in three groups, one discarded', async function () {
      this.timeout(60000);
      const store = await openStore({ store: kind, datadir: tempDir(`cachedkv-${kind}`), network: 'regtest' });
      try {
        const kv = store.kv;
        const rand = prng(kind === 'lmdb' ? 3 : 4);
        const committed = new Map([[TIP_KEY.toString('latin1'), undefined]]);
        let model = new Map(committed);
        let tip = 0;
        const hashXs = Array.from({ length: 8 }, () => randomKey(rand, 0x75, 12).subarray(1));
        const key = () => {
          const r = rand();
          if (r < 0.5) return Buffer.concat([Buffer.from([0x75]), hashXs[Math.floor(rand() * 8)], Buffer.from([0, 0, 0, 0, Math.floor(rand() * 40), Math.floor(rand() * 3)])]);
          if (r < 0.8) return Buffer.from([0x6f, 0, 0, 0, Math.floor(rand() * 4), Math.floor(rand() * 256)]);
          return randomKey(rand, 0x73, 12);
        };
        const sorted = (m, gte, lt) => [...m.entries()]
          .filter(([k, v]) => v !== undefined && v !== null && k[0] !== 't' && k[0] !== 'm')
          .map(([k, v]) => [Buffer.from(k, 'latin1'), v])
          .filter(([k]) => (!gte || Buffer.compare(k, gte) >= 0) && (!lt || Buffer.compare(k, lt) < 0))
          .sort((a, b) => Buffer.compare(a[0], b[0]));
        const collect = async (it) => {
          const out = [];
          for await (const { key: k, value } of it) out.push([hex(k), hex(value)]);
          return out;
        };
        const check = async () => {
          for (let q = 0; q < 30; q++) {
            const k = key();
            assert.equal(hex(await kv.get(k)), hex(model.get(k.toString('latin1')) || undefined), 'get');
          }
          const ks = Array.from({ length: 20 }, key);
          const got = await kv.getMany(ks);
          ks.forEach((k, i) => assert.equal(hex(got[i]), hex(model.get(k.toString('latin1')) || undefined), 'getMany'));
          const hx = hashXs[Math.floor(rand() * 8)];
          const gte = Buffer.concat([Buffer.from([0x75]), hx]);
          const lt = Buffer.concat([Buffer.from([0x75]), hx, Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])]);
          const want = sorted(model, gte, lt).map(([k, v]) => [hex(k), hex(v)]);
          const snap = await kv.snapshot();
          try {
            assert.deepEqual(await collect(snap.range({ gte, lt })), want, 'one account\'s range');
            assert.deepEqual(await collect(snap.range({ gte, lt, reverse: true })), [...want].reverse(), 'reverse');
            assert.deepEqual(await collect(snap.range({ gte, lt, limit: 3 })), want.slice(0, 3), 'limit');
            const o = sorted(model, Buffer.from([0x6f]), Buffer.from([0x70])).map(([k, v]) => [hex(k), hex(v)]);
            assert.deepEqual(await collect(snap.range({ gte: Buffer.from([0x6f]), lt: Buffer.from([0x70]) })), o, 'a table');
          } finally {
            snap.release();
          }
        };
        const otherReader = async () => {
          const r = await openStore({ store: kind, datadir: store.datadir, network: 'regtest', readOnly: true }).catch(() => null);
          return r;
        };
        for (let group = 0; group < 3; group++) {
          await store.beginBulk();
          for (let w = 0; w < 40; w++) {
            const keys = [];
            const values = [];
            for (let i = 0; i < 50; i++) {
              keys.push(key());
              values.push(rand() < 0.25 ? null : Buffer.from(`g${group}w${w}i${i}`));
            }
            const tipBefore = model.get(TIP_KEY.toString('latin1'));
            keys.push(TIP_KEY);
            values.push(Buffer.from(`tip${++tip}`));
            const ok = await kv.write({ keys, values }, { key: TIP_KEY, value: tipBefore });
            assert.equal(ok, true);
            keys.forEach((k, i) => model.set(k.toString('latin1'), values[i]));
            // a write whose guard no longer holds is refused and changes nothing
            assert.equal(await kv.write({ keys: [keys[0]], values: [Buffer.from('x')] }, { key: TIP_KEY, value: tipBefore }), false);
            if (w % 8 === 0) await check();
          }
          if (kind === 'lmdb') {
            // another process's reader (here: another handle) sees the last commit only
            const r = await otherReader();
            if (r) {
              assert.equal(hex(await r.kv.get(TIP_KEY)), hex(committed.get(TIP_KEY.toString('latin1'))));
              await r.close();
            }
          }
          const keep = group !== 1;
          await store.endBulk({ commit: keep });
          if (keep) {
            for (const [k, v] of model) committed.set(k, v);
          } else {
            model = new Map(committed);
          }
          // the commit runs in the background: reads see its rows meanwhile, and after
          await check();
          await kv.settle();
          await check();
        }
        // what the backend itself holds equals the model
        const all = [];
        for await (const { key: k, value } of kv.base.range({})) if (k[0] !== 0x6d && k[0] !== 0x74) all.push([hex(k), hex(value)]);
        assert.deepEqual(all, sorted(committed).map(([k, v]) => [hex(k), hex(v)]));
      } finally {
        await store.close();
      }
    });
  });
}
