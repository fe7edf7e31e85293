'use strict';

const { UsageError } = require('../errors');
const { toDisplayHex } = require('../chain/hash');
const { intOption, withIndex, storeOptions, storeUsage } = require('./datadir');

const usage = `usage: addrindex query ADDRESS|SCRIPTHASH (--datadir DIR | --store mongo --mongodb-url URL) [--json] [--limit N] [--cursor C] [--view script]

Prints what the index holds for an address (any standard type of the datadir's network) or
an Electrum script hash (64 hex digits, as Electrum shows it): balance, received, sent, the
number of transactions, the history in chain order and the unspent outputs.

${storeUsage}  --json               one JSON object:
                       {address, scripthash, balance, received, sent, txCount,
                        history: [{txid, height}], utxos: [{txid, vout, value, height}],
                        next, utxosNext}
  --limit N            history entries per page (default 100)
  --cursor C           the "next" of the previous page
  --utxo-limit N       unspent outputs per page (default 1000)
  --utxo-cursor C      the "utxosNext" of the previous page
  --view VIEW          address (the default, the REST API's: a P2PKH address or script hash
                       counts its key's P2PK outputs too) or script (the Electrum server's:
                       exactly sha256 of the output script, so without them)

Amounts are in satoshis. The genesis coinbase output is not indexed (Bitcoin Core never
counts it as spendable), so 1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa has no entry from height 0.
`;

const options = {
  ...storeOptions,
  json: { type: 'boolean', default: false },
  limit: { type: 'string' },
  cursor: { type: 'string' },
  'utxo-limit': { type: 'string' },
  'utxo-cursor': { type: 'string' },
  view: { type: 'string' },
};

/**
 * The query result in its stable JSON shape.
 * @param {import('../stores/abstract').AbstractStore} store
 * @param {{scripthash: Buffer, address: string|null}} target
 * @param {{limit: number, cursor?: string, utxoLimit: number, utxoCursor?: string, view?: 'address'|'script'}} page
 */
async function queryIndex(store, target, page) {
  const view = page.view;
  const summary = await store.getSummary(target.scripthash, { view });
  const hist = await store.getHistory(target.scripthash, { limit: page.limit, cursor: page.cursor, view });
  const utx = await store.getUtxos(target.scripthash, { limit: page.utxoLimit, cursor: page.utxoCursor, view });
  const s = summary || { balance: 0, received: 0, sent: 0, txCount: 0 };
  return {
    address: target.address,
    scripthash: toDisplayHex(target.scripthash),
    balance: s.balance,
    received: s.received,
    sent: s.sent,
    txCount: s.txCount,
    history: hist.entries.map((e) => ({ txid: toDisplayHex(e.txid), height: e.height })),
    utxos: utx.utxos.map((u) => ({ txid: toDisplayHex(u.txid), vout: u.vout, value: u.value, height: u.height })),
    next: hist.next,
    utxosNext: utx.next,
  };
}

function btc(sat) {
  const sign = sat < 0 ? '-' : '';
  const a = Math.abs(sat);
  return `${sign}${Math.floor(a / 1e8)}.${String(a % 1e8).padStart(8, '0')} BTC`;
}

function toText(r) {
  const lines = [
    `address     ${r.address === null ? '(none: queried by script hash)' : r.address}`,
    `scripthash  ${r.scripthash}`,
    `balance     ${btc(r.balance)}  (${r.balance} sat)`,
    `received    ${btc(r.received)}`,
    `sent        ${btc(r.sent)}`,
    `txs         ${r.txCount}`,
    `history (chain order)${r.history.length ? '' : ': none'}`,
  ];
  for (const h of r.history) lines.push(`  ${String(h.height).padStart(8)}  ${h.txid}`);
  if (r.next) lines.push(`  … more: --cursor ${r.next}`);
  lines.push(`unspent outputs${r.utxos.length ? '' : ': none'}`);
  for (const u of r.utxos) lines.push(`  ${String(u.height).padStart(8)}  ${u.txid}:${u.vout}  ${btc(u.value)}`);
  if (r.utxosNext) lines.push(`  … more: --utxo-cursor ${r.utxosNext}`);
  return `${lines.join('\n')}\n`;
}

async function run(positionals, values, io) {
  if (positionals.length !== 1) throw new UsageError('ERR_USAGE', `query takes exactly one ADDRESS or SCRIPTHASH (see "addrindex query --help")`);
  const page = {
    limit: intOption(values, 'limit', 1) || 100,
    cursor: values.cursor,
    utxoLimit: intOption(values, 'utxo-limit', 1) || 1000,
    utxoCursor: values['utxo-cursor'],
    view: values.view,
  };
  const { parseTarget } = require('../chain/address');
  return withIndex(values, 'query', async (store, network) => {
    const target = parseTarget(positionals[0], network);
    const result = await queryIndex(store, target, page);
    io.stdout.write(values.json ? `${JSON.stringify(result, null, 2)}\n` : toText(result));
    return 0;
  });
}

module.exports = { usage, options, run, queryIndex };
