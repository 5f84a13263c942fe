/** @type {import('jest').Config} */
module.exports = {
  rootDir: '.',
  testEnvironment: '<rootDir>/test/support/leak-check-environment.js',
  testMatch: ['<rootDir>/test/**/*.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts'],
  transform: {
    // transpile only (TypeScript's transpileModule with tsconfig.json's options): `npm test`
    // type-checks src and test first (`npm run typecheck`: tsconfig.json includes both)
    '^.+\\.ts$': '<rootDir>/test/support/ts-transform.js',
  },
  moduleFileExtensions: ['ts', 'js', 'json'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 60000,
  maxWorkers: process.env.JEST_WORKERS ?? 2,
  // a worker over this heap after a test file is replaced by a fresh one: each file's module registry
  // (the whole app) is not all given back, and a worker that reached 1.5-1.7 GB of heap (2.4 GB RSS)
  // took 400-760 ms to be gone after its loop emptied, over jest's fixed 500 ms: "A worker process has
  // failed to exit gracefully" ended every full run. Recycled, the last workers end at 0.1-1 GB and
  // 115-290 ms, and the suite ran faster (less GC), see docs/development.md
  workerIdleMemoryLimit: '800MB',
  // in the checkout, not in the temporary folder: one cache whatever TMPDIR says (test/e2e/tmpdir)
  cacheDirectory: '<rootDir>/node_modules/.cache/jest',
  // the default reporter, and a progress line at least every 20 s when not in a terminal (CI)
  reporters: ['default', '<rootDir>/test/support/progress-reporter.js'],
};
