'use strict';

const { parseArgs } = require('node:util');
const { UsageError } = require('../errors');
const { configValues, splitDefaults } = require('./config');

/**
 * Each command: a module exporting `options` (node:util parseArgs spec), `usage` and
 * `run(positionals, values, io)`. Loaded on demand so `addrindex parse` never loads a store.
 */
const COMMANDS = {
  parse: () => require('./parse'),
  demo: () => require('./demo'),
  sync: () => require('./sync'),
  status: () => require('./status'),
  verify: () => require('./verify'),
  compact: () => require('./compact'),
  query: () => require('./query'),
  tx: () => require('./tx'),
  serve: () => require('./serve'),
  start: () => require('./start'),
  bitcore: () => require('./bitcore'),
};

const HELP = `usage: addrindex <command> [options]

commands:
${Object.keys(COMMANDS).map((c) => `  ${c}`).join('\n')}

Run "addrindex <command> --help" for a command's options.

Every option can also come from the environment (ADDRINDEX_ and the flag in upper case,
"-" as "_": ADDRINDEX_DATADIR, ADDRINDEX_BATCH_BLOCKS) or from a JSON config file
(--config FILE or ADDRINDEX_CONFIG); the command line wins over the environment, which wins
over the file. See docs/DEPLOY.md.
`;

/**
 * @param {string[]} argv arguments after the program name
 * @param {{stdout: NodeJS.WritableStream, stderr: NodeJS.WritableStream}} [io]
 * @param {Record<string, string|undefined>} [env] where ADDRINDEX_* options are read
 * @returns {Promise<number>} exit code
 */
async function main(argv, io = { stdout: process.stdout, stderr: process.stderr }, env = process.env) {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(HELP);
    return name ? 0 : 2;
  }
  const load = COMMANDS[name];
  if (!load) throw new UsageError('ERR_USAGE', `unknown command "${name}"\n${HELP}`);
  const cmd = load();
  const { bare, defaults } = splitDefaults(cmd.options);
  // a command with a --config of its own (bitcore: bitcore-node's config) takes addrindex's
  // settings from the environment only
  const ownsConfig = Object.prototype.hasOwnProperty.call(cmd.options, 'config');
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      options: { config: { type: 'string' }, ...bare, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError('ERR_USAGE', `${err.message}\n${cmd.usage}`);
  }
  const { help, ...given } = parsed.values;
  if (help) {
    io.stdout.write(cmd.usage);
    return 0;
  }
  const file = ownsConfig ? undefined : given.config !== undefined ? given.config : env.ADDRINDEX_CONFIG || undefined;
  if (!ownsConfig) delete given.config;
  const values = { ...defaults, ...configured(name, cmd.options, env, file), ...given };
  return (await cmd.run(parsed.positionals, values, io)) || 0;
}

/**
 * A command's options from the environment over the config file (see config.js). Every
 * command's flags are needed only to tell a typo from another command's flag, so the
 * command modules are all loaded only when there is something to check.
 */
function configured(name, spec, env, file) {
  const hasEnv = Object.keys(env).some((k) => k.startsWith('ADDRINDEX_'));
  if (file === undefined && !hasEnv) return {};
  const allSpecs = {};
  for (const [c, loadCmd] of Object.entries(COMMANDS)) allSpecs[c] = loadCmd().options;
  const { file: fromFile, env: fromEnv } = configValues({ command: name, spec, allSpecs, env, file });
  return { ...fromFile, ...fromEnv };
}

module.exports = { main };
