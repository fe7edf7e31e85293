'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { resolveEndpoint, readCookie, redact, ENV_URL } = require('../../lib/node/endpoint');
const { tempDir: tmpDir } = require('../helpers/tmp');

describe('node endpoint: --rpc-url, --rpc-cookie, $ADDRINDEX_RPC_URL', () => {
  it('takes the credentials out of the URL, fills in Core\'s port, and masks the password when printed', () => {
    const e = resolveEndpoint({ rpcUrl: 'http://al%40ice:p%3Ass%40w@10.1.2.3', network: 'regtest', env: {} });
    assert.equal(e.url, 'http://10.1.2.3:18443/');
    assert.deepEqual(e.credentials(), { user: 'al@ice', pass: 'p:ss@w' });
    assert.equal(e.display, 'http://al%40ice:***@10.1.2.3:18443/');
    assert.equal(e.reloadable, false);
    assert.equal(resolveEndpoint({ rpcUrl: 'u:p@h', network: 'main', env: {} }).url, 'http://h:8332/');
    assert.equal(resolveEndpoint({ rpcUrl: 'http://u:p@h:9/x', network: 'testnet4', env: {} }).url, 'http://h:9/x');
  });

  it('reads the URL from the environment only when no --rpc-url or --rpc-host is given', () => {
    const env = { [ENV_URL]: 'http://envuser:envpass@127.0.0.1:1111' };
    assert.equal(resolveEndpoint({ env }).url, 'http://127.0.0.1:1111/');
    assert.equal(resolveEndpoint({ rpcUrl: 'http://a:b@h:2', env }).url, 'http://h:2/');
    const cookie = path.join(tmpDir('cookie'), '.cookie');
    fs.writeFileSync(cookie, '__cookie__:abc\n');
    assert.equal(resolveEndpoint({ rpcCookie: cookie, rpcHost: 'h:3', env }).url, 'http://h:3/');
    assert.equal(resolveEndpoint({ env: {} }), null);
    assert.equal(resolveEndpoint({ env: { [ENV_URL]: '' } }), null);
  });

  it('a cookie file: __cookie__:HEX, read again on demand (a node restart rewrites it)', () => {
    const cookie = path.join(tmpDir('cookie'), '.cookie');
    fs.writeFileSync(cookie, '__cookie__:0123abcd\n');
    const e = resolveEndpoint({ rpcCookie: cookie, network: 'signet', env: {} });
    assert.equal(e.url, 'http://127.0.0.1:38332/');
    assert.equal(e.reloadable, true);
    assert.deepEqual(e.credentials(), { user: '__cookie__', pass: '0123abcd' });
    fs.writeFileSync(cookie, '__cookie__:ffff');
    assert.deepEqual(e.credentials(), { user: '__cookie__', pass: '0123abcd' }, 'cached until asked to reload');
    assert.deepEqual(e.credentials(true), { user: '__cookie__', pass: 'ffff' });
    assert.ok(!e.display.includes('ffff'));
  });

  it('a missing cookie file is a node not running (retryable); a malformed one is refused', () => {
    const dir = tmpDir('cookie');
    assert.throws(() => readCookie(path.join(dir, 'none')), (err) => err.code === 'ERR_NODE_UNAVAILABLE' && err.details.retryable === true);
    fs.writeFileSync(path.join(dir, 'bad'), 'no-colon-here\n');
    assert.throws(() => readCookie(path.join(dir, 'bad')), { code: 'ERR_NODE_AUTH' });
    fs.writeFileSync(path.join(dir, 'empty-pass'), 'user:\n');
    assert.throws(() => readCookie(path.join(dir, 'empty-pass')), { code: 'ERR_NODE_AUTH' });
  });

  it('refuses what cannot work, without echoing a password', () => {
    const cases = [
      [{ rpcUrl: 'https://u:secret1@h:1' }, /must be an http:\/\/ URL/],
      [{ rpcUrl: 'http://h:1' }, /has no credentials: use http:\/\/USER:PASS@h:1 or --rpc-cookie FILE/],
      [{ rpcUrl: 'http://u:secret1@h:99999' }, /is not a URL/],
      [{ rpcUrl: 'http://u:secret1@h:1', rpcCookie: '/x' }, /carries credentials and --rpc-cookie gives others/],
      [{ rpcUrl: 'http://u:secret1@h:1', rpcHost: 'h:2' }, /--rpc-url and --rpc-host both name the node/],
    ];
    for (const [opts, re] of cases) {
      assert.throws(() => resolveEndpoint({ ...opts, env: {} }), (err) => {
        assert.equal(err.code, 'ERR_USAGE');
        assert.match(err.message, re);
        assert.ok(!err.message.includes('secret1'), err.message);
        return true;
      });
    }
  });

  it('redact() masks the password of any URL-like text, even one the URL parser refuses', () => {
    assert.equal(redact('http://a:secret@h:1/'), 'http://a:***@h:1/');
    assert.equal(redact('a:secret@h:1'), 'a:***@h:1');
    assert.equal(redact('http://a:p@ss@h:1/x@y'), 'http://a:***@h:1/x@y');
    assert.equal(redact('http://a:sec ret@h:99999'), 'http://a:***@h:99999');
    assert.equal(redact('http://user@h:1'), 'http://user@h:1');
    assert.equal(redact('http://h:1/'), 'http://h:1/');
  });
});
