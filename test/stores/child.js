'use strict';

/**
 * A writer in its own process, for the conformance suite's kill and concurrent-reader tests:
 *   node child.js OPENER LOCATION OPTS_JSON CHAIN_JSON write SEED
 * opens the store through OPENER's open(location, opts) and, until killed, applies the
 * generated chain in small batches, reverting at its end, its choices drawn from SEED. It
 * prints the tip (height and hash) after every commit.
 */

const { generatedChain, syncBlocks } = require('./data');
const { prng } = require('../helpers/prng');

async function main() {
  // the parent holds our stdin: when it goes away (a failed or timed-out test), so do we
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
  const [opener, location, optsJson, chainJson, mode, seed] = process.argv.slice(2);
  if (mode !== 'write') throw new Error(`unknown mode ${mode}`);
  const random = prng(Number(seed));
  const store = await require(opener).open(location, JSON.parse(optsJson));
  const chain = generatedChain(JSON.parse(chainJson));
  const top = chain.blocks.length - 1;
  for (;;) {
    const tip = await store.getTip();
    const next = tip ? tip.height + 1 : 0;
    if (next > top) {
      await store.revert(Math.floor(random() * top));
    } else {
      const n = 1 + Math.floor(random() * 6);
      await syncBlocks(store, chain.blocks, next, Math.min(top, next + n - 1), [n]);
    }
    const t = await store.getTip();
    process.stdout.write(`${t.height} ${t.hash}\n`);
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});
