// Lint: no floating promises anywhere; workflow code stays deterministic (no Node builtins,
// no database, no I/O modules) because it is replayed inside Temporal's sandbox.
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = builtinModules.flatMap((m) => [m, `node:${m}`]);

export default tseslint.config(
  { ignores: ['node_modules/', 'generated/', '.data/', '.tmp/', '.bench/', 'coverage/', '**/*.mjs', '**/*.js'] },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.base],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.json'] })],
    },
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // a cycle means two folders each depend on the other: one capability leaking into another's room
      'import-x/no-cycle': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
    },
  },
  {
    // small files and short lines in everything that ships; tests may be long specs
    files: ['**/*.ts'],
    ignores: ['test/**', 'client/openapi.gen.ts'],
    rules: {
      'max-len': ['error', { code: 120 }],
      'max-lines': ['error', { max: 300 }],
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({
            name,
            message: 'workflow code must be deterministic: no Node builtins',
          })),
          patterns: [
            {
              group: ['@prisma/*', 'pg', 'pino', 'fastify', '**/generated/**', '**/db/**'],
              message: 'workflow code must not do I/O',
            },
            {
              // values come only from workflows/ and domain/; anything else (activities, services) as types only
              group: [
                '../*',
                '!../domain',
                '!../domain/**',
                '@temporalio/activity',
                '@temporalio/worker',
                '@temporalio/client',
              ],
              allowTypeImports: true,
              message: 'workflows may import values only from workflows/ and domain/; other code as types only',
            },
          ],
        },
      ],
    },
  },
);
