'use strict';

const fs = require('node:fs');
const { UsageError } = require('../errors');

/**
 * Where a command's options come from, strongest first:
 *
 *   1. the command line                 --batch-blocks 50
 *   2. the environment                  ADDRINDEX_BATCH_BLOCKS=50
 *   3. the config file                  {"batch-blocks": 50}   (--config FILE or ADDRINDEX_CONFIG)
 *   4. the command's defaults
 *
 * Every flag of every command has an environment variable: ADDRINDEX_ and the flag in upper
 * case with "-" as "_". The config file is one JSON object: top-level keys are flags shared by
 * the commands that take them (a datadir for sync and serve alike), and a key named after a
 * command holds flags for that command alone, winning over the top level:
 *
 *   {"datadir": "/var/lib/addrindex", "store": "lmdb",
 *    "sync": {"blocks-dir": "/home/bitcoin/.bitcoin/blocks", "follow": true},
 *    "serve": {"workers": 4, "cors-origin": ["*"]}}
 *
 * Unknown names are refused, naming them: a file key or ADDRINDEX_ variable that is no flag
 * of any command (a typo), and a key in a command's section that is no flag of that command.
 * A flag of another command is ignored, so one file and one environment serve every command.
 * Values: strings or numbers for value flags, true/false for switches (env: 1/0, true/false,
 * yes/no), arrays (file) or comma-separated lists (env) for repeatable flags. Paths are used
 * as written, relative to the working directory.
 */

const PREFIX = 'ADDRINDEX_';
/** ADDRINDEX_ variables that are no flag: the config path, and settings read elsewhere. */
const RESERVED_ENV = new Set(['CONFIG', 'LZ4', 'WORKER']);
const RESERVED_ENV_PREFIXES = ['TEST_'];

/** @param {string} flag @returns {string} */
function envName(flag) {
  return PREFIX + flag.toUpperCase().replace(/-/g, '_');
}

/**
 * @param {object} spec a command's parseArgs options (without help/config)
 * @param {string} where for messages ("ADDRINDEX_X", "addrindex.json: sync.follow")
 * @param {string} flag
 * @param {unknown} raw
 * @param {'env'|'file'} from
 */
function coerce(spec, where, flag, raw, from) {
  const opt = spec[flag];
  const bad = (what) => new UsageError('ERR_CONFIG', `${where}: ${what}`);
  if (opt.type === 'boolean') {
    if (from === 'file') {
      if (typeof raw !== 'boolean') throw bad(`--${flag} is a switch: give true or false, not ${JSON.stringify(raw)}`);
      return raw;
    }
    const v = String(raw).trim().toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(v)) return true;
    if (['0', 'false', 'no', 'off', ''].includes(v)) return false;
    throw bad(`--${flag} is a switch: give 1 or 0 (true/false), not ${JSON.stringify(raw)}`);
  }
  const one = (v) => {
    if (typeof v === 'string') return v;
    if (typeof v === 'number' && Number.isFinite(v)) return String(v);
    throw bad(`--${flag} takes a ${opt.multiple ? 'string or a list of strings' : 'string or a number'}, not ${JSON.stringify(v)}`);
  };
  if (opt.multiple) {
    if (from === 'env') return String(raw).split(',').map((x) => x.trim()).filter(Boolean);
    return Array.isArray(raw) ? raw.map(one) : [one(raw)];
  }
  return one(raw);
}

/**
 * Reads and checks a config file.
 * @param {string} file
 * @returns {object}
 */
function readConfigFile(file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError('ERR_CONFIG', `cannot read the config file ${file}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`);
  }
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new UsageError('ERR_CONFIG', `the config file ${file} is not valid JSON: ${err.message}`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new UsageError('ERR_CONFIG', `the config file ${file} must hold one JSON object`);
  return doc;
}

/**
 * The options of `command` from the environment and a config file (not the command line).
 * @param {object} opts
 * @param {string} opts.command
 * @param {object} opts.spec the command's parseArgs options
 * @param {Record<string, object>} opts.allSpecs every command's parseArgs options, by command
 * @param {Record<string, string|undefined>} opts.env
 * @param {string} [opts.file] config file path
 * @returns {{file: object, env: object}} values from each, by flag name, already typed
 */
function configValues({ command, spec, allSpecs, env, file }) {
  const anyFlag = new Set(Object.values(allSpecs).flatMap((s) => Object.keys(s)));
  const fromEnv = {};
  for (const [name, raw] of Object.entries(env)) {
    if (!name.startsWith(PREFIX) || raw === undefined) continue;
    const rest = name.slice(PREFIX.length);
    if (RESERVED_ENV.has(rest) || RESERVED_ENV_PREFIXES.some((p) => rest.startsWith(p))) continue;
    const flag = rest.toLowerCase().replace(/_/g, '-');
    if (!anyFlag.has(flag)) {
      throw new UsageError('ERR_CONFIG', `unknown environment variable ${name}: no addrindex command has a --${flag} flag`);
    }
    if (envName(flag) !== name) throw new UsageError('ERR_CONFIG', `unknown environment variable ${name}: --${flag} is ${envName(flag)}`);
    if (spec[flag]) fromEnv[flag] = coerce(spec, name, flag, raw, 'env');
  }

  const fromFile = {};
  if (file !== undefined) {
    const doc = readConfigFile(file);
    const take = (key, raw, section) => {
      const where = `${file}: ${section ? `${section}.` : ''}${key}`;
      if (section) {
        if (!allSpecs[section][key]) throw new UsageError('ERR_CONFIG', `${where}: unknown key: "${section}" has no --${key} flag`);
      } else if (!anyFlag.has(key)) {
        throw new UsageError('ERR_CONFIG', `${where}: unknown key: no addrindex command has a --${key} flag (a command's own flags go under its name)`);
      }
      if (spec[key] && (!section || section === command)) fromFile[key] = coerce(spec, where, key, raw, 'file');
    };
    // top level first, then the command's own section over it
    for (const [key, raw] of Object.entries(doc)) if (!allSpecs[key]) take(key, raw, null);
    for (const [key, raw] of Object.entries(doc)) {
      if (!allSpecs[key]) continue;
      if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
        throw new UsageError('ERR_CONFIG', `${file}: ${key}: a command's section must be an object of its flags`);
      }
      for (const [k, v] of Object.entries(raw)) take(k, v, key);
    }
  }
  return { file: fromFile, env: fromEnv };
}

/**
 * A parseArgs spec without defaults, and the defaults apart: parsing the command line without
 * them tells what it really gave, so the environment and the file can fill the rest.
 * @param {object} spec
 * @returns {{bare: object, defaults: object}}
 */
function splitDefaults(spec) {
  const bare = {};
  const defaults = {};
  for (const [name, opt] of Object.entries(spec)) {
    const { default: def, ...rest } = opt;
    bare[name] = rest;
    if (def !== undefined) defaults[name] = def;
  }
  return { bare, defaults };
}

module.exports = { configValues, splitDefaults, envName, readConfigFile };
