'use strict';

const assert = require('node:assert/strict');
const { TxidIndex } = require('../../lib/mempool/txid-index');
const { ListMatch } = require('../../lib/mempool/list-match');
const { TxidList } = require('../../lib/node/txid-list');
const { prng } = require('../helpers/prng');

describe('ListMatch (lib/mempool/list-match.js): the node\'s list matched in its order against the last poll\'s', () => {
  /** A reply listing `ids` (display hex, some upper case) as a node writes it. */
  const reply = (ids) => {
    const body = Buffer.from(`[${ids.map((id) => `"${id}"`).join(', ')}]`, 'latin1');
    return new TxidList(body, Uint32Array.from(ids, (_, k) => 2 + 68 * k));
  };

  it('answers what a lookup of each txid answers, through arrivals, departures, moves, slots given back and taken again, and lists in another order each time (seeded)', () => {
    const rnd = prng(57);
    const index = new TxidIndex();
    const match = new ListMatch(index);
    /** held: display hex -> {txid, slot} */
    const held = new Map();
    const hold = (given) => {
      const t = given ? Buffer.from(given, 'hex').reverse() : Buffer.from(Array.from({ length: 32 }, () => Math.floor(rnd() * 256)));
      const id = Buffer.from(t).reverse().toString('hex');
      const item = { id, txid: t };
      item.slot = index.add(t, 0, item);
      held.set(id, item);
      return id;
    };
    let order = Array.from({ length: 400 }, () => hold());
    let found = 0;
    for (let round = 0; round < 40; round++) {
      const shuffled = round % 10 === 9; // btcd: a new order each poll
      // between polls: some leave (their slots given back), some arrive (slots taken again)
      for (const id of order) {
        if (held.has(id) && rnd() < 0.05) {
          index.remove(held.get(id).slot);
          held.delete(id);
        }
      }
      const arrivals = Array.from({ length: Math.floor(rnd() * 30) }, () => hold());
      const unknown = Array.from({ length: 3 }, () => Buffer.from(Array.from({ length: 32 }, () => Math.floor(rnd() * 256))).toString('hex'));
      // the node's list: the last order with what left missing (or still listed, not held),
      // arrivals and unknown ones inserted, a few moved, a few in upper case
      let next = order.filter((id) => held.has(id) || rnd() < 0.3);
      for (const id of [...arrivals, ...unknown]) next.splice(Math.floor(rnd() * (next.length + 1)), 0, id);
      for (let m = 0; m < 5 && next.length > 1; m++) {
        const [id] = next.splice(Math.floor(rnd() * next.length), 1);
        next.splice(Math.floor(rnd() * (next.length + 1)), 0, id);
      }
      if (shuffled) next = next.map((id) => [rnd(), id]).sort((a, b) => a[0] - b[0]).map(([, id]) => id);
      const written = next.map((id) => (rnd() < 0.02 ? id.toUpperCase() : id));
      const list = reply(written);
      match.begin(list);
      for (let k = 0; k < list.length; k++) {
        const want = index.findHex(list.body, list.offsets[k]);
        let slot = match.slotOf(k);
        const item = held.get(next[k]);
        if (written[k] !== next[k]) {
          // upper case: not found by its digits, unless the same digits named it last time
          assert.ok(slot === -1 || slot === item.slot, `round ${round}, place ${k}`);
          if (slot === -1 && item) {
            slot = item.slot;
            match.note(k, slot);
          }
        } else {
          assert.equal(slot, want, `round ${round}, place ${k}`);
          assert.equal(slot, item ? item.slot : -1);
        }
        if (slot >= 0) found++;
      }
      match.end();
      // some listed txids not held were fetched after the match (the follower's new ones)
      written.forEach((w, k) => {
        if (w !== next[k] || held.has(next[k]) || rnd() >= 0.5) return;
        match.learn(k, held.get(hold(next[k])).slot);
      });
      order = next;
    }
    assert.ok(found > 10000);
    // most were known by their place in the last list, not looked up (here an eighth of the
    // list changes every poll, and every tenth poll lists it in a new order)
    assert.ok(match.inOrder > 0.6 * found, `${match.inOrder} of ${found}`);
  });

  it('a txid where the last list had one that differs from it in a single digit, any of the 64: looked up, never taken for it', () => {
    const rnd = prng(59);
    const hex = () => Buffer.from(Array.from({ length: 32 }, () => Math.floor(rnd() * 256))).toString('hex');
    for (let d = 0; d < 64; d++) {
      const index = new TxidIndex();
      const match = new ListMatch(index);
      const add = (id) => index.add(Buffer.from(id, 'hex').reverse(), 0, id);
      const ids = [hex(), hex(), hex()];
      const slots = ids.map(add);
      match.begin(reply(ids));
      for (let k = 0; k < 3; k++) assert.equal(match.slotOf(k), slots[k]);
      match.end();
      // the middle one stays held but is listed last now; one that differs from it in digit d
      // is listed where it was (held or not)
      const near = ids[1].slice(0, d) + (ids[1][d] === 'a' ? 'b' : 'a') + ids[1].slice(d + 1);
      const nearSlot = d % 2 ? add(near) : -1;
      match.begin(reply([ids[0], near, ids[2], ids[1]]));
      assert.equal(match.slotOf(0), slots[0]);
      assert.equal(match.slotOf(1), nearSlot, `digit ${d}`);
      assert.equal(match.slotOf(2), slots[2]);
      assert.equal(match.slotOf(3), slots[1]);
      match.end();
    }
  });

  it('a first load: its txids, held after the list was matched and learned by their places, are known in sequence at the next poll', () => {
    const rnd = prng(58);
    const index = new TxidIndex();
    const match = new ListMatch(index);
    const ids = Array.from({ length: 300 }, () => Buffer.from(Array.from({ length: 32 }, () => Math.floor(rnd() * 256))).toString('hex'));
    const first = reply(ids);
    match.begin(first);
    for (let k = 0; k < first.length; k++) assert.equal(match.slotOf(k), -1);
    match.end();
    const slots = ids.map((id, k) => {
      const slot = index.add(Buffer.from(id, 'hex').reverse(), 0, id);
      match.learn(k, slot);
      return slot;
    });
    const second = reply(ids);
    match.begin(second);
    for (let k = 0; k < second.length; k++) assert.equal(match.slotOf(k), slots[k]);
    match.end();
    assert.equal(match.inOrder, 300, 'none looked up');
  });
});
