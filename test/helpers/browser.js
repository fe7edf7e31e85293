'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { ROOT } = require('./cli');
const { tempDir } = require('./tmp');

/** How long the first install (apt-get install chromium) may take. */
const INSTALL_TIMEOUT_MS = 9 * 60 * 1000;

/**
 * Debian's Chromium, installed by scripts/install-chromium.sh when missing (never a browser
 * download of npm's), started headless with a fresh profile and driven over the DevTools
 * protocol by puppeteer-core.
 * @returns {string} the browser's path
 */
function installChromium() {
  const out = execFileSync(path.join(ROOT, 'scripts', 'install-chromium.sh'), { stdio: ['ignore', 'pipe', 'pipe'], timeout: INSTALL_TIMEOUT_MS });
  return String(out).trim().split('\n').pop();
}

/** The flags of a quiet headless browser: no network of its own beyond the pages it is sent to. */
const FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage', '--mute-audio', '--autoplay-policy=no-user-gesture-required',
];

/**
 * A headless Chromium. Each page records its console errors and failed requests, so a test
 * can say which were expected (the web fonts insight-ui links from a CDN this machine cannot
 * reach).
 * @returns {Promise<{browser: import('puppeteer-core').Browser, newPage: () => Promise<object>, close: () => Promise<void>}>}
 */
async function startBrowser() {
  const executablePath = installChromium();
  const puppeteer = require('puppeteer-core');
  const userDataDir = tempDir('chromium-profile');
  const browser = await puppeteer.launch({
    executablePath, headless: true, userDataDir, args: FLAGS, defaultViewport: { width: 1100, height: 760 },
  });
  return {
    browser,
    /** A page whose `problems` lists console errors, page errors and failed requests. */
    async newPage() {
      const page = await browser.newPage();
      page.problems = [];
      page.on('console', (m) => { if (m.type() === 'error') page.problems.push(`console: ${m.text()} (${(m.location() && m.location().url) || ''})`); });
      page.on('pageerror', (e) => page.problems.push(`pageerror: ${e.message}`));
      page.on('requestfailed', (r) => page.problems.push(`requestfailed: ${r.url()} ${r.failure() ? r.failure().errorText : ''}`));
      return page;
    },
    async close() {
      await browser.close();
      fs.rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The problems a page met besides the fonts insight-ui links from fonts.googleapis.com, which
 * a machine without internet cannot fetch.
 * @param {{problems: string[]}} page
 * @returns {string[]}
 */
function unexpectedProblems(page) {
  return page.problems.filter((p) => !/fonts\.(googleapis|gstatic)\.com/.test(p));
}

module.exports = { startBrowser, installChromium, unexpectedProblems };
