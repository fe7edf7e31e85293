'use strict';

/**
 * Prints rows of equal keys as an aligned plain-text table (numbers right-aligned).
 * @param {Array<Record<string, string|number>>} rows
 * @param {(line: string) => void} [out]
 */
function printTable(rows, out = (l) => console.log(l)) {
  if (!rows.length) return;
  const cols = Object.keys(rows[0]);
  const cells = rows.map((r) => cols.map((c) => String(r[c] ?? '')));
  const width = cols.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i].length)));
  const numeric = cols.map((c, i) => cells.every((r) => /^[-\d.,% ()x±]+$/.test(r[i])));
  const fmt = (vals) => vals.map((v, i) => (numeric[i] ? v.padStart(width[i]) : v.padEnd(width[i]))).join('  ');
  out(fmt(cols));
  out(width.map((w) => '-'.repeat(w)).join('  '));
  for (const r of cells) out(fmt(r));
}

module.exports = { printTable };
