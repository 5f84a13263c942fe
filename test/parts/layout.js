// How `npm test` (jest.suite.config.js) lays the e2e specs out in jest test files.
//
// Each jest test file gets a module registry of its own: it loads the whole application (Nest,
// TypeORM, Fastify, every module of src) again, 1.0–1.4 s of CPU. So `npm test` runs most specs
// in parts: a part is one test file that loads a few specs, each in a describe block of its own
// (its hooks and tests stay its own), on one shared registry. `npx jest test/e2e/x.e2e-spec.ts`
// (jest.config.js) still runs a spec as a file of its own.
//
// A spec runs as a file of its own (SOLO) when it
// - looks at the registry it starts with (tracing: no OpenTelemetry module loaded),
// - keeps a snapshot (routes: jest files snapshots by test file),
// - sets its own test timeout (jest.setTimeout holds for the whole test file), or
// - runs long by itself (the coding-agent CLIs, the fuzz test): loading the app once more is
//   little beside it, and alone it balances the two workers better.
const fs = require('node:fs');
const path = require('node:path');

const E2E_DIR = path.join(__dirname, '..', 'e2e');
const PARTS = 10;
const SOLO = new Set([
  'tracing',
  'routes',
  'external-adapters',
  'openapi-document',
  'shutdown-drain',
  'cli-data',
  'database-backups',
  'operations',
  'cli',
  'sealed-code',
  'runtime-claude',
  'runtime-codex',
  'runtime-gemini',
  'runtime-opencode',
  'runtime-mcp',
  'runtime-usage',
  'runtime-hello',
  'fuzz',
  'heartbeat-crash-recovery',
  'live-events',
]);

const specName = (file) => path.basename(file, '.e2e-spec.ts');

function specFiles() {
  return fs
    .readdirSync(E2E_DIR)
    .filter((f) => f.endsWith('.e2e-spec.ts'))
    .sort()
    .map((f) => path.join(E2E_DIR, f));
}

/** The specs that run as jest test files of their own (absolute paths). */
function soloSpecs() {
  return specFiles().filter((f) => SOLO.has(specName(f)));
}

/**
 * The specs of each part: the largest spec first to the part with the least source so far (source
 * size stands in for run time). The same on every call, so each part file finds its own share.
 */
function parts() {
  const out = Array.from({ length: PARTS }, () => ({ size: 0, specs: [] }));
  const grouped = specFiles()
    .filter((f) => !SOLO.has(specName(f)))
    .map((f) => ({ f, size: fs.statSync(f).size }))
    .sort((a, b) => b.size - a.size || a.f.localeCompare(b.f));
  for (const { f, size } of grouped) {
    const lightest = out.reduce((min, p) => (p.size < min.size ? p : min));
    lightest.size += size;
    lightest.specs.push(f);
  }
  return out.map((p) => p.specs.sort());
}

module.exports = { PARTS, specName, soloSpecs, parts };
