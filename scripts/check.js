#!/usr/bin/env node
/**
 * `npm test`'s static checks side by side: ESLint, Prettier and the type check run at once (they
 * are independent, and one alone leaves a core idle), each one's output printed whole when it ends.
 * Exit status 1 when any of them fails. ESLint, Prettier and tsc keep their caches under
 * node_modules/.cache, so a second run on an unchanged tree only looks at what changed.
 */
const { spawn } = require('node:child_process');
const path = require('node:path');

const root = path.join(__dirname, '..');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
const cache = path.join(root, 'node_modules', '.cache');

const checks = [
  {
    name: 'eslint',
    cmd: bin('eslint'),
    args: ['--max-warnings', '0', '--cache', '--cache-strategy', 'content', '--cache-location', path.join(cache, 'eslint') + '/', '.'],
  },
  { name: 'prettier', cmd: bin('prettier'), args: ['--check', '--cache', '--log-level', 'warn', '**/*.{ts,js,mjs,cjs}'] },
  {
    name: 'typecheck',
    cmd: bin('tsc'),
    args: ['--noEmit', '-p', 'tsconfig.json', '--incremental', '--tsBuildInfoFile', path.join(cache, 'tsc', 'typecheck.tsbuildinfo')],
  },
];

const run = ({ name, cmd, args }) =>
  new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => out.push(d));
    child.on('error', (err) => out.push(Buffer.from(String(err))));
    child.on('close', (code) => {
      const ok = code === 0;
      const text = Buffer.concat(out).toString().trimEnd();
      process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)\n${text ? text + '\n' : ''}`);
      resolve(ok);
    });
  });

// `node scripts/check.js [name ...]` runs the named checks only (`npm run lint`: eslint and prettier)
const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !checks.some((c) => c.name === w));
if (unknown.length) {
  process.stderr.write(`unknown check ${unknown.join(', ')}; have ${checks.map((c) => c.name).join(', ')}\n`);
  process.exit(2);
}
const chosen = wanted.length ? checks.filter((c) => wanted.includes(c.name)) : checks;

// never silent for long: the three take 10 s to over a minute on a cold cache
const started = Date.now();
const pending = new Set(chosen.map((c) => c.name));
process.stdout.write(`checks: ${[...pending].join(', ')}\n`);
const ticker = setInterval(
  () => process.stdout.write(`     still running: ${[...pending].join(', ')} (${Math.round((Date.now() - started) / 1000)} s)\n`),
  20_000,
);
Promise.all(chosen.map((c) => run(c).finally(() => pending.delete(c.name)))).then((results) => {
  clearInterval(ticker);
  process.exitCode = results.every(Boolean) ? 0 : 1;
});
