'use strict';

const { parseArgs } = require('node:util');
const { UsageError } = require('../errors');

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
  query: () => require('./query'),
  serve: () => require('./serve'),
  start: () => require('./start'),
  bitcore: () => require('./bitcore'),
};

const HELP = `usage: addrindex <command> [options]

commands:
${Object.keys(COMMANDS).map((c) => `  ${c}`).join('\n')}

Run "addrindex <command> --help" for a command's options.
`;

/**
 * @param {string[]} argv arguments after the program name
 * @param {{stdout: NodeJS.WritableStream, stderr: NodeJS.WritableStream}} [io]
 * @returns {Promise<number>} exit code
 */
async function main(argv, io = { stdout: process.stdout, stderr: process.stderr }) {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(HELP);
    return name ? 0 : 2;
  }
  const load = COMMANDS[name];
  if (!load) throw new UsageError('ERR_USAGE', `unknown command "${name}"\n${HELP}`);
  const cmd = load();
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options: { ...cmd.options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError('ERR_USAGE', `${err.message}\n${cmd.usage}`);
  }
  if (parsed.values.help) {
    io.stdout.write(cmd.usage);
    return 0;
  }
  return (await cmd.run(parsed.positionals, parsed.values, io)) || 0;
}

module.exports = { main };
