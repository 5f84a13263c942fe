#!/usr/bin/env node
/**
 * The coding-agent CLIs the tests run (Claude Code, Codex, Gemini CLI, OpenCode), at pinned versions
 * from the npm registry, installed once into a cache folder by the test setup (jest's global setup
 * calls ensureTestClis) instead of by `npm ci`: they are ~1 GB the service itself never needs.
 *
 *   node scripts/test-clis.js [claude|codex|gemini|opencode ...]   install (all by default), print the binaries
 *
 * The cache is node_modules/.cache/test-clis (TEST_CLI_CACHE moves it), one folder per CLI, version
 * and platform; a folder appears whole (installed beside it, then renamed) and is reused by every
 * later run. Installs take a lock per folder (proper-lockfile), so two jest workers or two test runs
 * starting at once install each CLI once; the second waits for the first.
 *
 * Claude Code, Codex and OpenCode are installed as their platform packages: the native binaries
 * their npm wrappers would run (the wrappers add only a launcher, and Claude Code's wants Node 22
 * for it; the binaries need no Node). The Gemini CLI is a Node script (Node 20 or newer).
 */
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const DONE = '.installed';

const platform = `${process.platform}-${process.arch}`;
const musl = process.platform === 'linux' && !process.report?.getReport().header.glibcVersionRuntime ? '-musl' : '';
const codexTriple = {
  'linux-x64': 'x86_64-unknown-linux-musl',
  'linux-arm64': 'aarch64-unknown-linux-musl',
  'darwin-x64': 'x86_64-apple-darwin',
  'darwin-arm64': 'aarch64-apple-darwin',
}[platform];

/**
 * The pins. `spec`: what npm installs; `pkg`: the installed package folder (under node_modules);
 * `bin`: the file to run, inside it. `upstream`: the package a user installs globally.
 */
const CLIS = {
  claude: {
    upstream: '@anthropic-ai/claude-code',
    version: '2.1.332',
    spec: (v) => `@anthropic-ai/claude-code-${platform}${musl}@${v}`,
    pkg: `@anthropic-ai/claude-code-${platform}${musl}`,
    bin: 'claude',
  },
  codex: {
    upstream: '@openai/codex',
    version: '0.169.0',
    // the wrapper's own alias for its platform build
    spec: (v) => `@openai/codex-${platform}@npm:@openai/codex@${v}-${platform}`,
    pkg: `@openai/codex-${platform}`,
    bin: path.join('vendor', codexTriple ?? 'unsupported', 'bin', 'codex'),
  },
  gemini: {
    upstream: '@google/gemini-cli',
    version: '0.61.0',
    spec: (v) => `@google/gemini-cli@${v}`,
    pkg: '@google/gemini-cli',
    bin: path.join('bundle', 'gemini.js'),
  },
  opencode: {
    upstream: 'opencode-ai',
    version: '1.18.33',
    spec: (v) => `opencode-${platform}@${v}`,
    pkg: `opencode-${platform}`,
    bin: path.join('bin', 'opencode'),
  },
};

const cacheRoot = () => path.resolve(process.env.TEST_CLI_CACHE || path.join(root, 'node_modules', '.cache', 'test-clis'));

const folderOf = (name) => path.join(cacheRoot(), `${name}-${CLIS[name].version}-${platform}${musl}`);

/** Where a CLI is (or will be) installed: `bin` the file to run, `pkgRoot` its package folder. */
function binaryOf(name) {
  const cli = CLIS[name];
  if (!cli) throw new Error(`unknown test CLI ${name}; have ${Object.keys(CLIS).join(', ')}`);
  const pkgRoot = path.join(folderOf(name), 'node_modules', cli.pkg);
  return { bin: path.join(pkgRoot, cli.bin), pkgRoot };
}

const isInstalled = (name) => fs.existsSync(path.join(folderOf(name), DONE));

/** npm itself: the one running us (`npm test`), else the one on PATH. */
function npmCommand() {
  const cli = process.env.npm_execpath;
  return cli && /npm-cli\.js$/.test(cli) ? [process.execPath, [cli]] : ['npm', []];
}

function npmInstall(prefix, spec) {
  const [cmd, pre] = npmCommand();
  const args = [...pre, 'install', spec, '--prefix', prefix, '--ignore-scripts', '--no-save', '--no-package-lock'];
  args.push('--no-audit', '--no-fund', '--loglevel=error', '--engine-strict=false', '--update-notifier=false');
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: prefix, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(installFailed(spec, code, out)))));
  });
}

/** What to do when a CLI could not be installed (the tests run the real CLIs: no registry, no tests of them). */
const installFailed = (spec, code, out) =>
  `test CLIs: npm install ${spec} failed (${code}). The tests run the real coding-agent CLIs, installed on first use ` +
  `from the npm registry into ${cacheRoot()}: make the registry reachable (npm's registry and proxy settings), ` +
  `or point TEST_CLI_CACHE at a cache filled elsewhere (\`npm run test:clis\`).\n${out.trim()}`;

/** Installs one CLI into its cache folder unless it is there; resolves to its binary. */
async function ensureOne(name, log) {
  const { bin } = binaryOf(name);
  if (isInstalled(name)) return bin;
  const lockfile = require('proper-lockfile');
  const folder = folderOf(name);
  fs.mkdirSync(cacheRoot(), { recursive: true });
  // a holder refreshes its lock every 5 s; one untouched for 30 s was left by a killed run
  const release = await lockfile.lock(folder, {
    realpath: false, // the lock is `${folder}.lock`; the folder need not exist yet
    stale: 30_000,
    update: 5_000,
    retries: { retries: 1_800, factor: 1, minTimeout: 500, maxTimeout: 500 },
  });
  try {
    if (isInstalled(name)) return bin;
    const started = Date.now();
    const cli = CLIS[name];
    const partial = `${folder}.partial-${process.pid}`;
    // what a killed install left (under this lock no one else is installing it)
    for (const left of fs.readdirSync(cacheRoot()).filter((f) => f.startsWith(`${path.basename(folder)}.partial-`)))
      fs.rmSync(path.join(cacheRoot(), left), { recursive: true, force: true });
    fs.mkdirSync(partial, { recursive: true });
    fs.writeFileSync(path.join(partial, 'package.json'), '{ "private": true }\n');
    await npmInstall(partial, cli.spec(cli.version));
    const installedBin = path.join(partial, path.relative(folder, bin));
    if (!fs.existsSync(installedBin)) throw new Error(`npm installed ${cli.spec(cli.version)} but ${installedBin} is not there`);
    fs.writeFileSync(path.join(partial, DONE), `${cli.spec(cli.version)}\n`);
    fs.rmSync(folder, { recursive: true, force: true });
    fs.renameSync(partial, folder);
    log(
      `test CLIs: ${cli.upstream} ${cli.version} (${cli.spec(cli.version)}) installed in ${((Date.now() - started) / 1000).toFixed(0)} s`,
    );
    return bin;
  } finally {
    await release();
  }
}

/** Installs the named CLIs (all by default) at once; resolves to their binaries by name. */
async function ensureTestClis(names = Object.keys(CLIS), log = (line) => process.stdout.write(`${line}\n`)) {
  const bins = await Promise.all(names.map((n) => ensureOne(n, log)));
  return Object.fromEntries(names.map((n, i) => [n, bins[i]]));
}

module.exports = { CLIS, binaryOf, cacheRoot, ensureTestClis, isInstalled };

if (require.main === module) {
  const names = process.argv.slice(2);
  ensureTestClis(names.length ? names : undefined)
    .then((bins) => {
      for (const [n, bin] of Object.entries(bins)) process.stdout.write(`${n}\t${bin}\n`);
    })
    .catch((err) => {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    });
}
