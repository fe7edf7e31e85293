'use strict';

/** Message types between the primary and its workers (one namespace, so nothing collides). */
const MSG = Object.freeze({
  listening: 'addrindex:listening',
  fatal: 'addrindex:fatal',
  shutdown: 'addrindex:shutdown',
});

module.exports = { MSG };
