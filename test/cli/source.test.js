'use strict';

const assert = require('node:assert/strict');
const { openSource } = require('../../lib/cli/source');
const { getNetwork } = require('../../lib/chain/networks');
const { freePort } = require('../helpers/ports');

describe('sync\'s block source options (lib/cli/source.js)', () => {
  const regtest = getNetwork('regtest');

  it('no blocks dir and no node: one usage error naming every way to give one', () => {
    assert.throws(() => openSource({}, regtest, { env: {} }), (err) => err.code === 'ERR_USAGE' &&
      /needs a block source: --blocks-dir DIR, or a node \(--rpc-url URL, --rpc-cookie FILE or \$ADDRINDEX_RPC_URL\)/.test(err.message));
    assert.throws(() => openSource({ 'blocks-dir': '/x', 'rpc-retry-s': '5' }, regtest, { env: {} }), /--rpc-retry-s goes with a node/);
  });

  it('picks the source: blocks dir, node, or both', async () => {
    const kinds = [
      [{ 'blocks-dir': '/x' }, 'BlocksDirSource'],
      [{ 'rpc-url': 'http://u:p@127.0.0.1:1' }, 'NodeSource'],
      [{ 'rpc-url': 'http://u:p@127.0.0.1:1', 'blocks-dir': '/x' }, 'CombinedSource'],
    ];
    for (const [values, name] of kinds) {
      const source = openSource(values, regtest, { env: {} });
      assert.equal(source.constructor.name, name);
      await source.close();
    }
  });

  it('every failed request to the node is reported with its code (the metrics counter), one log line per outage', async () => {
    const codes = [];
    const lines = [];
    const source = openSource({ 'rpc-url': `http://u:secret@127.0.0.1:${await freePort()}`, 'rpc-retry-s': '1' }, regtest,
      { env: {}, onNodeError: (c) => codes.push(c), log: (l) => lines.push(l) });
    try {
      await assert.rejects(source.scan(), { code: 'ERR_NODE_UNAVAILABLE' });
    } finally {
      await source.close();
    }
    assert.ok(codes.length >= 3 && codes.every((c) => c === 'ECONNREFUSED'), JSON.stringify(codes));
    assert.equal(lines.length, 1);
    assert.match(lines[0], /the node at http:\/\/u:\*\*\*@127\.0\.0\.1:\d+\/ does not answer .*retrying for up to 1 s/);
  });
});
