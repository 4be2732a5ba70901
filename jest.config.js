/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node', // jsdom is not supported by the Temporal SDK
  // isolatedModules: ts-jest transpiles file by file (fast); `npm run typecheck` does the type checking.
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: { isolatedModules: true } }],
    // ESM-only dependencies (of fastify's inject, @fastify/static under swagger-ui, swagger-parser), compiled to CommonJS for jest
    '/node_modules/.+\\.js$': ['ts-jest', { tsconfig: { isolatedModules: true, allowJs: true } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!(content-disposition|cookie|@apidevtools/json-schema-ref-parser)/)'],
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  testTimeout: 120_000, // workflow bundling + Worker start take seconds
  // One file at a time. Two at a time took the run from 33 to 18 minutes, but beside test/worker-kills.test.ts the
  // soak twice left runs `running` with no host (their agent never started) at its start: a defect of a loaded
  // host, not yet found (CONTRIBUTING.md, "The spec: tiers and budget"), so the spec stays serial until it is.
  maxWorkers: 1,
  // the run's wall time and its 15 slowest files, on screen and in .tmp/test-times.txt (CONTRIBUTING: the budget)
  reporters: ['default', '<rootDir>/testing/slowest-files-reporter.cjs'],
  globalSetup: '<rootDir>/testing/global-setup.ts', // one temporal dev server + PG template for the whole run
  globalTeardown: '<rootDir>/testing/global-teardown.ts',
  setupFilesAfterEnv: ['<rootDir>/testing/runtime.ts'],
  modulePathIgnorePatterns: ['<rootDir>/.data/', '<rootDir>/.tmp/', '<rootDir>/.bench/'],
};
