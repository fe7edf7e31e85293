'use strict';

const { MongoStore } = require('../../lib/stores/mongo');

/**
 * Opens the MongoDB store in database `dbName` of the server the test file started: the
 * conformance suite's opener, also loaded by its child processes (which inherit the URL
 * through ADDRINDEX_TEST_MONGODB_URL).
 * @param {string} dbName
 * @param {{network: string, undoDepth?: number, readOnly?: boolean}} opts
 */
function open(dbName, opts) {
  const url = process.env.ADDRINDEX_TEST_MONGODB_URL;
  if (!url) throw new Error('ADDRINDEX_TEST_MONGODB_URL is not set');
  return MongoStore.open({ url, dbName, ...opts });
}

module.exports = { open };
