// test/e2e/tmpdir.e2e-spec.ts runs this config in a child jest with TMPDIR set to a folder of its
// own. No global setup: the child uses the parent run's Postgres and template database (their
// TEST_PG_* variables are inherited), and the parent's transform cache (jest.config.js keeps it in
// node_modules/.cache/jest, not in the temporary folder).
const base = require('../../jest.config');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  rootDir: '../..',
  testMatch: ['<rootDir>/test/tmpdir/*.tmpdir-spec.ts'],
  globalSetup: undefined,
  globalTeardown: undefined,
  reporters: ['default'],
};
