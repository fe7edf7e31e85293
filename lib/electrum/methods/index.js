'use strict';

/**
 * The methods of protocol 1.4 this server answers: name → {params, ignoreExtra?, handler}.
 * Each file holds one family; a name appears in exactly one of them.
 */
const families = [require('./server'), require('./headers'), require('./scripthash'), require('./transaction'), require('./fees')];

/** @type {Map<string, {params: import('../params').ParamSpec[], ignoreExtra?: boolean, handler: Function}>} */
const METHODS = new Map();
for (const family of families) {
  for (const [name, method] of Object.entries(family)) {
    if (METHODS.has(name)) throw new Error(`method ${name} is defined twice`);
    METHODS.set(name, method);
  }
}

module.exports = { METHODS };
