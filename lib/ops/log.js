'use strict';

const pino = require('pino');
const { AddrIndexError, UsageError } = require('../errors');

/**
 * The logs of the long-running commands (sync, serve, start), for two audiences, never mixed
 * on one stream:
 *
 *  - `--log-format text` (the default): lines for a person. stderr has the progress line
 *    (rewritten in place on a terminal, a timestamped line otherwise), events and the one-line
 *    errors; stdout what the command prints for its user (serve's banner, start's URLs). No
 *    JSON anywhere, whether or not the output is a terminal.
 *  - `--log-format json`: lines for a service manager. stdout carries the events as JSON, one
 *    object per line (pino): a level, a time, the pid, and fields a machine can filter on (the
 *    request id of every API request, heights, rates); the readable copies of those events
 *    stay off stdout (banners go to stderr).
 *
 * `--quiet` prints errors only, in either format (the JSON log's level becomes `error`).
 *
 * Lines are written synchronously, one write each: the workers of `serve` share the primary's
 * stdout, and a line written whole (under the pipe's 4 KiB atomic write) never interleaves
 * with another process's.
 */

const FORMATS = ['text', 'json'];
const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** The parseArgs options every long-running command takes. */
const logOptions = {
  'log-format': { type: 'string', default: 'text' },
  'log-level': { type: 'string', default: 'info' },
  quiet: { type: 'boolean', default: false },
};

const logUsage = `  --log-format F       text (default: readable lines, no JSON) | json (JSON lines on stdout,
                       for a service manager; readable banners on stderr)
  --log-level L        ${LEVELS.join(' | ')}
                       (default info; debug adds every batch and every API request)
  --quiet              errors only, in either format
`;

/**
 * The log settings from command-line values.
 * @param {{'log-format'?: string, 'log-level'?: string, quiet?: boolean}} values
 * @returns {{json: boolean, level: string, quiet: boolean}}
 */
function logSettings(values) {
  const format = values['log-format'] || 'text';
  const level = values['log-level'] || 'info';
  if (!FORMATS.includes(format)) throw new UsageError('ERR_USAGE', `--log-format must be one of ${FORMATS.join(', ')}, got "${format}"`);
  if (!LEVELS.includes(level)) throw new UsageError('ERR_USAGE', `--log-level must be one of ${LEVELS.join(', ')}, got "${level}"`);
  const quiet = Boolean(values.quiet);
  return { json: format === 'json', level: quiet && LEVELS.indexOf(level) < LEVELS.indexOf('error') ? 'error' : level, quiet };
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
