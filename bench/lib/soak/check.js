'use strict';

const { FIELDS, EMPTY } = require('./truth');

/**
 * The soak's judgement of what its readers were told: every REST answer against the truth
 * at the tip it names, every Electrum balance against the balances the address really had
 * at some tip by the time it was answered.
 */

/** At most this many wrong answers are kept whole, for the report. */
const KEEP = 10;

/**
 * @param {import('./truth').ChainTruth} truth
 * @param {object[]} answers RestReader and ElectrumReader records
 * @returns {{checked: number, wrong: number, examples: object[]}}
 */
function checkAnswers(truth, answers) {
  let wrong = 0;
  const examples = [];
  const bad = (a, why) => {
    wrong++;
    if (examples.length < KEEP) examples.push({ ...a, why });
  };
  for (const a of answers) {
    if (a.confirmed !== undefined) {
      if (!truth.balanceExisted(a.address, a.confirmed, a.at)) bad(a, 'a confirmed balance the address never had at any tip by then');
      continue;
    }
    const tip = a.tip;
    // an index with no block yet (a LevelDB server's first moments) names no tip: all zeros
    const want = tip === null ? EMPTY : truth.summaryAt(tip.hash, a.address);
    if (tip === null) {
      const diff = FIELDS.filter((f) => a.summary[f] !== want[f]);
      if (diff.length) bad(a, `no tip named, yet ${diff.join(', ')} not empty`);
      continue;
    }
    if (!want) {
      bad(a, 'a tip the chain never had');
      continue;
    }
    if (truth.heightOf(tip.hash) !== tip.height) {
      bad(a, `the tip's height is ${truth.heightOf(tip.hash)}`);
      continue;
    }
    const diff = FIELDS.filter((f) => a.summary[f] !== want[f]);
    if (diff.length) bad({ ...a, want }, `differs from the truth at its tip in ${diff.join(', ')}`);
  }
  return { checked: answers.length, wrong, examples };
}

module.exports = { checkAnswers };
