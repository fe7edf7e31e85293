'use strict';

/**
 * The node's mempool list matched against the last poll's, in the node's order. Bitcoin Core
 * lists its mempool in an order that lasts from poll to poll (by ancestor count and score):
 * what arrived is inserted, what left is missing, the rest comes in the same order. Walking
 * the new list beside the last one, a txid written as the one expected next is known by the
 * slot it had then (its 64 digits compared with the last reply's, both read in sequence);
 * only the others are looked up in the held set (txid-index.js), each a few cache misses
 * into a table of 150,000. A node whose order changes every time (btcd lists a Go map) costs
 * what a lookup of every txid costs, and no more.
 *
 * A slot remembered is taken only while its generation is the one remembered: a transaction
 * that left since gave its slot back, and another may hold it now.
 */
class ListMatch {
  /** @param {import('./txid-index').TxidIndex<any>} index the held set */
  constructor(index) {
    this.index = index;
    /** @type {{body: Buffer, digits: DataView, offsets: Uint32Array, slots: Int32Array, gens: Int32Array}|null} the last list and what each of its txids was found as */
    this.last = null;
    /** by slot: its txid's place in the last list (checked against `last` before it is used) */
    this.places = new Int32Array(1024);
    /** @type {{body: Buffer, digits: DataView, offsets: Uint32Array, slots: Int32Array, gens: Int32Array}|null} the list being matched */
    this.current = null;
    /** where in the last list the next txid is expected */
    this.next = 0;
    /** txids known by their place in the last list (the others were looked up) */
    this.inOrder = 0;
  }

  /**
   * Starts matching a new list; it becomes the last one for the next poll.
   * @param {import('../node/txid-list').TxidList} list
   */
  begin(list) {
    const n = list.length;
    const { body } = list;
    this.current = {
      body, digits: new DataView(body.buffer, body.byteOffset, body.length), offsets: list.offsets,
      slots: new Int32Array(n).fill(-1), gens: new Int32Array(n),
    };
    this.next = 0;
  }

  /**
   * The slot of the held txid written at place `k` of the list, or −1: what
   * `index.findHex(body, offsets[k])` answers, or the slot that the same digits had in the
   * last list (note()) while it holds the same transaction.
   * @param {number} k
   * @returns {number}
   */
  slotOf(k) {
    const { body, digits, offsets } = this.current;
    const at = offsets[k];
    const last = this.last;
    let slot = -1;
    let known = false;
    if (last !== null && this.next < last.slots.length && sameDigits(digits, at, last.digits, last.offsets[this.next])) {
      const j = this.next++;
      const s = last.slots[j];
      if (s >= 0 && this.index.gen(s) === last.gens[j]) {
        slot = s;
        known = true;
        this.inOrder++;
      }
    }
    if (!known) {
      slot = this.index.findHex(body, at);
      // a little further on in the last list: what lies between left (a block takes a few
      // thousand from everywhere); far further on, it moved, and what lies between follows
      if (slot >= 0 && last !== null && slot < this.places.length) {
        const j = this.places[slot];
        if (j >= this.next && j - this.next <= SKIP && last.slots[j] === slot && last.gens[j] === this.index.gen(slot)) this.next = j + 1;
      }
    }
    if (slot >= 0) this.note(k, slot);
    return slot;
  }

  /**
   * Place `k` of the list holds the txid of `slot` (one found by slotOf, or by its string when
   * its digits are not lower-case).
   * @param {number} k
   * @param {number} slot
   */
  note(k, slot) {
    this._record(this.current, k, slot);
  }

  /**
   * Place `k` of the last list (end() was called) holds the txid of `slot`: a txid not held
   * while the list was matched, fetched and held since. The next list then finds it in
   * sequence too, instead of looking up each of a first load's 150,000.
   * @param {number} k
   * @param {number} slot
   */
  learn(k, slot) {
    this._record(this.last, k, slot);
  }

  /** @private */
  _record(list, k, slot) {
    list.slots[k] = slot;
    list.gens[k] = this.index.gen(slot);
    if (slot >= this.places.length) {
      const grown = new Int32Array(Math.max(2 * this.places.length, slot + 1));
      grown.set(this.places);
      this.places = grown;
    }
    this.places[slot] = k;
  }

  /** The list matched is the last one now. */
  end() {
    this.last = this.current;
    this.current = null;
  }
}

/** How many txids of the last list a resync passes over at most (removed ones). */
const SKIP = 64;

/**
 * Whether the 64 characters at `a` in `x` and at `b` in `y` are the same, read four at a time
 * (a DataView's integers: a quarter of the time of 64 byte compares, over 150,000 txids a poll).
 * @param {DataView} x
 * @param {number} a
 * @param {DataView} y
 * @param {number} b
 */
function sameDigits(x, a, y, b) {
  for (let i = 0; i < 64; i += 4) if (x.getUint32(a + i) !== y.getUint32(b + i)) return false;
  return true;
}

module.exports = { ListMatch };
