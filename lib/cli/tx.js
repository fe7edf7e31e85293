'use strict';

const { UsageError, StoreError } = require('../errors');
const { withIndex, storeOptions, storeUsage } = require('./datadir');

const usage = `usage: addrindex tx TXID (--datadir DIR | --store mongo --mongodb-url URL) [--json] [--blocks-dir DIR]

Prints a confirmed transaction of the index: where it is (height, block, position), its inputs
with the outputs they spend (value, address, script hash), its outputs with who spent them,
size, weight and fee. The transaction is read from the blocks dir the index was synced from
(recorded by \`addrindex sync\`), at the place the index recorded, and checked against the
block's header and the txid.

${storeUsage}  --blocks-dir DIR     read the blocks from here instead (the same blocks, moved)
  --json               one JSON object, as GET /api/v1/tx/:txid?full=1 answers:
                       {txid, height, blockHash, position, time, confirmations, version,
                        locktime, size, vsize, weight, coinbase, fee, inputs, outputs, tip}

Amounts are in satoshis. Addresses and script hashes are the ones the index files outputs
under (a P2PK output under its key's P2PKH address). A txid the index does not hold exits 1
with ERR_TX_NOT_FOUND; a block the blocks dir no longer holds, with ERR_BLOCK_UNAVAILABLE.
`;

const options = {
  ...storeOptions,
  json: { type: 'boolean', default: false },
  'blocks-dir': { type: 'string' },
};

function btc(sat) {
  return `${Math.floor(sat / 1e8)}.${String(sat % 1e8).padStart(8, '0')} BTC`;
}

/** The JSON's readable form. */
function toText(t) {
  const short = (h) => `${h.slice(0, 16)}…`;
  const who = (x) => `${x.address || '(no address)'} ${x.type}`;
  const lines = [
    `txid      ${t.txid}`,
    `block     ${t.blockHash}  height ${t.height}, position ${t.position}, ${t.confirmations} confirmation${t.confirmations === 1 ? '' : 's'}`,
    `time      ${new Date(t.time * 1000).toISOString()}`,
    `size      ${t.size} bytes, ${t.vsize} vbytes, weight ${t.weight}; version ${t.version}, locktime ${t.locktime}`,
    `fee       ${t.coinbase ? '(coinbase)' : `${btc(t.fee)}  (${t.fee} sat)`}`,
    `inputs    ${t.inputs.length}`,
  ];
  t.inputs.forEach((i, n) => {
    lines.push(i.coinbase !== undefined
      ? `  ${String(n).padStart(4)}  coinbase ${i.coinbase}`
      : `  ${String(n).padStart(4)}  ${short(i.txid)}:${i.vout}  ${btc(i.value)}  ${who(i)}`);
  });
  lines.push(`outputs   ${t.outputs.length}`);
  for (const o of t.outputs) {
    const spent = o.spent ? `spent by ${short(o.spent.txid)}:${o.spent.vin} at ${o.spent.height}` : o.scripthash ? 'unspent' : 'unspendable';
    lines.push(`  ${String(o.vout).padStart(4)}  ${btc(o.value)}  ${who(o)}  ${spent}`);
  }
  return `${lines.join('\n')}\n`;
}

async function run(positionals, values, io) {
  if (positionals.length !== 1) throw new UsageError('ERR_USAGE', 'tx takes exactly one TXID (see "addrindex tx --help")');
  const given = positionals[0];
  if (!/^[0-9a-fA-F]{64}$/.test(given)) throw new UsageError('ERR_USAGE', `a txid is 64 hex digits, got "${given.slice(0, 80)}"`);
  const txid = Buffer.from(given, 'hex').reverse();
  const { BlockReader } = require('../sources/blockreader');
  const { TxData, blocksDirOf, indexBlockBytes } = require('../api/txdata');
  const { nativeFullTx } = require('../api/native-format');
  const { readConsistent, movedRows } = require('../core/consistent');
  return withIndex(values, 'tx', async (store, network) => {
    const { dir } = await blocksDirOf(store, values['blocks-dir']);
    const reader = new BlockReader({ dir, network, fromIndex: store.keepsTransactions ? indexBlockBytes(store) : null });
    try {
      const data = new TxData({ store, reader });
      const { tip, value: full } = await readConsistent(store, (t) => data.tx(txid, { prevouts: true, spends: true, tip: t }), { retry: movedRows });
      if (!full) {
        throw new StoreError('ERR_TX_NOT_FOUND', `transaction ${given.toLowerCase()} is not in the index` +
          (tip ? ` (confirmed transactions of the best chain up to height ${tip.height})` : ' (the index is empty)'));
      }
      const result = { ...nativeFullTx(full, tip, network), tip: { height: tip.height, hash: tip.hash } };
      io.stdout.write(values.json ? `${JSON.stringify(result, null, 2)}\n` : toText(result));
      return 0;
    } finally {
      await reader.close();
    }
  });
}

module.exports = { usage, options, run };
