'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { PassThrough } = require('node:stream');
const { MAINNET_439 } = require('../helpers/fixtures');
const { tempDir } = require('../helpers/tmp');
const { runCli } = require('../helpers/cli');
const { main } = require('../../lib/cli');
const { configValues, envName } = require('../../lib/cli/config');

const TIP = '0000000025c6b644f8add734be7e666fa4afa43ca0204d623a0c0b1fd2104c7a';
const COMMANDS = ['parse', 'demo', 'sync', 'status', 'verify', 'query', 'serve', 'start'];
const allSpecs = Object.fromEntries(COMMANDS.map((c) => [c, require(`../../lib/cli/${c}`).options]));

/** `addrindex ARGS` in this process with the given environment; resolves with stdout or the error. */
async function run(args, env) {
  const out = new PassThrough();
  const err = new PassThrough();
  let text = '';
  out.on('data', (d) => { text += d; });
  const code = await main(args, { stdout: out, stderr: err }, env);
  return { code, stdout: text };
}

/** A child process of the CLI with its own environment (PATH and `env` only). */
const child = (args, env) => runCli(args, { env, inheritEnv: false });

describe('configuration: --config file, ADDRINDEX_* environment, flags (flags win over env over file)', function () {
  this.timeout(60000);
  let dir;
  let blocksDir;
  let datadir;
  const missing = () => path.join(dir, 'no-such-index');
  const file = (name, doc) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, typeof doc === 'string' ? doc : JSON.stringify(doc));
    return p;
  };

  before(async () => {
    dir = tempDir('config');
    blocksDir = path.join(dir, 'blocks');
    fs.mkdirSync(blocksDir);
    fs.copyFileSync(MAINNET_439, path.join(blocksDir, 'blk00000.dat'));
    datadir = path.join(dir, 'index');
    // the whole sync configured by a file named in the environment, one flag from the environment
    const cfg = file('sync.json', { datadir, sync: { 'blocks-dir': blocksDir, 'batch-blocks': 100, threads: 0 } });
    const r = await child(['sync'], { ADDRINDEX_CONFIG: cfg, ADDRINDEX_NETWORK: 'main', ADDRINDEX_LOG_FORMAT: 'text' });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`synced 439 blocks, 446 txs .* tip height 438 ${TIP}\\n$`));
    assert.equal(r.stdout, '');
  });

  const tipOf = async (args, env) => JSON.parse((await run(['status', '--json', ...args], env)).stdout).tip.hash;

  it('each source alone names the index: file, environment, flag', async () => {
    assert.equal(await tipOf(['--config', file('a.json', { datadir })], {}), TIP);
    assert.equal(await tipOf([], { ADDRINDEX_DATADIR: datadir }), TIP);
    assert.equal(await tipOf(['--datadir', datadir], {}), TIP);
    assert.equal(await tipOf([], { ADDRINDEX_CONFIG: file('b.json', { datadir }) }), TIP);
  });

  it('precedence: flag over environment over file; a command\'s section over the top level', async () => {
    const wrong = file('wrong.json', { datadir: missing() });
    assert.equal(await tipOf(['--config', wrong], { ADDRINDEX_DATADIR: datadir }), TIP);
    assert.equal(await tipOf(['--config', wrong, '--datadir', datadir], { ADDRINDEX_DATADIR: missing() }), TIP);
    await assert.rejects(run(['status', '--config', file('right.json', { datadir })], { ADDRINDEX_DATADIR: missing() }), { code: 'ERR_NO_INDEX' });
    assert.equal(await tipOf(['--config', file('sect.json', { datadir: missing(), status: { datadir } })], {}), TIP);
    // another command's section does not apply
    await assert.rejects(run(['status', '--config', file('other.json', { datadir: missing(), verify: { datadir } })], {}), { code: 'ERR_NO_INDEX' });
  });

  it('one file and one environment serve every command: another command\'s flags are ignored', async () => {
    const shared = file('shared.json', { datadir, workers: 4, 'blocks-dir': blocksDir, serve: { 'cors-origin': ['*'] } });
    assert.equal(await tipOf(['--config', shared], { ADDRINDEX_FOLLOW: '1', ADDRINDEX_PORT: '8080' }), TIP);
  });

  it('unknown names are refused, naming them', async () => {
    const refused = async (args, env, re) => {
      await assert.rejects(run(args, env), (err) => {
        assert.equal(err.code, 'ERR_CONFIG');
        assert.match(err.message, re);
        return true;
      });
    };
    await refused(['status', '--config', file('typo.json', { datadir, datdir: 'x' })], {}, /typo\.json: datdir: unknown key: no addrindex command has a --datdir flag/);
    await refused(['status', '--config', file('sect-typo.json', { datadir, status: { workers: 2 } })], {}, /sect-typo\.json: status\.workers: unknown key: "status" has no --workers flag/);
    await refused(['status', '--datadir', datadir], { ADDRINDEX_DATDIR: 'x' }, /^unknown environment variable ADDRINDEX_DATDIR: no addrindex command has a --datdir flag$/);
    await refused(['status', '--datadir', datadir], { ADDRINDEX_datadir: 'x' }, /ADDRINDEX_datadir: --datadir is ADDRINDEX_DATADIR/);
    await refused(['status', '--config', file('section.json', { status: 5 })], {}, /section\.json: status: a command's section must be an object/);
    // what the process environment holds for other parts of addrindex is not a flag, and not refused
    assert.equal(await tipOf(['--datadir', datadir], { ADDRINDEX_LZ4: '0', ADDRINDEX_TEST_MONGODB_URL: 'x', ADDRINDEX_WORKER: '{}' }), TIP);
  });

  it('values of the wrong kind, and unreadable files, are refused clearly', async () => {
    const refused = async (args, env, re) => {
      await assert.rejects(run(args, env), (err) => err.code === 'ERR_CONFIG' && re.test(err.message));
    };
    await refused(['status', '--config', file('bool.json', { datadir, json: 'yes' })], {}, /bool\.json: json: --json is a switch: give true or false, not "yes"/);
    await refused(['status', '--datadir', datadir], { ADDRINDEX_JSON: 'maybe' }, /ADDRINDEX_JSON: --json is a switch: give 1 or 0/);
    await refused(['status', '--config', file('obj.json', { datadir: { path: datadir } })], {}, /obj\.json: datadir: --datadir takes a string or a number/);
    await refused(['status', '--config', file('bad.json', '{"datadir": ')], {}, /bad\.json is not valid JSON/);
    await refused(['status', '--config', file('list.json', '[1]')], {}, /list\.json must hold one JSON object/);
    await refused(['status', '--config', path.join(dir, 'absent.json')], {}, /cannot read the config file .*absent\.json: no such file/);
    // the environment's switches: 1/0, true/false, yes/no
    assert.equal(JSON.parse((await run(['status', '--datadir', datadir], { ADDRINDEX_JSON: 'true' })).stdout).tip.hash, TIP);
    const text = await run(['status', '--datadir', datadir], { ADDRINDEX_JSON: '0' });
    assert.match(text.stdout, /^network +main$/m);
  });

  it('every flag of every command has its environment variable and its file key, with typed values', () => {
    let checked = 0;
    for (const [command, spec] of Object.entries(allSpecs)) {
      for (const [flag, opt] of Object.entries(spec)) {
        const name = envName(flag);
        assert.match(name, /^ADDRINDEX_[A-Z0-9_]+$/);
        const envValue = opt.type === 'boolean' ? 'yes' : opt.multiple ? 'a,b' : '7';
        const fileValue = opt.type === 'boolean' ? true : opt.multiple ? ['a', 'b'] : 7;
        const want = opt.type === 'boolean' ? true : opt.multiple ? ['a', 'b'] : '7';
        const fromEnv = configValues({ command, spec, allSpecs, env: { [name]: envValue } });
        assert.deepEqual(fromEnv.env[flag], want, `${command} ${name}`);
        const cfg = path.join(dir, 'every.json');
        fs.writeFileSync(cfg, JSON.stringify({ [command]: { [flag]: fileValue } }));
        assert.deepEqual(configValues({ command, spec, allSpecs, env: {}, file: cfg }).file[flag], want, `${command} ${flag}`);
        checked++;
      }
    }
    assert.ok(checked > 60, String(checked));
  });

  it('serve takes repeatable flags as lists: --cors-origin from a file array or a comma-separated variable', () => {
    const spec = allSpecs.serve;
    const cfg = path.join(dir, 'cors.json');
    fs.writeFileSync(cfg, JSON.stringify({ serve: { 'cors-origin': ['https://a.example', 'https://b.example'] } }));
    assert.deepEqual(configValues({ command: 'serve', spec, allSpecs, env: {}, file: cfg }).file['cors-origin'], ['https://a.example', 'https://b.example']);
    assert.deepEqual(configValues({ command: 'serve', spec, allSpecs, env: { ADDRINDEX_CORS_ORIGIN: 'https://a.example, *' } }).env['cors-origin'], ['https://a.example', '*']);
  });
});
