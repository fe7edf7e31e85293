'use strict';

/**
 * Whether a write's guard holds: the row at guard.key (`current`, undefined or null when
 * absent) still equals guard.value (undefined = absent). Every commit of the key-value
 * stores is guarded by the tip row it read, so a second writer fails instead of interleaving.
 * @param {Uint8Array|undefined|null} current
 * @param {{key: Uint8Array, value: Uint8Array|undefined}} guard
 */
function guardHolds(current, guard) {
  if (current === undefined || current === null) return guard.value === undefined || guard.value === null;
  return guard.value !== undefined && guard.value !== null && Buffer.compare(current, guard.value) === 0;
}

module.exports = { guardHolds };
