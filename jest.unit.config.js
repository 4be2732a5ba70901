/**
 * `npm run test:unit`: the pure rules of test/unit/ (domain/, the workflows' state objects, parsers), without the
 * run's Temporal dev server and PostgreSQL: the fast loop while changing code. `npm test` runs them too.
 */
const base = require('./jest.config');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
  globalSetup: undefined,
  globalTeardown: undefined,
  maxWorkers: 2, // no shared stack to contend for
};
