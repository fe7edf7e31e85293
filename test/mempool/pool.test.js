'use strict';

const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const { MempoolPool } = require('../../lib/mempool/pool');
const { mempoolEntry } = require('../../lib/mempool/entry');
const { decodeMempoolTx } = require('../../lib/codec/mempool');
const { Wallet } = require('../helpers/wallet');

/**
 * The pool's rules on transactions signed by bitcore-lib, without a node: the confirmed
 * outputs are a table the test writes, answered the way store.getPrevouts answers.
 */

const wallet = new Wallet('addrindex-pool-tests');
const TIP = 'aa'.repeat(32);
const TIP2 = 'bb'.repeat(32);

/** A coin "confirmed in the index": a made-up txid (seeded), paying `label`'s P2WPKH. */
function coin(n, satoshis = 1e6) {
  const out = wallet.output('p2wpkh', `coin-${n}`);
  const txId = crypto.createHash('sha256').update(`coin ${n}`).digest('hex');
  return { txId, outputIndex: n % 3, satoshis, script: out.script, kind: 'p2wpkh', address: out.address, signer: out.signer };
}

/** The index as a table of unspent outputs, and how often it was asked. */
function index(coins) {
  const table = new Map(coins.map((c) => [`${c.txId}:${c.outputIndex}`, c]));
  const lookup = async (outpoints) => {
    lookup.asked += outpoints.length / 36;
    const out = [];
    for (let at = 0; at < outpoints.length; at += 36) {
      const txid = Buffer.from(outpoints.subarray(at, at + 32)).reverse().toString('hex');
      const c = table.get(`${txid}:${outpoints.readUInt32LE(at + 32)}`);
      out.push(c ? { value: c.satoshis, scripthash: crypto.createHash('sha256').update(c.script.toBuffer()).digest(), height: 1, txNum: 1 } : null);
    }
    return out;
  };
  lookup.asked = 0;
  lookup.table = table;
  return lookup;
}

const entry = (made, time = 1000) => mempoolEntry(Buffer.from(made.hex, 'hex'), time, made.txid);
const ids = (pool) => pool.order.filter((e) => e.included).map((e) => e.id);
/** The snapshot's transactions as the store gets them: each included entry's part, decoded. */
const partsOf = (pool) => {
  pool.changes();
  return pool.order.map((e) => decodeMempoolTx(e.record));
};
/** A change as txid lists: [left, entered or changed (with places)]. */
const described = (c) => [c.removed.map((e) => e.id), c.upserts.map((e) => [e.id, e.rank])];

describe('the mempool pool (lib/mempool/pool.js): what a snapshot holds, in which order', () => {
  it('parents before children whatever the arrival order; a child waits for a parent it cannot resolve, with its descendants', async () => {
    const c = coin(1);
    const parent = wallet.pay([c], [{ kind: 'p2wpkh', label: 'p', satoshis: 500000 }, { kind: 'p2tr', label: 'p2' }], { fee: 1000 });
    const child = wallet.pay([parent.coins[0]], [{ kind: 'p2pkh', label: 'ch' }], { fee: 800 });
    const grand = wallet.pay([child.coins[0]], [{ kind: 'p2wpkh', label: 'g' }], { fee: 700 });
    const lookup = index([c]);
    const pool = new MempoolPool();
    pool.add(entry(grand));
    pool.add(entry(child));
    let r = await pool.resolve(TIP, false, lookup);
    assert.deepEqual(ids(pool), [], 'the parent is unknown: neither is in');
    assert.equal(r.changed, true, 'a first resolve always writes (the tip is new)');
    pool.add(entry(parent));
    r = await pool.resolve(TIP, true, lookup);
    assert.equal(r.changed, true);
    assert.deepEqual(ids(pool), [parent.txid, child.txid, grand.txid]);
    const snap = { txs: partsOf(pool) };
    assert.deepEqual(snap.txs.map((t) => [t.fee, t.vsize]), [parent, child, grand].map((m) => [m.tx._getUnspentValue(), m.tx.vsize]));
    assert.deepEqual(snap.txs[1].inputs.map((i) => [i.unconfirmed, i.value]), [[true, 500000]]);
    assert.deepEqual(snap.txs[0].inputs.map((i) => [i.unconfirmed, i.value]), [[false, 1e6]]);

    // the parent leaves (it could no longer be fetched, say): the rest leave with it
    pool.delete(parent.txid);
    r = await pool.resolve(TIP, true, lookup);
    assert.equal(r.changed, true);
    assert.deepEqual(ids(pool), []);
  });

  it('the same pool resolved again at the same tip: nothing asked, nothing changed, the same bytes from the same encoded parts', async () => {
    const cs = [coin(2), coin(3)];
    const a = wallet.pay([cs[0]], [{ kind: 'p2wpkh', label: 'a' }], { fee: 1000 });
    const b = wallet.pay([cs[1]], [{ kind: 'p2tr', label: 'b' }], { fee: 2000 });
    const lookup = index(cs);
    const pool = new MempoolPool();
    pool.add(entry(a));
    pool.add(entry(b));
    await pool.resolve(TIP, false, lookup);
    const first = pool.changes();
    assert.deepEqual(described(first), [[], [[a.txid, 1], [b.txid, 2]]]);
    pool.markStored(first);
    // stored: the entries let their parts and bytes go
    pool.order.forEach((e) => assert.deepEqual([e.record, e.raw, e.storedCurrent], [null, null, true]));
    assert.equal(lookup.asked, 2);
    const r = await pool.resolve(TIP, true, lookup);
    assert.deepEqual(r, { changed: false, asked: 0 });
    assert.deepEqual(described(pool.changes()), [[], []], 'nothing to store');
    pool.order.forEach((e) => assert.deepEqual([e.record, e.storedCurrent], [null, true], 'not encoded again'));
  });

  it('a change holds what left, what entered and what changed in place; places increase parents first and survive a reorg where they still can', async () => {
    const cs = [coin(20), coin(21), coin(22)];
    const a = wallet.pay([cs[0]], [{ kind: 'p2wpkh', label: 'a' }], { fee: 1000 });
    const child = wallet.pay([a.coins[0]], [{ kind: 'p2wpkh', label: 'ac' }], { fee: 900 });
    const b = wallet.pay([cs[1]], [{ kind: 'p2tr', label: 'b' }], { fee: 2000 });
    const c = wallet.pay([cs[2]], [{ kind: 'p2wpkh', label: 'c' }], { fee: 3000 });
    const lookup = index(cs);
    const pool = new MempoolPool();
    for (const m of [child, a, b]) pool.add(entry(m));
    await pool.resolve(TIP, false, lookup);
    let ch = pool.changes();
    assert.deepEqual(described(ch), [[], [[a.txid, 1], [child.txid, 2], [b.txid, 3]]]);
    pool.markStored(ch);
    // b leaves (confirmed), c arrives
    pool.delete(b.txid);
    pool.add(entry(c));
    await pool.resolve(TIP, true, lookup);
    ch = pool.changes();
    assert.deepEqual(described(ch), [[b.txid], [[c.txid, 4]]]);
    pool.markStored(ch);
    // a refused store leaves the change to the next poll: here, nothing was marked
    pool.delete(a.txid);
    await pool.resolve(TIP, true, lookup);
    ch = pool.changes();
    assert.deepEqual(described(ch), [[a.txid, child.txid], []], 'the child goes with its parent');
    pool.markStored(ch);
    // a reorg resolves all anew: kept places stay, as they are still parents first
    pool.add(entry(a));
    pool.add(entry(child));
    await pool.resolve(TIP2, false, lookup);
    ch = pool.changes();
    assert.deepEqual(described(ch), [[], [[a.txid, 5], [child.txid, 6]]]);
    assert.deepEqual(ch.moved, []);
    assert.deepEqual(pool.order.map((e) => [e.id, e.rank]), [[c.txid, 4], [a.txid, 5], [child.txid, 6]]);
    pool.markStored(ch);
    // a reorg returns c's parent to the pool: c moves after it, leaving its stored place (4)
    const back = wallet.pay([coin(23)], [{ kind: 'p2wpkh', label: 'back' }], { fee: 1000 });
    const kid = wallet.pay([back.coins[0]], [{ kind: 'p2wpkh', label: 'kid' }], { fee: 1000 });
    lookup.table.set(`${back.txid}:0`, back.coins[0]);
    pool.add(entry(kid));
    await pool.resolve(TIP2, true, lookup);
    pool.markStored(pool.changes());
    assert.deepEqual(pool.order.map((e) => [e.id, e.rank]), [[c.txid, 4], [a.txid, 5], [child.txid, 6], [kid.txid, 7]]);
    lookup.table.delete(`${back.txid}:0`);
    lookup.table.set(`${coin(23).txId}:${coin(23).outputIndex}`, coin(23));
    pool.add(entry(back));
    await pool.resolve(TIP, false, lookup);
    ch = pool.changes();
    assert.deepEqual(described(ch), [[], [[back.txid, 8], [kid.txid, 9]]]);
    assert.deepEqual(ch.moved.map((e) => [e.id, e.storedRank, e.rank]), [[kid.txid, 7, 9]], 'the store is told the place it leaves');
  });

  it('work in proportion to the change: a resolve at the same tip looks again only at what arrived and what waited for it; changes() only at what settled', async () => {
    const cs = [coin(40), coin(41), coin(42)];
    const kept = wallet.pay([cs[0]], [{ kind: 'p2wpkh', label: 'k' }], { fee: 1000 });
    const parent = wallet.pay([cs[1]], [{ kind: 'p2wpkh', label: 'wp' }], { fee: 1000 });
    const child = wallet.pay([parent.coins[0]], [{ kind: 'p2wpkh', label: 'wc' }], { fee: 1000 });
    const orphan = wallet.pay([wallet.pay([coin(49)], [{ kind: 'p2wpkh', label: 'nope' }], { fee: 1000 }).coins[0]], [{ kind: 'p2wpkh', label: 'o' }], { fee: 1000 });
    const late = wallet.pay([cs[2]], [{ kind: 'p2wpkh', label: 'late' }], { fee: 1000 });
    const lookup = index(cs);
    const pool = new MempoolPool();
    for (const m of [kept, child, orphan]) pool.add(entry(m));
    await pool.resolve(TIP, false, lookup);
    pool.markStored(pool.changes());
    assert.deepEqual(ids(pool), [kept.txid]);
    const looked = [];
    const find = pool._findParents.bind(pool);
    pool._findParents = (e, again) => {
      looked.push(e.id);
      return find(e, again);
    };
    // nothing arrived: nothing is looked at, nothing to store
    await pool.resolve(TIP, true, lookup);
    assert.deepEqual([looked, described(pool.changes())], [[], [[], []]]);
    // the parent arrives: it and the child waiting for it are looked at, not the orphan
    pool.add(entry(parent));
    await pool.resolve(TIP, true, lookup);
    assert.deepEqual(looked.sort(), [parent.txid, child.txid].sort());
    assert.deepEqual(described(pool.changes()), [[], [[parent.txid, 2], [child.txid, 3]]]);
    pool.markStored(pool.changes());
    looked.length = 0;
    pool.add(entry(late));
    await pool.resolve(TIP, true, lookup);
    assert.deepEqual(looked, [late.txid]);
    assert.deepEqual(described(pool.changes()), [[], [[late.txid, 4]]]);
    // a new tip looks at every waiting entry again (what was missing may be confirmed now)
    looked.length = 0;
    await pool.resolve(TIP2, true, lookup);
    assert.deepEqual(looked, [orphan.txid]);
  });

  it('a block confirming parents: only their spenders are asked again, and no part is rewritten; a parent that left unconfirmed takes its descendants along', async () => {
    const cs = [coin(60), coin(61), coin(62), coin(63)];
    const parent = wallet.pay([cs[0]], [{ kind: 'p2wpkh', label: 'bp' }], { fee: 1000 });
    const child = wallet.pay([parent.coins[0]], [{ kind: 'p2wpkh', label: 'bc' }], { fee: 1000 });
    const grand = wallet.pay([child.coins[0]], [{ kind: 'p2wpkh', label: 'bg' }], { fee: 1000 });
    const others = [cs[1], cs[2]].map((c, k) => wallet.pay([c], [{ kind: 'p2wpkh', label: `bo${k}` }], { fee: 1000 }));
    const replaced = wallet.pay([cs[3]], [{ kind: 'p2wpkh', label: 'br' }], { fee: 1000 });
    const hanging = wallet.pay([replaced.coins[0]], [{ kind: 'p2wpkh', label: 'bh' }], { fee: 1000 });
    const lookup = index(cs);
    const pool = new MempoolPool();
    for (const m of [parent, child, grand, ...others, replaced, hanging]) pool.add(entry(m));
    await pool.resolve(TIP, false, lookup);
    pool.markStored(pool.changes());
    const ranks = new Map(pool.order.map((e) => [e.id, e.rank]));

    // the block at TIP2 confirms the parent: the index now holds its output, not cs[0]
    lookup.table.delete(`${cs[0].txId}:${cs[0].outputIndex}`);
    lookup.table.set(`${parent.txid}:0`, { txId: parent.txid, outputIndex: 0, satoshis: parent.coins[0].satoshis, script: parent.coins[0].script });
    pool.delete(parent.txid);
    const settled = [];
    for (const e of pool.order) {
      const settle = e.settle.bind(e);
      e.settle = () => {
        settled.push(e.id);
        return settle();
      };
    }
    lookup.asked = 0;
    assert.equal((await pool.resolve(TIP2, true, lookup)).changed, true);
    assert.equal(lookup.asked, 1, "only the child's input is asked of the index");
    assert.deepEqual(settled, [child.txid], 'the other kept entries are not settled again');
    // only the parent leaves: every part stays the same bytes, the child's too (its input's
    // flag 2 says what it spent when written; readers find the parent gone from the snapshot)
    assert.deepEqual(described(pool.changes()), [[parent.txid], []]);
    pool.markStored(pool.changes());
    for (const e of pool.order) assert.deepEqual([e.record, e.storedCurrent], [null, true], `${e.id}: the stored part stands, not encoded again`);
    assert.equal(ranks.get(child.txid), pool.order[0].rank);
    assert.deepEqual(ids(pool), [child.txid, grand.txid, others[0].txid, others[1].txid, replaced.txid, hanging.txid]);
    assert.equal(pool.totals.count, 6);
    assert.equal(pool.totals.fee, 6000);

    // `replaced` leaves without being confirmed (a conflicting block spent cs[3]): what spent it
    // is not in the index, and it leaves with its descendants
    lookup.table.delete(`${cs[3].txId}:${cs[3].outputIndex}`);
    pool.delete(replaced.txid);
    await pool.resolve(TIP, true, lookup);
    assert.deepEqual(ids(pool), [child.txid, grand.txid, others[0].txid, others[1].txid]);
    assert.deepEqual(described(pool.changes()), [[replaced.txid, hanging.txid], []]);
    assert.deepEqual(pool.totals, { count: 4, vsize: pool.order.reduce((n, e) => n + e.vsize, 0), fee: 4000 });
    assert.deepEqual(pool.waiting.map((e) => e.id), [hanging.txid]);
  });

  it('confirm(): a block\'s transactions leave, and every held one spending what the block spends, with its descendants; a confirmed parent\'s spenders settle from it as the index would answer, with no lookup', async () => {
    const cs = [coin(70), coin(71), coin(72), coin(73)];
    const parent = wallet.pay([cs[0]], [{ kind: 'p2pk', label: 'cp' }, { kind: 'p2wpkh', label: 'cp1', satoshis: 300000 }], { fee: 1000 });
    const kid = wallet.pay([parent.coins[0]], [{ kind: 'p2tr', label: 'ck' }], { fee: 900 });
    // spends the parent's other output, which the block's own spender takes too
    const loser = wallet.pay([parent.coins[1]], [{ kind: 'p2wpkh', label: 'cl' }], { fee: 800 });
    const loserKid = wallet.pay([loser.coins[0]], [{ kind: 'p2wpkh', label: 'clk' }], { fee: 700 });
    const rival = wallet.pay([parent.coins[1]], [{ kind: 'p2wpkh', label: 'cr' }], { fee: 5000 });
    // spends a confirmed coin the block spends otherwise
    const doubled = wallet.pay([cs[1]], [{ kind: 'p2wpkh', label: 'cd' }], { fee: 1000 });
    const winner = wallet.pay([cs[1]], [{ kind: 'p2wpkh', label: 'cw' }], { fee: 6000 });
    const bystander = wallet.pay([cs[2]], [{ kind: 'p2wpkh', label: 'cb' }], { fee: 1000 });
    const lookup = index(cs);
    const pool = new MempoolPool();
    for (const m of [parent, kid, loser, loserKid, doubled, bystander]) pool.add(entry(m));
    await pool.resolve(TIP, false, lookup);
    const stored = pool.changes();
    const kidPart = pool.get(kid.txid).record;
    pool.markStored(stored);
    // transactions that come and go leave their inputs' tags behind until the tags are rebuilt:
    // what is held is found all the same
    const churn = wallet.pay([coin(74)], [{ kind: 'p2wpkh', label: 'cc' }], { fee: 100 });
    let most = 0;
    for (let k = 0; k < 3000; k++) {
      pool.add(entry(churn));
      pool.delete(churn.txid);
      most = Math.max(most, pool.spendLen);
    }
    assert.ok(most <= 2048 && pool.spendLen < most, `rebuilt (${pool.spendLen} of at most ${most} tags)`);

    const block = [parent, rival, winner, wallet.pay([cs[3]], [{ kind: 'p2wpkh', label: 'cx' }], { fee: 100 })]
      .map((m) => require('../../lib/chain/tx').parseTransaction(Buffer.from(m.hex, 'hex')));
    const { confirmed, conflicts } = pool.confirm(block);
    assert.equal(confirmed, 1);
    assert.deepEqual(conflicts.sort(), [loser.txid, loserKid.txid, doubled.txid].sort());
    lookup.asked = 0;
    assert.equal((await pool.resolve(TIP2, true, lookup)).changed, true);
    assert.equal(lookup.asked, 0, "the kid's input is the confirmed parent's output, as the block shows it");
    assert.deepEqual(ids(pool), [kid.txid, bystander.txid]);
    const c = pool.changes();
    assert.deepEqual(c.removed.map((e) => e.id).sort(), [parent.txid, loser.txid, loserKid.txid, doubled.txid].sort());
    const k = pool.get(kid.txid);
    assert.ok(k.storedCurrent && !c.upserts.includes(k), 'its part stands');

    assert.equal(k.ref(0), null, 'it spends a confirmed output now');
    assert.deepEqual(decodeMempoolTx(kidPart).inputs.map((i) => [i.value, i.unconfirmed, !!i.p2pk]), [[parent.coins[0].satoshis, true, true]],
      "the part written while the parent was held: its value and the P2PK output's own script hash");
    pool.markStored(c);
    // settled as an index lookup would have: the next resolve at that tip has nothing to do
    const again = await pool.resolve(TIP2, true, lookup);
    assert.deepEqual([again.changed, again.asked, lookup.asked], [false, 0, 0]);
    assert.deepEqual(described(pool.changes()), [[], []]);
  });

  it('trim: past the limit the lowest descendant score goes first, with its descendants (never a child without its parent); waiting ones before any', async () => {
    const cs = [coin(30), coin(31), coin(32), coin(33)];
    const low = wallet.pay([cs[0]], [{ kind: 'p2wpkh', label: 'low' }], { fee: 200 });
    // a high-paying child lifts its parent's package above `mid` (child pays for parent)
    const cpfpParent = wallet.pay([cs[1]], [{ kind: 'p2wpkh', label: 'cp' }], { fee: 150 });
    const cpfpChild = wallet.pay([cpfpParent.coins[0]], [{ kind: 'p2wpkh', label: 'cc' }], { fee: 20000 });
    const mid = wallet.pay([cs[2]], [{ kind: 'p2wpkh', label: 'mid' }], { fee: 1500 });
    const lowParent = wallet.pay([cs[3]], [{ kind: 'p2wpkh', label: 'lp' }], { fee: 100 });
    const lowChild = wallet.pay([lowParent.coins[0]], [{ kind: 'p2wpkh', label: 'lc' }], { fee: 100 });
    const orphan = wallet.pay([coin(39)], [{ kind: 'p2wpkh', label: 'o' }], { fee: 5000 });
    const pool = new MempoolPool();
    for (const m of [low, cpfpParent, cpfpChild, mid, lowParent, lowChild, orphan]) pool.add(entry(m));
    await pool.resolve(TIP, false, index(cs));
    assert.equal(pool.order.length, 6);
    const per = pool.bytes / 7;
    // room for 4 of the 7 (all about the same size): the orphan goes, then lowParent with lowChild (the lowest score), then low
    const evicted = pool.trim(Math.ceil(per * 4.2));
    assert.deepEqual(evicted, [orphan.txid, lowParent.txid, lowChild.txid]);
    assert.ok(pool.bytes <= per * 4.2);
    const more = pool.trim(Math.ceil(per * 2.2));
    assert.deepEqual(more, [low.txid, mid.txid]);
    await pool.resolve(TIP, true, index(cs));
    assert.deepEqual(ids(pool), [cpfpParent.txid, cpfpChild.txid], 'the package its child pays for stays whole');
  });

  it('a new tip that extends the last asks only what was missing; another tip asks everything again', async () => {
    const cs = [coin(4), coin(5)];
    const late = coin(6);
    const a = wallet.pay([cs[0], cs[1]], [{ kind: 'p2wpkh', label: 'a' }], { fee: 1000 });
    const waits = wallet.pay([late], [{ kind: 'p2wpkh', label: 'w' }], { fee: 1000 });
    const lookup = index(cs);
    const pool = new MempoolPool();
    pool.add(entry(a));
    pool.add(entry(waits));
    await pool.resolve(TIP, false, lookup);
    assert.deepEqual([lookup.asked, ids(pool)], [3, [a.txid]]);
    // the block of the late coin arrives
    lookup.table.set(`${late.txId}:${late.outputIndex}`, late);
    lookup.asked = 0;
    await pool.resolve(TIP2, true, lookup);
    assert.deepEqual([lookup.asked, ids(pool)], [1, [a.txid, waits.txid]]);
    // a reorg: a's coins are gone from the index
    lookup.table.delete(`${cs[1].txId}:${cs[1].outputIndex}`);
    lookup.asked = 0;
    const r = await pool.resolve(TIP, false, lookup);
    assert.deepEqual([lookup.asked, ids(pool), r.changed], [3, [waits.txid], true]);
  });

  it('left out: spending more than the inputs are worth, an output the parent lacks, an OP_RETURN output', async () => {
    const c = coin(7, 10000);
    const pool = new MempoolPool();
    // bitcore-lib builds it; the index says the coin is worth less than what it pays
    const rich = wallet.pay([{ ...c, satoshis: 50000 }], [{ kind: 'p2wpkh', label: 'rich', satoshis: 40000 }], { fee: 10000 });
    pool.add(entry(rich));
    const parent = wallet.pay([coin(8)], [{ kind: 'nulldata', label: 'x' }, { kind: 'p2wpkh', label: 'y' }], { fee: 1000 });
    const lookup = index([c, coin(8)]);
    pool.add(entry(parent));
    const fromData = wallet.pay([{ ...parent.coins[0], outputIndex: 0 }], [{ kind: 'p2wpkh', label: 'z' }], { fee: 1000 });
    const pastEnd = wallet.pay([{ ...parent.coins[0], outputIndex: 5 }], [{ kind: 'p2wpkh', label: 'z' }], { fee: 1000 });
    pool.add(entry(fromData));
    pool.add(entry(pastEnd));
    await pool.resolve(TIP, false, lookup);
    assert.deepEqual(ids(pool), [parent.txid]);
  });

  it('a chain of 50 unconfirmed transactions arriving children first comes out parents first', async () => {
    const c = coin(9, 1e8);
    let prev = wallet.pay([c], [{ kind: 'p2wpkh', label: 'chain' }], { fee: 1000 });
    const made = [prev];
    for (let k = 1; k < 50; k++) {
      prev = wallet.pay([prev.coins[0]], [{ kind: 'p2wpkh', label: 'chain' }], { fee: 1000 });
      made.push(prev);
    }
    const pool = new MempoolPool();
    for (let k = made.length - 1; k >= 0; k--) pool.add(entry(made[k]));
    await pool.resolve(TIP, false, index([c]));
    assert.deepEqual(ids(pool), made.map((m) => m.txid));
    assert.equal(pool.totals.fee, 50 * 1000);
  });

  it('a transaction the node gives for another txid, a coinbase, bytes past the end: refused', () => {
    const a = wallet.pay([coin(10)], [{ kind: 'p2wpkh', label: 'a' }], { fee: 1000 });
    const b = wallet.pay([coin(11)], [{ kind: 'p2wpkh', label: 'b' }], { fee: 1000 });
    assert.throws(() => mempoolEntry(Buffer.from(a.hex, 'hex'), 1, b.txid), { code: 'ERR_BAD_TX', message: /are transaction/ });
    assert.throws(() => mempoolEntry(Buffer.concat([Buffer.from(a.hex, 'hex'), Buffer.from([0])]), 1), { code: 'ERR_TRAILING_BYTES' });
    const cb = Buffer.from('01000000010000000000000000000000000000000000000000000000000000000000000000ffffffff0401650101ffffffff0100f2052a010000001976a914000000000000000000000000000000000000000088ac00000000', 'hex');
    assert.throws(() => mempoolEntry(cb, 1), { code: 'ERR_BAD_TX', message: /coinbase/ });
  });
});
