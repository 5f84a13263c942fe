#!/usr/bin/env node
// Writes docs/openapi.json: the OpenAPI document served by the built service (scripts/build.js output,
// where the swagger compiler plugin has added response and DTO schemas). `npm run openapi` builds
// first; `node scripts/openapi.js [outDir]` serves an existing build (default dist/). The service
// starts on a free loopback port with a throw-away data directory (embedded PostgreSQL) unless
// DATABASE_URL is set; test/e2e/openapi-document.e2e-spec.ts compares the result with the build.
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const root = path.join(__dirname, '..');
const outDir = path.resolve(root, process.argv[2] ?? 'dist');
const target = path.join(root, 'docs', 'openapi.json');

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

async function main() {
  const mainJs = path.join(outDir, 'src', 'main.js');
  if (!fs.existsSync(mainJs)) throw new Error(`${mainJs} not found: run npm run build first`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-openapi-'));
  const port = await freePort();
  const child = spawn(process.execPath, [mainJs], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      SERVICE_DATA_DIR: dataDir,
      ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  try {
    const url = `http://127.0.0.1:${port}/api/openapi.json`;
    for (const deadline = Date.now() + 120_000; ; await new Promise((r) => setTimeout(r, 200))) {
      if (child.exitCode !== null) throw new Error(`the service exited during start-up:\n${output}`);
      if (Date.now() > deadline) throw new Error(`the service did not answer within 120 s:\n${output}`);
      const res = await fetch(url).catch(() => undefined);
      if (res?.ok) {
        fs.writeFileSync(target, JSON.stringify(await res.json(), null, 2) + '\n');
        break;
      }
    }
  } finally {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  process.stdout.write(`wrote ${path.relative(process.cwd(), target)} from ${path.relative(process.cwd(), outDir) || '.'}\n`);
}

main().catch((err) => {
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
});
