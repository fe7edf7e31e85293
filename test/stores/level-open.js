'use strict';

const { openStore } = require('../../lib/stores');

/**
 * Opens the LevelDB store at a datadir: the conformance suite's opener, also loaded by its
 * child processes.
 * @param {string} datadir
 * @param {{network: string, undoDepth?: number, readOnly?: boolean}} opts
 */
function open(datadir, opts) {
  return openStore({ store: 'level', datadir, ...opts });
}

module.exports = { open };
