'use strict';

const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const { merkleBranch, HeaderMerkle } = require('../../lib/electrum/merkle');
const { statusHash, statusPrefix, statusOfText, mempoolText, mempoolTextOf, mempoolPart, extendMempoolPart, orderMempool } = require('../../lib/electrum/status');
const { historyJSON, statusText } = require('../../lib/electrum/encode');
const { merkleRoot } = require('../../lib/chain/merkle');
const { sha256d, fromDisplayHex, toDisplayHex } = require('../../lib/chain/hash');
const { mainnet439Blocks } = require('../helpers/fixtures');
const { prng } = require('../helpers/prng');

/** Walks a branch up from a leaf: the root it proves. */
function rootFromBranch(leaf, index, branch) {
  let h = leaf;
  for (const sib of branch) {
    h = sha256d(Buffer.concat(index & 1 ? [sib, h] : [h, sib]));
    index >>= 1;
  }
  return h;
}

function randomHashes(n, rnd) {
  return Array.from({ length: n }, () => Buffer.from(Array.from({ length: 32 }, () => Math.floor(rnd() * 256))));
}

describe('electrum: merkle branches', () => {
  it('every leaf of trees of 1..70 leaves proves the root lib/chain/merkle computes', () => {
    const rnd = prng(11);
    for (let n = 1; n <= 70; n++) {
      const leaves = randomHashes(n, rnd);
      const want = merkleRoot(leaves);
      for (let i = 0; i < n; i++) {
        const { branch, root } = merkleBranch(leaves, i);
        assert.ok(root.equals(want), `n=${n}`);
        assert.ok(rootFromBranch(leaves[i], i, branch).equals(want), `n=${n} i=${i}`);
      }
    }
  });

  it('header proofs cut into runs equal the proof over the whole tree, for any length and cache state', async () => {
    const rnd = prng(12);
    const chain = randomHashes(300, rnd);
    let reads = 0;
    const hashesAt = async (from, count) => {
      reads += count;
      return chain.slice(from, from + count);
    };
    for (const depth of [2, 3, 5]) {
      const hm = new HeaderMerkle(hashesAt, depth);
      for (let round = 0; round < 60; round++) {
        const length = 1 + Math.floor(rnd() * chain.length);
        const index = Math.floor(rnd() * length);
        const got = await hm.branchAndRoot(length, index);
        const want = merkleBranch(chain.slice(0, length), index);
        assert.deepEqual(got.branch.map(toDisplayHex), want.branch.map(toDisplayHex), `depth ${depth} length ${length} index ${index}`);
        assert.ok(got.root.equals(want.root));
      }
    }
    // a reorg rewrites a cached run: the proof follows the new hashes
    const hm = new HeaderMerkle(hashesAt, 3);
    await hm.branchAndRoot(200, 150);
    chain[17] = crypto.randomBytes(32);
    chain[23] = crypto.randomBytes(32); // the last hash of run 2 (heights 16..23)
    const got = await hm.branchAndRoot(200, 150);
    assert.ok(got.root.equals(merkleBranch(chain.slice(0, 200), 150).root));
    assert.ok(reads > 0);
  });

  it('the protocol documentation\'s example: header 5 proved to checkpoint 8 on mainnet', async () => {
    const hashes = mainnet439Blocks().map((b) => sha256d(b.subarray(0, 80)));
    const hm = new HeaderMerkle(async (from, count) => hashes.slice(from, from + count));
    const { branch, root } = await hm.branchAndRoot(9, 5);
    assert.deepEqual(branch.map(toDisplayHex), [
      '000000004ebadb55ee9096c9a2f8880e09da59c0d68b1c228da88e48844a1485',
      '96cbbc84783888e4cc971ae8acf86dd3c1a419370336bb3c634c97695a8c5ac9',
      '965ac94082cebbcffe458075651e9cc33ce703ab0115c72d9e8b1a9906b2b636',
      '89e5daa6950b895190716dd26054432b564ccdc2868188ba1da76de8e1dc7591',
    ]);
    assert.equal(toDisplayHex(root), 'e347b1c43fd9b5415bf0d92708db8284b78daf4d0e24f9c3405f45feb85e25db');
  });
});

describe('electrum: status hash', () => {
  it('the protocol documentation\'s example: three confirmed, two height-0 and one height -1 mempool txs', () => {
    const e = (hash, height) => ({ txid: fromDisplayHex(hash), height });
    const confirmed = [
      e('a6c9c361bd0bc536d6a22648efbf8f9b200e425ef6c3a7a9669dc444c532a347', 2472),
      e('9c42f84b2fcdaff676ba25d9d4941741cc0d1a01cce0c23fdc4c0b2afa38431c', 2473),
      e('770f2d4371b3fabb902dd9a103e2dd005fcd3971181078fca4a2a1d6ff127b30', 2473),
    ];
    // given in another order: the mempool part is sorted by (-height, txid)
    const mempool = [
      e('bb4c8ab438c13b89ca80d1d5bee25b0b6b7f55673f4d801998ba97db161d9e85', -1),
      e('e02a1dadfa83b996b24175df807b271ea5d02937ef5b35c195fac1e1bdc3198f', 0),
      e('80b19848aed792565ab7c5a79b7c2a00fbf985741579396ebe0ab6098e607311', 0),
    ];
    assert.equal(statusHash(confirmed, mempool), '78e96c6562cafa71c115503b9411fdfdc595a45031e2ab76ff75162fe1b0590d');
  });

  it('is null for no transactions and sha256 of "txid:height:" otherwise', () => {
    assert.equal(statusHash([], []), null);
    const txid = crypto.randomBytes(32);
    const want = crypto.createHash('sha256').update(`${toDisplayHex(txid)}:170:`).digest('hex');
    assert.equal(statusHash([{ txid, height: 170 }]), want);
  });

  it('a mempool part ordered from the bytes equals the protocol order by displayed hex, ties in the leading bytes included', () => {
    const rnd = prng(29);
    const confirmed = randomHashes(40, rnd).map((txid, k) => ({ txid, height: 100 + k }));
    for (const n of [1, 2, 50, 3000]) {
      const mempool = randomHashes(n, rnd).map((txid) => ({ txid, height: rnd() < 0.3 ? -1 : 0 }));
      // a third share their displayed first six bytes (and some their first 31) with another
      for (let k = 1; k < n; k += 3) {
        const from = mempool[Math.floor(rnd() * k)].txid;
        from.copy(mempool[k].txid, rnd() < 0.5 ? 26 : 1, rnd() < 0.5 ? 26 : 1, 32);
      }
      const byHex = mempool.map((e) => ({ ...e, hash: toDisplayHex(e.txid) }))
        .sort((a, b) => b.height - a.height || (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0));
      assert.deepEqual(orderMempool(mempool).map((e) => [e.hash, e.height]), byHex.map((e) => [e.hash, e.height]));
      const text = [...confirmed, ...byHex].map((e) => `${toDisplayHex(e.txid)}:${e.height}:`).join('');
      const want = crypto.createHash('sha256').update(text).digest('hex');
      assert.equal(statusHash(confirmed, mempool), want);
      assert.equal(statusOfText(statusPrefix(confirmed), mempoolText(mempool)), want);
      // given apart, each txid at the start of a longer buffer (a mempool part's bytes)
      const parts = mempool.map((e) => Buffer.concat([e.txid, crypto.randomBytes(1 + Math.floor(rnd() * 40))]));
      assert.equal(statusOfText(statusPrefix(confirmed), mempoolTextOf(parts, Int8Array.from(mempool, (e) => e.height))), want);
      // kept, then extended by the rest (in any order): the same text, the same places
      const heights = Int8Array.from(mempool, (e) => e.height);
      const cut = Math.floor(rnd() * n);
      const whole = mempoolPart(parts, heights);
      const grown = extendMempoolPart(mempoolPart(parts.slice(0, cut), heights.slice(0, cut)), parts.slice(cut).reverse(), heights.slice(cut).reverse());
      assert.equal(whole.text.toString('latin1'), mempoolTextOf(parts, heights).toString('latin1'));
      assert.equal(grown.text.toString('latin1'), whole.text.toString('latin1'));
      assert.deepEqual([...grown.ends], [...whole.ends]);
      assert.deepEqual([...grown.heights], [...whole.heights]);
      assert.ok(grown.txids.every((t, k) => t.subarray(0, 32).equals(whole.txids[k].subarray(0, 32))));
    }
  });
});

describe('electrum: answers written into bytes', () => {
  it('historyJSON and statusText equal what JSON.stringify and string concatenation give', () => {
    const rnd = prng(13);
    for (const n of [0, 1, 2, 17, 500]) {
      const entries = randomHashes(n, rnd).map((txid) => ({ txid, height: Math.floor(rnd() * 3e6) - 2 }));
      assert.equal(historyJSON(entries), JSON.stringify(entries.map((e) => ({ tx_hash: toDisplayHex(e.txid), height: e.height }))));
      assert.equal(statusText(entries).toString('latin1'), entries.map((e) => `${toDisplayHex(e.txid)}:${e.height}:`).join(''));
    }
  });
});
