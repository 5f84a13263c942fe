'use strict';
// What `npm run check:board-ui` needs besides the browser steps: the published board UI, playwright-core,
// the loopback fake of the Anthropic API (the test suite's own, test/support/fake-anthropic.ts), and the
// built service on a throw-away data directory.
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');

const root = path.join(__dirname, '..', '..');
/** The board UI build the check drives, and the browser driver it uses (pinned; neither is a dependency of the service). */
const UI_PACKAGE = '@paperclipai/server@2026.916.1';
const PLAYWRIGHT = 'playwright-core@1.65.1';

const log = (msg) => process.stderr.write(`[check:board-ui] ${msg}\n`);

/** UI_DIST, else the published UI unpacked into the scratch folder (fetched with `npm pack` the first time). */
function boardUi(scratch) {
  if (process.env.UI_DIST) {
    if (!fs.existsSync(path.join(process.env.UI_DIST, 'index.html'))) throw new Error(`UI_DIST=${process.env.UI_DIST} has no index.html`);
    return process.env.UI_DIST;
  }
  const dist = path.join(scratch, 'ui', 'package', 'ui-dist');
  if (fs.existsSync(path.join(dist, 'index.html'))) return dist;
  const dir = path.join(scratch, 'ui');
  fs.mkdirSync(dir, { recursive: true });
  log(`fetching ${UI_PACKAGE} (about 50 MB) into ${dir}`);
  const tgz = execFileSync('npm', ['pack', UI_PACKAGE, '--silent'], { cwd: dir, encoding: 'utf8' }).trim().split('\n').pop();
  execFileSync('tar', ['xzf', tgz, 'package/ui-dist'], { cwd: dir });
  fs.rmSync(path.join(dir, tgz), { force: true });
  return dist;
}

/** PLAYWRIGHT_CORE (a folder holding node_modules/playwright-core), else the scratch folder's own install (made the first time). */
function playwright(scratch) {
  const from = process.env.PLAYWRIGHT_CORE ?? path.join(scratch, 'driver');
  const entry = path.join(from, 'node_modules', 'playwright-core');
  if (!fs.existsSync(entry)) {
    fs.mkdirSync(from, { recursive: true });
    log(`installing ${PLAYWRIGHT} into ${from}`);
    execFileSync('npm', ['install', '--no-save', '--no-package-lock', '--prefix', from, PLAYWRIGHT], { stdio: 'inherit' });
  }
  return require(entry);
}

/** Lets require() load the test suite's TypeScript helpers (transpiled only; they are type-checked by `npm test`). */
function requireTypeScript() {
  if (require.extensions['.ts']) return;
  const ts = require('typescript');
  require.extensions['.ts'] = (module, filename) => {
    const out = ts.transpileModule(fs.readFileSync(filename, 'utf8'), {
      fileName: filename,
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
    });
    module._compile(out.outputText, filename);
  };
}

/** The loopback fake of the Anthropic Messages API, answering every model call with one short text. */
async function fakeAnthropic() {
  requireTypeScript();
  const fake = require(path.join(root, 'test', 'support', 'fake-anthropic.ts'));
  const server = await fake.startFakeAnthropic(() => ({
    text: 'Hello from the board UI check: the task is done.',
    usage: { input: 1200, output: 40, cacheRead: 300 },
  }));
  return { ...server, claudeBinary: fake.claudeBinary() };
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** The built service (dist/) on a free port and a fresh data directory, with the operator settings given. */
async function startService(dataDir, env) {
  const mainJs = path.join(root, 'dist', 'src', 'main.js');
  if (!fs.existsSync(mainJs)) throw new Error('dist/ not found: run npm run build first');
  const port = await freePort();
  const out = fs.openSync(path.join(dataDir, '..', 'service.log'), 'w');
  const child = spawn(process.execPath, [mainJs], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      SERVICE_DATA_DIR: dataDir,
      ...env,
    },
    stdio: ['ignore', out, out],
  });
  const url = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 180_000; ; await new Promise((r) => setTimeout(r, 250))) {
    if (child.exitCode !== null) throw new Error(`the service exited during start-up (see ${path.join(dataDir, '..', 'service.log')})`);
    if (Date.now() > deadline) throw new Error('the service did not answer within 180 s');
    const res = await fetch(`${url}/api/health`).catch(() => undefined);
    if (res?.ok) break;
  }
  return {
    url,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

module.exports = { boardUi, playwright, fakeAnthropic, startService, log, root };
