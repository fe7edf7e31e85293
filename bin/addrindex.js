#!/usr/bin/env node
'use strict';

// libuv's thread pool serves the sync's reads ahead of its writer (lib/stores/prefetcher.js,
// 16 at a time); it is sized when first used, so before anything else runs
if (!process.env.UV_THREADPOOL_SIZE) process.env.UV_THREADPOOL_SIZE = '20';

const { main } = require('../lib/cli');

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code || 0; },
  (err) => {
    // Expected failures carry a code and get one clear line; anything else is a bug: show it all.
    if (err && err.code && err.name !== 'Error') {
      process.stderr.write(`addrindex: ${err.message} [${err.code}]\n`);
    } else {
      process.stderr.write(`addrindex: internal error: ${err && err.stack ? err.stack : err}\n`);
    }
    process.exitCode = err && err.exitCode ? err.exitCode : 1;
  });
