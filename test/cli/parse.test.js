'use strict';

const assert = require('node:assert/strict');
const path = require('node:path');
const { runCli } = require('../helpers/cli');
const bitcore = require('bitcore-lib');
const { KNOWN_HASHES, MAINNET_439, fixturePath, readFixture } = require('../helpers/fixtures');

/** Runs the CLI; resolves {code, stdout, stderr} whatever the exit code. */
const cli = (...args) => runCli(args);

/** Asserts a failed run printed exactly one `addrindex: … [CODE]` line and nothing on stdout. */
function assertOneLineError(res, code) {
  assert.notEqual(res.code, 0);
  assert.equal(res.stdout, '');
  assert.match(res.stderr, new RegExp(`^addrindex: [^\\n]+ \\[${code}\\]\\n$`));
}

describe('addrindex parse / demo (CLI)', function () {
  this.timeout(20000);

  it('parse a mainnet raw block: one JSON array, 12 txs, the block hash', async () => {
    const rel = 'mainnet/block482683.raw';
    const res = await cli('parse', fixturePath(rel));
    assert.equal(res.code, 0, res.stderr);
    const blocks = JSON.parse(res.stdout);
    assert.equal(blocks.length, 1);
    const [b] = blocks;
    assert.equal(b.hash, KNOWN_HASHES[rel]);
    assert.deepEqual(Object.keys(b), ['hash', 'prev', 'time', 'txs']);
    assert.equal(b.txs.length, 12);
    // every field of every tx against bitcore-lib
    const ref = bitcore.Block.fromBuffer(readFixture(rel));
    assert.equal(b.prev, Buffer.from(ref.header.prevHash).reverse().toString('hex'));
    assert.equal(b.time, ref.header.time);
    b.txs.forEach((tx, i) => {
      const rtx = ref.transactions[i];
      assert.equal(tx.txid, rtx.hash);
      assert.equal(tx.coinbase, rtx.isCoinbase());
      if (!tx.coinbase) assert.deepEqual(tx.inputs, rtx.inputs.map((inp) => ({ txid: inp.prevTxId.toString('hex'), vout: inp.outputIndex })));
      tx.outputs.forEach((out, k) => {
        assert.deepEqual(Object.keys(out), ['vout', 'value', 'type', 'address', 'scripthash']);
        assert.equal(out.vout, k);
        assert.equal(out.value, rtx.outputs[k].satoshis);
        const addr = rtx.outputs[k].script.toAddress('livenet');
        assert.equal(out.address, addr ? addr.toString() : null);
      });
    });
    assert.equal(b.txs[0].outputs[1].type, 'nulldata');
    assert.equal(b.txs[0].outputs[1].scripthash, null);
  });

  it('parse --network testnet on a testnet raw block gives testnet addresses', async () => {
    const rel = 'testnet/block1087400.raw';
    const res = await cli('parse', fixturePath(rel), '--network', 'testnet', '--json');
    assert.equal(res.code, 0, res.stderr);
    const [b] = JSON.parse(res.stdout);
    assert.equal(b.hash, KNOWN_HASHES[rel]);
    const ref = bitcore.Block.fromBuffer(readFixture(rel));
    let n = 0;
    b.txs.forEach((tx, i) => tx.outputs.forEach((out, k) => {
      const addr = ref.transactions[i].outputs[k].script.toAddress('testnet');
      assert.equal(out.address, addr ? addr.toString() : null);
      if (out.address) {
        assert.match(out.address, /^[mn2]|^tb1/);
        n++;
      }
    }));
    assert.ok(n > 100);
  });

  it('parse a blocks file: 439 blocks, and the first payment at height 170', async () => {
    const res = await cli('parse', MAINNET_439);
    assert.equal(res.code, 0, res.stderr);
    const blocks = JSON.parse(res.stdout);
    assert.equal(blocks.length, 439);
    const tx = blocks[170].txs.find((t) => t.txid.startsWith('f4184fc5'));
    assert.deepEqual(tx.inputs, [{ txid: '0437cd7f8525ceed2324359c2d0ba26006d92d856a9c20fa0241106ee5a597c9', vout: 0 }]);
    assert.deepEqual(tx.outputs[0].value, 1000000000);
    assert.deepEqual(tx.outputs[0].type, 'p2pk');
    assert.deepEqual(tx.outputs[0].address, '1Q2TWHE3GMdB6BZKafqwxXtWAWgFt5Jvm3');
  });

  it('a nonexistent file: one error line, non-zero exit', async () => {
    const res = await cli('parse', '/nonexistent/block.raw');
    assertOneLineError(res, 'ERR_NO_FILE');
    assert.match(res.stderr, /\/nonexistent\/block\.raw/);
  });

  it('a blocks file of another network: one error line naming it', async () => {
    const res = await cli('parse', MAINNET_439, '--network', 'testnet');
    assertOneLineError(res, 'ERR_WRONG_NETWORK');
    assert.match(res.stderr, /main blocks file/);
  });

  it('a file that is not a block: one error line naming the file', async () => {
    const res = await cli('parse', path.join(__dirname, '..', '..', 'package.json'));
    assert.notEqual(res.code, 0);
    assert.equal(res.stdout, '');
    assert.match(res.stderr, /^addrindex: \S+package\.json: block at offset 0: [^\n]+ \[ERR_[A-Z_]+\]\n$/);
  });

  it('usage errors: no file, an unknown network', async () => {
    assertOneLineError(await cli('parse', fixturePath('mainnet/block482683.raw'), '--network', 'moon'), 'ERR_UNKNOWN_NETWORK');
    const res = await cli('parse');
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, /parse takes exactly one FILE[\s\S]*\[ERR_USAGE\]\n$/);
  });

  it('demo (npm start) reads the 439 blocks and shows the height-170 payment', async () => {
    const res = await cli('demo');
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stderr, '');
    assert.match(res.stdout, /blocks\s+439 \(heights 0–438\), every merkle root checked/);
    assert.match(res.stdout, /tip\s+438 0000000025c6b644f8add734be7e666fa4afa43ca0204d623a0c0b1fd2104c7a/);
    assert.match(res.stdout, /tx f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16/);
    assert.match(res.stdout, /10\.00000000 BTC → 1Q2TWHE3GMdB6BZKafqwxXtWAWgFt5Jvm3 \(p2pk\)/);
  });

  it('the command list includes demo and parse', async () => {
    const res = await cli('--help');
    assert.equal(res.code, 0);
    assert.match(res.stdout, /^\s+parse$/m);
    assert.match(res.stdout, /^\s+demo$/m);
  });
});
