'use strict';

/**
 * Reads Prometheus' text exposition format (what /metrics answers) into samples, written
 * here from the format's description rather than with prom-client, which produced the text.
 */

/**
 * @param {string} text
 * @returns {Array<{name: string, labels: Record<string, string>, value: number}>}
 */
function parseMetrics(text) {
  const samples = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels = {};
    if (m[3]) {
      for (const l of m[3].matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2].replace(/\\(.)/g, '$1');
    }
    const value = m[4] === '+Inf' ? Infinity : m[4] === '-Inf' ? -Infinity : Number(m[4]);
    samples.push({ name: m[1], labels, value });
  }
  return samples;
}

/**
 * The value of the one sample named `name` whose labels include `labels` (undefined: none).
 * @param {string} text
 * @param {string} name
 * @param {Record<string, string>} [labels]
 * @returns {number|undefined}
 */
function metricValue(text, name, labels = {}) {
  const found = parseMetrics(text).filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === String(v)));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found.length ? found[0].value : undefined;
}

module.exports = { parseMetrics, metricValue };
