'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { syncedFixture, request, referenceIndex, HAL, SATOSHI, TX170 } = require('../api/helpers');
const { startCli } = require('../helpers/cli');
const { startBrowser, unexpectedProblems } = require('../helpers/browser');
const { useBtcd } = require('../helpers/btcd');
const { nodeWallet } = require('../helpers/node-chain');
const { tempDir } = require('../helpers/tmp');
const { waitFor } = require('../helpers/chains');

/**
 * The explorer as a person sees it: `addrindex serve --explorer` (2 workers, as `npm start`
 * runs it) with insight-ui 0.4.0 opened in Debian's Chromium, headless, driven over the
 * DevTools protocol (puppeteer-core; scripts/install-chromium.sh installs the browser when it
 * is missing). Every figure a page shows is checked against the API's own answer; the live
 * parts (a block mined, a payment to the address on screen) against btcd.
 *
 * EXPLORER_SCREENSHOTS=DIR saves the main pages as PNGs there (docs/explorer holds the
 * README's).
 */
const SHOTS = process.env.EXPLORER_SCREENSHOTS || null;

/** The page's visible text once `check(text)` holds (the app renders after its API calls). */
async function textWhen(page, check, what, ms = 20000) {
  let text = '';
  await waitFor(async () => {
    text = await page.evaluate(() => document.body.innerText);
    return check(text);
  }, ms, what);
  return text;
}

async function shot(page, name) {
  if (!SHOTS) return;
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
}

/** After each page: no console error, page error or failed request but the web fonts'. */
function noProblems(page) {
  if (!page) return;
  const problems = unexpectedProblems(page);
  page.problems.length = 0;
  assert.deepEqual(problems, [], 'console errors other than the unreachable web fonts');
}

/** The heights the home page's Latest Blocks (or the block list) shows, top first. */
function listedHeights(page) {
  return page.$$eval('tr.fader td:first-child a', (as) => as.map((a) => Number(a.textContent.trim())));
}

/** `serve --explorer` on a free port; resolves with its URL once it listens. */
async function serveExplorer(args, env) {
  const cli = startCli(['serve', ...args, '--explorer', '--workers', '2', '--port', '0', '--grace-ms', '2000', '--log-format', 'text'], { env });
  try {
    return { cli, url: (await cli.waitFor(/listening on (http:\/\/\S+)/, 60000))[1] };
  } catch (err) {
    cli.kill('SIGKILL');
    throw err;
  }
}

describe('the explorer in a real browser: insight-ui on addrindex serve, the bundled 439 mainnet blocks', function () {
  this.timeout(120000);
  let fixture;
  let srv;
  let browser;
  let page;
  const api = async (p) => (await request(`${srv.url}/insight-api${p}`)).json;
  const open = async (p) => page.goto(`${srv.url}/insight${p}`, { waitUntil: 'domcontentloaded' });

  before(async function () {
    this.timeout(600000); // the first run installs Chromium
    fixture = await syncedFixture();
    browser = await startBrowser();
    srv = await serveExplorer(['--datadir', fixture.datadir]);
    page = await browser.newPage();
  });
  afterEach(() => noProblems(page));
  after(async () => {
    if (browser) await browser.close();
    if (srv) {
      srv.cli.kill('SIGTERM');
      await srv.cli.done;
    }
    if (fixture) await fixture.cleanup();
  });

  it('a browser opening the server\'s address lands on the explorer, whose home lists the newest blocks', async () => {
    await page.goto(`${srv.url}/`, { waitUntil: 'domcontentloaded' });
    assert.equal(new URL(page.url()).pathname, '/insight/');
    const newest = (await api('/blocks?limit=5')).blocks.map((b) => b.height);
    assert.deepEqual(newest, [438, 437, 436, 435, 434]);
    await waitFor(async () => (await listedHeights(page)).length === 5, 20000, 'Latest Blocks');
    assert.deepEqual(await listedHeights(page), newest);
    // the header's height comes over the socket.io connection's first message, and its
    // connection light is on
    await textWhen(page, (t) => /Height\s+438/.test(t), 'the header\'s height');
    await shot(page, 'home');
  });

  it('the block list of the newest block\'s day, and a block page with its transactions', async () => {
    await open('/blocks');
    const day = (await api('/blocks')).blocks.map((b) => b.height);
    await waitFor(async () => (await listedHeights(page)).length === day.length, 20000, 'the block list');
    assert.deepEqual(await listedHeights(page), day);
    const hash = referenceIndex().blockHashes[170];
    const block = await api(`/block/${hash}`);
    await open(`/block/${hash}`);
    const text = await textWhen(page, (t) => block.tx.every((txid) => t.includes(txid)), 'block 170\'s transactions');
    for (const s of [block.merkleroot, String(block.confirmations), String(block.nonce), block.bits, String(block.size)]) assert.ok(text.includes(s), s);
    await shot(page, 'block');
  });

  it('the genesis block\'s page lists its transaction', async () => {
    const genesis = referenceIndex().blockHashes[0];
    const [txid] = (await api(`/block/${genesis}`)).tx;
    await open(`/block/${genesis}`);
    await textWhen(page, (t) => t.includes(txid) && t.includes('50 BTC'), 'the genesis coinbase');
  });

  it('a transaction page: its inputs\' and outputs\' addresses and amounts, its confirmations', async () => {
    const tx = await api(`/tx/${TX170}`);
    await open(`/tx/${TX170}`);
    const text = await textWhen(page, (t) => t.includes(HAL) && t.includes(SATOSHI), 'the transaction');
    assert.match(text, new RegExp(`${tx.confirmations} Confirmations`, 'i'));
    assert.match(text, new RegExp(`FEE: ${tx.fees} BTC`, 'i'));
    for (const o of tx.vout) assert.ok(text.includes(`${Number(o.value)} BTC`), o.value);
    await shot(page, 'transaction');
  });

  it('an address page: received, balance, transaction count and its transactions', async () => {
    const a = await api(`/addr/${SATOSHI}`);
    await open(`/address/${SATOSHI}`);
    const first = a.transactions.slice(0, 5);
    const text = await textWhen(page, (t) => first.every((txid) => t.includes(txid)), 'the address\'s newest transactions');
    assert.match(text, new RegExp(`Total Received\\s+${a.totalReceived} BTC`));
    assert.match(text, new RegExp(`Final Balance\\s+${a.balance} BTC`));
    assert.match(text, new RegExp(`No. Transactions\\s+${a.txApperances}`));
    await shot(page, 'address');
  });

  it('the search box finds a height, a block hash, a txid and an address', async () => {
    const hash = referenceIndex().blockHashes[9];
    const hash170 = referenceIndex().blockHashes[170];
    for (const [q, want] of [['170', `/insight/block/${hash170}`], [hash, `/insight/block/${hash}`], [TX170, `/insight/tx/${TX170}`], [HAL, `/insight/address/${HAL}`]]) {
      await open('/');
      await page.waitForSelector('#search');
      await page.type('#search', q);
      await page.keyboard.press('Enter');
      await waitFor(() => new URL(page.url()).pathname === want, 20000, `the search for ${q} to open ${want}`);
    }
    // insight-ui searches by asking for a block, then a transaction, then an address, then a
    // height: the misses it expects are the API's 400 and 404 answers, which the browser logs
    const probe = /status of 40[04] .*\/insight-api\/(block|tx|addr)\//;
    page.problems.splice(0, page.problems.length, ...page.problems.filter((p) => !probe.test(p)));
  });

  it('the status page shows the index\'s tip', async () => {
    const tip = (await api('/status?q=getLastBlockHash')).lastblockhash;
    await open('/status');
    await textWhen(page, (t) => t.includes(tip) && /Blocks\s+438/.test(t), 'the status page');
  });
});

describe('the explorer in a real browser: a btcd regtest chain with a mempool, live', function () {
  this.timeout(180000);
  const { wallet, minerA } = nodeWallet();
  const nodes = useBtcd([{ miningAddress: minerA }]);
  let follow;
  let srv;
  let browser;
  let page;
  let change;
  const watched = wallet.p2pkh('explorer-watched');
  const api = async (p) => (await request(`${srv.url}/insight-api${p}`)).json;

  before(async function () {
    this.timeout(600000);
    const node = nodes.nodes[0];
    const hashes = await node.generate(101);
    const coin = wallet.coinbaseCoin(Buffer.from(await node.call('getblock', hashes[0], 0), 'hex'), 'miner-a');
    // the mempool the explorer opens on: a payment to the watched address, not yet mined
    const first = wallet.pay([coin], [{ kind: 'p2pkh', label: 'explorer-watched', satoshis: 100000000 }, { kind: 'p2pkh', label: 'explorer-change' }]);
    await node.sendTx(first.hex);
    change = first.coins.find((c) => c.label === 'explorer-change');
    const datadir = path.join(tempDir('explorer-btcd'), 'index');
    follow = startCli(['sync', '--rpc-url', node.url, '--network', 'regtest', '--datadir', datadir, '--follow',
      '--poll-ms', '100', '--mempool-poll-ms', '100', '--threads', '0', '--log-format', 'text']);
    await follow.waitFor(/mempool: \d+ transaction\(s\)/, 120000);
    [browser, srv] = await Promise.all([startBrowser(), serveExplorer(['--datadir', datadir, '--live-poll-ms', '100'], { ADDRINDEX_RPC_URL: node.url })]);
    await waitFor(async () => (await api(`/addr/${watched}`)).unconfirmedTxApperances === 1, 20000, 'the mempool payment');
    page = await browser.newPage();
  });
  afterEach(() => noProblems(page));
  after(async () => {
    if (browser) await browser.close();
    for (const c of [srv && srv.cli, follow]) {
      if (!c) continue;
      c.kill('SIGTERM');
      await c.done;
    }
  });

  it('a block mined on btcd appears on the home page without a reload, with its transactions', async () => {
    const node = nodes.nodes[0];
    await page.goto(`${srv.url}/insight/`, { waitUntil: 'domcontentloaded' });
    await waitFor(async () => (await listedHeights(page))[0] === 101, 20000, 'Latest Blocks at 101');
    await textWhen(page, (t) => /Height\s+101/.test(t), 'the header\'s height');
    const [hash] = await node.generate(1);
    const block = await node.call('getblock', hash, 1);
    await waitFor(async () => (await listedHeights(page))[0] === 102, 20000, 'the mined block on the home page');
    // its transactions reach "Latest Transactions" (the payment was announced when it entered
    // the mempool, before the page opened; the coinbase with the block)
    await textWhen(page, (t) => t.includes(block.tx[0]) && /Height\s+102/.test(t), 'the block\'s coinbase and the header\'s height');
    assert.deepEqual((await api('/blocks?limit=1')).blocks.map((b) => b.hash), [hash]);
    await shot(page, 'home-live');
  });

  it('a payment to the address on screen, and a P2PK payment to its key, appear without a reload', async () => {
    const node = nodes.nodes[0];
    await page.goto(`${srv.url}/insight/address/${watched}`, { waitUntil: 'domcontentloaded' });
    const before = await api(`/addr/${watched}`);
    await textWhen(page, (t) => before.transactions.every((txid) => t.includes(txid)), 'the address\'s transactions');
    // a round trip on the page's own socket.io connection (the server acknowledges every
    // subscription in turn): the address's subscription, sent before, is in place
    await page.evaluate(() => new Promise((resolve) => {
      const scope = angular.element(document.body).scope();
      angular.element(document.body).injector().get('getSocket')(scope).emit('subscribe', 'round-trip', resolve);
    }));
    const p2pkh = wallet.pay([change], [{ kind: 'p2pkh', label: 'explorer-watched', satoshis: 20000000 }, { kind: 'p2pkh', label: 'explorer-change-2' }]);
    await node.sendTx(p2pkh.hex);
    await textWhen(page, (t) => t.includes(p2pkh.txid), 'the P2PKH payment on the address page');
    const next = p2pkh.coins.find((c) => c.label === 'explorer-change-2');
    const p2pk = wallet.pay([next], [{ kind: 'p2pk', label: 'explorer-watched', satoshis: 30000000 }, { kind: 'p2pkh', label: 'explorer-change-3' }]);
    await node.sendTx(p2pk.hex);
    await textWhen(page, (t) => t.includes(p2pk.txid), 'the P2PK payment on the address page');
    // the page's figures are the API's
    const after = await api(`/addr/${watched}`);
    assert.equal(after.unconfirmedTxApperances, before.unconfirmedTxApperances + 2);
    assert.ok(after.transactions.includes(p2pk.txid));
  });
});
