'use strict';

const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const { ParsePool, parseInOrder } = require('../../lib/chain/parse-pool');
const { parseColumns } = require('../../lib/chain/columns');
const { ParseError } = require('../../lib/errors');
const { RAW_BLOCKS, readFixture } = require('../helpers/fixtures');

const COLUMNS = ['txids', 'inStart', 'outStart', 'prevouts', 'values', 'idType', 'idLen', 'idHash', 'scripthashes'];

describe('parse pool (worker threads)', () => {
  let pool;
  before(() => { pool = new ParsePool({ threads: 2 }); });
  after(() => pool.close());

  it('gives the same columns as parsing inline, with Buffer columns intact', async () => {
    for (const rel of RAW_BLOCKS) {
      const raw = readFixture(rel);
      const want = parseColumns(raw);
      const got = await pool.parse(raw);
      assert.equal(got.hash, want.hash, rel);
      assert.equal(got.txCount, want.txCount);
      for (const k of COLUMNS) {
        assert.deepEqual(Buffer.from(got[k].buffer, got[k].byteOffset, got[k].byteLength),
          Buffer.from(want[k].buffer, want[k].byteOffset, want[k].byteLength), `${rel} ${k}`);
      }
      for (const k of ['txids', 'prevouts', 'idHash', 'scripthashes', 'header']) assert.ok(Buffer.isBuffer(got[k]), `${k} is a Buffer`);
      assert.equal(got.header.toString('hex'), want.header.toString('hex'));
    }
  });

  it('keeps stream order and passes typed errors through', async () => {
    const blocks = RAW_BLOCKS.map((rel) => ({ rel, raw: readFixture(rel) }));
    async function* feed() { yield* blocks; }
    const order = [];
    for await (const rec of parseInOrder(feed(), pool, 3)) order.push(rec.rel);
    assert.deepEqual(order, RAW_BLOCKS);
    const bad = Buffer.from(readFixture('mainnet/block482683.raw'));
    bad[200] ^= 0xff;
    await assert.rejects(pool.parse(bad), (err) => err instanceof ParseError && /^ERR_/.test(err.code));
  });

  it('keeps a process alive while a parse is pending (idle workers are unref\'d)', () => {
    const script = `
      const { ParsePool } = require(${JSON.stringify(path.join(__dirname, '../../lib/chain/parse-pool'))});
      const raw = require('node:fs').readFileSync(${JSON.stringify(path.join(__dirname, '../fixtures/mainnet/block482683.raw'))});
      const pool = new ParsePool({ threads: 1 });
      pool.parse(raw).then((c) => console.log('txs', c.txCount));`;
    const out = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20000 });
    assert.equal(out.trim(), 'txs 12');
  });
});
