'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { NETWORKS, getNetwork } = require('../../lib/chain/networks');
const { parseBlock } = require('../../lib/chain/block');
const { openFile } = require('../../lib/sources/rawfile');
const { encodeAddress, decodeAddress } = require('../../lib/chain/address');
const { genesisBlock } = require('../../tools/generator/genesis');
const { tempDir } = require('../helpers/tmp');

// genesisBlock rebuilds testnet4's genesis from BIP94's fields and checks the table's hash.
const testnet4Genesis = () => genesisBlock('testnet4').raw;

describe('networks', () => {
  it('testnet4: the rebuilt genesis block hashes to the table\'s genesis and its known merkle root', () => {
    const block = parseBlock(testnet4Genesis());
    assert.equal(block.hash, NETWORKS.testnet4.genesis);
    assert.equal(block.txs[0].hash, '7aa0a7ae1e223414cb807e40cd57e667b718e42aaf9306db9102fe28912b7b4e');
    assert.equal(getNetwork('testnet4'), NETWORKS.testnet4);
  });

  it('testnet4 blocks files are read with --network testnet4 and named when read as another network', async () => {
    const dir = tempDir('t4');
    const raw = testnet4Genesis();
    const rec = Buffer.alloc(8);
    rec.writeUInt32BE(NETWORKS.testnet4.magic, 0);
    rec.writeUInt32LE(raw.length, 4);
    const file = path.join(dir, 'blk00000.dat');
    fs.writeFileSync(file, Buffer.concat([rec, raw]));
    const got = [];
    for await (const b of openFile(file, { network: 'testnet4' })) got.push(parseBlock(b.raw).hash);
    assert.deepEqual(got, [NETWORKS.testnet4.genesis]);
    await assert.rejects(async () => { for await (const b of openFile(file, { network: 'testnet' })) void b; },
      (err) => err.code === 'ERR_WRONG_NETWORK' && /pass --network testnet4/.test(err.message));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('testnet4 shares testnet3\'s address formats', () => {
    const p2wpkh = Buffer.from('0014751e76e8199196d454941c45d1b3a323f1433bd6', 'hex');
    const addr = encodeAddress(p2wpkh, 'testnet4');
    assert.equal(addr, encodeAddress(p2wpkh, 'testnet'));
    assert.ok(decodeAddress(addr, 'testnet4').script.equals(p2wpkh));
  });
});
