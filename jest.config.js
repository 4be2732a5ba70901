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
  // Two files at a time: most files wait (agents sleeping, timers), and two took jest from 1,527 s to about 1,060 s on
  // the 2-core CI machine. Files share the dev server, each with its own database, task queue and worker deployment
  // (two stacks polling as one deployment version left one's runs unstarted: testing/service-stack.ts).
  maxWorkers: 2,
  // the run's wall time and its 15 slowest files, on screen and in .tmp/test-times.txt (CONTRIBUTING: the budget)
  reporters: ['default', '<rootDir>/testing/slowest-files-reporter.cjs'],
  globalSetup: '<rootDir>/testing/global-setup.ts', // one temporal dev server + PG template for the whole run
  globalTeardown: '<rootDir>/testing/global-teardown.ts',
  setupFilesAfterEnv: ['<rootDir>/testing/runtime.ts'],
  modulePathIgnorePatterns: ['<rootDir>/.data/', '<rootDir>/.tmp/', '<rootDir>/.bench/'],
};
