'use strict';

const pino = require('pino');
const { AddrIndexError, UsageError } = require('../errors');

/**
 * The structured log of the long-running commands (sync, serve, start).
 *
 * Two audiences, two streams. stderr is for people and is what it always was: the progress
 * line on a terminal, plain timestamped lines otherwise, the one-line errors. stdout, when it
 * is not a terminal (systemd, Docker, a pipe into a log shipper), carries the same events as
 * JSON, one object per line (pino): a level, a time, the pid, and fields a machine can filter
 * on — the request id of every API request, heights, rates. On a terminal the JSON stream is
 * off: the readable lines already say it all. `--log-format json|text` overrides the choice.
 *
 * Lines are written synchronously, one write each: the workers of `serve` share the primary's
 * stdout, and a line written whole (under the pipe's 4 KiB atomic write) never interleaves
 * with another process's.
 */

const FORMATS = ['auto', 'json', 'text'];
const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** The parseArgs options every long-running command takes. */
const logOptions = {
  'log-format': { type: 'string', default: 'auto' },
  'log-level': { type: 'string', default: 'info' },
};

const logUsage = `  --log-format F       auto (default: JSON lines on stdout when it is not a terminal) | json | text
                       (text: no JSON stream; stderr keeps its readable lines either way)
  --log-level L        ${LEVELS.join(' | ')}
                       (default info; debug adds every batch and every API request)
`;

/**
 * The JSON-log settings from command-line values.
 * @param {{'log-format'?: string, 'log-level'?: string}} values
 * @param {{isTTY?: boolean}} stdout
 * @returns {{json: boolean, level: string}}
 */
function logSettings(values, stdout) {
  const format = values['log-format'] || 'auto';
  const level = values['log-level'] || 'info';
  if (!FORMATS.includes(format)) throw new UsageError('ERR_USAGE', `--log-format must be one of ${FORMATS.join(', ')}, got "${format}"`);
  if (!LEVELS.includes(level)) throw new UsageError('ERR_USAGE', `--log-level must be one of ${LEVELS.join(', ')}, got "${level}"`);
  return { json: format === 'json' || (format === 'auto' && !stdout.isTTY), level };
}

/**
 * A pino logger: JSON lines on `dest` (default: stdout) when `json`, else one that writes
 * nothing (callers log unconditionally; the text stream is written elsewhere).
 * @param {{json: boolean, level?: string, name?: string, dest?: number|NodeJS.WritableStream}} opts
 * @returns {import('pino').Logger}
 */
function createLogger({ json, level = 'info', name = 'addrindex', dest = 1 }) {
  if (!json) return pino({ enabled: false });
  const stream = typeof dest === 'number' ? pino.destination({ dest, sync: true }) : dest;
  return pino({
    level,
    name,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    // numbers are for machines; the level's name is what a person greps for
    formatters: { level: (label) => ({ level: label }) },
  }, stream);
}

/**
 * Log fields for an error: an expected one (an AddrIndexError, which carries a stable code)
 * as its code and message, like stderr's one line; anything else with its stack.
 * @param {unknown} err
 */
function errorFields(err) {
  if (err instanceof AddrIndexError) return { code: err.code, error: err.message };
  return { err };
}

module.exports = { logOptions, logUsage, logSettings, createLogger, errorFields, LEVELS };
