// `npm test`: the unit specs, the e2e specs in parts (a few specs per jest test file, sharing one
// load of the application) and the specs that run alone; see test/parts/layout.js.
// `npx jest <file>` uses jest.config.js: every spec a test file of its own.
const base = require('./jest.config');
const { soloSpecs } = require('./test/parts/layout');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  testMatch: ['<rootDir>/test/unit/**/*.spec.ts', '<rootDir>/test/parts/part-*.e2e-part.ts', ...soloSpecs()],
};
