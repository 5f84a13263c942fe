// `npm run test:quick`: lint and type check (scripts/check.js), the unit specs and a few fast e2e
// specs: the first agent of the README, the front page, system routes, companies, checkout and
// validation. Minutes instead of `npm test`'s whole suite; the coding-agent CLIs are not fetched
// (TEST_CLIS=on-demand: a test that needs one installs it).
process.env.TEST_CLIS ??= 'on-demand';
const base = require('./jest.config');

const QUICK_E2E = ['example-agent', 'front-page', 'system', 'companies', 'checkout', 'unknown-fields'];

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  testMatch: ['<rootDir>/test/unit/**/*.spec.ts', ...QUICK_E2E.map((name) => `<rootDir>/test/e2e/${name}.e2e-spec.ts`)],
};
