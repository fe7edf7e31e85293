#!/usr/bin/env node
'use strict';

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
